/// The calendars a request can choose.
public enum CalendarKind: String, CaseIterable, Codable, Sendable {
    /// Saudi Arabia's Umm al-Qura table, 1300–1600 AH, as ICU and Foundation carry it.
    case ummAlQura = "umm-al-qura"
    /// The arithmetic (civil) calendar: Friday epoch, leap years 2, 5, 7, 10, 13, 16, 18, 21, 24, 26, 29.
    case tabular
    /// Umm al-Qura, except for the month starts the operator has published (moon sighting).
    case sighted
    /// Each month from the first evening its crescent is seen at the installation's region's sites (Odeh's
    /// criterion), except for the month starts the operator has published: the Shia calendar kept by sighting.
    case predicted

    /// What a new installation, device, account or request gets when it names no calendar: the predicted calendar, the
    /// Shia calendar kept by sighting. Devices and accounts keep the calendar they chose.
    public static let installationDefault = CalendarKind.predicted

    public init(parsing text: String) throws(CalendarError) {
        guard let kind = CalendarKind(rawValue: text) else { throw .unknownCalendar(text) }
        self = kind
    }
}

/// A shift of −2…+2 days applied on top of any calendar, as popular prayer apps offer:
/// with +1 the Hijri date shown for a civil day is the one the calendar gives for the next civil day.
public struct Adjustment: Hashable, Sendable, Codable {
    public static let range = -2...2
    public static let zero = Adjustment(uncheckedDays: 0)
    public let days: Int

    public init(_ days: Int) throws(CalendarError) {
        guard Self.range.contains(days) else { throw .invalidAdjustment(days) }
        self.days = days
    }

    private init(uncheckedDays: Int) { self.days = uncheckedDays }

    public init(from decoder: Decoder) throws {
        let days = try decoder.singleValueContainer().decode(Int.self)
        try self.init(days)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(days)
    }
}
