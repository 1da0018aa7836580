import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct CalendarCommand: AsyncParsableCommand {
    /// How a month's start was reached, for the sighted and predicted calendars (nil for the table calendars).
    static func basisLine(_ month: YearReport.Month) -> String? {
        switch month.basis {
        case .announced: return "announced (a published start)"
        case .ummAlQura, .tabular: return nil
        case .predicted, .moved:
            let moved = month.basis == .moved ? "moved a day to keep 29 or 30 days before an announced start; " : ""
            guard let e = month.evidence else { return "predicted" }
            let conjunction = "\(e.conjunction.prefix(10)) \(e.conjunction.dropFirst(11).prefix(5)) UT"
            let numbers =
                "conjunction \(conjunction) · lag \(Int(e.lagMinutes.rounded())) min · age \(String(format: "%.1f", e.ageHours)) h · V \(String(format: "%.2f", e.v)) (zone \(e.zone))"
            return e.seen
                ? "\(moved)seen on the evening of \(e.evening) at \(e.site) · \(numbers)"
                : "\(moved)not seen on the evening of \(e.evening) (nearest: \(e.site)) · \(numbers) · the month before completed 30 days"
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "calendar", abstract: "Show a Hijri year: its months with their Gregorian starts and themes, and its occasions.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Option(
        name: .customLong("hijri-year"), parsing: .unconditional,
        help: ArgumentHelp("The Hijri year, 1 to 9999. Default: the current one (UTC).", valueName: "year"), transform: { try hijriYearArgument($0) })
    var hijriYear: Int?

    func run() async throws {
        let kind = calendarOptions.calendar
        let adjustment = calendarOptions.adjust
        let database = try await global.openContent()
        let year =
            try hijriYear
            ?? database.islamicCalendar(kind).hijriDate(
                for: CivilDate(instant: global.clock(), timeZone: TimeZone(identifier: "UTC")!), adjustment: adjustment
            ).year
        let report = try DailyVerseReports(database: database).year(year, calendar: kind, adjustment: adjustment)
        if global.json { return try printJSON(report) }
        let region = try report.region.map { _ in try database.crescentRegion().region }
        let regionText = region.map { " for \($0.name) (\($0.sites.count) sites, \($0.rule.name))" } ?? ""
        print("Hijri year \(year) AH · \(report.calendar)\(regionText)\(adjustment.days == 0 ? "" : String(format: " %+d", adjustment.days))\n")
        for month in report.months {
            let name = month.monthName.padding(toLength: 18, withPad: " ", startingAt: 0)
            print(String(format: "%2d  ", month.month) + "\(name) \(month.start)  \(month.length) days  \(month.theme.name)")
            if let line = Self.basisLine(month) { print("      \(line)") }
        }
        print("\nOccasions")
        for occasion in report.occasions {
            // A night is shown from the evening of the civil day before its Hijri day.
            let when = occasion.observed == "night" ? "\(occasion.shownOn) eve" : "\(occasion.gregorian)    "
            print("  \(when)  \(occasion.name)  (\(occasion.verses))")
        }
    }
}
