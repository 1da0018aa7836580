import Foundation

/// Nutation in longitude and obliquity (IAU 1980, the 63 terms of Meeus's Table 22.A) and the obliquity of the ecliptic
/// (Laskar's series, Meeus 22.3). IAU 1980 stays within a few milliarcseconds of IAU 2000A over these centuries.
struct Nutation: Sendable {
    /// Nutation in longitude, degrees.
    let longitude: Double
    /// Nutation in obliquity, degrees.
    let obliquity: Double
    /// The mean obliquity of the ecliptic, degrees.
    let meanObliquity: Double
    /// The true obliquity (mean + nutation), degrees.
    var trueObliquity: Double { meanObliquity + obliquity }

    /// At `centuries` Julian centuries of TT from J2000.0.
    init(centuries t: Double) {
        let d = Angle.radians(297.85036 + t * (445_267.111480 + t * (-0.0019142 + t / 189_474)))
        let m = Angle.radians(357.52772 + t * (35_999.050340 + t * (-0.0001603 - t / 300_000)))
        let mPrime = Angle.radians(134.96298 + t * (477_198.867398 + t * (0.0086972 + t / 56_250)))
        let f = Angle.radians(93.27191 + t * (483_202.017538 + t * (-0.0036825 + t / 327_270)))
        let omega = Angle.radians(125.04452 + t * (-1934.136261 + t * (0.0020708 + t / 450_000)))
        var psi = 0.0
        var epsilon = 0.0
        let table = Self.terms
        var i = 0
        while i < table.count {
            let argument = table[i] * d + table[i + 1] * m + table[i + 2] * mPrime + table[i + 3] * f + table[i + 4] * omega
            psi += (table[i + 5] + table[i + 6] * t) * sin(argument)
            epsilon += (table[i + 7] + table[i + 8] * t) * cos(argument)
            i += 9
        }
        longitude = psi / 36_000_000
        obliquity = epsilon / 36_000_000
        let u = t / 100
        let seconds =
            84381.448
            + u
            * (-4680.93 + u * (-1.55 + u * (1999.25 + u * (-51.38 + u * (-249.67 + u * (-39.05 + u * (7.12 + u * (27.87 + u * (5.79 + u * 2.45)))))))))
        meanObliquity = seconds / 3600
    }

    /// Rows of nine: the multiples of D, M, M′, F, Ω; the sine coefficient of Δψ and its rate per century; the cosine
    /// coefficient of Δε and its rate (units of 0.0001″).
    static let terms: [Double] = [
        0, 0, 0, 0, 1, -171996, -174.2, 92025, 8.9,
        -2, 0, 0, 2, 2, -13187, -1.6, 5736, -3.1,
        0, 0, 0, 2, 2, -2274, -0.2, 977, -0.5,
        0, 0, 0, 0, 2, 2062, 0.2, -895, 0.5,
        0, 1, 0, 0, 0, 1426, -3.4, 54, -0.1,
        0, 0, 1, 0, 0, 712, 0.1, -7, 0,
        -2, 1, 0, 2, 2, -517, 1.2, 224, -0.6,
        0, 0, 0, 2, 1, -386, -0.4, 200, 0,
        0, 0, 1, 2, 2, -301, 0, 129, -0.1,
        -2, -1, 0, 2, 2, 217, -0.5, -95, 0.3,
        -2, 0, 1, 0, 0, -158, 0, 0, 0,
        -2, 0, 0, 2, 1, 129, 0.1, -70, 0,
        0, 0, -1, 2, 2, 123, 0, -53, 0,
        2, 0, 0, 0, 0, 63, 0, 0, 0,
        0, 0, 1, 0, 1, 63, 0.1, -33, 0,
        2, 0, -1, 2, 2, -59, 0, 26, 0,
        0, 0, -1, 0, 1, -58, -0.1, 32, 0,
        0, 0, 1, 2, 1, -51, 0, 27, 0,
        -2, 0, 2, 0, 0, 48, 0, 0, 0,
        0, 0, -2, 2, 1, 46, 0, -24, 0,
        2, 0, 0, 2, 2, -38, 0, 16, 0,
        0, 0, 2, 2, 2, -31, 0, 13, 0,
        0, 0, 2, 0, 0, 29, 0, 0, 0,
        -2, 0, 1, 2, 2, 29, 0, -12, 0,
        0, 0, 0, 2, 0, 26, 0, 0, 0,
        -2, 0, 0, 2, 0, -22, 0, 0, 0,
        0, 0, -1, 2, 1, 21, 0, -10, 0,
        0, 2, 0, 0, 0, 17, -0.1, 0, 0,
        2, 0, -1, 0, 1, 16, 0, -8, 0,
        -2, 2, 0, 2, 2, -16, 0.1, 7, 0,
        0, 1, 0, 0, 1, -15, 0, 9, 0,
        -2, 0, 1, 0, 1, -13, 0, 7, 0,
        0, -1, 0, 0, 1, -12, 0, 6, 0,
        0, 0, 2, -2, 0, 11, 0, 0, 0,
        2, 0, -1, 2, 1, -10, 0, 5, 0,
        2, 0, 1, 2, 2, -8, 0, 3, 0,
        0, 1, 0, 2, 2, 7, 0, -3, 0,
        -2, 1, 1, 0, 0, -7, 0, 0, 0,
        0, -1, 0, 2, 2, -7, 0, 3, 0,
        2, 0, 0, 2, 1, -7, 0, 3, 0,
        2, 0, 1, 0, 0, 6, 0, 0, 0,
        -2, 0, 2, 2, 2, 6, 0, -3, 0,
        -2, 0, 1, 2, 1, 6, 0, -3, 0,
        2, 0, -2, 0, 1, -6, 0, 3, 0,
        2, 0, 0, 0, 1, -6, 0, 3, 0,
        0, -1, 1, 0, 0, 5, 0, 0, 0,
        -2, -1, 0, 2, 1, -5, 0, 3, 0,
        -2, 0, 0, 0, 1, -5, 0, 3, 0,
        0, 0, 2, 2, 1, -5, 0, 3, 0,
        -2, 0, 2, 0, 1, 4, 0, 0, 0,
        -2, 1, 0, 2, 1, 4, 0, 0, 0,
        0, 0, 1, -2, 0, 4, 0, 0, 0,
        -1, 0, 1, 0, 0, -4, 0, 0, 0,
        -2, 1, 0, 0, 0, -4, 0, 0, 0,
        1, 0, 0, 0, 0, -4, 0, 0, 0,
        0, 0, 1, 2, 0, 3, 0, 0, 0,
        0, 0, -2, 2, 2, -3, 0, 0, 0,
        -1, -1, 1, 0, 0, -3, 0, 0, 0,
        0, 1, 1, 0, 0, -3, 0, 0, 0,
        0, -1, 1, 2, 2, -3, 0, 0, 0,
        2, -1, -1, 2, 2, -3, 0, 0, 0,
        0, 0, 3, 2, 2, -3, 0, 0, 0,
        2, -1, 0, 2, 2, -3, 0, 0, 0,
    ]
}
