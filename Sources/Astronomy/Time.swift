import Foundation

/// Instants as Julian days, and TT − UT (ΔT).
///
/// The astronomy takes its instants as Julian days of UT (UT1; UTC stays within 0.9 s of it, which moves the Moon by
/// less than half an arcsecond) and turns them into TT, the time of the theories, with `DeltaT`.
public enum JulianDay {
    /// 1970-01-01T00:00Z.
    public static let unixEpoch = 2_440_587.5
    /// J2000.0, 2000-01-01T12:00 TT.
    public static let j2000 = 2_451_545.0

    /// The Julian day of `date` (its UTC, taken as UT1).
    public static func of(_ date: Date) -> Double { unixEpoch + date.timeIntervalSince1970 / 86_400 }

    /// The instant of a Julian day of UT.
    public static func date(_ julianDay: Double) -> Date { Date(timeIntervalSince1970: (julianDay - unixEpoch) * 86_400) }

    /// The Julian day of 00:00 UT on a proleptic Gregorian civil day.
    public static func midnight(year: Int, month: Int, day: Int) -> Double {
        Double(dayNumber(year: year, month: month, day: day)) + unixEpoch
    }

    /// The days from 1970-01-01 to a proleptic Gregorian civil day (negative before it), in integers: a day number
    /// made from a Julian day by adding 0.5 and truncating is a day late before 1970.
    public static func dayNumber(year: Int, month: Int, day: Int) -> Int {
        // Fliegel & Van Flandern's Julian day number, exact in integers for any Gregorian date after −4713.
        let a = (14 - month) / 12
        let y = year + 4800 - a
        let m = month + 12 * a - 3
        return day + (153 * m + 2) / 5 + 365 * y + y / 4 - y / 100 + y / 400 - 32045 - 2_440_588
    }

    /// The proleptic Gregorian year, month and day of a day number (Fliegel & Van Flandern, the inverse of
    /// `dayNumber(year:month:day:)`).
    public static func civil(_ dayNumber: Int) -> (year: Int, month: Int, day: Int) {
        var l = dayNumber + 2_440_588 + 68569
        let n = 4 * l / 146_097
        l -= (146_097 * n + 3) / 4
        let i = 4000 * (l + 1) / 1_461_001
        l = l - 1461 * i / 4 + 31
        let j = 80 * l / 2447
        let day = l - 2447 * j / 80
        l = j / 11
        return (100 * (n - 49) + i + l, j + 2 - 12 * l, day)
    }

    /// `2026-02-17T12:01:11Z` (or to the minute, `2026-02-17 12:01 UT`) for a Julian day of UT.
    public static func iso(_ julianDay: Double, seconds: Bool = true) -> String {
        let unit = seconds ? 86_400.0 : 1440.0
        let count = Int(((julianDay - unixEpoch) * unit).rounded())
        let perDay = Int(unit)
        let days = count >= 0 ? count / perDay : -((-count + perDay - 1) / perDay)
        let rest = count - days * perDay
        let (year, month, day) = civil(days)
        let date = String(format: "%04d-%02d-%02d", year, month, day)
        return seconds
            ? date + String(format: "T%02d:%02d:%02dZ", rest / 3600, rest / 60 % 60, rest % 60)
            : date + String(format: " %02d:%02d UT", rest / 60, rest % 60)
    }
}

/// TT − UT1 in seconds: the Earth's rotation measured against atomic time.
///
/// Three pieces, each named for where it comes from:
/// - before 2005, the polynomials of Espenak & Meeus (NASA's *Five Millennium Canon of Solar Eclipses*, 2006), which
///   follow the historical and IERS record;
/// - 2005 to 2026, the values the IERS measured at the start of each year (from its Bulletins), interpolated;
/// - after the last measurement, that value bent upward by the long-term tidal parabola of Morrison & Stephenson
///   (32 s a century²), starting level: the rotation has not slowed since 2020, and any straight-line guess about the
///   next decades is as good as another. The crescent's visibility hardly notices: a ΔT wrong by 10 s moves the Moon by
///   5″ and a moonset by a fraction of a second.
public enum DeltaT {
    /// IERS ΔT at 1 January of 2005, 2006, … 2026, seconds.
    static let measured: [Double] = [
        64.69, 64.85, 65.15, 65.46, 65.78, 66.07, 66.32, 66.60, 66.91, 67.28, 67.64,
        68.10, 68.59, 68.97, 69.22, 69.36, 69.36, 69.29, 69.20, 69.18, 69.14, 69.10,
    ]
    static let firstMeasuredYear = 2005.0

    /// ΔT at the instant `julianDayUT`, seconds.
    public static func seconds(julianDayUT: Double) -> Double {
        seconds(decimalYear: 2000 + (julianDayUT - JulianDay.j2000) / 365.2425)
    }

    /// ΔT in the middle of `decimalYear` (2026.5 is 1 July 2026), seconds.
    public static func seconds(decimalYear y: Double) -> Double {
        let lastMeasuredYear = firstMeasuredYear + Double(measured.count - 1)
        if y >= firstMeasuredYear {
            if y >= lastMeasuredYear {
                let centuries = (y - lastMeasuredYear) / 100
                return measured[measured.count - 1] + 32 * centuries * centuries
            }
            let offset = y - firstMeasuredYear
            let index = Int(offset)
            let fraction = offset - Double(index)
            return measured[index] + (measured[index + 1] - measured[index]) * fraction
        }
        return espenakMeeus(y)
    }

    /// Espenak & Meeus (2006), the pieces from 1600 to 2005; before 1600 the long-term parabola.
    static func espenakMeeus(_ y: Double) -> Double {
        switch y {
        case 1986...:
            let t = y - 2000
            return 63.86 + t * (0.3345 + t * (-0.060374 + t * (0.0017275 + t * (0.000651814 + t * 0.00002373599))))
        case 1961...:
            let t = y - 1975
            return 45.45 + t * (1.067 + t * (-1.0 / 260 - t / 718))
        case 1941...:
            let t = y - 1950
            return 29.07 + t * (0.407 + t * (-1.0 / 233 + t / 2547))
        case 1920...:
            let t = y - 1920
            return 21.20 + t * (0.84493 + t * (-0.076100 + t * 0.0020936))
        case 1900...:
            let t = y - 1900
            return -2.79 + t * (1.494119 + t * (-0.0598939 + t * (0.0061966 - t * 0.000197)))
        case 1860...:
            let t = y - 1860
            return 7.62 + t * (0.5737 + t * (-0.251754 + t * (0.01680668 + t * (-0.0004473624 + t / 233_174))))
        case 1800...:
            let t = y - 1800
            return 13.72
                + t
                * (-0.332447 + t * (0.0068612 + t * (0.0041116 + t * (-0.00037436 + t * (0.0000121272 + t * (-0.0000001699 + t * 0.000000000875))))))
        case 1700...:
            let t = y - 1700
            return 8.83 + t * (0.1603 + t * (-0.0059285 + t * (0.00013336 - t / 1_174_000)))
        case 1600...:
            let t = y - 1600
            return 120 + t * (-0.9808 + t * (-0.01532 + t / 7129))
        default:
            let u = (y - 1820) / 100
            return -20 + 32 * u * u
        }
    }
}
