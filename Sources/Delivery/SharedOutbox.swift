import Foundation
import HijriCalendar
import Logging
import PostgresNIO
import Storage

/// The outbox in PostgreSQL, delivered from by any number of processes at once: each takes a batch by leasing it.
///
/// `take` marks the next due rows as this process's until `now + lease` (`FOR UPDATE SKIP LOCKED` in the same
/// statement: rows another process is taking are passed over), so no other process takes them meanwhile. `settle`
/// records outcomes only for rows this process still holds, and ends their lease. A process that dies between the two
/// leaves its rows leased; once the lease ends another takes them — a row the service had accepted just before the
/// crash is then sent a second time, with the same collapse id, so the device shows it once.
public struct SharedOutbox: OutboxQueue {
    /// Rows a `serve` process leases at once: one round of the push sink's requests (its concurrency), so that what a
    /// process killed mid-batch leaves sent but not recorded is one round's worth.
    public static let batchSize = 64

    public let store: PostgresStore
    /// Who holds a lease: unique per process (host, process id, and a random part for a reused pid).
    public let owner: String
    /// How long a batch stays this process's: longer than sending one takes.
    public let lease: TimeInterval
    let logger: Logger

    public init(store: PostgresStore, owner: String, lease: TimeInterval = 300, logger: Logger) {
        (self.store, self.owner, self.lease, self.logger) = (store, owner, lease, logger)
    }

    /// A lease owner's name for this process: host, process id, and a random part.
    public static func processOwner() -> String {
        "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
    }

    public func take(after: Int64?, now: Date, limit: Int, platforms: Set<String>?) async throws -> [OutboxRecord] {
        if let platforms, platforms.isEmpty { return [] }
        let at = now.timeIntervalSince1970
        // No platform list: every platform (an array parameter cannot be NULL here, so an empty one stands for "all").
        let only = platforms?.sorted() ?? []
        let rows = try await store.rows(
            """
            UPDATE outbox SET lease_owner = \(owner), lease_until = \(at + lease) WHERE id IN (
                SELECT id FROM outbox WHERE status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= \(at))
                    AND (lease_until IS NULL OR lease_until <= \(at)) AND id > \(after ?? 0)
                    AND (cardinality(\(only)::text[]) = 0 OR platform = ANY(\(only)::text[]))
                ORDER BY id LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: OutboxRecord.postgresColumns)
            """)
        return try rows.map(OutboxRecord.init).sorted { $0.id < $1.id }
    }

    /// Ends this process's lease of rows it took and did not send, as they are.
    public func release(_ ids: [Int64]) async throws {
        try await store.rows(
            "UPDATE outbox SET lease_owner = NULL, lease_until = NULL WHERE id = ANY(\(ids)::int8[]) AND lease_owner = \(owner)")
    }

    public func settle(_ settlement: OutboxSettlement, now: Date) async throws -> Int {
        let at = now.timeIntervalSince1970
        let owner = owner
        return try await store.transaction { transaction in
            for (path, size) in settlement.marks {
                _ = try await transaction.query(
                    """
                    INSERT INTO spool_mark (path, size, at) VALUES (\(path), \(size), \(at))
                    ON CONFLICT (path) DO UPDATE SET size = excluded.size, at = excluded.at
                    """)
            }
            // Each update holds only while the row is still this process's; it ends the lease. The rows delivered, most
            // of a batch, in one statement (a column an array); the rest one by one.
            var delivered: (ids: [Int64], attempts: [Int64], services: [String]) = ([], [], [])
            for case .delivered(let id, let attempts, let serviceID) in settlement.rows {
                delivered.ids.append(id)
                delivered.attempts.append(Int64(attempts))
                // No service id is the empty one (an array parameter holds no NULL here).
                delivered.services.append(serviceID ?? "")
            }
            if !delivered.ids.isEmpty {
                _ = try await transaction.query(
                    """
                    UPDATE outbox o SET status = 'delivered', attempts = t.a, delivered_at = \(at), last_attempt_at = \(at),
                        next_attempt_at = NULL, service_id = NULLIF(t.s, ''), lease_owner = NULL, lease_until = NULL
                    FROM unnest(\(delivered.ids)::int8[], \(delivered.attempts)::int8[], \(delivered.services)::text[]) AS t(i, a, s)
                    WHERE o.id = t.i AND o.lease_owner = \(owner)
                    """)
            }
            for row in settlement.rows {
                switch row {
                case .delivered: continue
                case .missed(let id, let error):
                    _ = try await transaction.query(
                        """
                        UPDATE outbox SET status = 'missed', last_error = \(error), next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL
                        WHERE id = \(id) AND status = 'pending' AND lease_owner = \(owner)
                        """)
                case .deferred(let id, let error, let until):
                    _ = try await transaction.query(
                        """
                        UPDATE outbox SET last_error = \(error), next_attempt_at = \(until), lease_owner = NULL, lease_until = NULL
                        WHERE id = \(id) AND status = 'pending' AND lease_owner = \(owner)
                        """)
                case .retry(let id, let attempts, let error, let next):
                    _ = try await transaction.query(
                        """
                        UPDATE outbox SET attempts = \(attempts), last_error = \(error), last_attempt_at = \(at), next_attempt_at = \(next),
                            lease_owner = NULL, lease_until = NULL
                        WHERE id = \(id) AND lease_owner = \(owner)
                        """)
                case .failed(let id, let attempts, let error):
                    _ = try await transaction.query(
                        """
                        UPDATE outbox SET status = 'failed', attempts = \(attempts), last_error = \(error), last_attempt_at = \(at),
                            next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL
                        WHERE id = \(id) AND lease_owner = \(owner)
                        """)
                }
            }
            var disabled = 0
            for device in settlement.disable {
                disabled += try await transaction.query(
                    """
                    UPDATE device SET enabled = 0, disabled_reason = \(device.reason), disabled_at = \(at), schedule_version = schedule_version + 1
                    WHERE id = \(device.deviceID) AND token = \(device.token) AND enabled = 1 RETURNING 1
                    """
                ).collect().count
            }
            return disabled
        }
    }
}

extension OutboxRecord {
    /// The columns `init(_:)` reads, in its order.
    static let postgresColumns =
        "id, device_id, platform, local_date::text, fire_at, headers, payload, status, attempts, last_error, delivered_at, service_id"

    /// A row of `postgresColumns`.
    init(_ row: PostgresRow) throws {
        let (id, device, platform, date, fireAt, headers, payload, status, attempts, error, delivered, service) = try row.decode(
            (Int64, String, String, String, Double, String, String, String, Int, String?, Double?, String?).self)
        self.init(
            id: id, deviceID: device, platform: platform, localDate: date, fireAt: Date(timeIntervalSince1970: fireAt), headers: headers,
            payload: payload, status: OutboxStatus(rawValue: status) ?? .pending, attempts: attempts, lastError: error,
            deliveredAt: delivered.map(Date.init(timeIntervalSince1970:)), serviceID: service)
    }
}

extension PostgresStore {
    /// As `AppDatabase.forEachOutboxRow`: rows in id order, streamed as they are read.
    public func forEachOutboxRow(
        date: CivilDate? = nil, status: OutboxStatus? = nil, after: Int64? = nil, limit: Int? = nil, _ body: (OutboxRecord) throws -> Void
    ) async throws {
        // Each condition not given is NULL, and the planner drops it.
        try await withoutTransaction { session in
            let rows = try await session.query(
                """
                SELECT \(unescaped: OutboxRecord.postgresColumns) FROM outbox
                WHERE (\(date?.description)::date IS NULL OR local_date = \(date?.description)::date)
                    AND (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue)) AND id > \(after ?? 0)
                ORDER BY id LIMIT \(limit.map(Int64.init))
                """)
            for try await row in rows { try body(try OutboxRecord(row)) }
        }
    }

    /// As `AppDatabase.requeueFailed`: failed rows (all, or those of `ids`) pending again with fresh attempts, due now
    /// and leased to none. How many.
    public func requeueFailed(ids: [Int64]? = nil, now: Date) async throws -> Int {
        let chosen = ids.map { Array(Set($0)) }
        // Counted in the server: after a long outage `--all` is millions of rows, not a row each to read here.
        return try await rows(
            """
            WITH changed AS (
                UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = \(now.timeIntervalSince1970), lease_owner = NULL,
                    lease_until = NULL
                WHERE status = 'failed' AND (\(chosen)::int8[] IS NULL OR id = ANY(\(chosen)::int8[]))
                RETURNING 1)
            SELECT count(*)::int8 FROM changed
            """
        ).first?.decode(Int.self) ?? 0
    }

    /// As `AppDatabase.pruneOutbox`: settled rows created before `cutoff`, in chunks; pending rows always stay. Nil when
    /// another process is pruning.
    public func pruneOutbox(settledBefore cutoff: Date, chunk: Int = 10_000) async throws -> Int? {
        try await deleteInChunks(
            job: "outbox prune", from: "outbox", key: "id", where: "status <> 'pending' AND created_at < $1", order: "id",
            arguments: [cutoff.timeIntervalSince1970], chunk: chunk)
    }
}
