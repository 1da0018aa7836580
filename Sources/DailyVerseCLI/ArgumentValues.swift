import ArgumentParser
import ContentStore
import Delivery
import Diagnostics
import HijriCalendar
import Notifications

// Values the parser reads as their own types: a bad one stops the command before it does anything, with the
// parser's one-line error naming the value and, for a closed set, what it may be (listed in --help too).

extension CalendarKind: ExpressibleByArgument {}
extension TafsirFolder.Format: ExpressibleByArgument {}

extension OutboxStatus: ExpressibleByArgument {}

extension Platform: ExpressibleByArgument {}

extension DeviceLocale: ExpressibleByArgument {}

extension Adjustment: ExpressibleByArgument {
    /// A whole number of days from -2 to 2.
    public init?(argument: String) {
        guard let days = Int(argument), let adjustment = try? Adjustment(days) else { return nil }
        self = adjustment
    }

    public static var allValueStrings: [String] { range.map(String.init) }

    public var defaultValueDescription: String { String(days) }
}

/// A Hijri year given on the command line (`--hijri-year`, `sighting set YEAR`), read as every Hijri year is read
/// (`HijriDate.year(parsing:)`, as the API reads `/v1/calendar/{year}`): the parser refuses `01447` or `+1447`, naming
/// it. (Read as an `Int`, they were taken.)
func hijriYearArgument(_ text: String) throws -> Int {
    guard let year = HijriDate.year(parsing: text) else {
        throw CLIError(
            "expected a Hijri year from \(HijriDate.yearRange.lowerBound) to \(HijriDate.yearRange.upperBound) in digits alone, such as 1447")
    }
    return year
}

/// A Hijri month given on the command line: 1 to 12 in digits alone.
func hijriMonthArgument(_ text: String) throws -> Int {
    guard let month = Digits.wholeNumber(text, in: 1...12) else { throw CLIError("expected a Hijri month from 1 to 12") }
    return month
}
