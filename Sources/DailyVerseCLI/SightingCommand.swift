import ArgumentParser
import ContentStore
import Diagnostics
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct SightingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sighting", abstract: "Manage published month starts: announcements that the predicted and sighted calendars follow.",
        discussion: """
            A published start replaces the predicted one, and the months after it follow from it; in the sighted \
            calendar it replaces Umm al-Qura's. It may differ from Umm al-Qura by at most 2 days, and neighbouring months \
            move with it so that every month keeps 29 or 30 days (README, "The calendars").
            """,
        subcommands: [SightingSetCommand.self, SightingImportCommand.self, SightingListCommand.self, SightingRemoveCommand.self])
}

struct SightingSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Publish the first day of a Hijri month.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Hijri year.", transform: { try hijriYearArgument($0) }) var year: Int
    @Argument(help: "Hijri month, 1-12.", transform: { try hijriMonthArgument($0) }) var month: Int
    @Argument(help: ArgumentHelp("Gregorian first day, YYYY-MM-DD.", valueName: "date")) var date: String

    func run() async throws {
        let start = PublishedMonthStart(year: year, month: month, firstDay: try CivilDate(parsing: date))
        try SightedMonthStarts.validate(start)
        let now = try global.clock()
        // A start published before for the month is replaced, and said so: it was replaced silently.
        let (_, replaced) =
            try await global.withPostgres { try await $0.publishMonthStarts([start], at: now) }
            ?? global.openDatabase().publishMonthStarts([start], at: now)
        let previous = replaced.first?.firstDay
        if global.json { return try printJSON(Published(start: start, replaced: previous)) }
        print(
            "published: \(HijriMonth(rawValue: month)!.englishName) \(year) begins on \(start.firstDay)"
                + (previous.map { " (replacing \($0), published before)" } ?? ""))
    }

    /// `sighting set --json`: the start published, and the first day it replaced (null when the month had none, or the
    /// same day).
    struct Published: Encodable {
        let start: PublishedMonthStart
        let replaced: CivilDate?

        enum CodingKeys: String, CodingKey { case year, month, firstDay = "first_day", replacedFirstDay = "replaced_first_day" }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(start.year, forKey: .year)
            try container.encode(start.month, forKey: .month)
            try container.encode(start.firstDay, forKey: .firstDay)
            try container.encode(replaced, forKey: .replacedFirstDay)
        }
    }
}

struct SightingImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Publish the month starts of a CSV file, such as data/sightings/iran-observed.csv.",
        discussion: """
            The file begins with the header hijri_year,hijri_month,first_day and gives one month a line (first_day: the \
            Gregorian first day, YYYY-MM-DD). All or nothing: every line is checked (a month 1-12, a date within 2 days \
            of Umm al-Qura, starts k months apart 29k to 30k days apart, with those already published) before any is \
            written. --years keeps the lines of a range of Hijri years and leaves the others out.
            """)
    static let header = "hijri_year,hijri_month,first_day"
    static let maximumLineBytes = 200
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("CSV file.", valueName: "file")) var file: String
    @Option(parsing: .unconditional, help: ArgumentHelp("Only the Hijri years FIRST-LAST (such as 1423-1447).", valueName: "first-last")) var years:
        String?

    func run() async throws {
        let range = try years.map(Self.years)
        let input = try InputFile(path: checkedPath(file, what: "the file's name"))
        let name = URL(fileURLWithPath: file).lastPathComponent
        var starts: [PublishedMonthStart] = []
        var seen: [Int: Int] = [:]  // month key -> line
        var leftOut = 0
        var headerSeen = false
        try input.forEachLine(maximumLineBytes: Self.maximumLineBytes) { number, bytes, _ in
            guard let line = String(validating: bytes, as: UTF8.self) else { throw CLIError("\(name):\(number): not valid UTF-8") }
            if let refusal = ImportedText.refusal(of: "the line", in: line) { throw CLIError("\(name):\(number): \(refusal)") }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
            guard headerSeen else {
                guard trimmed == Self.header else {
                    throw CLIError("\(name):\(number): expected the header \(Self.header), found '\(trimmed.prefix(60))'")
                }
                headerSeen = true
                return
            }
            let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 3, let year = HijriDate.year(parsing: fields[0]),
                let month = Digits.wholeNumber(fields[1], in: 1...12)
            else {
                throw CLIError("\(name):\(number): expected hijri_year (1-9999),hijri_month (1-12),first_day, found '\(trimmed.prefix(60))'")
            }
            if let range, !range.contains(year) {
                leftOut += 1
                return
            }
            let start: PublishedMonthStart
            do {
                start = PublishedMonthStart(year: year, month: month, firstDay: try CivilDate(parsing: String(fields[2])))
                try SightedMonthStarts.validate(start)
            } catch CalendarError.outOfRange(let date, let calendar, let supported) {
                let error = CalendarError.outOfRange(date: date, calendar: calendar, supported: supported)
                throw CLIError("\(name):\(number): \(error); --years leaves such lines out")
            } catch { throw CLIError("\(name):\(number): \(error)") }
            if let other = seen[year * 12 + month] { throw CLIError("\(name):\(number): \(year)-\(month) was given already on line \(other)") }
            seen[year * 12 + month] = number
            starts.append(start)
        }
        guard headerSeen else { throw CLIError("\(name): empty: expected the header \(Self.header)") }
        let now = try global.clock()
        let (published, replaced) =
            try await global.withPostgres { [starts] in try await $0.publishMonthStarts(starts, at: now) }
            ?? global.openDatabase().publishMonthStarts(starts, at: now)
        let years = starts.isEmpty ? "" : " (\(starts.map(\.year).min()!)-\(starts.map(\.year).max()!) AH)"
        if global.json { return try printJSON(["published": published, "replaced": replaced.count, "left_out": leftOut]) }
        print(
            "published \(published) month starts from \(name)\(years)"
                + (replaced.isEmpty ? "" : "; \(replaced.count) replaced a start published before")
                + (leftOut > 0 ? "; left out \(leftOut) lines outside --years" : ""))
    }

    /// `FIRST-LAST`, two Hijri years in order.
    static func years(_ text: String) throws -> ClosedRange<Int> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = HijriDate.year(parsing: parts[0]), let last = HijriDate.year(parsing: parts[1]), first <= last
        else { throw CLIError("invalid --years '\(text)': expected FIRST-LAST, two Hijri years from 1 to 9999 in order, such as 1423-1447") }
        return first...last
    }
}

struct SightingListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the published month starts.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let starts = try await global.withPostgres { try await $0.publishedMonthStarts() } ?? global.openDatabase().publishedMonthStarts()
        if global.json { return try printJSON(starts) }
        if starts.isEmpty { print("no published month starts") }
        for start in starts {
            let uq = try IslamicCalendar.ummAlQura.firstDay(year: start.year, month: start.month)
            let shift = start.firstDay.dayNumber - uq
            print(
                "\(start.year)-\(String(format: "%02d", start.month))  \(HijriMonth(rawValue: start.month)!.englishName.padding(toLength: 18, withPad: " ", startingAt: 0)) \(start.firstDay)  (Umm al-Qura \(shift == 0 ? "same day" : String(format: "%+d", shift)))"
            )
        }
    }
}

struct SightingRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a published month start.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Hijri year.", transform: { try hijriYearArgument($0) }) var year: Int
    @Argument(help: "Hijri month, 1-12.", transform: { try hijriMonthArgument($0) }) var month: Int

    func run() async throws {
        let removed = try await global.withPostgres { [year, month] in try await $0.removeMonthStart(year: year, month: month) }
        guard try removed ?? global.openDatabase().removeMonthStart(year: year, month: month) else {
            throw CLIError("no published start for \(year)-\(month)")
        }
        if global.json { return try printJSON(["removed": "\(year)-\(month)"]) }
        print("removed the published start of \(year)-\(month)")
    }
}
