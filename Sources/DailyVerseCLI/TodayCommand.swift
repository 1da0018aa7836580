import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct TodayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "today", abstract: "Print the verse of the day for a local date.",
        discussion: """
            The day is the user's local civil date: --date as given, or the date that --at (else --now, else the \
            clock) falls on in --tz. The Hijri date of that day, under --calendar and --adjust, chooses the verse: \
            an occasion's own verse on its day, otherwise the month's pool in rotation.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("A local civil date, YYYY-MM-DD.", valueName: "date"))
    var date: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("An instant (ISO 8601), turned into the local date in --tz.", valueName: "instant"))
    var at: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("IANA time zone of the user. Default: the system zone (UTC when unset).", valueName: "zone"))
    var tz: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Translation id.", valueName: "id"))
    var translation: String = BundledContent.pickthall.id
    @OptionGroup var reader: ReaderLanguageOption

    func run() async throws {
        let zone = try parseTimeZone(tz)
        let kind = calendarOptions.calendar
        let adjustment = calendarOptions.adjust
        if date != nil && at != nil { throw CLIError("give --date or --at, not both") }
        let day: CivilDate
        if let date {
            day = try CivilDate(parsing: date)
        } else {
            let instant = try at.map { try parseInstant($0, option: "--at") } ?? global.clock()
            day = CivilDate(instant: instant, timeZone: zone)
        }
        let database = try await global.openContent()
        let report = try DailyVerseReports(database: database).today(
            TodayRequest(
                // The zone as the user named it: Foundation calls UTC "GMT".
                date: day, timeZone: tz.flatMap { TimeZone.iana($0) != nil ? $0 : nil } ?? zone.identifier, calendar: kind, adjustment: adjustment,
                translation: translation, language: reader.language)
        )
        if global.json { return try printJSON(report) }
        var out = "\(report.date) · \(report.hijriDate.formatted) AH (\(report.hijri.calendar)"
        out += report.hijri.adjustment == 0 ? ")" : String(format: ", %+d)", report.hijri.adjustment)
        out += " · \(report.timezone)\n"
        if let lead = report.selection.occasions.first { out += lead.occasion.heading(tonight: lead.tonight) + "\n" }
        if let description = report.selection.occasion?.description { out += wrap(description, indent: "") + "\n" }
        for other in report.selection.others {
            out +=
                "Also: " + other.occasion.heading(tonight: other.tonight)
                + " — its own reading: dailyverse verse --occasion \(other.occasion.id)\n"
        }
        out += "\nTheme: \(report.theme.name)\n" + wrap(report.theme.relevance) + "\n\n"
        out += verseText(report.content, verse: report.verse)
        out += "\n" + wrap(report.attribution, indent: "") + "\n"
        print(out, terminator: "")
    }
}
