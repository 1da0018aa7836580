import Foundation

/// A place on the ecliptic of date: longitude and latitude in degrees, the distance in kilometres.
public struct EclipticPlace: Sendable, Hashable {
    public var longitude: Double
    public var latitude: Double
    public var distance: Double
}

/// A place on the true equator of date: right ascension and declination in degrees, the distance in kilometres.
public struct EquatorialPlace: Sendable, Hashable {
    public var rightAscension: Double
    public var declination: Double
    public var distance: Double
}

/// A body's place in the sky of an observer: airless (no refraction) altitude above the ellipsoid's horizon and azimuth
/// from north through east, degrees; the topocentric distance, kilometres.
public struct HorizontalPlace: Sendable, Hashable {
    public var altitude: Double
    public var azimuth: Double
    public var distance: Double
    /// The direction in the equatorial frame of date, for the angle between two bodies.
    let direction: Vector3
}

/// The sky at an instant (a Julian day of UT): `Sky.theories` computes it, a `SkyTable` interpolates it.
public typealias SkyAt = @Sendable (Double) -> Sky

/// The geocentric apparent places of the Sun and the Moon at one instant, and what it takes to see them from a site.
///
/// Built once per instant and asked for as many sites as needed: the theories run once, the parallax per site.
public struct Sky: Sendable {
    public let julianDayUT: Double
    /// TT − UT at the instant, seconds.
    public let deltaT: Double
    public let sun: EclipticPlace
    public let moon: EclipticPlace
    public let sunEquatorial: EquatorialPlace
    public let moonEquatorial: EquatorialPlace
    /// Greenwich apparent sidereal time, degrees.
    public let siderealTime: Double
    /// The true obliquity of the ecliptic, degrees.
    public let trueObliquity: Double
    /// Nutation in longitude, degrees.
    public let nutationInLongitude: Double

    /// The sky from the theories, at each instant asked.
    public static let theories: SkyAt = { Sky(julianDayUT: $0) }

    /// A sky whose places were found elsewhere (interpolated by a `SkyTable`).
    init(
        julianDayUT: Double, deltaT: Double, sun: EclipticPlace, moon: EclipticPlace, sunEquatorial: EquatorialPlace,
        moonEquatorial: EquatorialPlace, trueObliquity: Double, nutationInLongitude: Double
    ) {
        self.julianDayUT = julianDayUT
        self.deltaT = deltaT
        self.sun = sun
        self.moon = moon
        self.sunEquatorial = sunEquatorial
        self.moonEquatorial = moonEquatorial
        self.trueObliquity = trueObliquity
        self.nutationInLongitude = nutationInLongitude
        siderealTime = Self.siderealTime(julianDayUT: julianDayUT, nutationInLongitude: nutationInLongitude, trueObliquity: trueObliquity)
    }

    /// Greenwich apparent sidereal time, degrees: Meeus 12.4 (IAU 1982 GMST, on UT) plus the equation of the equinoxes.
    static func siderealTime(julianDayUT: Double, nutationInLongitude: Double, trueObliquity: Double) -> Double {
        let d = julianDayUT - JulianDay.j2000
        let tu = d / 36_525
        let meanSidereal = 280.46061837 + 360.98564736629 * d + tu * tu * (0.000387933 - tu / 38_710_000)
        return Angle.normalized(meanSidereal + nutationInLongitude * cos(Angle.radians(trueObliquity)))
    }

    /// The sky at `julianDayUT`; `deltaT` in seconds, by default `DeltaT`'s.
    public init(julianDayUT: Double, deltaT: Double? = nil) {
        let deltaT = deltaT ?? DeltaT.seconds(julianDayUT: julianDayUT)
        self.julianDayUT = julianDayUT
        self.deltaT = deltaT
        let t = (julianDayUT + deltaT / 86_400 - JulianDay.j2000) / 36_525
        let nutation = Nutation(centuries: t)
        sun = Sun.apparent(centuries: t, nutation: nutation)
        moon = Moon.apparent(centuries: t, nutation: nutation)
        trueObliquity = nutation.trueObliquity
        nutationInLongitude = nutation.longitude
        sunEquatorial = Self.equatorial(sun, obliquity: trueObliquity)
        moonEquatorial = Self.equatorial(moon, obliquity: trueObliquity)
        siderealTime = Self.siderealTime(julianDayUT: julianDayUT, nutationInLongitude: nutation.longitude, trueObliquity: trueObliquity)
    }

    /// The Sun's place as seen from `site`.
    public func sun(from site: Site) -> HorizontalPlace { horizontal(sunEquatorial, from: site) }

    /// The Moon's place as seen from `site`.
    public func moon(from site: Site) -> HorizontalPlace { horizontal(moonEquatorial, from: site) }

    /// The elongation of the Moon from the Sun as seen from the Earth's centre, degrees.
    public var geocentricElongation: Double {
        let s = Vector3(alpha: Angle.radians(sunEquatorial.rightAscension), delta: Angle.radians(sunEquatorial.declination), distance: 1)
        let m = Vector3(alpha: Angle.radians(moonEquatorial.rightAscension), delta: Angle.radians(moonEquatorial.declination), distance: 1)
        return Angle.degrees(s.angle(to: m))
    }

    static func equatorial(_ place: EclipticPlace, obliquity: Double) -> EquatorialPlace {
        let lambda = Angle.radians(place.longitude)
        let beta = Angle.radians(place.latitude)
        let epsilon = Angle.radians(obliquity)
        let alpha = atan2(sin(lambda) * cos(epsilon) - tan(beta) * sin(epsilon), cos(lambda))
        let delta = asin(sin(beta) * cos(epsilon) + cos(beta) * sin(epsilon) * sin(lambda))
        return EquatorialPlace(rightAscension: Angle.normalized(Angle.degrees(alpha)), declination: Angle.degrees(delta), distance: place.distance)
    }

    /// Parallax by subtracting the observer's geocentric position (WGS84) from the body's, then the altitude and azimuth
    /// of the result on the site's meridian.
    func horizontal(_ place: EquatorialPlace, from site: Site) -> HorizontalPlace {
        let localSidereal = Angle.radians(siderealTime + site.longitude)
        let body = Vector3(alpha: Angle.radians(place.rightAscension), delta: Angle.radians(place.declination), distance: place.distance)
        let observer = Vector3(
            x: site.equatorialRadius * cos(localSidereal), y: site.equatorialRadius * sin(localSidereal), z: site.polarHeight)
        let topocentric = body - observer
        let hourAngle = localSidereal - topocentric.alpha
        let delta = topocentric.delta
        let phi = Angle.radians(site.latitude)
        let sinAltitude = sin(phi) * sin(delta) + cos(phi) * cos(delta) * cos(hourAngle)
        let azimuth = atan2(-cos(delta) * sin(hourAngle), sin(delta) * cos(phi) - cos(delta) * sin(phi) * cos(hourAngle))
        return HorizontalPlace(
            altitude: Angle.degrees(asin(max(-1, min(1, sinAltitude)))), azimuth: Angle.normalized(Angle.degrees(azimuth)),
            distance: topocentric.length, direction: topocentric)
    }
}

/// A place on the Earth: geodetic latitude and longitude (east positive) on the WGS84 ellipsoid, degrees, and height
/// above it, metres.
public struct Site: Sendable, Hashable, Codable {
    public var name: String
    public var latitude: Double
    public var longitude: Double
    public var height: Double

    public init(name: String, latitude: Double, longitude: Double, height: Double = 0) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.height = height
    }

    static let earthEquatorialRadius = 6378.137  // km, WGS84
    static let earthFlattening = 1 / 298.257223563

    /// The site's distance from the Earth's axis, kilometres.
    var equatorialRadius: Double {
        let (n, _) = radii
        return (n + height / 1000) * cos(Angle.radians(latitude))
    }

    /// The site's height above the equatorial plane, kilometres.
    var polarHeight: Double {
        let (n, e2) = radii
        return (n * (1 - e2) + height / 1000) * sin(Angle.radians(latitude))
    }

    /// The prime vertical radius of curvature at the site's latitude, and the ellipsoid's squared eccentricity.
    private var radii: (Double, Double) {
        let f = Self.earthFlattening
        let e2 = f * (2 - f)
        let s = sin(Angle.radians(latitude))
        return (Self.earthEquatorialRadius / (1 - e2 * s * s).squareRoot(), e2)
    }
}
