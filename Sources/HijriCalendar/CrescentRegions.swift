import Astronomy
import Foundation

/// The regions a predicted calendar can be kept for: named presets, each with its sites and the rule by which a
/// crescent counts as seen there (`data/calendar/crescent-regions.json`, whose README says how each was chosen).
public struct CrescentRegions: Sendable {
    public let regions: [CrescentRegion]
    /// The region a new installation keeps its calendar for.
    public let defaultRegion: CrescentRegion

    /// The sites' latitudes: farther from the equator the Sun does not set on some days, and a month could not be
    /// decided on them.
    public static let latitudeRange = -60.0...60.0
    public static let maximumSites = 20
    /// Where the data folder keeps them, and the largest such file read.
    public static let file = "calendar/crescent-regions.json"
    public static let maximumFileBytes = 1 << 20
    /// Where the data folder keeps a region's predicted table.
    public static func tableFile(_ id: String) -> String { "calendar/predicted/\(id).csv" }

    public init(regions: [CrescentRegion], defaultID: String) throws(CalendarError) {
        var seen = Set<String>()
        for region in regions {
            guard Self.isValidID(region.id) else {
                throw .malformedRegions("region id '\(region.id)' must be 1-40 lowercase letters, digits and dashes")
            }
            guard seen.insert(region.id).inserted else { throw .malformedRegions("two regions named '\(region.id)'") }
            guard (1...Self.maximumSites).contains(region.sites.count) else {
                throw .malformedRegions("region '\(region.id)' has \(region.sites.count) sites: expected 1 to \(Self.maximumSites)")
            }
            for site in region.sites {
                guard Self.latitudeRange.contains(site.latitude), (-180.0...180.0).contains(site.longitude), (-500.0...9000.0).contains(site.height)
                else {
                    throw .malformedRegions(
                        "site '\(site.name)' of region '\(region.id)' at \(site.latitude), \(site.longitude), \(site.height) m: expected a latitude within ±60°, a longitude within ±180° and a height of -500 to 9000 m"
                    )
                }
            }
        }
        guard let defaultRegion = regions.first(where: { $0.id == defaultID }) else {
            throw .malformedRegions("the default region '\(defaultID)' is not among the regions")
        }
        self.regions = regions
        self.defaultRegion = defaultRegion
    }

    /// Reads the regions file's JSON.
    public init(json: Data) throws(CalendarError) {
        struct File: Decodable {
            struct Entry: Decodable {
                struct Place: Decodable {
                    let name: String
                    let latitude: Double
                    let longitude: Double
                    let height: Double
                }
                let id: String
                let name: String
                let rule: String
                let sites: [Place]
            }
            let `default`: String
            let regions: [Entry]
        }
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: json) } catch {
            throw .malformedRegions("not the regions file's JSON (\(error))")
        }
        var regions: [CrescentRegion] = []
        for entry in file.regions {
            guard let rule = VisibilityRule(name: entry.rule) else {
                throw .malformedRegions(
                    "region '\(entry.id)' has the unknown rule '\(entry.rule)': expected one of \(VisibilityRule.names.joined(separator: ", "))")
            }
            guard !entry.sites.isEmpty else { throw .malformedRegions("region '\(entry.id)' has no sites") }
            regions.append(
                CrescentRegion(
                    id: entry.id, name: entry.name,
                    sites: entry.sites.map { Site(name: $0.name, latitude: $0.latitude, longitude: $0.longitude, height: $0.height) }, rule: rule))
        }
        try self.init(regions: regions, defaultID: file.default)
    }

    /// The region named `id` — a preset, or sites given by their coordinates (`coordinates(_:)`) — or an error listing
    /// the names.
    public func region(_ id: String) throws(CalendarError) -> CrescentRegion {
        if let region = regions.first(where: { $0.id == id }) { return region }
        if let first = id.unicodeScalars.first, first == "-" || first == "+" || ("0"..."9").contains(first) {
            return try coordinates(id)
        }
        throw .unknownRegion(id, known: regions.map(\.id))
    }

    /// A region of one's own: `LAT,LON[,HEIGHT]` sites (degrees north and east, metres), separated by `;`, with the
    /// default region's rule unless `/odeh-a`, `/odeh-b` or `/odeh-c` follows: `32.03,44.35;33.31,44.37/odeh-a`.
    public func coordinates(_ text: String) throws(CalendarError) -> CrescentRegion {
        let form =
            "expected LAT,LON[,HEIGHT] sites in decimal degrees and metres (such as 32.03,44.35) separated by ';', optionally followed by /odeh-a, /odeh-b or /odeh-c"
        guard text.utf8.count <= 400 else { throw .badCoordinates(String(text.prefix(40)) + "…", form) }
        var body = Substring(text)
        var rule = defaultRegion.rule
        if let slash = text.firstIndex(of: "/") {
            guard let named = VisibilityRule(name: String(text[text.index(after: slash)...])) else {
                throw .badCoordinates(text, "unknown rule '\(text[text.index(after: slash)...])': \(form)")
            }
            rule = named
            body = text[..<slash]
        }
        var sites: [Site] = []
        for part in body.split(separator: ";", omittingEmptySubsequences: false) {
            let numbers = part.split(separator: ",", omittingEmptySubsequences: false).map { Self.decimal($0.trimmingCharacters(in: .whitespaces)) }
            guard (2...3).contains(numbers.count), numbers.allSatisfy({ $0?.isFinite == true }) else { throw .badCoordinates(text, form) }
            let site = Site(name: String(part), latitude: numbers[0]!, longitude: numbers[1]!, height: numbers.count == 3 ? numbers[2]! : 0)
            guard Self.latitudeRange.contains(site.latitude), (-180.0...180.0).contains(site.longitude), (-500.0...9000.0).contains(site.height)
            else {
                throw .badCoordinates(text, "the site \(part) is out of range: latitude within ±60°, longitude within ±180°, height -500 to 9000 m")
            }
            sites.append(site)
        }
        guard (1...Self.maximumSites).contains(sites.count) else { throw .badCoordinates(text, "at most \(Self.maximumSites) sites") }
        let id = sites.map { "\($0.latitude),\($0.longitude),\($0.height)" }.joined(separator: ";") + "/" + rule.name
        return CrescentRegion(id: id, name: "Sites at \(sites.map(\.name).joined(separator: "; "))", sites: sites, rule: rule)
    }

    /// A coordinate as the README writes one: a plain decimal number, an optional sign, digits, and optionally a point
    /// and more digits (`-33.87`, `44`); nil for anything else. `Double(_:)` alone took hexadecimal (`0x10`), exponents
    /// (`1e1`) and `nan`.
    static func decimal(_ text: String) -> Double? {
        var digits = Substring(text)
        if let sign = digits.first, sign == "-" || sign == "+" { digits = digits.dropFirst() }
        let halves = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(halves.count), digits.utf8.count <= 20,
            halves.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } })
        else { return nil }
        return Double(text)
    }

    /// Whether `region` is a preset (its table is in the data) or one given by coordinates.
    public func isPreset(_ region: CrescentRegion) -> Bool { regions.contains { $0.id == region.id } }

    static func isValidID(_ id: String) -> Bool {
        (1...40).contains(id.utf8.count) && id.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
    }
}
