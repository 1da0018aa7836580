import ArgumentParser
import ContentStore
import Diagnostics
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct ContentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "content", abstract: "Tools for the content team: what a reader sees over a year.",
        subcommands: [ContentCoverageCommand.self, ContentCheckCommand.self, ContentBundleTafsirCommand.self])
}

struct ContentBundleTafsirCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle-tafsir", abstract: "Writes data/tafsir/<edition>.jsonl: an imported edition's text for every verse that can be a day's.",
        discussion: """
            For every selection of the month pools and the occasions, each block of the edition that comments on its \
            verses is written verbatim: whole when it is short, else the part its excerpts need (the paragraphs they \
            start in and about 700 words after each, with the heading above; `…` where paragraphs are left out). Run \
            it after `import tafsir` from the dataset (scripts/bundle-tafsir.sh does both). Bundle only what the \
            edition's licence lets anyone redistribute: the command refuses a source whose terms say it may not be.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(
        name: .customLong("edition"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("An imported edition to bundle (repeat it).", valueName: "id"))
    var editions: [String] = []
    @Option(parsing: .unconditional, help: ArgumentHelp("The folder to write into (data/tafsir).", valueName: "dir"))
    var out: String
    @Option(
        name: .customLong("taken-from"), parsing: .unconditional,
        help: ArgumentHelp("Where the text was taken from, written into each file (the dataset and its commit).", valueName: "text"))
    var takenFrom: String

    func validate() throws {
        guard !editions.isEmpty else { throw ValidationError("name at least one --edition") }
        guard (1...500).contains(takenFrom.count) else { throw ValidationError("--taken-from: 1 to 500 characters") }
    }

    func run() throws {
        // The database named (a PostgreSQL address is refused: the content is each machine's SQLite copy), then the
        // folder, checked before the database is opened and the editions are read and cut.
        let named = try global.databaseSetting()
        let folder = URL(fileURLWithPath: try checkedPath(out, what: "--out"))
        try checkedOutputFolder(folder.path, for: out)
        let database = try global.openDatabase(setting: named)
        let calendar = try database.verseCalendar()
        var selections: [VerseRange] = []
        for range in calendar.months.flatMap(\.verses) + calendar.occasions.map(\.verses) where !selections.contains(range) {
            selections.append(range)
        }
        let sources = try database.layerSources()
        let all = Layer.ids.flatMap { sources.sources(for: $0) }
        // Every edition is read and its terms checked before any file is written: an unknown or refused edition named
        // last leaves the folder as it was, not half bundled.
        var bundles: [(id: String, edition: TafsirEdition, excerpts: [BundledExcerpt], data: Data)] = []
        var seen: Set<String> = []
        for id in editions where seen.insert(id).inserted {
            let (edition, terms, excerpts) = try database.bundle(edition: id, sources: all, selections: selections)
            // The altafsir.com editions and the texts without stated terms are never committed.
            for refusal in ["non-commercial", "Not stated", "not known", "never bundled"] where terms.licence.contains(refusal) {
                throw CLIError("refusing to bundle \(id): its terms say \"\(terms.licence.prefix(160))\"")
            }
            bundles.append((id, edition, excerpts, try BundledTafsir.write(edition, terms: terms, takenFrom: takenFrom, excerpts: excerpts)))
        }
        // Each file is written beside its place first (over what a killed run left there), then each is moved in by a
        // rename: a full disk, or a write that fails, leaves every old file whole.
        let files = bundles.map { folder.appendingPathComponent("\($0.id).jsonl") }
        let staged = files.map { $0.appendingPathExtension("partial") }
        do {
            for (bundle, file) in zip(bundles, staged) { try bundle.data.write(to: file) }
        } catch {
            for file in staged { try? FileManager.default.removeItem(at: file) }
            throw error
        }
        for (from, to) in zip(staged, files) where rename(from.path, to.path) != 0 {
            let reason = String(cString: strerror(errno))
            for file in staged { try? FileManager.default.removeItem(at: file) }
            throw CLIError("could not move \(from.path) to \(to.path): \(reason)")
        }
        for (bundle, file) in zip(bundles, files) {
            let parts = bundle.edition.blocks.filter { !$0.whole }.count
            print(
                "\(bundle.id): \(bundle.edition.blocks.count) blocks (\(parts) cut to the part the excerpts need), \(bundle.edition.verses.count) verses, \(bundle.excerpts.filter { $0.excerpt != nil }.count) of \(bundle.excerpts.count) excerpts, \(bundle.data.count / 1024) KB → \(file.path)"
            )
        }
    }
}

struct ContentCoverageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coverage", abstract: "Per layer, on how many days of a Hijri year it is shown, and which selections lack which layers.",
        discussion: """
            Every day of the year is selected as `today` selects it (the verse or passage, and the occasion on its \
            day); a layer counts for a day when that selection has an entry for it. Also counts the commentary \
            entries by provenance: editorial text, summaries of named works, quotations. --adjust shifts which Hijri \
            year is the current one; a year's days are its Hijri dates, so it changes nothing else.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Option(
        name: .customLong("hijri-year"), parsing: .unconditional,
        help: ArgumentHelp("The Hijri year, 1 to 9999. Default: the current one (UTC).", valueName: "year"), transform: { try hijriYearArgument($0) })
    var hijriYear: Int?
    @Option(parsing: .unconditional, help: ArgumentHelp("How many incomplete selections the text lists (--json lists all).", valueName: "n"))
    var show = 20
    @Flag(
        name: .customLong("every-verse"),
        help:
            "Instead of a year's days: every verse of the Quran, one at a time, and how many show each layer (with the editions imported, what a reader of any verse gets)."
    )
    var everyVerse = false

    func validate() throws {
        guard (0...10_000).contains(show) else { throw ValidationError("invalid --show \(show): expected 0 to 10000") }
    }

    func run() async throws {
        let kind = calendarOptions.calendar
        let database = try await global.openContent()
        if everyVerse {
            let bar = ProgressBar("suras")
            let report = try DailyVerseReports(database: database).everyVerseCoverage(progress: bar.update)
            if global.json { return try printJSON(report) }
            print("every verse (\(report.verses)), one at a time\n")
            print("layer            verses shown   from")
            for layer in report.layers {
                let sources = layer.sources.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(4).map { "\($0.key) \($0.value)" }
                let share = report.verses == 0 ? 0 : 100 * layer.verses / report.verses
                print(
                    layer.id.padding(toLength: 16, withPad: " ", startingAt: 0) + String(format: "%5d (%3d%%)   ", layer.verses, share)
                        + sources.joined(separator: ", "))
            }
            return
        }
        // A year's days are counted by their Hijri dates, which --adjust does not change: it says which year is today's.
        let year =
            try hijriYear
            ?? database.islamicCalendar(kind).hijriDate(
                for: CivilDate(instant: global.clock(), timeZone: TimeZone(identifier: "UTC")!), adjustment: calendarOptions.adjust
            ).year
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
        // Whose words each layer is, by days: quotations of the editions, our summaries, our own text.
        print("\nlayer            quotation  summary  editorial   shown from")
        for layer in report.layers {
            let count = { (key: String) in String(format: "%9d", layer.provenance[key] ?? 0) }
            let sources = layer.sources.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(4).map { "\($0.key) \($0.value)" }
            print(
                layer.id.padding(toLength: 16, withPad: " ", startingAt: 0) + count("quotation") + count("editorial-summary")
                    + String(format: "%11d", layer.provenance["editorial"] ?? 0) + "   " + sources.joined(separator: ", "))
        }
        let allFive = report.allLayersDays
        print("\nall five layers: \(allFive) of \(report.days) days (\(report.days == 0 ? 0 : 100 * allFive / report.days)%)")
        print("\nselections lacking layers: \(report.incomplete.count)")
        for selection in report.incomplete.prefix(show) {
            let name = selection.verses + (selection.occasion.map { " (\($0))" } ?? "")
            print("  \(name), \(selection.days) day\(selection.days == 1 ? "" : "s"): \(selection.missing.joined(separator: ", "))")
        }
        if report.incomplete.count > show { print("  … \(report.incomplete.count - show) more (--show N, or --json)") }
        print("\ncommentary entries: " + report.entries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
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
            a foundation entry outside 50-150 words, a long occasion title, a selection a bundled edition keeps no \
            excerpt for. A bundled edition's kept excerpts must be its own words (and, with --recut, the ones today's \
            rules cut).
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The data folder to check. Default: the one `serve` would seed from.", valueName: "dir"))
    var directory: String?
    @Flag(help: "Fail on warnings too.") var strict = false
    @Flag(
        help: """
            Also cut every excerpt the bundled editions keep again with today's rules and fail where one differs (the \
            rules changed and the bundle was not written again): tens of seconds.
            """)
    var recut = false
    @Option(parsing: .unconditional, help: ArgumentHelp("How many warnings the text lists (--json lists all).", valueName: "n"))
    var show = 20

    func validate() throws {
        guard (0...100_000).contains(show) else { throw ValidationError("invalid --show \(show): expected 0 to 100000") }
    }

    func run() throws {
        // The folder named, else the one `serve` seeds from: --data, DAILYVERSE_DATA, the configuration's `data`, beside the binary.
        let folder =
            try directory.map { try DataDirectory.locate(explicit: checkedPath($0, what: "the data folder"), environment: [:]) }
            ?? global.dataDirectory()
        let cutting = recut && !global.json ? ProgressBar("excerpts cut again") : nil
        let check = ContentCheck(directory: folder, recut: recut, progress: cutting?.update)
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

    struct CheckJSON: Encodable {
        let ok: Bool
        let selections: Int
        let entries: Int
        let problems: [ContentCheck.Problem]
    }
}
