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
        // Byte by byte: a pass parses the time of every device it fires.
        var hour = 0
        var minute = 0
        var position = 0
        for byte in text.utf8 {
            if position == 2 {
                guard byte == UInt8(ascii: ":") else { throw .invalidTime(text) }
            } else {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), position < 5 else { throw .invalidTime(text) }
                if position < 2 { hour = hour * 10 + Int(byte - UInt8(ascii: "0")) } else { minute = minute * 10 + Int(byte - UInt8(ascii: "0")) }
            }
            position += 1
        }
        guard position == 5, hour <= 23, minute <= 59 else { throw .invalidTime(text) }
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
