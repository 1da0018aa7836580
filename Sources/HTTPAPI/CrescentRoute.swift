import Accounts
import Astronomy
import ContentStore
import CrescentMap
import Crypto
import Foundation
import HTTPTypes
import HijriCalendar
import Hummingbird
import Synchronization

/// The crescent visibility maps the API draws (`GET /v1/crescent/{date}.svg`): drawn one at a time on a thread of their
/// own (a gate with one place and four waiting; more is 503 `busy`), the last 64 kept.
public final class CrescentMaps: Sendable {
    public static let capacity = 64
    let gate = HashingGate(limit: 1, waiting: 4)

    struct Entry: Sendable {
        let body: ByteBuffer
        let tag: String
    }

    private struct Kept {
        var entries: [String: Entry] = [:]
        var order: [String] = []
    }
    private let kept = Mutex(Kept())

    public init() {}

    /// The map of the evening of `dayNumber` for `region`, drawn on first asking; `coastline` (the seeded GeoJSON, read
    /// and parsed only for a map not kept already) is drawn under it, when it can be read.
    func svg(dayNumber: Int, region: CrescentRegion, coastline: @escaping @Sendable () throws -> String?) async throws -> Entry {
        let key = "\(dayNumber) \(region.id) \(region.rule.name) \(region.sites.map { "\($0.latitude),\($0.longitude),\($0.height)" })"
        if let entry = kept.withLock({ $0.entries[key] }) { return entry }
        let entry = try await gate.run {
            let coastlines = try coastline().flatMap { try? Coastlines(geoJSON: Data($0.utf8)) }
            let svg = MapPicture.evening(dayNumber: dayNumber, region: region, coastlines: coastlines).svg
            let body = Data(svg.utf8)
            return Entry(body: ByteBuffer(bytes: body), tag: entityTag(body))
        }
        kept.withLock { kept in
            if kept.entries.updateValue(entry, forKey: key) == nil { kept.order.append(key) }
            while kept.order.count > Self.capacity { kept.entries[kept.order.removeFirst()] = nil }
        }
        return entry
    }
}

func addCrescentRoutes(to router: Router<APIContext>, _ environment: APIEnvironment) {
    router.get("/v1/crescent/:file") { request, context -> Response in
        let file = try context.pathParameter("file")
        guard file.count == 14, file.hasSuffix(".svg"), let day = try? CivilDate(parsing: String(file.dropLast(4))) else {
            throw APIError.badRequest("bad_date", "invalid map '\(file.prefix(40))': expected YYYY-MM-DD.svg, such as 2026-02-18.svg")
        }
        guard MapPicture.dayNumbers.contains(day.dayNumber) else {
            throw APIError.badRequest("out_of_range", "date \(day) is outside the years a map can be drawn for (1900-01-01 to 2100-12-31)")
        }
        let database = environment.database
        let region = try answering(.answer) { try database.crescentRegion().region }
        let entry: CrescentMaps.Entry
        do {
            entry = try await environment.crescentMaps.svg(dayNumber: day.dayNumber, region: region) { try database.coastlineGeoJSON() }
        } catch is HashingGate.Busy {
            var error = APIError(.serviceUnavailable, code: "busy", "too many maps being drawn at once; try again in a moment")
            error.headers[.retryAfter] = "1"
            throw error
        }
        return conditional(request, body: entry.body, tag: entry.tag, maxAge: 86_400, contentType: "image/svg+xml; charset=utf-8")
    }
}
