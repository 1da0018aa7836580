/// A local wall-clock time of day, `HH:MM`, at which a device wants its verse.
public struct ReminderTime: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public static let `default` = ReminderTime(uncheckedHour: 8, minute: 0)
    public static let midnight = ReminderTime(uncheckedHour: 0, minute: 0)
    public let hour: Int
    public let minute: Int

    public init(hour: Int, minute: Int) throws(DeviceError) {
        guard (0...23).contains(hour), (0...59).contains(minute) else {
            throw .invalidTime(String(format: "%02d:%02d", hour, minute))
        }
        self.init(uncheckedHour: hour, minute: minute)
    }

    private init(uncheckedHour hour: Int, minute: Int) {
        self.hour = hour
        self.minute = minute
    }

    /// Parses `HH:MM` (24-hour clock).
    public init(parsing text: String) throws(DeviceError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { throw .invalidTime(text) }
        self.init(uncheckedHour: hour, minute: minute)
    }

    public var secondsIntoDay: Int { hour * 3600 + minute * 60 }
    public var description: String { "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)" }

    public static func < (lhs: ReminderTime, rhs: ReminderTime) -> Bool { lhs.secondsIntoDay < rhs.secondsIntoDay }

    public init(from decoder: Decoder) throws {
        try self.init(parsing: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
