import Crypto
import Encodings
import Foundation
import PostgresNIO
import Storage

/// Where the API's attempt counts are kept (`Throttle` in HTTPAPI): in the process's memory on SQLite (one process),
/// in the database on PostgreSQL, so that processes behind one load balancer enforce one limit.
public protocol ThrottleCounter: Sendable {
    /// Reserves an attempt at `now` for every key at once if each has had fewer than `limit` in the `window` before
    /// `now` (nil), else the longest wait in seconds, counting nothing.
    func admit(_ keys: [String], limit: Int, window: TimeInterval, now: Date) async throws -> Int?
    /// Gives back the attempt reserved for `key` at `now`.
    func release(_ key: String, reservedAt now: Date) async throws
    /// Forgets `key`'s attempts.
    func reset(_ key: String) async throws
}

public enum ThrottleEvents {
    /// The longest window a throttle may have (a day): the hourly housekeeping removes attempts older than that.
    public static let longestWindow: TimeInterval = 86_400

    /// A key as stored, so that the table shows no email or client address in clear: its HMAC-SHA256 under the
    /// installation's throttle key, which a copy of the database does not hold; without one, its SHA-256 (which anyone
    /// can compute for every IPv4 address, and so is only not in clear).
    static func stored(_ key: String, under secret: ThrottleKey?) -> String {
        guard let secret else { return Hex.encode(SHA256.hash(data: Array(key.utf8))) }
        return Hex.encode(HMAC<SHA256>.authenticationCode(for: Array(key.utf8), using: secret.key))
    }
}

/// The secret the attempt counts' keys are stored under on PostgreSQL (`throttle_key_file`): the same file on every
/// machine, kept out of the database, so that a copy of it cannot be tried against addresses and emails.
public struct ThrottleKey: Sendable {
    let key: SymmetricKey
    /// A short, non-secret name of the key, for processes to check that they share one (`dailyverse_process`).
    public let fingerprint: String

    /// The bytes allowed: at least 32 (a SHA-256 key's strength), at most 4 KiB.
    public static let sizes = 32...4096

    /// A key from a file's bytes (`head -c 32 /dev/urandom`, or any text of 32 bytes or more); nil when it has too few
    /// or too many.
    public init?(_ bytes: [UInt8]) {
        guard Self.sizes.contains(bytes.count) else { return nil }
        key = SymmetricKey(data: bytes)
        fingerprint = Hex.encode(HMAC<SHA256>.authenticationCode(for: Array("dailyverse throttle key".utf8), using: key).prefix(8))
    }
}

extension AccountsSchema {
    /// PostgreSQL only: SQLite's one process counts in memory. Attempts, one row each, by key (hashed) and time.
    public static let postgresV3Throttles = PostgresStep(
        "CREATE TABLE throttle_event (key text NOT NULL, at double precision NOT NULL)",
        "CREATE INDEX throttle_event_by_key ON throttle_event (key, at)",
        "CREATE INDEX throttle_event_by_time ON throttle_event (at)")
}

/// Attempt counts in PostgreSQL, shared by every process: each admission one transaction that locks its keys (by name,
/// in order), counts each key's attempts in its window, and records an attempt for each only if all are within their
/// limit — so that requests sent at once to different processes cannot all slip through.
public struct PostgresThrottleCounter: ThrottleCounter {
    public let store: PostgresStore
    /// What the keys are stored under (nil: their SHA-256).
    let secret: ThrottleKey?

    public init(store: PostgresStore, key: ThrottleKey? = nil) { (self.store, secret) = (store, key) }

    public func admit(_ keys: [String], limit: Int, window: TimeInterval, now: Date) async throws -> Int? {
        let stored = Array(Set(keys.map { ThrottleEvents.stored($0, under: secret) })).sorted()
        let at = now.timeIntervalSince1970
        return try await store.transaction { transaction in
            var wait: Int?
            for key in stored {
                try await transaction.lock("throttle " + key)
                guard
                    let row = try await transaction.rows(
                        "SELECT count(*), min(at) FROM throttle_event WHERE key = \(key) AND at > \(at - window)"
                    ).first
                else { continue }
                let (count, oldest) = try row.decode((Int, Double?).self)
                if count >= limit, let oldest { wait = max(wait ?? 0, max(1, Int((window - (at - oldest)).rounded(.up)))) }
            }
            if wait != nil { return wait }
            try await transaction.rows("INSERT INTO throttle_event (key, at) SELECT unnest(\(stored)::text[]), \(at)")
            return nil
        }
    }

    public func release(_ key: String, reservedAt now: Date) async throws {
        let key = ThrottleEvents.stored(key, under: secret)
        try await store.withoutTransaction { transaction in
            try await transaction.rows(
                """
                DELETE FROM throttle_event WHERE ctid = (
                    SELECT ctid FROM throttle_event WHERE key = \(key) AND at = \(now.timeIntervalSince1970) LIMIT 1)
                """)
        }
    }

    public func reset(_ key: String) async throws {
        let key = ThrottleEvents.stored(key, under: secret)
        try await store.withoutTransaction { try await $0.rows("DELETE FROM throttle_event WHERE key = \(key)") }
    }
}

extension PostgresStore {
    /// Attempts older than the longest window, a chunk at a time; nil when another process is removing them.
    public func pruneThrottleEvents(now: Date, chunk: Int = 10_000) async throws -> Int? {
        try await deleteInChunks(
            job: "throttle expiry", from: "throttle_event", key: "ctid", where: "at < $1",
            arguments: [now.timeIntervalSince1970 - ThrottleEvents.longestWindow], chunk: chunk)
    }
}
