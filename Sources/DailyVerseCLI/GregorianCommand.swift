import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct GregorianCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gregorian", abstract: "Convert a Hijri date (YYYY-MM-DD) to the Gregorian calendar.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var calendarOptions: CalendarOptions
    @Argument(help: ArgumentHelp("Hijri date, YYYY-MM-DD (e.g. 1446-09-01 for 1 Ramadan 1446).", valueName: "date")) var date: String

    func run() async throws {
        let hijri = try HijriDate(parsing: date)
        let (calendar, adjustment) = try await calendarOptions.resolve(global)
        let result = try ConversionJSON(gregorian: calendar.civilDate(for: hijri, adjustment: adjustment), hijri: hijri, calendar: calendar)
        global.json ? try printJSON(result) : result.printText()
    }
}
