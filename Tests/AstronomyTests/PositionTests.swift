import Foundation
import Testing

@testable import Astronomy

/// The Sun's and the Moon's apparent geocentric places against JPL's DE421 (1900–2049) and PyEphem (2050–2100).
///
/// The goals are the Moon within 10″ and the Sun within 40″; the bounds here are what the code achieves (the
/// README's table), so that a change that loses accuracy fails.
@Suite struct PositionTests {
    struct Bounds {
        var sunArcsec: Double
        var moonLongitudeArcsec: Double
        var moonLatitudeArcsec: Double
        var moonDistanceKm: Double
        var sunDistanceKm: Double
    }

    /// Each place at each instant of `rows`, the TT of the fixture given (so ΔT is not under test here).
    static func check(_ rows: [Fixtures.SunMoon], within bounds: Bounds, oracle: String) {
        var sun = Worst()
        var sunDistance = Worst()
        var moonLongitude = Worst()
        var moonLatitude = Worst()
        var moonDistance = Worst()
        var rightAscension = Worst()
        var declination = Worst()
        for row in rows {
            let sky = Sky(julianDayUT: row.jdUt, deltaT: row.deltaT)
            let at = "JD \(row.jdUt)"
            sun.record(arcseconds(sky.sun.longitude, row.sun.lon), at: at)
            sun.record(arcseconds(sky.sun.latitude, row.sun.lat), at: at)
            sunDistance.record(sky.sun.distance - row.sun.distKm, at: at)
            moonLongitude.record(arcseconds(sky.moon.longitude, row.moon.lon), at: at)
            moonLatitude.record(arcseconds(sky.moon.latitude, row.moon.lat), at: at)
            moonDistance.record(sky.moon.distance - row.moon.distKm, at: at)
            // The equatorial places follow from the ecliptic ones and the obliquity: within the same bound, the right
            // ascension measured on the sky (× cos δ).
            rightAscension.record(arcseconds(sky.moonEquatorial.rightAscension, row.moon.ra) * cos(row.moon.dec * .pi / 180), at: at)
            declination.record(arcseconds(sky.moonEquatorial.declination, row.moon.dec), at: at)
            rightAscension.record(arcseconds(sky.sunEquatorial.rightAscension, row.sun.ra) * cos(row.sun.dec * .pi / 180), at: at)
            declination.record(arcseconds(sky.sunEquatorial.declination, row.sun.dec), at: at)
        }
        #expect(sun.value <= bounds.sunArcsec, "Sun vs \(oracle): \(sun)″")
        #expect(sunDistance.value <= bounds.sunDistanceKm, "Sun's distance vs \(oracle): \(sunDistance) km")
        #expect(moonLongitude.value <= bounds.moonLongitudeArcsec, "Moon's longitude vs \(oracle): \(moonLongitude)″")
        #expect(moonLatitude.value <= bounds.moonLatitudeArcsec, "Moon's latitude vs \(oracle): \(moonLatitude)″")
        #expect(moonDistance.value <= bounds.moonDistanceKm, "Moon's distance vs \(oracle): \(moonDistance) km")
        #expect(rightAscension.value <= bounds.moonLongitudeArcsec, "right ascension vs \(oracle): \(rightAscension)″")
        #expect(declination.value <= bounds.moonLongitudeArcsec, "declination vs \(oracle): \(declination)″")
    }

    @Test func sunAndMoonAgreeWithDE421From1900To2049() throws {
        let rows = try Fixtures.rows("sun-moon.jsonl.gz", as: Fixtures.SunMoon.self)
        #expect(rows.count == 1500)
        Self.check(
            rows, within: Bounds(sunArcsec: 1.5, moonLongitudeArcsec: 8, moonLatitudeArcsec: 2.5, moonDistanceKm: 6, sunDistanceKm: 400),
            oracle: "DE421")
    }

    /// PyEphem is itself up to 0.7″ (Sun) and 0.3″ (Moon) from DE421 before 2050: the bounds carry that on top.
    @Test func sunAndMoonAgreeWithPyEphemFrom2050To2100() throws {
        let rows = try Fixtures.rows("pyephem-sun-moon.jsonl.gz", as: Fixtures.SunMoon.self)
        #expect(rows.count == 300)
        #expect(rows.allSatisfy { $0.jdUt >= JulianDay.midnight(year: 2050, month: 1, day: 1) })
        Self.check(
            rows, within: Bounds(sunArcsec: 2.2, moonLongitudeArcsec: 8.3, moonLatitudeArcsec: 2.8, moonDistanceKm: 6.3, sunDistanceKm: 400),
            oracle: "PyEphem")
    }

    @Test func nutationAndSiderealTimeAgreeWithIAU2000A() throws {
        var nutation = Worst()
        var obliquity = Worst()
        var sidereal = Worst()
        for row in try Fixtures.rows("sun-moon.jsonl.gz", as: Fixtures.SunMoon.self) {
            let sky = Sky(julianDayUT: row.jdUt, deltaT: row.deltaT)
            nutation.record(sky.nutationInLongitude * 3600 - (row.dpsiArcsec ?? .nan), at: "JD \(row.jdUt)")
            obliquity.record(arcseconds(sky.trueObliquity, row.epsTrue ?? .nan), at: "JD \(row.jdUt)")
            sidereal.record(arcseconds(sky.siderealTime, row.gast ?? .nan), at: "JD \(row.jdUt)")
        }
        // IAU 1980 nutation against IAU 2000A, Laskar's obliquity against IAU 2006's (which starts 0.04″ lower).
        #expect(nutation.value <= 0.05, "Δψ: \(nutation)″")
        #expect(obliquity.value <= 0.1, "ε: \(obliquity)″")
        #expect(sidereal.value <= 0.5, "GAST: \(sidereal)″")
    }

    /// Our ΔT against Skyfield's (the IERS's measurements to 2026, its own extrapolation after): the past within a
    /// second, the guesses about the future within what the Moon can bear (10 s is 5″).
    @Test func deltaTFollowsTheMeasuredRecord() throws {
        let past = try Fixtures.rows("sun-moon.jsonl.gz", as: Fixtures.SunMoon.self)
        let future = try Fixtures.rows("pyephem-sun-moon.jsonl.gz", as: Fixtures.SunMoon.self)
        let measuredEnd = JulianDay.midnight(year: 2026, month: 1, day: 1)
        var measured = Worst()
        var guessed = Worst()
        for row in past + future {
            let difference = DeltaT.seconds(julianDayUT: row.jdUt) - row.deltaT
            if row.jdUt < measuredEnd {
                measured.record(difference, at: "JD \(row.jdUt)")
            } else {
                guessed.record(difference, at: "JD \(row.jdUt)")
            }
        }
        #expect(measured.value <= 1.2, "ΔT 1900–2025: \(measured) s")
        #expect(guessed.value <= 10, "ΔT 2026–2100: \(guessed) s")
    }
}
