import Astronomy
import Foundation

/// Why a predicted month begins when it does: the evening its crescent was looked for, at the site that decided.
///
/// Seen: the first site (in the region's order) where the crescent counts by the rule. Not seen: the site where it came
/// nearest (the highest V), and the month completed 30 days.
public struct CrescentEvidence: Codable, Hashable, Sendable {
    /// The civil day on whose evening the crescent was looked for.
    public let evening: String
    public let site: String
    public let seen: Bool
    /// `odeh-b` and so on.
    public let rule: String
    /// ISO 8601 instants (UT).
    public let conjunction: String
    public let sunset: String
    public let moonset: String
    public let lagMinutes: Double
    public let ageHours: Double
    public let arcOfVision: Double
    public let arcOfLight: Double
    public let width: Double
    public let v: Double
    public let zone: String

    enum CodingKeys: String, CodingKey {
        case evening, site, seen, rule, conjunction, sunset, moonset, v, zone, width
        case lagMinutes = "lag_minutes", ageHours = "age_hours", arcOfVision = "arcv", arcOfLight = "arcl"
    }

    public init?(_ verdict: EveningVerdict, rule: VisibilityRule) {
        guard let evening = verdict.deciding else { return nil }
        self.evening = CivilDate(dayNumber: verdict.dayNumber).description
        site = evening.site.name
        seen = verdict.seen
        self.rule = rule.name
        conjunction = JulianDay.iso(evening.conjunction)
        sunset = JulianDay.iso(evening.sunset)
        moonset = JulianDay.iso(evening.moonset)
        lagMinutes = Self.rounded(evening.lagMinutes, 1)
        ageHours = Self.rounded(evening.ageHours, 1)
        arcOfVision = Self.rounded(evening.arcOfVision, 2)
        arcOfLight = Self.rounded(evening.arcOfLight, 2)
        width = Self.rounded(evening.width, 3)
        v = Self.rounded(evening.v, 2)
        zone = evening.zone.rawValue
    }

    static func rounded(_ value: Double, _ places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}

extension PredictedMonthStarts {
    /// The evidence for the month that follows one starting on `previousStart`: the verdict on its 29th evening.
    public static func evidence(region: CrescentRegion, previousStart: Int) -> CrescentEvidence? {
        CrescentEvidence(step(region: region, start: previousStart).verdict, rule: region.rule)
    }
}
