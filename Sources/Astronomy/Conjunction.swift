import Foundation

/// New moons: the instants when the Moon's apparent geocentric longitude equals the Sun's.
public enum Conjunction {
    /// The mean synodic month, days.
    public static let synodicMonth = 29.530588861

    /// The geocentric conjunction nearest to `julianDayUT` (within half a lunation of it), as a Julian day of UT, to
    /// within a second.
    public static func nearest(_ julianDayUT: Double) -> Double {
        // Newton's steps on the elongation in longitude, with the slope measured on the last step (secant): the Moon
        // gains 10–15° a day, so two or three steps reach a second.
        func elongation(_ t: Double) -> Double {
            let sky = Sky(julianDayUT: t)
            return Angle.signed(sky.moon.longitude - sky.sun.longitude)
        }
        var t0 = julianDayUT
        var e0 = elongation(t0)
        var t1 = t0 - e0 / 12.19
        for _ in 0..<20 {
            let e1 = elongation(t1)
            let slope = (e1 - e0) / (t1 - t0)
            let next = t1 - e1 / (slope > 5 && slope < 20 ? slope : 12.19)
            t0 = t1
            e0 = e1
            t1 = next
            if abs(t1 - t0) < 1e-6 { break }
        }
        return t1
    }

    /// The new moon whose crescent is looked for on the evening of the civil day `dayNumber` (days since 1970-01-01):
    /// the conjunction nearest that evening.
    public static func nearest(evening dayNumber: Int) -> Double { nearest(JulianDay.unixEpoch + Double(dayNumber) + 0.75) }

    /// The conjunction that ends the lunation running at `julianDayUT`: the first at or after it.
    public static func next(after julianDayUT: Double) -> Double {
        var guess = julianDayUT
        while true {
            let conjunction = nearest(guess)
            if conjunction >= julianDayUT { return conjunction }
            guess = conjunction + synodicMonth
        }
    }

    /// The last conjunction before `julianDayUT`.
    public static func previous(before julianDayUT: Double) -> Double {
        var guess = julianDayUT
        while true {
            let conjunction = nearest(guess)
            if conjunction < julianDayUT { return conjunction }
            guess = conjunction - synodicMonth
        }
    }
}
