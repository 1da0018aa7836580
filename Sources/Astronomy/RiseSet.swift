import Foundation

/// When the Sun and the Moon set, found on the airless topocentric altitude (Meeus ch. 15's conventions): the Sun when
/// its centre is 50′ below the horizon (34′ of refraction and 16′ of semi-diameter), the Moon when its centre is 34′
/// and its semi-diameter below it, with parallax — its upper limb on the refracted horizon.
public enum Setting {
    /// The Sun's centre at sunset, degrees.
    public static let sunHorizon = -50.0 / 60
    /// Refraction at the horizon, degrees.
    public static let refraction = 34.0 / 60

    /// The sunset at `site` on the civil day starting at `localMidnight` (a Julian day of UT: 00:00 of the site's local
    /// mean time), or nil when the Sun does not set that day (polar day or night).
    public static func sunset(site: Site, localMidnight: Double) -> Double? {
        let altitude = { (t: Double) in Sky(julianDayUT: t).sun(from: site).altitude - sunHorizon }
        return crossings(of: altitude, from: localMidnight, to: localMidnight + 1, step: 1.0 / 24).first
    }

    /// The moonset nearest to `instant` (before or after it, within 13 hours), or nil when there is none.
    public static func moonset(site: Site, nearest instant: Double) -> Double? {
        crossings(
            of: { moonAltitudeAboveSetting(Sky(julianDayUT: $0), site: site) }, from: instant - 13.0 / 24, to: instant + 13.0 / 24, step: 1.0 / 24
        )
        .min { abs($0 - instant) < abs($1 - instant) }
    }

    /// How far the Moon's centre is above the altitude at which it sets, degrees.
    static func moonAltitudeAboveSetting(_ sky: Sky, site: Site) -> Double {
        let moon = sky.moon(from: site)
        return moon.altitude + refraction + Angle.degrees(asin(Moon.radius / moon.distance))
    }

    /// The instants in [start, end) where `value` goes from positive to negative, each to within a millisecond: sampled
    /// every `step`, each bracket refined by the Illinois variant of regula falsi.
    static func crossings(of value: (Double) -> Double, from start: Double, to end: Double, step: Double) -> [Double] {
        var found: [Double] = []
        var t0 = start
        var v0 = value(t0)
        while t0 < end {
            let t1 = min(t0 + step, end)
            let v1 = value(t1)
            if v0 > 0, v1 <= 0 {
                let root = refine(value, t0, v0, t1, v1)
                if root < end { found.append(root) }
            }
            t0 = t1
            v0 = v1
            if t1 >= end { break }
        }
        return found
    }

    private static func refine(_ value: (Double) -> Double, _ a: Double, _ fa: Double, _ b: Double, _ fb: Double) -> Double {
        var (a, fa, b, fb) = (a, fa, b, fb)
        var side = 0
        for _ in 0..<60 {
            let c = (a * fb - b * fa) / (fb - fa)
            if abs(b - a) < 1e-8 { return c }  // ~1 ms
            let fc = value(c)
            if fc == 0 { return c }
            if (fc > 0) == (fa > 0) {
                a = c
                fa = fc
                if side == -1 { fb /= 2 }
                side = -1
            } else {
                b = c
                fb = fc
                if side == 1 { fa /= 2 }
                side = 1
            }
            if abs(fc) < 1e-7 { return c }  // 0.4 milliarcseconds of altitude
        }
        return (a + b) / 2
    }
}
