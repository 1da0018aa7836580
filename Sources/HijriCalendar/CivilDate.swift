import Foundation

/// A day of the proleptic Gregorian calendar (ISO 8601), as a user's wall calendar shows it.
///
/// Internally every calendar works on day numbers (days since 1970-01-01), so conversions are integer arithmetic.
public struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// The supported years: those that ISO 8601's `YYYY-MM-DD` writes with four digits.
    public static let yearRange = 1...9999

    /// The day numbers of the supported years: 0001-01-01 to 9999-12-31.
    public static let dayNumberRange = -719_162...2_932_896

    /// The instants of the supported years, in seconds since 1970 (UTC): a value from outside is checked against this
    /// before any arithmetic.
    public static let secondsRange = Double(dayNumberRange.lowerBound) * 86_400...Double(dayNumberRange.upperBound + 1) * 86_400 - 1

    /// Far past any supported date; arithmetic on day numbers is clamped here so that no input can overflow it.
    static let arithmeticLimit = 1 << 40

    public init(year: Int, month: Int, day: Int) throws(CalendarError) {
        guard Self.yearRange.contains(year), (1...12).contains(month),
            (1...Self.daysInMonth(year: year, month: month)).contains(day)
        else {
            throw .invalidGregorianDate(String(format: "%04d-%02d-%02d", year, month, day))
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `dayNumber` days after 1970-01-01 (negative numbers are before it).
    ///
    /// For day numbers the calendars compute. A value far outside `dayNumberRange` is clamped first (so this never
    /// traps); a day number from outside goes through `init(validatingDayNumber:)`.
    public init(dayNumber: Int) {
        // Howard Hinnant's civil_from_days.
        let z = min(max(dayNumber, -Self.arithmeticLimit), Self.arithmeticLimit) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.year = yoe + era * 400 + (m <= 2 ? 1 : 0)
        self.month = m
        self.day = d
    }

    /// A day number from outside: an error naming it unless it is in `dayNumberRange`.
    public init(validatingDayNumber dayNumber: Int) throws(CalendarError) {
        guard Self.dayNumberRange.contains(dayNumber) else {
            throw .invalidGregorianDate("day \(dayNumber) (expected \(Self.dayNumberRange.lowerBound) to \(Self.dayNumberRange.upperBound))")
        }
        self.init(dayNumber: dayNumber)
    }

    /// Days since 1970-01-01.
    public var dayNumber: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Parses `YYYY-MM-DD`; anything else, or a day the month does not have, is an error naming the text.
    public init(parsing text: String) throws(CalendarError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        else { throw .invalidGregorianDate(text) }
        do { try self.init(year: y, month: m, day: d) } catch { throw .invalidGregorianDate(text) }
    }

    /// The civil date that `instant` falls on in `timeZone`: "today" for a user in that zone.
    ///
    /// Never traps: an instant outside the supported years (checked where it came in, see `secondsRange`) gives a
    /// date outside them too.
    public init(instant: Date, timeZone: TimeZone) {
        let offset = timeZone.secondsFromGMT(for: instant)
        let seconds = Date.wholeSeconds(instant) + offset
        self.init(dayNumber: seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
    }

    /// The day `days` after this one (before it when negative). Clamped far outside the supported years, never a trap.
    public func adding(days: Int) -> CivilDate {
        let limited = min(max(days, -Self.arithmeticLimit), Self.arithmeticLimit)
        return CivilDate(dayNumber: dayNumber + limited)
    }

    /// ISO weekday: 1 = Monday … 7 = Sunday.
    public var isoWeekday: Int {
        let n = dayNumber + 3  // 1970-01-01 was a Thursday (ISO 4)
        return ((n % 7) + 7) % 7 + 1
    }

    /// `YYYY-MM-DD`, written without `String(format:)`, which is slow and called for every key and SQL argument.
    public var description: String {
        // Straight into a small string, with no allocation: the scheduler formats one for every outbox row.
        if (0...9999).contains(year) {
            return String(unsafeUninitializedCapacity: 10) { buffer in
                func put(_ value: Int, at start: Int, width: Int) {
                    var rest = value
                    for index in (start..<(start + width)).reversed() {
                        buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                        rest /= 10
                    }
                }
                put(year, at: 0, width: 4)
                buffer[4] = UInt8(ascii: "-")
                put(month, at: 5, width: 2)
                buffer[7] = UInt8(ascii: "-")
                put(day, at: 8, width: 2)
                return 10
            }
        }
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    public static func isLeapYear(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension CivilDate: Codable {
    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension TimeZone {
    /// The zone with exactly this IANA name (or UTC/GMT), or the zone a link of the database names (a legacy name such
    /// as `US/Pacific`, which a newer system's time zone data may no longer install); nil for anything else, and for
    /// anything Foundation would only approximate.
    public static func iana(_ name: String) -> TimeZone? {
        ZoneAliases.resolve(name, lookup: exactZone)
    }

    /// The zone with exactly this name as the system's time zone data has it.
    static func exactZone(_ name: String) -> TimeZone? {
        guard let zone = TimeZone(identifier: name), zone.identifier == name || name == "UTC" || name == "GMT" else { return nil }
        return zone
    }
}

/// The IANA database's links: a stored zone name stays usable when the system's time zone data drops it (Debian moved
/// the `backward` names such as `US/Pacific` to a package of their own), by way of the zone it has always named.
public enum ZoneAliases {
    /// `name` as the system knows it, else the zone its link names; `lookup` is the system's (tests pass one that has
    /// lost the legacy names).
    public static func resolve(_ name: String, lookup: (String) -> TimeZone?) -> TimeZone? {
        if let zone = lookup(name) { return zone }
        guard let target = links[name] else { return nil }
        return lookup(target)
    }
}

extension Date {
    /// Whole seconds since 1970, rounded down: a conversion that never traps. NaN is 0, and values far outside the
    /// supported years are clamped to ±2^50 s (35 million years), which day arithmetic takes without overflowing.
    public static func wholeSeconds(_ instant: Date) -> Int {
        let value = instant.timeIntervalSince1970
        guard value.isFinite else { return value.isNaN ? 0 : (value > 0 ? 1 << 50 : -(1 << 50)) }
        return Int(min(max(value, -0x1p50), 0x1p50).rounded(.down))
    }

    /// Parses an ISO 8601 instant, `YYYY-MM-DDTHH:MM:SS` with an optional fraction and `Z` or `±HH:MM`, on the
    /// proleptic Gregorian calendar (Foundation's formatters switch to the Julian calendar before 1582). Nil for
    /// anything else, a day the month lacks included.
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") else { return nil }
        guard let date = try? CivilDate(parsing: String(decoding: bytes[0..<10], as: UTF8.self)) else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count, bytes[range].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return nil
            }
            return bytes[range].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
        guard bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), let hour = number(11..<13), let minute = number(14..<16),
            let second = number(17..<19), hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == UInt8(ascii: ".") {
            var scale = 0.1
            index += 1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                fraction += Double(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        if bytes[index] == UInt8(ascii: "Z") || bytes[index] == UInt8(ascii: "z") {
            guard index + 1 == bytes.count else { return nil }
        } else {
            guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"), index + 6 == bytes.count,
                bytes[index + 3] == UInt8(ascii: ":"), let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6)),
                hours <= 23, minutes <= 59
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        }
        let seconds = date.dayNumber * 86_400 + hour * 3600 + minute * 60 + second - offset
        self.init(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Whether this instant lies in the supported years (0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z).
    public var isInSupportedRange: Bool { CivilDate.secondsRange.contains(timeIntervalSince1970) }

    /// `2025-03-01T08:00:00Z`: ISO 8601 in UTC, whole seconds, written directly. Creating an ISO8601DateFormatter
    /// costs a fraction of a millisecond, too much for a line of every spooled record.
    public var iso8601UTC: String {
        let seconds = Date.wholeSeconds(self)
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - day * 86_400
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(CivilDate(dayNumber: day))T\(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60))Z"
    }
}
