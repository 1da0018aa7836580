import Foundation

/// Degrees and radians, and the few angle operations every other file of the astronomy needs.
enum Angle {
    static let radiansPerDegree = Double.pi / 180
    static let degreesPerRadian = 180 / Double.pi
    static let arcsecondsPerRadian = 180 * 3600 / Double.pi

    @inline(__always) static func radians(_ degrees: Double) -> Double { degrees * radiansPerDegree }
    @inline(__always) static func degrees(_ radians: Double) -> Double { radians * degreesPerRadian }

    /// `degrees` brought into [0, 360).
    @inline(__always) static func normalized(_ degrees: Double) -> Double {
        let reduced = degrees.truncatingRemainder(dividingBy: 360)
        return reduced < 0 ? reduced + 360 : reduced
    }

    /// `degrees` brought into (−180, 180].
    @inline(__always) static func signed(_ degrees: Double) -> Double {
        let reduced = normalized(degrees)
        return reduced > 180 ? reduced - 360 : reduced
    }
}

/// A direction and distance in a right-handed frame, kilometres.
struct Vector3: Sendable, Hashable {
    var x: Double
    var y: Double
    var z: Double

    /// The point at `distance` in the direction of right ascension (or longitude) `alpha` and declination (or latitude)
    /// `delta`, both in radians.
    init(alpha: Double, delta: Double, distance: Double) {
        let cosDelta = cos(delta)
        x = distance * cosDelta * cos(alpha)
        y = distance * cosDelta * sin(alpha)
        z = distance * sin(delta)
    }

    init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    static func - (lhs: Vector3, rhs: Vector3) -> Vector3 { Vector3(x: lhs.x - rhs.x, y: lhs.y - rhs.y, z: lhs.z - rhs.z) }

    var length: Double { (x * x + y * y + z * z).squareRoot() }

    /// Right ascension (or longitude), radians in (−π, π].
    var alpha: Double { atan2(y, x) }

    /// Declination (or latitude), radians.
    var delta: Double { atan2(z, (x * x + y * y).squareRoot()) }

    /// The angle between two directions, radians; exact for small angles too (the atan2 form, not acos).
    func angle(to other: Vector3) -> Double {
        let cx = y * other.z - z * other.y
        let cy = z * other.x - x * other.z
        let cz = x * other.y - y * other.x
        let cross = (cx * cx + cy * cy + cz * cz).squareRoot()
        let dot = x * other.x + y * other.y + z * other.z
        return atan2(cross, dot)
    }
}
