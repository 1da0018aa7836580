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
    public static func sunset(site: Site, localMidnight: Double, sky skyAt: SkyAt = Sky.theories) -> Double? {
        let altitude = { (t: Double) in skyAt(t).sun(from: site).altitude - sunHorizon }
        // First from the hour angle at which the Sun reaches the horizon, refined by secant steps (four or five
        // positions); where that estimate is not a setting inside the day (near the poles), by sampling the day.
        let noon = skyAt(localMidnight + 0.5)
        if let estimate = settingEstimate(noon, noon.sunEquatorial, site: site, horizon: sunHorizon, hourAngleRate: 360.9856),
            let root = secant(altitude, from: estimate), isSetting(altitude, at: root), root >= localMidnight, root < localMidnight + 1
        {
            return root
        }
        return crossings(of: altitude, from: localMidnight, to: localMidnight + 1, step: 1.0 / 24).first
    }

    /// The moonset nearest to `instant` (before or after it, within 13 hours), or nil when there is none.
    public static func moonset(site: Site, nearest instant: Double, sky skyAt: SkyAt = Sky.theories) -> Double? {
        let altitude = { (t: Double) in moonAltitudeAboveSetting(skyAt(t), site: site) }
        let sky = skyAt(instant)
        let moon = sky.moon(from: site)
        let horizon = -refraction - Angle.degrees(asin(Moon.radius / moon.distance))
        // The Moon's hour angle grows about 347.8° a day (the Earth's turn less the Moon's motion).
        if let estimate = settingEstimate(sky, sky.moonEquatorial, site: site, horizon: horizon, hourAngleRate: 347.8),
            let root = secant(altitude, from: estimate), isSetting(altitude, at: root), abs(root - instant) < 13.0 / 24
        {
            return root
        }
        return crossings(of: altitude, from: instant - 13.0 / 24, to: instant + 13.0 / 24, step: 1.0 / 24)
            .min { abs($0 - instant) < abs($1 - instant) }
    }

    /// When a body at `place` (geocentric, at `sky`'s instant) reaches `horizon` going down, nearest that instant: from
    /// the hour angle of setting (Meeus 15.1), or nil when it neither rises nor sets that day.
    static func settingEstimate(_ sky: Sky, _ place: EquatorialPlace, site: Site, horizon: Double, hourAngleRate: Double) -> Double? {
        let phi = Angle.radians(site.latitude)
        let delta = Angle.radians(place.declination)
        let cosine = (sin(Angle.radians(horizon)) - sin(phi) * sin(delta)) / (cos(phi) * cos(delta))
        guard abs(cosine) < 0.999 else { return nil }
        let setting = Angle.degrees(acos(cosine))
        let hourAngle = sky.siderealTime + site.longitude - place.rightAscension
        return sky.julianDayUT + Angle.signed(setting - hourAngle) / hourAngleRate
    }

    /// A root of `value` near `start` by secant steps, or nil when they do not settle within an hour of it.
    static func secant(_ value: (Double) -> Double, from start: Double) -> Double? {
        var t0 = start
        var t1 = start + 0.001
        var v0 = value(t0)
        for _ in 0..<12 {
            let v1 = value(t1)
            guard v1 != v0 else { return t1 }
            let next = t1 - v1 * (t1 - t0) / (v1 - v0)
            guard abs(next - start) < 0.05 else { return nil }
            if abs(next - t1) < 1e-8 { return next }
            (t0, v0, t1) = (t1, v1, next)
        }
        return nil
    }

    /// Whether `value` goes down through zero at `root` (above a minute before, below a minute after).
    static func isSetting(_ value: (Double) -> Double, at root: Double) -> Bool {
        value(root - 1.0 / 1440) > 0 && value(root + 1.0 / 1440) < 0
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
