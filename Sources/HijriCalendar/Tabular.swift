/// The arithmetic Islamic calendar that Foundation calls `.islamicCivil`.
///
/// Epoch: Friday 16 July 622 (Julian) = 1 Muharram 1. Years of 354 days, 355 in years 2, 5, 7, 10, 13, 16, 18,
/// 21, 24, 26 and 29 of each 30-year cycle; odd months have 30 days, even months 29, and Dhu al-Hijjah 30 in leap years.
enum Tabular {
    /// 1 Muharram 1 AH as days since 1970-01-01 (Julian day 1948440).
    static let epoch = 1_948_440 - 2_440_588

    /// The years with a day in the supported Gregorian years (the last one only in part): arithmetic on a year is
    /// only done inside this range.
    static let yearRange = 1...hijri(dayNumber: lastCivilDay).year
    /// 9999-12-31, the last day of the supported Gregorian years.
    static let lastCivilDay = 2_932_896

    static func isLeapYear(_ year: Int) -> Bool { floorMod(14 + 11 * year, 30) < 11 }

    static func monthLength(year: Int, month: Int) -> Int {
        month == 12 ? (isLeapYear(year) ? 30 : 29) : (month % 2 == 1 ? 30 : 29)
    }

    /// Days from the epoch to 1 Muharram of `year`.
    static func daysBeforeYear(_ year: Int) -> Int { (year - 1) * 354 + floorDiv(3 + 11 * year, 30) }

    static func dayNumber(year: Int, month: Int, day: Int) -> Int {
        epoch + daysBeforeYear(year) + (59 * (month - 1) + 1) / 2 + day - 1
    }

    static func hijri(dayNumber: Int) -> HijriDate {
        let days = dayNumber - epoch
        // 10631 days make 30 years; the estimate is exact or off by one, which the loops mend.
        var year = floorDiv(30 * days + 10646, 10631)
        while daysBeforeYear(year) > days { year -= 1 }
        while daysBeforeYear(year + 1) <= days { year += 1 }
        let dayOfYear = days - daysBeforeYear(year)
        var month = min(12, (2 * dayOfYear) / 59 + 1)
        while month > 1 && (59 * (month - 1) + 1) / 2 > dayOfYear { month -= 1 }
        return HijriDate(year: year, month: month, day: dayOfYear - (59 * (month - 1) + 1) / 2 + 1)
    }

    private static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
    private static func floorMod(_ a: Int, _ b: Int) -> Int { a - floorDiv(a, b) * b }
}
