import Foundation

/// When a crescent counts as seen: Odeh's criterion, at or above a zone (B: "visible by optical aid, could be seen by
/// naked eye"; A: naked eye only; C: optical aid only).
public struct VisibilityRule: Hashable, Sendable, CustomStringConvertible {
    /// The weakest zone that counts as seen.
    public let zone: VisibilityZone

    public init(zone: VisibilityZone) { self.zone = zone }

    /// `odeh-a`, `odeh-b` or `odeh-c`.
    public init?(name: String) {
        guard name.hasPrefix("odeh-"), let zone = VisibilityZone(rawValue: name.dropFirst(5).uppercased()), zone != .d else { return nil }
        self.zone = zone
    }

    public var name: String { "odeh-\(zone.rawValue.lowercased())" }
    public var description: String { name }
    public static let names = ["odeh-a", "odeh-b", "odeh-c"]

    public func counts(_ evening: CrescentEvening) -> Bool { evening.zone <= zone }
}

/// Sites whose sighting begins a month for a community, and the rule by which a crescent counts as seen there.
public struct CrescentRegion: Hashable, Sendable {
    public let id: String
    public let name: String
    public let sites: [Site]
    public let rule: VisibilityRule

    public init(id: String, name: String, sites: [Site], rule: VisibilityRule) {
        precondition(!sites.isEmpty, "a region has at least one site")
        self.id = id
        self.name = name
        self.sites = sites
        self.rule = rule
    }

    /// The verdict on the evening of the civil day `dayNumber` (days since 1970-01-01, the sites' local day) for the
    /// crescent after `conjunction` (a Julian day of UT): seen if it counts by the rule at any site, the sites asked in
    /// order until one sees it.
    public func verdict(dayNumber: Int, conjunction: Double) -> EveningVerdict {
        var best: CrescentEvening?
        for site in sites {
            guard let evening = Self.evening(at: site, dayNumber: dayNumber, conjunction: conjunction) else { continue }
            if rule.counts(evening) { return EveningVerdict(dayNumber: dayNumber, seen: true, deciding: evening) }
            if best.map({ evening.v > $0.v }) ?? true { best = evening }
        }
        return EveningVerdict(dayNumber: dayNumber, seen: false, deciding: best)
    }

    /// Each site's verdict on the evening, none skipped because another saw the crescent first.
    public func verdicts(dayNumber: Int, conjunction: Double) -> [EveningVerdict] {
        sites.map { site in
            let evening = Self.evening(at: site, dayNumber: dayNumber, conjunction: conjunction)
            return EveningVerdict(dayNumber: dayNumber, seen: evening.map(rule.counts) ?? false, deciding: evening)
        }
    }

    static func evening(at site: Site, dayNumber: Int, conjunction: Double) -> CrescentEvening? {
        Crescent.evening(site: site, localMidnight: JulianDay.unixEpoch + Double(dayNumber) - site.longitude / 360, conjunction: conjunction)
    }
}

/// A region's verdict on one evening, and the evening that decided it: the first site that saw the crescent, or, when
/// none did, the site where it came nearest (the highest V). Nil only when the Sun or the Moon set at none of them.
public struct EveningVerdict: Hashable, Sendable {
    public let dayNumber: Int
    public let seen: Bool
    public let deciding: CrescentEvening?
}
