import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

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
        print(
            "\(gregorian) = \(hijri.day) \(name.englishName) \(hijri.year) AH (\(name.arabicName)) · \(calendar) · month of \(hijri.monthLength) days"
        )
    }
}

struct HijriCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hijri", abstract: "Convert a Gregorian date to the Hijri calendar.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Argument(help: ArgumentHelp("Gregorian date, YYYY-MM-DD.", valueName: "date")) var date: String

    func run() async throws {
        let day = try CivilDate(parsing: date)
        let (calendar, adjustment) = try await calendarOptions.resolve(global)
        let result = try ConversionJSON(gregorian: day, hijri: calendar.hijriDate(for: day, adjustment: adjustment), calendar: calendar)
        global.json ? try printJSON(result) : result.printText()
    }
}
