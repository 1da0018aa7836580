import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage

extension AppDatabase {
    /// An outbox row's local date as a day number (the Julian day's integer part), the first column of its unique key.
    /// Queries find rows by it; it must be the very expression the `outbox_once` index was made with (v8), or SQLite
    /// cannot use the index: a test compares the two.
    public static let outboxDay = "CAST(julianday(local_date) AS INTEGER)"

    /// The `outboxDay` of a civil day number (days since 1970-01-01).
    public static func outboxDay(dayNumber: Int) -> Int { dayNumber + 2_440_587 }
}

extension AppDatabase {
    /// When there is next something to do, in seconds since 1970: the first queued fire less `lead` (the emitter
    /// writes that far ahead), or the first pending row's next attempt among `platforms` (nil: all); nil when there is
    /// nothing queued or pending.
    public func nextWork(lead: TimeInterval, platforms: Set<String>? = nil) throws -> Double? {
        let only = Self.platformFilter(platforms)
        return try read { db in
            try Double.fetchOne(
                db,
                sql: """
                    SELECT min(t) FROM (
                        SELECT min(next_fire_at) - ? AS t FROM schedule
                        UNION ALL SELECT min(next_attempt_at) FROM outbox WHERE status = 'pending'\(only.sql))
                    """, arguments: [lead] + only.arguments)
        }
    }

    /// ` AND platform IN (…)` for the outbox rows of `platforms`, with its arguments: nil is every platform (no
    /// condition), none is no row.
    static func platformFilter(_ platforms: Set<String>?) -> (sql: String, arguments: StatementArguments) {
        guard let platforms else { return ("", []) }
        let only = platforms.sorted()
        return (" AND platform IN (" + (only.isEmpty ? "NULL" : only.map { _ in "?" }.joined(separator: ",")) + ")", StatementArguments(only))
    }
}

public enum OutboxStatus: String, CaseIterable, Codable, Sendable {
    case pending, delivered, failed, missed
}

/// One outbox row, as the spool and `outbox list --json` print it.
public struct OutboxRecord: Sendable {
    public let id: Int64
    public let idempotencyKey: String
    public let deviceID: String
    public let platform: String
    public let localDate: String
    public let fireAt: Date
    /// JSON objects, stored as text.
    public let headers: String
    public let payload: String
    public let status: OutboxStatus
    public let attempts: Int
    public let lastError: String?
    public let deliveredAt: Date?
    /// The push service's id for the message (`apns-id`, FCM's message name, Web Push's `Location`), once delivered.
    public let serviceID: String?

    /// A record not (yet) in the outbox: `push test`'s message.
    init(id: Int64, deviceID: String, platform: String, localDate: String, fireAt: Date, headers: String, payload: String) {
        self.id = id
        self.deviceID = deviceID
        self.platform = platform
        self.localDate = localDate
        self.idempotencyKey = "\(deviceID)/\(localDate)"
        self.fireAt = fireAt
        self.headers = headers
        self.payload = payload
        status = .pending
        attempts = 0
        lastError = nil
        deliveredAt = nil
        serviceID = nil
    }

    /// A row as a store other than SQLite reads it.
    init(
        id: Int64, deviceID: String, platform: String, localDate: String, fireAt: Date, headers: String, payload: String, status: OutboxStatus,
        attempts: Int, lastError: String?, deliveredAt: Date?, serviceID: String?
    ) {
        (self.id, self.deviceID, self.platform, self.localDate, self.fireAt) = (id, deviceID, platform, localDate, fireAt)
        idempotencyKey = "\(deviceID)/\(localDate)"
        (self.headers, self.payload, self.status, self.attempts) = (headers, payload, status, attempts)
        (self.lastError, self.deliveredAt, self.serviceID) = (lastError, deliveredAt, serviceID)
    }

    init(_ row: Row) {
        id = row["id"]
        deviceID = row["device_id"]
        platform = row["platform"]
        localDate = row["local_date"]
        // Derived, not stored: one row per device and local date (the unique key `outbox_once`, by day and device).
        idempotencyKey = "\(deviceID)/\(localDate)"
        fireAt = Date(timeIntervalSince1970: row["fire_at"])
        headers = row["headers"]
        payload = row["payload"]
        status = OutboxStatus(rawValue: row["status"]) ?? .pending
        attempts = row["attempts"]
        lastError = row["last_error"]
        deliveredAt = (row["delivered_at"] as Double?).map(Date.init(timeIntervalSince1970:))
        serviceID = row["service_id"]
    }

    /// One JSON object on one line: `id`, `idempotency_key`, `device_id`, `platform`, `local_date`, `fire_at`
    /// (ISO 8601, UTC), `headers`, `payload`, and `status` when `includeStatus`.
    public func jsonLine(includeStatus: Bool = false) -> String {
        let quoted = JSON.quoted
        var fields = [
            "\"device_id\":\(quoted(deviceID))", "\"fire_at\":\(quoted(fireAt.iso8601UTC))", "\"headers\":\(headers)", "\"id\":\(id)",
            "\"idempotency_key\":\(quoted(idempotencyKey))", "\"local_date\":\(quoted(localDate))", "\"payload\":\(payload)",
            "\"platform\":\(quoted(platform))",
        ]
        if includeStatus { fields.append("\"status\":\(quoted(status.rawValue))") }
        return "{" + fields.joined(separator: ",") + "}"
    }

}

extension AppDatabase {
    /// Outbox rows, oldest first, optionally for one local date and one status.
    public func outbox(date: CivilDate? = nil, status: OutboxStatus? = nil, limit: Int? = nil) throws -> [OutboxRecord] {
        var records: [OutboxRecord] = []
        try forEachOutboxRow(date: date, status: status, limit: limit) { records.append($0) }
        return records
    }

    /// Visits outbox rows in id order, oldest first, as they are read: a listing of millions of rows starts at once
    /// and holds one row at a time. `after`: only rows with a larger id (the last id of a previous page).
    public func forEachOutboxRow(
        date: CivilDate? = nil, status: OutboxStatus? = nil, after: Int64? = nil, limit: Int? = nil, _ body: (OutboxRecord) throws -> Void
    ) throws {
        try read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let date {
                conditions.append("local_date = ?")
                arguments += [date.description]
            }
            if let status {
                conditions.append("status = ?")
                arguments += [status.rawValue]
            }
            if let after {
                conditions.append("id > ?")
                arguments += [after]
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            arguments += [limit ?? -1]
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM outbox \(filter) ORDER BY id LIMIT ?", arguments: arguments)
            while let row = try rows.next() { try body(OutboxRecord(row)) }
        }
    }

    /// Puts failed rows (all, or those with the given ids) back to pending with a fresh set of attempts, due now: for
    /// after the cause is mended (a webhook's address, a gateway's configuration). A row more than the grace period
    /// late is then recorded as missed by the deliverer, as any late fire is. How many were put back.
    public func requeueFailed(ids: [Int64]? = nil, now: Date) throws -> Int {
        try write { db in
            let sql = "UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ? WHERE status = 'failed'"
            guard let ids else {
                try db.execute(sql: sql, arguments: [now.timeIntervalSince1970])
                return db.changesCount
            }
            // One statement per id: any number of ids, within SQLite's limit on bound values.
            let statement = try db.makeStatement(sql: sql + " AND id = ?")
            var changed = 0
            for id in Set(ids) {
                try statement.execute(arguments: [now.timeIntervalSince1970, id])
                changed += db.changesCount
            }
            return changed
        }
    }

    /// Removes rows settled (delivered, failed or missed) and created before `cutoff`, oldest first, `chunk` rows per
    /// transaction so that a large prune never holds the scheduler up for long. Pending rows always stay. How many
    /// went.
    ///
    /// Exactly-once does not rest on old rows: a device's queue entry remembers the last date it fired, and dates
    /// only move forward; the outbox's unique key guards the days the retention keeps.
    public func pruneOutbox(settledBefore cutoff: Date, chunk: Int = 10_000) throws -> Int {
        // Ids grow with time: the first row created at or after the cutoff bounds the rows to look at.
        let bound = try read { db in
            try Int64.fetchOne(db, sql: "SELECT min(id) FROM outbox WHERE created_at >= ?", arguments: [cutoff.timeIntervalSince1970])
                ?? (try Int64.fetchOne(db, sql: "SELECT max(id) + 1 FROM outbox") ?? 0)
        }
        return try deleteInChunks(
            sql: """
                DELETE FROM outbox WHERE id IN (
                    SELECT id FROM outbox WHERE id < ? AND status <> 'pending' AND created_at < ? ORDER BY id LIMIT ?)
                """, arguments: [bound, cutoff.timeIntervalSince1970], chunk: chunk)
    }

    /// Rows waiting for delivery whose retry time has come, of the given platforms (nil: all), after the row `after`.
    static func deliverable(_ db: Database, now: Date, limit: Int, platforms: Set<String>? = nil, after: Int64? = nil) throws -> [OutboxRecord] {
        var filter = ""
        var arguments: StatementArguments = [now.timeIntervalSince1970]
        if let after {
            filter += " AND id > ?"
            arguments += [after]
        }
        // Nothing to send when the sink takes no platform at all.
        if platforms?.isEmpty == true { return [] }
        let only = platformFilter(platforms)
        filter += only.sql
        arguments += only.arguments
        arguments += [limit]
        return try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM outbox INDEXED BY outbox_pending
                WHERE status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= ?)\(filter) ORDER BY id LIMIT ?
                """, arguments: arguments
        ).map(OutboxRecord.init)
    }

    /// Rows by status, for `status`.
    public func outboxCounts() throws -> [OutboxStatus: Int] {
        try read { db in
            var counts: [OutboxStatus: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM outbox GROUP BY status") {
                if let status = OutboxStatus(rawValue: row["status"]) { counts[status] = row["n"] }
            }
            return counts
        }
    }

    /// The rows written ahead of their time and still waiting for it, with now as the argument.
    static let writtenAhead = "status = 'pending' AND fire_at > ?"

    /// How long before its time a row written ahead stays when its device changes: one due this close may already be
    /// on its way (the deliverer took it on its own clock, seconds ahead of the change's, or while the change waited
    /// for the writer), and withdrawn it would be written and sent again with the new settings. It goes as it is.
    public static let withdrawalMargin: TimeInterval = 60

    /// Pending rows written ahead of their time, waiting for it.
    public func outboxWrittenAhead(now: Date) throws -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE \(Self.writtenAhead)", arguments: [now.timeIntervalSince1970]) ?? 0
        }
    }

    /// The latest errors recorded by deliveries.
    public func lastDeliveryErrors(limit: Int = 5) throws -> [OutboxRecord] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox WHERE last_error IS NOT NULL ORDER BY id DESC LIMIT ?", arguments: [limit])
                .map(OutboxRecord.init)
        }
    }
}
