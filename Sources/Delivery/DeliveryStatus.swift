import Foundation
import HijriCalendar
import Notifications
import PostgresNIO
import Storage

/// What `status` reports about delivery, from either store: devices and their next fires, the outbox by status, the
/// last errors, each push platform, the scheduler's problems, and on PostgreSQL the processes sharing the database.
public struct DeliveryStatus: Sendable {
    public var devices = 0
    public var enabled = 0
    public var next: [(id: String, at: Date)] = []
    public var outbox: [OutboxStatus: Int] = [:]
    public var writtenAhead = 0
    public var lastErrors: [(id: Int64, error: String)] = []
    public var push: [PushPlatformStatus] = []
    public var apnsTokenAge: TimeInterval?
    public var clockAhead = 0
    public var lastClockAhead: Date?
    public var unknownZones = 0
    /// The live `serve` processes: PostgreSQL's (a SQLite file has one, and no list).
    public var processes: [ProcessRecord]?
}

extension PushPlatformStatus {
    /// Each platform's line from the last hour's counts, the devices disabled in the last day and the pauses.
    static func platforms(
        counts: [String: (delivered: Int, failed: Int, retrying: Int)], disabled: [String: Int], pauses: [String: (reason: String, until: Double)]
    ) -> [PushPlatformStatus] {
        Platform.allCases.map(\.rawValue).map { platform in
            let (delivered, failed, retrying) = counts[platform] ?? (0, 0, 0)
            return PushPlatformStatus(
                platform: platform, pausedReason: pauses[platform]?.reason,
                pausedUntil: pauses[platform].map { Date(timeIntervalSince1970: $0.until).iso8601UTC },
                deliveredLastHour: delivered, failedLastHour: failed, retryingLastHour: retrying, disabledLastDay: disabled[platform] ?? 0)
        }
    }
}

extension AppDatabase {
    /// `status`'s delivery report on SQLite.
    public func deliveryStatus(now: Date) throws -> DeliveryStatus {
        var status = DeliveryStatus()
        (status.devices, status.enabled, status.next) = try deviceSummary(now: now)
        status.outbox = try outboxCounts()
        status.writtenAhead = try outboxWrittenAhead(now: now)
        status.lastErrors = try lastDeliveryErrors().map { ($0.id, $0.lastError ?? "") }
        status.push = try pushStatus(now: now)
        status.apnsTokenAge = try apnsProviderTokenAge(now: now)
        (status.clockAhead, status.lastClockAhead, status.unknownZones) = try scheduleProblems()
        return status
    }
}

extension PostgresStore {
    /// `status`'s delivery report on PostgreSQL: the queries of `deviceSummary`, `outboxCounts`, `pushStatus` and
    /// `scheduleProblems` in PostgreSQL's words, in one transaction, and the live processes.
    public func deliveryStatus(now: Date, upcoming: Int = 5) async throws -> DeliveryStatus {
        let at = now.timeIntervalSince1970
        var status = try await transaction { transaction in
            var status = DeliveryStatus()
            if let row = try await transaction.rows("SELECT count(*), count(*) FILTER (WHERE enabled <> 0) FROM device").first {
                (status.devices, status.enabled) = try row.decode((Int, Int).self)
            }
            status.next = try await transaction.rows(
                """
                SELECT id, at FROM (
                    (SELECT d.id AS id, s.next_fire_at AS at, s.device_seq AS seq FROM schedule s JOIN device d
                        ON d.seq = s.device_seq AND d.schedule_version = s.version AND d.enabled <> 0
                        ORDER BY s.next_fire_at, s.device_seq LIMIT \(upcoming))
                    UNION ALL
                    (SELECT device_id, fire_at, device_seq FROM outbox WHERE status = 'pending' AND fire_at > \(at)
                        ORDER BY fire_at, device_seq LIMIT \(upcoming))) AS next
                ORDER BY at, seq LIMIT \(upcoming)
                """
            ).map { row in
                let (id, fire) = try row.decode((String, Double).self)
                return (id, Date(timeIntervalSince1970: fire))
            }
            for row in try await transaction.rows("SELECT status, count(*) FROM outbox GROUP BY status") {
                let (name, count) = try row.decode((String, Int).self)
                if let value = OutboxStatus(rawValue: name) { status.outbox[value] = count }
            }
            status.writtenAhead = try await transaction.value("SELECT count(*) FROM outbox WHERE status = 'pending' AND fire_at > \(at)") ?? 0
            status.lastErrors = try await transaction.rows("SELECT id, last_error FROM outbox WHERE last_error IS NOT NULL ORDER BY id DESC LIMIT 5")
                .map { try $0.decode((Int64, String).self) }
            // The last three days of the outbox, found by id as on SQLite (the ids grow with time).
            let first = try await transaction.firstOutboxID(createdAtOrAfter: at - 3 * 86_400)
            var counts: [String: (delivered: Int, failed: Int, retrying: Int)] = [:]
            for row in try await transaction.rows(
                """
                SELECT platform, count(*) FILTER (WHERE status = 'delivered' AND delivered_at >= \(at - 3600)),
                    count(*) FILTER (WHERE status = 'failed' AND last_attempt_at >= \(at - 3600)),
                    count(*) FILTER (WHERE status = 'pending' AND attempts > 0 AND last_attempt_at >= \(at - 3600))
                FROM outbox WHERE id >= \(first) GROUP BY platform
                """)
            {
                let (platform, delivered, failed, retrying) = try row.decode((String, Int, Int, Int).self)
                counts[platform] = (delivered, failed, retrying)
            }
            var disabled: [String: Int] = [:]
            for row in try await transaction.rows("SELECT platform, count(*) FROM device WHERE disabled_at >= \(at - 86_400) GROUP BY platform") {
                let (platform, count) = try row.decode((String, Int).self)
                disabled[platform] = count
            }
            var pauses: [String: (reason: String, until: Double)] = [:]
            for row in try await transaction.rows("SELECT platform, reason, until FROM push_pause WHERE until > \(at)") {
                let (platform, reason, until) = try row.decode((String, String, Double).self)
                pauses[platform] = (reason, until)
            }
            status.push = PushPlatformStatus.platforms(counts: counts, disabled: disabled, pauses: pauses)
            status.apnsTokenAge = try await transaction.value("SELECT max(issued_at) FROM push_credential WHERE name LIKE 'apns/%'", as: Double.self)
                .map { at - $0 }
            if let row = try await transaction.rows("SELECT count(*), max(found_at) FROM schedule_problem WHERE kind = 'clock_ahead'").first {
                let (count, last) = try row.decode((Int, Double?).self)
                (status.clockAhead, status.lastClockAhead) = (count, last.map(Date.init(timeIntervalSince1970:)))
            }
            // Zones are few: each distinct one is asked of the system once.
            for row in try await transaction.rows("SELECT timezone, count(*) FROM device WHERE enabled <> 0 GROUP BY timezone") {
                let (zone, count) = try row.decode((String, Int).self)
                if TimeZone.iana(zone) == nil { status.unknownZones += count }
            }
            return status
        }
        status.processes = try await liveProcesses(now: now)
        return status
    }
}

extension PostgresTransaction {
    /// As `AppDatabase.firstOutboxID`: a bisection over the ids, a few lookups by key rather than a scan.
    func firstOutboxID(createdAtOrAfter instant: Double) async throws -> Int64 {
        guard let row = try await rows("SELECT min(id), max(id) FROM outbox").first, case let (low?, high?) = try row.decode((Int64?, Int64?).self)
        else { return 0 }
        var (lower, upper) = (low, high + 1)
        while lower < upper {
            let middle = lower + (upper - lower) / 2
            let created = try await value("SELECT created_at FROM outbox WHERE id >= \(middle) ORDER BY id LIMIT 1", as: Double.self)
            if let created, created < instant { lower = middle + 1 } else { upper = middle }
        }
        return lower
    }
}
