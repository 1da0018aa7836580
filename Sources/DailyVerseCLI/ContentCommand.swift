import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseOfTheDay

struct ContentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "content", abstract: "Tools for the content team: what a reader sees over a year.",
        subcommands: [ContentCoverageCommand.self, ContentCheckCommand.self])
}

struct ContentCoverageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coverage", abstract: "Per layer, on how many days of a Hijri year it is shown, and which selections lack which layers.",
        discussion: """
            Every day of the year is selected as `today` selects it (the verse or passage, and the occasion on its \
            day); a layer counts for a day when that selection has an entry for it. Also counts the commentary \
            entries by provenance: editorial text, summaries of named works, quotations.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Option(
        name: .customLong("hijri-year"), parsing: .unconditional,
        help: ArgumentHelp("The Hijri year. Default: the current one (UTC).", valueName: "year"))
    var hijriYear: Int?
    @Option(parsing: .unconditional, help: ArgumentHelp("How many incomplete selections the text lists (--json lists all).", valueName: "n"))
    var show = 20

    func validate() throws {
        guard (0...10_000).contains(show) else { throw ValidationError("invalid --show \(show): expected 0 to 10000") }
    }

    func run() throws {
        try reportingErrors {
            let kind = calendarOptions.calendar
            let database = try global.openDatabase()
            let year =
                try hijriYear
                ?? database.islamicCalendar(kind).hijriDate(for: CivilDate(instant: global.clock(), timeZone: TimeZone(identifier: "UTC")!)).year
            let report = try DailyVerseReports(database: database).coverage(year: year, calendar: kind)
            if global.json { return try printJSON(report) }
            print("\(year) AH (\(report.calendar)): \(report.days) days, \(report.selections) selections\n")
            print("layer            days shown   selections lacking it")
            for layer in report.layers {
                let share = report.days == 0 ? 0 : 100 * layer.days / report.days
                print(
                    layer.id.padding(toLength: 16, withPad: " ", startingAt: 0) + String(format: "%4d (%3d%%)   %d", layer.days, share, layer.missing)
                )
            }
            print("\nselections lacking layers: \(report.incomplete.count)")
            for selection in report.incomplete.prefix(show) {
                let name = selection.verses + (selection.occasion.map { " (\($0))" } ?? "")
                print("  \(name), \(selection.days) day\(selection.days == 1 ? "" : "s"): \(selection.missing.joined(separator: ", "))")
            }
            if report.incomplete.count > show { print("  … \(report.incomplete.count - show) more (--show N, or --json)") }
            print("\ncommentary entries: " + report.entries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
    }
}

struct ContentCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Checks a data folder before it is seeded: verses, pools, occasions, commentary and sources.",
        discussion: """
            Errors (exit 1): a verse that does not exist; a month pool under 30 selections or with a verse in two of \
            them; an occasion on a day some years lack, or without its Arabic name; a commentary entry no day ever \
            shows; an ordinary day showing text written for an occasion's passage; an editorial entry naming a source, \
            or a summary or quotation without its work, author and reference. Warnings (exit 0, or 1 with --strict): \
            a foundation entry outside 50-150 words, a long occasion title.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The data folder to check. Default: the one `serve` would seed from.", valueName: "dir"))
    var directory: String?
    @Flag(help: "Fail on warnings too.") var strict = false
    @Option(parsing: .unconditional, help: ArgumentHelp("How many warnings the text lists (--json lists all).", valueName: "n"))
    var show = 20

    func validate() throws {
        guard (0...100_000).contains(show) else { throw ValidationError("invalid --show \(show): expected 0 to 100000") }
    }

    func run() throws {
        try reportingErrors {
            let folder = try DataDirectory.locate(explicit: directory ?? global.data)
            let check = ContentCheck(directory: folder)
            let failed = !check.errors.isEmpty || (strict && !check.warnings.isEmpty)
            if global.json {
                try printJSON(CheckJSON(ok: !failed, selections: check.selections, entries: check.entries, problems: check.problems))
            } else {
                for problem in check.errors { print("error: \(problem.subject): \(problem.message)") }
                for problem in check.warnings.prefix(show) { print("warning: \(problem.subject): \(problem.message)") }
                if check.warnings.count > show { print("… \(check.warnings.count - show) more warnings (--show N, or --json)") }
                print(
                    "\(failed ? "failed" : "ok"): \(check.selections) selections, \(check.entries) commentary entries; "
                        + "\(check.errors.count) error\(check.errors.count == 1 ? "" : "s"), \(check.warnings.count) warning\(check.warnings.count == 1 ? "" : "s")"
                )
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct CheckJSON: Encodable {
        let ok: Bool
        let selections: Int
        let entries: Int
        let problems: [ContentCheck.Problem]
    }
}
