import Foundation
import Testing

@testable import Astronomy

/// The visibility map: the interpolated sky it is computed from, and its zones on known evenings.
@Suite struct MapTests {
    static func dayNumber(_ year: Int, _ month: Int, _ day: Int) -> Int { JulianDay.dayNumber(year: year, month: month, day: day) }

    /// Day numbers before 1970 too (a Julian day + 0.5 truncated is a day late there), against Foundation's calendar.
    @Test func dayNumbersAreExactBeforeAndAfter1970() {
        var gregorian = Calendar(identifier: .gregorian)
        gregorian.timeZone = TimeZone(identifier: "UTC")!
        for (year, month, day) in [(1970, 1, 1), (1969, 12, 31), (1900, 1, 1), (1899, 12, 31), (2100, 12, 31), (1582, 10, 15), (2026, 2, 17)] {
            let date = gregorian.date(from: DateComponents(year: year, month: month, day: day))!
            #expect(
                JulianDay.dayNumber(year: year, month: month, day: day) == Int((date.timeIntervalSince1970 / 86_400).rounded()),
                "\(year)-\(month)-\(day)")
            #expect(JulianDay.midnight(year: year, month: month, day: day) == JulianDay.of(date))
        }
    }

    /// Four-point interpolation at 30-minute steps against the theories themselves, over the span a map uses.
    @Test func theTableInterpolatesTheSkyWithinAMilliarcsecond() {
        let midnight = JulianDay.midnight(year: 2026, month: 2, day: 18)
        let table = SkyTable(from: midnight - 1, to: midnight + 2.5)
        var worst = Worst()
        var t = midnight - 0.97
        while t < midnight + 2.45 {
            let interpolated = table.sky(t)
            let exact = Sky(julianDayUT: t)
            let at = "JD \(t)"
            worst.record(arcseconds(interpolated.moonEquatorial.rightAscension, exact.moonEquatorial.rightAscension), at: at)
            worst.record(arcseconds(interpolated.moonEquatorial.declination, exact.moonEquatorial.declination), at: at)
            worst.record(arcseconds(interpolated.sunEquatorial.rightAscension, exact.sunEquatorial.rightAscension), at: at)
            worst.record(arcseconds(interpolated.siderealTime, exact.siderealTime), at: at)
            worst.record((interpolated.moonEquatorial.distance - exact.moonEquatorial.distance) / 1000, at: at)
            t += 0.0123
        }
        #expect(worst.value < 0.001, "\(worst)")
        // Outside the table it falls back to the theories.
        #expect(!table.covers(midnight + 5) && table.sky(midnight + 5).moon == Sky(julianDayUT: midnight + 5).moon)
    }

    /// 17 February 2026, the day of the conjunction: zone D across the Middle East. The next evening the crescent is
    /// there to be seen.
    @Test func theMiddleEastSawNoCrescentOn17February2026() {
        let places = [("Tehran", 35.69, 51.39), ("Najaf", 32.03, 44.35), ("Mecca", 21.42, 39.83), ("Beirut", 33.89, 35.50), ("Karachi", 24.86, 67.0)]
        let before = VisibilityMap(dayNumber: Self.dayNumber(2026, 2, 17), spacing: 2)
        let after = VisibilityMap(dayNumber: Self.dayNumber(2026, 2, 18), spacing: 2)
        #expect(before.rows == 60 && before.columns == 180)
        for (name, latitude, longitude) in places {
            #expect(before.zone(latitude: latitude, longitude: longitude) == .d, "\(name) on the 17th")
            #expect(after.zone(latitude: latitude, longitude: longitude).map { $0 <= .b } == true, "\(name) on the 18th")
        }
        // Farther west the Moon is older at sunset: on the 17th the Americas could see it with optical aid.
        let americas = (0..<before.rows).flatMap { row in (20..<60).map { before.zones[row][$0] } }
        #expect(americas.contains(.c) || americas.contains(.b))
        let counts = Dictionary(grouping: before.zones.joined().compactMap { $0 }, by: { $0 }).mapValues(\.count)
        #expect((counts[.d] ?? 0) > 3 * ((counts[.c] ?? 0) + (counts[.b] ?? 0)), "\(counts)")
    }

    /// A cell's zone is the zone of the evening at its centre, computed without the table.
    @Test func aCellIsTheEveningAtItsCentre() throws {
        let day = Self.dayNumber(2026, 2, 18)
        let map = VisibilityMap(dayNumber: day, spacing: 5)
        for (row, column) in [(3, 10), (10, 40), (14, 46), (17, 60), (20, 20), (12, 70)] {
            let site = Site(name: "", latitude: map.latitude(row: row), longitude: map.longitude(column: column))
            let evening = Crescent.evening(
                site: site, localMidnight: JulianDay.unixEpoch + Double(day) - site.longitude / 360, conjunction: map.conjunction)
            #expect(map.zones[row][column] == evening?.zone, "cell \(row), \(column): V \(evening?.v ?? .nan)")
        }
    }
}
