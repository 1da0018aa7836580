import Foundation
import GRDB
import Storage

/// What `status` says about one push platform.
public struct PushPlatformStatus: Encodable, Sendable, Equatable {
    public let platform: String
    /// Why it is paused (a configuration error), and until when the sender waits before trying again.
    public let pausedReason: String?
    public let pausedUntil: String?
    public let deliveredLastHour: Int
    public let failedLastHour: Int
    public let retryingLastHour: Int
    /// Devices its service no longer knew, disabled in the last day.
    public let disabledLastDay: Int

    enum CodingKeys: String, CodingKey {
        case platform, pausedReason = "paused_reason", pausedUntil = "paused_until", deliveredLastHour = "delivered_last_hour"
        case failedLastHour = "failed_last_hour", retryingLastHour = "retrying_last_hour", disabledLastDay = "disabled_last_day"
    }
}

extension AppDatabase {
    /// Each platform's last hour of deliveries, its pause and the devices its service disabled in the last day.
    ///
    /// Only the outbox's last three days are read (found by id, which grows with time): a row is never sent after its
    /// local day has ended.
    public func pushStatus(now: Date) throws -> [PushPlatformStatus] {
        try read { db in
            let at = now.timeIntervalSince1970
            let firstID = try Self.firstOutboxID(db, createdAtOrAfter: at - 3 * 86_400)
            var counts: [String: (Int, Int, Int)] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT platform,
                        sum(status = 'delivered' AND delivered_at >= ?1), sum(status = 'failed' AND last_attempt_at >= ?1),
                        sum(status = 'pending' AND attempts > 0 AND last_attempt_at >= ?1)
                    FROM outbox WHERE id >= ?2 GROUP BY platform
                    """, arguments: [at - 3600, firstID])
            {
                counts[row[0]] = (row[1] ?? 0, row[2] ?? 0, row[3] ?? 0)
            }
            var disabled: [String: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT platform, count(*) FROM device WHERE disabled_at >= ? GROUP BY platform", arguments: [at - 86_400])
            {
                disabled[row[0]] = row[1]
            }
            var pauses: [String: (String, Double)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT platform, reason, until FROM push_pause WHERE until > ?", arguments: [at]) {
                pauses[row[0]] = (row[1], row[2])
            }
            return PushPlatformStatus.platforms(
                counts: counts.mapValues { (delivered: $0.0, failed: $0.1, retrying: $0.2) }, disabled: disabled,
                pauses: pauses.mapValues { (reason: $0.0, until: $0.1) })
        }
    }

    /// The age of the APNs provider token in use (the newest kept), for `status`.
    public func apnsProviderTokenAge(now: Date) throws -> TimeInterval? {
        try read { db in
            try Double.fetchOne(db, sql: "SELECT max(issued_at) FROM push_credential WHERE name LIKE 'apns/%'").map { now.timeIntervalSince1970 - $0 }
        }
    }

    /// The smallest outbox id created at or after `instant`, by bisection over the ids (which grow with time): a few
    /// lookups by key rather than a scan.
    static func firstOutboxID(_ db: Database, createdAtOrAfter instant: Double) throws -> Int64 {
        guard var low = try Int64.fetchOne(db, sql: "SELECT min(id) FROM outbox"),
            var high = try Int64.fetchOne(db, sql: "SELECT max(id) FROM outbox")
        else { return 0 }
        let created = try db.makeStatement(sql: "SELECT created_at FROM outbox WHERE id >= ? ORDER BY id LIMIT 1")
        high += 1
        while low < high {
            let middle = low + (high - low) / 2
            if let value = try Double.fetchOne(created, arguments: [middle]), value < instant { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
