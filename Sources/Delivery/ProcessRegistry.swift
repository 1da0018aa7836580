import Foundation
import HijriCalendar
import PostgresNIO
import Storage

/// A `serve` process sharing a PostgreSQL database, as `status` shows it: where it runs, since when, when it last
/// said so and last finished a pass, how many outbox rows it holds leased now, and the revision of the database's
/// imports its content copy holds (nil until it says).
public struct ProcessRecord: Sendable, Encodable, Equatable {
    public let owner: String
    public let host: String
    public let pid: Int
    public let startedAt: Date
    public let lastSeenAt: Date
    public let lastPassAt: Date?
    public let rowsLeased: Int
    public let contentImports: String?

    enum CodingKeys: String, CodingKey {
        case owner, host, pid, startedAt = "started_at", lastSeenAt = "last_seen_at", lastPassAt = "last_pass_at", rowsLeased = "rows_leased"
        case contentImports = "content_imports"
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(owner, forKey: .owner)
        try container.encode(host, forKey: .host)
        try container.encode(pid, forKey: .pid)
        try container.encode(startedAt.iso8601UTC, forKey: .startedAt)
        try container.encode(lastSeenAt.iso8601UTC, forKey: .lastSeenAt)
        try container.encode(lastPassAt?.iso8601UTC, forKey: .lastPassAt)
        try container.encode(rowsLeased, forKey: .rowsLeased)
        try container.encode(contentImports, forKey: .contentImports)
    }
}

extension DeliverySchema {
    /// PostgreSQL only (one process per SQLite file needs no list): the processes sharing the database.
    public static let postgresV4Processes = PostgresStep(
        """
        CREATE TABLE dailyverse_process (
            owner text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL,
            started_at double precision NOT NULL, last_seen_at double precision NOT NULL, last_pass_at double precision)
        """)

    /// PostgreSQL only: the throttle key each process counts the API's attempts under, by its fingerprint ('' for
    /// none; NULL for a process that serves no API), so that a process whose key differs from the live ones' stops at
    /// start rather than count attempts apart from them.
    public static let postgresV6ThrottleKeys = PostgresStep("ALTER TABLE dailyverse_process ADD COLUMN throttle_key text")

    /// PostgreSQL only: the revision of the database's imports each process's content copy holds ('' for none yet
    /// published), so that `status` shows whether every process has taken the last import.
    public static let postgresV7ContentImports = PostgresStep("ALTER TABLE dailyverse_process ADD COLUMN content_imports text")
}

extension PostgresStore {
    /// A process is live while it has said so within this long (it says so every `ProcessRegistryService.interval`).
    public static let processStaleAfter: TimeInterval = 90

    /// Records that a process, under its lease owner (`SharedOutbox.processOwner`, which names its host and pid), is
    /// alive at `now` and finished its last pass at `lastPass`: listed anew if it was not (its first time, or after
    /// the hourly housekeeping removed it while the database could not be reached).
    /// `throttleKey`: the fingerprint of the key the process's API counts attempts under ('' for none; nil: no API).
    /// `contentImports`: the revision of the imports its content copy holds (nil: not known).
    public func recordProcess(
        owner: String, host: String, pid: Int, throttleKey: String?, contentImports: String? = nil, now: Date, lastPass: Date?
    ) async throws {
        let (at, pass) = (now.timeIntervalSince1970, lastPass?.timeIntervalSince1970)
        try await withoutTransaction { transaction in
            try await transaction.rows(
                """
                INSERT INTO dailyverse_process (owner, host, pid, started_at, last_seen_at, last_pass_at, throttle_key, content_imports)
                VALUES (\(owner), \(host), \(pid), \(at), \(at), \(pass), \(throttleKey), \(contentImports))
                ON CONFLICT (owner) DO UPDATE SET last_seen_at = excluded.last_seen_at,
                    last_pass_at = coalesce(excluded.last_pass_at, dailyverse_process.last_pass_at),
                    content_imports = coalesce(excluded.content_imports, dailyverse_process.content_imports)
                """)
        }
    }

    /// Lists a process starting with an API that counts attempts under `throttleKey` (its fingerprint; '' for none),
    /// unless a live process (other than `owner`) counts under another: then that one, and nothing is written. The
    /// processes of one database must count under one key, or each counts apart from the others. One start at a time
    /// (an advisory lock): two processes started together with different keys cannot both find the other not yet
    /// listed.
    public func claimThrottleKey(_ throttleKey: String, owner: String, host: String, pid: Int, now: Date) async throws -> ProcessRecord? {
        try await transaction { transaction in
            try await transaction.lock("throttle keys")
            if let other = try await transaction.liveProcesses(now: now, throttleKeyOtherThan: throttleKey).first(where: { $0.owner != owner }) {
                return other
            }
            let at = now.timeIntervalSince1970
            try await transaction.rows(
                """
                INSERT INTO dailyverse_process (owner, host, pid, started_at, last_seen_at, throttle_key)
                VALUES (\(owner), \(host), \(pid), \(at), \(at), \(throttleKey))
                ON CONFLICT (owner) DO UPDATE SET last_seen_at = excluded.last_seen_at, throttle_key = excluded.throttle_key
                """)
            return nil
        }
    }

    /// The process stopped cleanly: it is no longer listed.
    public func unregisterProcess(owner: String) async throws {
        try await withoutTransaction { try await $0.rows("DELETE FROM dailyverse_process WHERE owner = \(owner)") }
    }

    /// The live processes, oldest first, with the rows each holds leased at `now`; only those whose throttle key's
    /// fingerprint is not `throttleKeyOtherThan`, if given.
    public func liveProcesses(now: Date, throttleKeyOtherThan key: String? = nil) async throws -> [ProcessRecord] {
        try await withoutTransaction { try await $0.liveProcesses(now: now, throttleKeyOtherThan: key) }
    }

    /// Processes not seen for a day (killed, their machine gone), a chunk at a time; nil when another process is at it.
    public func pruneProcesses(now: Date, chunk: Int = 10_000) async throws -> Int? {
        try await deleteInChunks(
            job: "process expiry", from: "dailyverse_process", key: "owner", where: "last_seen_at < $1",
            arguments: [now.timeIntervalSince1970 - 86_400], chunk: chunk)
    }
}

extension PostgresTransaction {
    /// As `PostgresStore.liveProcesses`, in this transaction.
    func liveProcesses(now: Date, throttleKeyOtherThan key: String? = nil) async throws -> [ProcessRecord] {
        let at = now.timeIntervalSince1970
        return try await rows(
            """
            SELECT p.owner, p.host, p.pid, p.started_at, p.last_seen_at, p.last_pass_at,
                (SELECT count(*) FROM outbox o WHERE o.status = 'pending' AND o.lease_owner = p.owner AND o.lease_until > \(at)),
                p.content_imports
            FROM dailyverse_process p WHERE p.last_seen_at >= \(at - PostgresStore.processStaleAfter)
                AND (\(key)::text IS NULL OR p.throttle_key <> \(key))
            ORDER BY p.started_at, p.owner
            """
        ).map { row in
            let (owner, host, pid, started, seen, pass, leased, imports) = try row.decode(
                (String, String, Int, Double, Double, Double?, Int, String?).self)
            return ProcessRecord(
                owner: owner, host: host, pid: pid, startedAt: Date(timeIntervalSince1970: started),
                lastSeenAt: Date(timeIntervalSince1970: seen),
                lastPassAt: pass.map(Date.init(timeIntervalSince1970:)), rowsLeased: leased, contentImports: imports)
        }
    }
}
