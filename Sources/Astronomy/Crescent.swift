import Foundation

/// Odeh's zones of crescent visibility (M. Sh. Odeh, "New criterion for lunar crescent visibility", *Experimental
/// Astronomy* 18, 2004; the zones as the Islamic Crescents' Observation Project publishes them).
public enum VisibilityZone: String, Sendable, Codable, CaseIterable, Comparable {
    /// V ≥ 5.65: visible by the naked eye.
    case a = "A"
    /// 2 ≤ V < 5.65: visible with optical aid, and could be seen by the naked eye.
    case b = "B"
    /// −0.96 ≤ V < 2: visible with optical aid only.
    case c = "C"
    /// V < −0.96: not visible even with optical aid.
    case d = "D"

    /// The zone of a visibility parameter V.
    public init(v: Double) {
        self = v >= 5.65 ? .a : v >= 2 ? .b : v >= -0.96 ? .c : .d
    }

    /// A before D: a zone is "at least" another when it compares less or equal.
    public static func < (lhs: VisibilityZone, rhs: VisibilityZone) -> Bool { lhs.rawValue < rhs.rawValue }

    public var meaning: String {
        switch self {
        case .a: "visible by naked eye"
        case .b: "visible by optical aid, could be seen by naked eye"
        case .c: "visible by optical aid only"
        case .d: "not visible"
        }
    }
}

/// One evening at one site: when the Sun and the Moon set, and Odeh's quantities at the best time.
public struct CrescentEvening: Sendable, Hashable {
    public let site: Site
    /// Julian days of UT.
    public let sunset: Double
    public let moonset: Double
    public let conjunction: Double
    public let bestTime: Double
    /// Moonset − sunset, minutes (negative when the Moon sets first).
    public let lagMinutes: Double
    /// Sunset − conjunction, hours (negative before the conjunction).
    public let ageHours: Double
    /// Airless topocentric altitudes at the best time, and the arc of vision (Moon − Sun), degrees.
    public let sunAltitude: Double
    public let moonAltitude: Double
    public let arcOfVision: Double
    /// Topocentric elongation of the Moon from the Sun at the best time, degrees.
    public let arcOfLight: Double
    /// Sun's azimuth − Moon's, degrees in (−180, 180].
    public let relativeAzimuth: Double
    /// The Moon's topocentric semi-diameter and the crescent's width, arcminutes.
    public let semiDiameter: Double
    public let width: Double
    /// Odeh's visibility parameter and its zone.
    public let v: Double
    public let zone: VisibilityZone
}

public enum Crescent {
    /// The evening of the civil day `year`-`month`-`day` (of the site's local mean time) at `site`, or nil when the Sun
    /// or the Moon does not set near it (polar latitudes). `conjunction`, a Julian day of UT, is the new moon the
    /// crescent follows; by default the one nearest the sunset.
    public static func evening(site: Site, year: Int, month: Int, day: Int, conjunction: Double? = nil) -> CrescentEvening? {
        evening(site: site, localMidnight: JulianDay.midnight(year: year, month: month, day: day) - site.longitude / 360, conjunction: conjunction)
    }

    /// The evening of the day that begins at `localMidnight` (a Julian day of UT) at `site`.
    static func evening(site: Site, localMidnight: Double, conjunction: Double?, sky: SkyAt = Sky.theories) -> CrescentEvening? {
        guard let sunset = Setting.sunset(site: site, localMidnight: localMidnight, sky: sky),
            let moonset = Setting.moonset(site: site, nearest: sunset, sky: sky)
        else { return nil }
        let conjunction = conjunction ?? Conjunction.nearest(sunset)
        return evening(site: site, sunset: sunset, moonset: moonset, conjunction: conjunction, sky: sky)
    }

    /// Odeh's quantities at the best time, sunset + 4/9 of the lag (Yallop's best time, which Odeh keeps), even when
    /// the lag is negative.
    static func evening(site: Site, sunset: Double, moonset: Double, conjunction: Double, sky skyAt: SkyAt = Sky.theories) -> CrescentEvening {
        let best = sunset + 4.0 / 9.0 * (moonset - sunset)
        let sky = skyAt(best)
        let sun = sky.sun(from: site)
        let moon = sky.moon(from: site)
        let arcl = Angle.degrees(sun.direction.angle(to: moon.direction))
        let arcv = moon.altitude - sun.altitude
        let semiDiameter = Angle.degrees(asin(Moon.radius / moon.distance)) * 60
        let width = semiDiameter * (1 - cos(Angle.radians(arcl)))
        let v = arcv - (-0.1018 * width * width * width + 0.7319 * width * width - 6.3226 * width + 7.1651)
        return CrescentEvening(
            site: site, sunset: sunset, moonset: moonset, conjunction: conjunction, bestTime: best,
            lagMinutes: (moonset - sunset) * 1440, ageHours: (sunset - conjunction) * 24,
            sunAltitude: sun.altitude, moonAltitude: moon.altitude, arcOfVision: arcv, arcOfLight: arcl,
            relativeAzimuth: Angle.signed(sun.azimuth - moon.azimuth), semiDiameter: semiDiameter, width: width, v: v,
            zone: VisibilityZone(v: v))
    }
}
