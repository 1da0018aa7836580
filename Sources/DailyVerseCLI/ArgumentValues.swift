import ArgumentParser
import ContentStore
import Delivery
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
