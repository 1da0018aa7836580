import Diagnostics

/// A day of the Hijri calendar. It says nothing of which calendar produced it; `IslamicCalendar` does.
public struct HijriDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD` (Hijri year, month, day) without checking the day against a calendar: the year as
    /// `year(parsing:)` reads it, the month and the day two digits each, as a Gregorian date writes them (`1446-9-1`
    /// was taken here while `hijri 2026-1-1` was refused).
    public init(parsing text: String) throws(CalendarError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        func twoDigits(_ part: Substring) -> Int? {
            guard part.utf8.count == 2, part.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
            return Int(part)
        }
        guard parts.count == 3, let y = Self.year(parsing: parts[0]), let m = twoDigits(parts[1]), let d = twoDigits(parts[2]),
            (1...12).contains(m), (1...30).contains(d)
        else { throw .invalidHijriDate(text) }
        self.init(year: y, month: m, day: d)
    }

    /// The Hijri years that may be written: 1 to 9999, at most four digits.
    public static let yearRange = 1...9999

    /// A Hijri year as every input writes it (a date, `--hijri-year`, `sighting`'s years, `/v1/calendar/{year}`): one
    /// to four ASCII digits and nothing else (no sign, space, or fifth digit), 1 to 9999; nil otherwise. Read before
    /// any arithmetic; whether a calendar covers the year is the calendar's question.
    public static func year(parsing text: some StringProtocol) -> Int? { Digits.wholeNumber(text, in: yearRange) }

    public var monthName: HijriMonth { HijriMonth(rawValue: month)! }

    /// `1 Ramadan 1446`
    public var formatted: String { "\(day) \(monthName.englishName) \(year)" }

    public var description: String { "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)" }

    public static func < (lhs: HijriDate, rhs: HijriDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// The twelve months, with English transliterations and Arabic names.
public enum HijriMonth: Int, CaseIterable, Sendable {
    case muharram = 1, safar, rabiAlAwwal, rabiAlThani, jumadaAlUla, jumadaAlAkhirah
    case rajab, shaban, ramadan, shawwal, dhuAlQadah, dhuAlHijjah

    public var englishName: String {
        switch self {
        case .muharram: "Muharram"
        case .safar: "Safar"
        case .rabiAlAwwal: "Rabi al-Awwal"
        case .rabiAlThani: "Rabi al-Thani"
        case .jumadaAlUla: "Jumada al-Ula"
        case .jumadaAlAkhirah: "Jumada al-Akhirah"
        case .rajab: "Rajab"
        case .shaban: "Sha'ban"
        case .ramadan: "Ramadan"
        case .shawwal: "Shawwal"
        case .dhuAlQadah: "Dhu al-Qa'dah"
        case .dhuAlHijjah: "Dhu al-Hijjah"
        }
    }

    public var arabicName: String {
        switch self {
        case .muharram: "محرم"
        case .safar: "صفر"
        case .rabiAlAwwal: "ربيع الأول"
        case .rabiAlThani: "ربيع الآخر"
        case .jumadaAlUla: "جمادى الأولى"
        case .jumadaAlAkhirah: "جمادى الآخرة"
        case .rajab: "رجب"
        case .shaban: "شعبان"
        case .ramadan: "رمضان"
        case .shawwal: "شوال"
        case .dhuAlQadah: "ذو القعدة"
        case .dhuAlHijjah: "ذو الحجة"
        }
    }
}
