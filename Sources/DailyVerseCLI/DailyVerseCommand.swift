import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

/// `dailyverse`: the command tree.
@available(macOS 10.15, macCatalyst 13, iOS 13, tvOS 13, watchOS 6, *)
public struct DailyVerseCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "dailyverse",
        abstract: "A daily Quran verse chosen by the Hijri calendar, with five layers of commentary.",
        discussion: """
            The database is created and seeded from data/ on first use (default: the XDG data directory; \
            override with --db or DAILYVERSE_DB). Every command takes --json and --now.
            """,
        subcommands: [
            Today.self, HijriCommand.self, GregorianCommand.self, VerseCommand.self, CalendarCommand.self, Import.self, Sighting.self,
            Devices.self, Serve.self, OutboxCommand.self, Status.self, Push.self, Vapid.self, ContentCommand.self, OnboardingCommand.self, Guests.self,
        ],
        defaultSubcommand: Today.self)

    public init() {}
}

// MARK: - today

struct Today: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the verse of the day for a local date.",
        discussion: """
            The day is the user's local civil date: --date as given, or the date that --at (else --now, else the \
            clock) falls on in --tz. The Hijri date of that day, under --calendar and --adjust, chooses the verse: \
            an occasion's own verse on its day, otherwise the month's pool in rotation.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions

    @Option(help: ArgumentHelp("A local civil date, YYYY-MM-DD.", valueName: "date"))
    var date: String?

    @Option(help: ArgumentHelp("An instant (ISO 8601), turned into the local date in --tz.", valueName: "instant"))
    var at: String?

    @Option(help: ArgumentHelp("IANA time zone of the user. Default: the system zone (UTC when unset).", valueName: "zone"))
    var tz: String?

    @Option(help: ArgumentHelp("Translation id.", valueName: "id"))
    var translation: String = BundledContent.pickthall.id

    func run() throws {
        try reportingErrors {
            let zone = try parseTimeZone(tz)
            let kind = try calendarOptions.kind()
            let adjustment = try calendarOptions.adjustment()
            if date != nil && at != nil { throw CLIError("give --date or --at, not both") }
            let day: CivilDate
            if let date {
                day = try CivilDate(parsing: date)
            } else {
                let instant = try at.map { try parseInstant($0, option: "--at") } ?? global.clock()
                day = CivilDate(instant: instant, timeZone: zone)
            }
            let database = try global.openDatabase()
            let report = try DailyVerseService(database: database).today(
                TodayRequest(date: day, timeZone: zone.identifier, calendar: kind, adjustment: adjustment, translation: translation))
            if global.json { return try printJSON(report) }
            var out = "\(report.date) · \(report.hijriDate.formatted) AH (\(report.hijri.calendar)"
            out += report.hijri.adjustment == 0 ? ")" : String(format: ", %+d)", report.hijri.adjustment)
            out += " · \(report.timezone)\n"
            if let lead = report.selection.occasions.first { out += lead.occasion.heading(tonight: lead.tonight) + "\n" }
            if let description = report.selection.occasion?.description { out += wrap(description, indent: "") + "\n" }
            for other in report.selection.others { out += "Also: " + other.occasion.heading(tonight: other.tonight) + "\n" }
            out += "\nTheme: \(report.theme.name)\n" + wrap(report.theme.relevance) + "\n\n"
            out += verseText(report.content, verse: report.verse)
            out += "\n" + wrap(report.attribution, indent: "") + "\n"
            print(out, terminator: "")
        }
    }
}

// MARK: - hijri / gregorian

/// `hijri --json` and `gregorian --json`.
struct ConversionJSON: Encodable {
    let gregorian: String
    let hijri: Hijri
    let calendar: String

    struct Hijri: Encodable {
        let year, month, day: Int
        let monthName: String
        let monthLength: Int
        enum CodingKeys: String, CodingKey { case year, month, day, monthName = "month_name", monthLength = "month_length" }
    }

    init(gregorian: CivilDate, hijri: HijriDate, calendar: IslamicCalendar) throws {
        self.gregorian = gregorian.description
        self.hijri = Hijri(
            year: hijri.year, month: hijri.month, day: hijri.day, monthName: hijri.monthName.englishName,
            monthLength: try calendar.monthLength(year: hijri.year, month: hijri.month))
        self.calendar = calendar.kind.rawValue
    }

    func printText() {
        let name = HijriMonth(rawValue: hijri.month)!
        print("\(gregorian) = \(hijri.day) \(name.englishName) \(hijri.year) AH (\(name.arabicName)) · \(calendar) · month of \(hijri.monthLength) days")
    }
}

struct HijriCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hijri", abstract: "Convert a Gregorian date to the Hijri calendar.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Argument(help: ArgumentHelp("Gregorian date, YYYY-MM-DD.", valueName: "date")) var date: String

    func run() throws {
        try reportingErrors {
            let day = try CivilDate(parsing: date)
            let (calendar, adjustment) = try calendarOptions.resolve(global)
            let result = try ConversionJSON(gregorian: day, hijri: calendar.hijriDate(for: day, adjustment: adjustment), calendar: calendar)
            global.json ? try printJSON(result) : result.printText()
        }
    }
}

struct GregorianCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gregorian", abstract: "Convert a Hijri date (YYYY-MM-DD) to the Gregorian calendar.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Argument(help: ArgumentHelp("Hijri date, YYYY-MM-DD (e.g. 1446-09-01 for 1 Ramadan 1446).", valueName: "date")) var date: String

    func run() throws {
        try reportingErrors {
            let hijri = try HijriDate(parsing: date)
            let (calendar, adjustment) = try calendarOptions.resolve(global)
            let result = try ConversionJSON(gregorian: calendar.civilDate(for: hijri, adjustment: adjustment), hijri: hijri, calendar: calendar)
            global.json ? try printJSON(result) : result.printText()
        }
    }
}

// MARK: - verse

struct VerseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verse", abstract: "Print a verse (2:255) or passage (96:1-5) with its five layers.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("SURA:AYA or SURA:AYA-AYA.", valueName: "key")) var key: String
    @Option(help: ArgumentHelp("Translation id.", valueName: "id")) var translation: String = BundledContent.pickthall.id

    func run() throws {
        try reportingErrors {
            let range = try VerseRange(parsing: key)
            let report = try DailyVerseService(database: global.openDatabase()).verse(range, translation: translation)
            if global.json { return try printJSON(report) }
            print(verseText(report.content, verse: report.verse))
            print(wrap(report.attribution, indent: ""))
        }
    }
}

// MARK: - calendar

struct CalendarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calendar", abstract: "Show a Hijri year: its months with their Gregorian starts and themes, and its occasions.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Option(name: .customLong("hijri-year"), help: ArgumentHelp("The Hijri year. Default: the current one (UTC).", valueName: "year"))
    var hijriYear: Int?

    func run() throws {
        try reportingErrors {
            let kind = try calendarOptions.kind()
            let adjustment = try calendarOptions.adjustment()
            let database = try global.openDatabase()
            let year = try hijriYear
                ?? database.islamicCalendar(kind).hijriDate(
                    for: CivilDate(instant: global.clock(), timeZone: TimeZone(identifier: "UTC")!), adjustment: adjustment
                ).year
            let report = try DailyVerseService(database: database).year(year, calendar: kind, adjustment: adjustment)
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

// MARK: - import

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import Quran text, a translation or commentary. The whole file is checked first; a bad line imports nothing.",
        subcommands: [ImportQuran.self, ImportTranslation.self, ImportCommentary.self])
}

struct ImportQuran: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "quran", abstract: "Import Arabic Quran text in Tanzil format (sura|aya|text).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Tanzil text file.", valueName: "file")) var file: String
    @Option(help: ArgumentHelp("Edition id; the bundled Arabic is quran-simple.", valueName: "id")) var id: String = BundledContent.arabicEdition.id
    @Option(help: ArgumentHelp("Edition name.", valueName: "name")) var name: String = BundledContent.arabicEdition.name

    func run() throws {
        try reportingErrors {
            let parsed = try TanzilFile(contentsOf: URL(fileURLWithPath: file))
            let database = try global.openDatabase()
            let bar = ProgressBar("quran")
            let edition = Edition(id: id, kind: "quran", language: "ar", name: name, credit: BundledContent.arabicEdition.credit)
            try database.importQuran(parsed, edition: edition, progress: bar.update)
            try report(global.json, ImportResult(kind: "quran", id: id, count: parsed.ayat.count, file: file))
        }
    }
}

struct ImportTranslation: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "translation", abstract: "Import a translation in Tanzil format; its ayat must match the Arabic.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Tanzil text file.", valueName: "file")) var file: String
    @Option(help: ArgumentHelp("Translation id, e.g. en.pickthall.", valueName: "id")) var id: String
    @Option(help: ArgumentHelp("Translation name.", valueName: "name")) var name: String?
    @Option(help: ArgumentHelp("Language code.", valueName: "code")) var language: String = "en"
    @Option(help: ArgumentHelp("Credit line shown with the text.", valueName: "text")) var credit: String?

    func run() throws {
        try reportingErrors {
            guard id.range(of: "^[a-z]{2,3}\\.[a-z0-9_-]{1,40}$", options: .regularExpression) != nil else {
                throw CLIError("invalid translation id '\(id)': expected LANGUAGE.NAME such as en.pickthall")
            }
            let database = try global.openDatabase()
            let parsed = try TanzilFile(contentsOf: URL(fileURLWithPath: file), expectedCounts: database.ayahCounts())
            let bar = ProgressBar("translation")
            let edition = Edition(id: id, kind: "translation", language: language, name: name ?? id, credit: credit ?? "Translation: \(name ?? id)")
            try database.importTranslation(parsed, edition: edition, progress: bar.update)
            try report(global.json, ImportResult(kind: "translation", id: id, count: parsed.ayat.count, file: file))
        }
    }
}

struct ImportCommentary: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commentary", abstract: "Import commentary in JSON Lines (see the README); an entry replaces the one for the same verses and layer.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("JSON Lines file.", valueName: "file")) var file: String

    func run() throws {
        try reportingErrors {
            let url = URL(fileURLWithPath: file)
            let parsed = try CommentaryFile(contentsOf: url)
            let database = try global.openDatabase()
            let bar = ProgressBar("commentary")
            try database.importCommentary(parsed, name: url.lastPathComponent, progress: bar.update)
            try report(global.json, ImportResult(kind: "commentary", id: nil, count: parsed.entries.count, file: file))
        }
    }
}

struct ImportResult: Encodable {
    let kind: String
    let id: String?
    let count: Int
    let file: String
}

private func report(_ json: Bool, _ result: ImportResult) throws {
    if json { return try printJSON(result) }
    print("imported \(result.count) \(result.kind == "commentary" ? "entries" : "ayat") of \(result.kind)\(result.id.map { " '\($0)'" } ?? "") from \(result.file)")
}

// MARK: - sighting

struct Sighting: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage published month starts for the sighted calendar.",
        discussion: """
            A published start may differ from Umm al-Qura by at most 2 days. Neighbouring months move with it so that \
            every month keeps 29 or 30 days (README, "The sighted calendar").
            """,
        subcommands: [SightingSet.self, SightingList.self, SightingRemove.self])
}

struct SightingSet: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Publish the first day of a Hijri month.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Hijri year.") var year: Int
    @Argument(help: "Hijri month, 1-12.") var month: Int
    @Argument(help: ArgumentHelp("Gregorian first day, YYYY-MM-DD.", valueName: "date")) var date: String

    func run() throws {
        try reportingErrors {
            guard (1...12).contains(month) else { throw CLIError("invalid month \(month): expected 1 to 12") }
            let start = PublishedMonthStart(year: year, month: month, firstDay: try CivilDate(parsing: date))
            try SightedMonthStarts.validate(start)
            let database = try global.openDatabase()
            try database.publishMonthStart(start, at: global.clock())
            if global.json { return try printJSON(start) }
            print("published: \(HijriMonth(rawValue: month)!.englishName) \(year) begins on \(start.firstDay)")
        }
    }
}

struct SightingList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the published month starts.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try reportingErrors {
            let starts = try global.openDatabase().publishedMonthStarts()
            if global.json { return try printJSON(starts) }
            if starts.isEmpty { print("no published month starts") }
            for start in starts {
                let uq = try IslamicCalendar.ummAlQura.firstDay(year: start.year, month: start.month)
                let shift = start.firstDay.dayNumber - uq
                print("\(start.year)-\(String(format: "%02d", start.month))  \(HijriMonth(rawValue: start.month)!.englishName.padding(toLength: 18, withPad: " ", startingAt: 0)) \(start.firstDay)  (Umm al-Qura \(shift == 0 ? "same day" : String(format: "%+d", shift)))")
            }
        }
    }
}

struct SightingRemove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a published month start.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Hijri year.") var year: Int
    @Argument(help: "Hijri month, 1-12.") var month: Int

    func run() throws {
        try reportingErrors {
            guard try global.openDatabase().removeMonthStart(year: year, month: month) else {
                throw CLIError("no published start for \(year)-\(month)")
            }
            if global.json { return try printJSON(["removed": "\(year)-\(month)"]) }
            print("removed the published start of \(year)-\(month)")
        }
    }
}

@available(macOS 10.15, macCatalyst 13, iOS 13, tvOS 13, watchOS 6, *)
extension DailyVerseCommand {
    /// The program's entry point. (From a `main.swift`, `main()` would resolve to the synchronous overload, which
    /// cannot run `serve`.)
    public static func runAsMain() async {
        // The database, its log and the spool hold device tokens, emails and password hashes: whatever this process
        // creates is readable by its owner only, as under the shipped unit (UMask=0077).
        umask(0o077)
        do {
            var command = try await asyncParseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // --help and --version print as the parser does (exit 0); an error already reported is an ExitCode.
            if error is ExitCode || exitCode(for: error) == .success { exit(withError: error) }
            // Every other error, the parser's included, is one line and exit status 1: the README's contract.
            FileHandle.standardError.write(Data("dailyverse: \(oneLineMessage(for: error))\n".utf8))
            Foundation.exit(1)
        }
    }

    /// The parser's message for `error` on one line, with a pointer to `--help` in place of the usage block.
    static func oneLineMessage(for error: Error) -> String {
        var text = message(for: error).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("Usage:") && !$0.hasPrefix("See '") }.joined(separator: " ")
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        return text + " (see --help)"
    }
}
