import Foundation

/// The sky over a span of time, computed from the theories at fixed steps and interpolated between them (four-point
/// Lagrange, within a milliarcsecond of the theories at 30-minute steps): for the thousands of sites of a map, whose
/// evenings fall in the same two days.
public struct SkyTable: Sendable {
    public let start: Double
    public let end: Double
    let step: Double
    let nodes: [Sky]

    /// The sky from `start` to `end` (Julian days of UT), at `step` days (30 minutes by default).
    public init(from start: Double, to end: Double, step: Double = 1.0 / 48) {
        precondition(end > start && step > 0 && (end - start) / step < 100_000)
        self.start = start - 2 * step
        self.step = step
        let count = Int(((end - start) / step).rounded(.up)) + 5
        nodes = (0..<count).map { Sky(julianDayUT: start - 2 * step + Double($0) * step) }
        self.end = self.start + Double(count - 3) * step
    }

    /// Whether `julianDayUT` can be interpolated here.
    public func covers(_ julianDayUT: Double) -> Bool { julianDayUT >= start + step && julianDayUT <= end }

    /// The sky at `julianDayUT`: interpolated inside the table, from the theories outside it.
    public func sky(_ julianDayUT: Double) -> Sky {
        guard covers(julianDayUT) else { return Sky(julianDayUT: julianDayUT) }
        let position = (julianDayUT - start) / step
        let i = min(max(Int(position.rounded(.down)) - 1, 0), nodes.count - 4)
        let p = position - Double(i)  // in [1, 2) for the middle interval
        // Lagrange weights for nodes i … i+3 at offset p.
        let w0 = -(p - 1) * (p - 2) * (p - 3) / 6
        let w1 = p * (p - 2) * (p - 3) / 2
        let w2 = -p * (p - 1) * (p - 3) / 2
        let w3 = p * (p - 1) * (p - 2) / 6
        let n = (nodes[i], nodes[i + 1], nodes[i + 2], nodes[i + 3])
        func blend(_ value: (Sky) -> Double) -> Double {
            w0 * value(n.0) + w1 * value(n.1) + w2 * value(n.2) + w3 * value(n.3)
        }
        /// An angle that wraps at 360°, unwrapped around the second node before blending.
        func blendAngle(_ value: (Sky) -> Double) -> Double {
            let base = value(n.1)
            return Angle.normalized(base + blend { Angle.signed(value($0) - base) })
        }
        let sun = EclipticPlace(longitude: blendAngle { $0.sun.longitude }, latitude: blend { $0.sun.latitude }, distance: blend { $0.sun.distance })
        let moon = EclipticPlace(
            longitude: blendAngle { $0.moon.longitude }, latitude: blend { $0.moon.latitude }, distance: blend { $0.moon.distance })
        let sunEquatorial = EquatorialPlace(
            rightAscension: blendAngle { $0.sunEquatorial.rightAscension }, declination: blend { $0.sunEquatorial.declination },
            distance: blend { $0.sunEquatorial.distance })
        let moonEquatorial = EquatorialPlace(
            rightAscension: blendAngle { $0.moonEquatorial.rightAscension }, declination: blend { $0.moonEquatorial.declination },
            distance: blend { $0.moonEquatorial.distance })
        return Sky(
            julianDayUT: julianDayUT, deltaT: blend { $0.deltaT }, sun: sun, moon: moon, sunEquatorial: sunEquatorial,
            moonEquatorial: moonEquatorial, trueObliquity: blend { $0.trueObliquity }, nutationInLongitude: blend { $0.nutationInLongitude })
    }
}
