import Astronomy
import Foundation
import GRDB
import HijriCalendar
import Storage

/// The predicted calendar in the store: the regions seeded from data/, the one this process keeps its calendar for,
/// and the calendar itself with the published starts put in.
///
/// A region's table is parsed once per seeding and kept (`AppDatabase.kept`); the calendar is built again only when
/// the published starts change, so that `today` and the API pay a read of the published starts and no astronomy.
extension AppDatabase {
    private static let regionKey = "content.crescent.region"
    private static let tableKey = "content.crescent.table"
    private static let calendarKey = "content.crescent.calendar"

    private struct KeptTable: Sendable {
        let fingerprint: String
        /// The region as the process named it (nil: the data's default).
        let chosen: String?
        let region: CrescentRegion
        let table: PredictedTable
    }

    /// The calendar built from a kept table and the published starts it was built with.
    private struct KeptCalendar: Sendable {
        let fingerprint: String
        let regionID: String
        let published: [PublishedMonthStart]
        let calendar: IslamicCalendar
    }

    /// The regions as seeded.
    public func crescentRegions() throws -> CrescentRegions {
        try read { db in try Self.crescentRegions(db) }
    }

    static func crescentRegions(_ db: Database) throws -> CrescentRegions {
        let rows = try Row.fetchAll(db, sql: "SELECT id, name, rule, sites, is_default FROM crescent_region ORDER BY position")
        guard !rows.isEmpty else { throw StoreError.notSeeded("crescent regions") }
        var regions: [CrescentRegion] = []
        var defaultID = ""
        for row in rows {
            let id: String = row["id"]
            guard let rule = VisibilityRule(name: row["rule"]),
                let sites = try? JSONDecoder().decode([Site].self, from: Data((row["sites"] as String).utf8))
            else { throw StoreError.malformedData(file: "crescent_region", reason: "the region '\(id)' cannot be read") }
            regions.append(CrescentRegion(id: id, name: row["name"], sites: sites, rule: rule))
            if row["is_default"] as Bool { defaultID = id }
        }
        return try CrescentRegions(regions: regions, defaultID: defaultID)
    }

    /// Keeps the predicted calendar for the region `id` in this process (nil: the data's default region); an unknown
    /// name is an error listing the known ones.
    public func useCrescentRegion(_ id: String?) throws {
        if let id { _ = try crescentRegions().region(id) }
        kept.set(Self.regionKey, id)
        kept.set(Self.calendarKey, nil)
    }

    /// The region this process keeps the predicted calendar for, and its table: a preset's as seeded; for sites given
    /// by their coordinates, computed on first use (a second or two) and kept in the database until the data changes.
    public func crescentRegion() throws -> (region: CrescentRegion, table: PredictedTable) {
        let kept = try keptTable()
        return (kept.region, kept.table)
    }

    private func keptTable() throws -> KeptTable {
        let chosen = kept.value(Self.regionKey, as: String.self)
        let (fingerprint, region, stored) = try read { db -> (String, CrescentRegion, String?) in
            let fingerprint = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seed_fingerprint'") ?? ""
            let defaultID = chosen == nil ? try Self.defaultRegionID(db) : nil
            if let table = kept.value(Self.tableKey, as: KeptTable.self), table.fingerprint == fingerprint, table.chosen == chosen,
                chosen != nil || table.region.id == defaultID
            {
                return (fingerprint, table.region, nil)
            }
            let regions = try Self.crescentRegions(db)
            let region = try chosen.map { try regions.region($0) } ?? regions.defaultRegion
            let csv =
                regions.isPreset(region)
                ? try String.fetchOne(db, sql: "SELECT predicted FROM crescent_region WHERE id = ?", arguments: [region.id])
                : try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [Self.ownTableKey(region, fingerprint)])
            return (fingerprint, region, csv)
        }
        if let kept = kept.value(Self.tableKey, as: KeptTable.self), kept.fingerprint == fingerprint, kept.region == region {
            return kept
        }
        let table: PredictedTable
        if let stored {
            table = try PredictedTable(regionID: region.id, csv: stored)
        } else {
            guard region.id.contains(",") else { throw CalendarError.predictedUnavailable(region.id) }
            table = try PredictedTable(
                regionID: region.id, firstYear: PredictedMonthStarts.firstYear, starts: PredictedMonthStarts.chain(region: region))
            try write { db in
                // A table computed for other data is of no more use.
                try db.execute(sql: "DELETE FROM meta WHERE key LIKE 'predicted %' AND key NOT LIKE ?", arguments: ["predicted \(fingerprint) %"])
                try Self.setMeta(db, Self.ownTableKey(region, fingerprint), table.csv)
            }
        }
        let made = KeptTable(fingerprint: fingerprint, chosen: chosen, region: region, table: table)
        kept.set(Self.tableKey, made)
        return made
    }

    /// Where the table of a region given by coordinates is kept, for the data it was computed with.
    private static func ownTableKey(_ region: CrescentRegion, _ fingerprint: String) -> String { "predicted \(fingerprint) \(region.id)" }

    /// The coastlines' GeoJSON as seeded, if the data folder had it.
    public func coastlineGeoJSON() throws -> String? { try meta("map_coastline") }

    private static func defaultRegionID(_ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT id FROM crescent_region WHERE is_default")
    }

    /// The predicted calendar of this process's region with the published starts put in: built again only when the
    /// table (the data seeded again, another region) or the published starts change.
    func predictedCalendar() throws -> IslamicCalendar {
        let table = try keptTable()
        let published = try publishedMonthStarts()
        if let built = kept.value(Self.calendarKey, as: KeptCalendar.self), built.fingerprint == table.fingerprint,
            built.regionID == table.region.id, built.published == published
        {
            return built.calendar
        }
        let calendar = try IslamicCalendar.predicted(table: table.table, region: table.region, published: published)
        kept.set(Self.calendarKey, KeptCalendar(fingerprint: table.fingerprint, regionID: table.region.id, published: published, calendar: calendar))
        return calendar
    }
}
