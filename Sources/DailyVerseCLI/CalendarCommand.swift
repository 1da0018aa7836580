import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct CalendarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calendar", abstract: "Show a Hijri year: its months with their Gregorian starts and themes, and its occasions.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Option(
        name: .customLong("hijri-year"), parsing: .unconditional,
        help: ArgumentHelp("The Hijri year. Default: the current one (UTC).", valueName: "year"))
    var hijriYear: Int?

    func run() throws {
        try reportingErrors {
            let kind = calendarOptions.calendar
            let adjustment = calendarOptions.adjust
            let database = try global.openDatabase()
            let year =
                try hijriYear
                ?? database.islamicCalendar(kind).hijriDate(
                    for: CivilDate(instant: global.clock(), timeZone: TimeZone(identifier: "UTC")!), adjustment: adjustment
                ).year
            let report = try DailyVerseReports(database: database).year(year, calendar: kind, adjustment: adjustment)
            if global.json { return try printJSON(report) }
            print("Hijri year \(year) AH · \(report.calendar)\(adjustment.days == 0 ? "" : String(format: " %+d", adjustment.days))\n")
            for month in report.months {
                let name = month.monthName.padding(toLength: 18, withPad: " ", startingAt: 0)
                print(String(format: "%2d  ", month.month) + "\(name) \(month.start)  \(month.length) days  \(month.theme.name)")
            }
            print("\nOccasions")
            for occasion in report.occasions {
                // A night is shown from the evening of the civil day before its Hijri day.
                let when = occasion.observed == "night" ? "\(occasion.shownOn) eve" : "\(occasion.gregorian)    "
                print("  \(when)  \(occasion.name)  (\(occasion.verses))")
            }
        }
    }
}
