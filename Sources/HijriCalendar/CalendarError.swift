import Diagnostics

/// Everything that can go wrong in a conversion, each case naming the value at fault.
public enum CalendarError: UserFacingError, Equatable, Sendable {
    case invalidGregorianDate(String)
    case invalidHijriDate(String)
    case unknownCalendar(String)
    case invalidAdjustment(Int)
    case outOfRange(date: String, calendar: CalendarKind, supported: String)
    case dayNotInMonth(HijriDate, monthLength: Int)
    case publishedStartTooFar(year: Int, month: Int, date: CivilDate, ummAlQura: CivilDate)
    case publishedStartsInconsistent(String)
    case unknownTimeZone(String)
    case malformedRegions(String)
    case unknownRegion(String, known: [String])
    case badCoordinates(String, String)
    case predictedUnavailable(String?)

    /// What a region setting takes, given the regions the data has: said by this error and by the command line's.
    public static func regionsExpected(_ known: [String]) -> String {
        "expected one of \(known.joined(separator: ", ")), or sites as LAT,LON[;LAT,LON…]"
    }

    public var description: String {
        switch self {
        case .invalidGregorianDate(let text):
            "invalid date '\(text)': expected an existing Gregorian day as YYYY-MM-DD (years 0001-9999)"
        case .invalidHijriDate(let text):
            "invalid Hijri date '\(text)': expected YYYY-MM-DD, a year of 1 to 4 digits, month 01-12, day 01-30, such as 1446-09-01"
        case .unknownCalendar(let name):
            "unknown calendar '\(name)': expected one of \(CalendarKind.allCases.map(\.rawValue).joined(separator: ", "))"
        case .invalidAdjustment(let value):
            "invalid adjustment \(value): expected a whole number of days from \(Adjustment.range.lowerBound) to \(Adjustment.range.upperBound)"
        case .outOfRange(let date, let calendar, let supported):
            "date \(date) is outside the \(calendar.rawValue) calendar's range (\(supported))"
        case .dayNotInMonth(let date, let length):
            "Hijri date \(date) does not exist: \(date.monthName.englishName) \(date.year) has \(length) days"
        case .publishedStartTooFar(let year, let month, let date, let uq):
            "published start \(date) of \(HijriMonth(rawValue: month)?.englishName ?? "month \(month)") \(year) is more than \(SightedMonthStarts.maximumDeviation) days from the Umm al-Qura start \(uq)"
        case .publishedStartsInconsistent(let detail):
            "published month starts are inconsistent: \(detail)"
        case .unknownTimeZone(let name):
            "unknown time zone '\(name)': expected an IANA name such as Asia/Baghdad or UTC"
        case .malformedRegions(let detail):
            "crescent regions: \(detail)"
        case .unknownRegion(let name, let known):
            "unknown region '\(name)': \(Self.regionsExpected(known))"
        case .badCoordinates(let text, let detail):
            "invalid region '\(text)': \(detail)"
        case .predictedUnavailable(let region):
            if let region {
                "no predicted calendar for the region '\(region)': its table is missing from data/calendar/predicted"
            } else {
                "the predicted calendar needs a region and its table"
            }
        }
    }
}
