import Accounts
import AppSchema
import DailyVerseTestSupport
import Delivery
import Engagement
import Foundation
import PostgresNIO
import PushServices
import Storage
import Testing

/// The hourly housekeeping on PostgreSQL: what is past its retention goes, in chunks, and while one process holds a
/// job another that tries it at the same moment finds it taken and leaves it.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct HousekeepingTests {
    let logger = PostgresTesting.logger

    @Test func eachJobRemovesWhatIsPastItsRetentionOnly() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
            try await PostgresTesting.administer(
                address,
                """
                INSERT INTO "user" (id, mode, created_at, last_active_at) VALUES
                    ('old-guest', 'guest', 0, 100), ('new-guest', 'guest', 0, 5000), ('old-account', 'account', 0, 100)
                """,
                """
                INSERT INTO session (token_hash, user_id, created_at, last_used_at) VALUES
                    ('idle', 'new-guest', 4000, 4000), ('fresh', 'new-guest', 4900, 4990), ('aged', 'old-account', 10, 4990)
                """,
                "INSERT INTO analytics_event (user_id, name, properties, at) VALUES (NULL, 'a', '{}', 10), (NULL, 'b', '{}', 20), (NULL, 'c', '{}', 3000)",
                // Attempts: two older than the longest throttle window (a day) before 100,000, one inside it.
                "INSERT INTO throttle_event (key, at) VALUES ('k', 10), ('k', 13599), ('k', 13601)",
                """
                INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at) VALUES
                    (1, 'd', 'fcm', '2026-01-01', 0, '{}', '{}', 'delivered', 10), (1, 'd', 'fcm', '2026-01-02', 0, '{}', '{}', 'pending', 10),
                    (1, 'd', 'fcm', '2026-01-03', 0, '{}', '{}', 'missed', 10), (1, 'd', 'fcm', '2026-01-04', 0, '{}', '{}', 'failed', 3000)
                """)
            let cutoff = Date(timeIntervalSince1970: 1000)
            #expect(try await store.purgeGuests(inactiveBefore: cutoff) == 1)
            // Chunks of one: every chunk but the last is full.
            #expect(try await store.pruneEvents(before: cutoff, chunk: 1) == 2)
            #expect(try await store.pruneOutbox(settledBefore: cutoff, chunk: 1) == 2)
            #expect(
                try await store.purgeExpiredSessions(now: Date(timeIntervalSince1970: 5000), policy: SessionPolicy(idle: 500, lifetime: 1000)) == 2)
            #expect(try await store.pruneThrottleEvents(now: Date(timeIntervalSince1970: 100_000), chunk: 1) == 2)
            #expect(
                try await store.rows("SELECT at FROM throttle_event").map { try $0.decode(Double.self) } == [13601])
            let left = try await store.rows(
                """
                SELECT (SELECT string_agg(id, ',' ORDER BY id) FROM "user"), (SELECT string_agg(name, ',') FROM analytics_event),
                    (SELECT string_agg(status, ',' ORDER BY id) FROM outbox), (SELECT string_agg(token_hash, ',') FROM session)
                """
            ).first?.decode((String, String, String, String).self)
            #expect(left?.0 == "new-guest,old-account" && left?.1 == "c" && left?.2 == "pending,failed" && left?.3 == "fresh")
            await store.close()
        }
    }

    /// A row past its retention that another transaction brings back while the job waits for it (a guest active
    /// again, a session used, a row put back to pending, a process seen) stays: the job's DELETE judges it again as it
    /// now is, not as the chunk's query found it.
    @Test(arguments: ["guest purge", "session expiry", "outbox prune", "process expiry"])
    func aRowBroughtBackWhileTheJobWaitsForItStays(job: String) async throws {
        let (setup, change, left): ([String], String, String) =
            switch job {
            case "guest purge":
                (
                    [#"INSERT INTO "user" (id, mode, created_at, last_active_at) VALUES ('guest', 'guest', 0, 100)"#],
                    #"UPDATE "user" SET last_active_at = 5000 WHERE id = 'guest'"#, #"SELECT count(*) FROM "user""#
                )
            case "session expiry":
                (
                    [
                        #"INSERT INTO "user" (id, mode, created_at, last_active_at) VALUES ('guest', 'guest', 0, 5000)"#,
                        "INSERT INTO session (token_hash, user_id, created_at, last_used_at) VALUES ('idle', 'guest', 10, 10)",
                    ],
                    "UPDATE session SET last_used_at = 5000", "SELECT count(*) FROM session"
                )
            case "outbox prune":
                (
                    [
                        "INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at) VALUES (1, 'd', 'fcm', '2026-01-01', 0, '{}', '{}', 'failed', 10)"
                    ],
                    "UPDATE outbox SET status = 'pending'", "SELECT count(*) FROM outbox"
                )
            default:
                (
                    ["INSERT INTO dailyverse_process (owner, host, pid, started_at, last_seen_at) VALUES ('p', 'h', 1, 0, 0)"],
                    "UPDATE dailyverse_process SET last_seen_at = 199000", "SELECT count(*) FROM dailyverse_process"
                )
            }
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
            for statement in setup { try await PostgresTesting.administer(address, statement) }
            let removed = try await PostgresTesting.withHeldTransaction(address) { held, watcher in
                _ = try await held.rows(PostgresQuery(unsafeSQL: change))
                let running = Task {
                    switch job {
                    case "guest purge": try await store.purgeGuests(inactiveBefore: Date(timeIntervalSince1970: 1000))
                    case "session expiry":
                        try await store.purgeExpiredSessions(now: Date(timeIntervalSince1970: 5000), policy: SessionPolicy(idle: 500, lifetime: 1000))
                    case "outbox prune": try await store.pruneOutbox(settledBefore: Date(timeIntervalSince1970: 1000))
                    default: try await store.pruneProcesses(now: Date(timeIntervalSince1970: 200_000))
                    }
                }
                try await PostgresTesting.untilALockIsAwaited(watching: watcher)
                _ = try await held.rows("COMMIT")
                return try await running.value
            }
            #expect(removed == 0)
            #expect(try await store.rows(PostgresQuery(unsafeSQL: left)).first?.decode(Int.self) == 1)
            await store.close()
        }
    }

    /// While one process's transaction holds a job's lock, another's try of that job finds it taken (nil) and removes
    /// nothing; once it is free, the job runs.
    @Test func aJobRunsInOneProcessAtATime() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
            try await PostgresTesting.administer(address, "INSERT INTO analytics_event (user_id, name, properties, at) VALUES (NULL, 'a', '{}', 10)")
            let other = try await PostgresTesting.session(address)
            _ = try await other.rows("BEGIN")
            _ = try await other.rows("SELECT pg_advisory_xact_lock(hashtext('dailyverse job: event prune'))")
            #expect(try await store.pruneEvents(before: Date(timeIntervalSince1970: 1000)) == nil)
            _ = try await other.rows("COMMIT")
            try await other.connection.close()
            #expect(try await store.pruneEvents(before: Date(timeIntervalSince1970: 1000)) == 1)
            await store.close()
        }
    }
}

/// The push services' state on PostgreSQL: a provider token two processes make at once ends as one, which both use;
/// a newer token replaces it only when the caller saw the current one; pauses are kept and cleared.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct SharedPushStateTests {
    @Test func processesShareOneProviderTokenAndThePauses() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(
                address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger)
            let credentials = PostgresCredentialStore(store: store)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let made = (0..<6).map { StoredCredential(name: "apns", value: "token-\($0)", issuedAt: now, expiresAt: now.addingTimeInterval(3600)) }
            let kept = try await withThrowingTaskGroup(of: StoredCredential.self) { group in
                for credential in made { group.addTask { try await credentials.save(credential, unlessNewerThan: nil) } }
                return try await group.reduce(into: [StoredCredential]()) { $0.append($1) }
            }
            #expect(Set(kept.map(\.value)).count == 1, "\(kept.map(\.value))")
            #expect(try await credentials.load("apns") == kept.first)
            // A renewal by a process that saw the stored token replaces it; one that did not (a stale bound) gets it.
            let stored = try #require(kept.first)
            let renewed = StoredCredential(
                name: "apns", value: "renewed", issuedAt: now.addingTimeInterval(60), expiresAt: now.addingTimeInterval(3660))
            #expect(try await credentials.save(renewed, unlessNewerThan: stored.issuedAt) == renewed)
            let stale = StoredCredential(name: "apns", value: "stale", issuedAt: now.addingTimeInterval(61), expiresAt: now.addingTimeInterval(3661))
            #expect(try await credentials.save(stale, unlessNewerThan: stored.issuedAt) == renewed)
            try await store.savePause(platform: "fcm", reason: "bad key", since: now, until: now.addingTimeInterval(300))
            let pauses = try await store.rows("SELECT platform, reason FROM push_pause").map {
                try $0.decode((String, String).self)
            }
            #expect(pauses.count == 1 && pauses.first?.0 == "fcm" && pauses.first?.1 == "bad key")
            try await store.clearPause(platform: "fcm")
            #expect(try await store.rows("SELECT 1 FROM push_pause").isEmpty)
            await store.close()
        }
    }
}

/// The attempt counts' keys on PostgreSQL, and the processes that count them: with `throttle_key_file`, a key is stored
/// as its HMAC-SHA256 under the file's bytes (the vectors computed with Python's `hmac`), which a copy of the database
/// cannot be tried against addresses without; and a process that would count under another key finds the live one
/// that does not.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct ThrottleKeyTests {
    let now = Date(timeIntervalSince1970: 1_740_000_000)
    let secret = ThrottleKey(Array(0..<32))!

    /// A store on a new database, closed after `body`.
    func withStore(_ body: (PostgresStore) async throws -> Void) async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger)
            do { try await body(store) } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    @Test func aKeyIsStoredUnderTheSecretAndWithoutOneAsItsDigest() async throws {
        try await withStore { store in
            #expect(ThrottleKey(Array(repeating: 1, count: 31)) == nil && ThrottleKey(Array(repeating: 1, count: 4097)) == nil)
            #expect(secret.fingerprint == "361b45056aaece3c")
            #expect(try await PostgresThrottleCounter(store: store, key: secret).admit(["client"], limit: 5, window: 60, now: now) == nil)
            #expect(try await PostgresThrottleCounter(store: store).admit(["client"], limit: 5, window: 60, now: now) == nil)
            let keys = try await store.withoutTransaction {
                try await $0.rows("SELECT key FROM throttle_event ORDER BY key").map { try $0.decode(String.self) }
            }
            #expect(
                keys == [
                    "87c558c418c2d933b95cdce29cf6e8bec80a78b2c51c84686ef2d3c67108f589",  // HMAC-SHA256(bytes 0..31, "client")
                    "948fe603f61dc036b5c596dc09fe3ce3f3d30dc90f024c85f3c82db2ccab679d",  // SHA-256("client")
                ])
            // Under the key, the limit holds as it does without one: the counts are the same rows.
            for _ in 0..<4 { _ = try await PostgresThrottleCounter(store: store, key: secret).admit(["client"], limit: 5, window: 60, now: now) }
            #expect(try await PostgresThrottleCounter(store: store, key: secret).admit(["client"], limit: 5, window: 60, now: now) == 60)
            try await PostgresThrottleCounter(store: store, key: secret).reset("client")
            #expect(try await PostgresThrottleCounter(store: store, key: secret).admit(["client"], limit: 5, window: 60, now: now) == nil)
        }
    }

    @Test func aProcessFindsTheLiveOneThatKeysAttemptsOtherwise() async throws {
        try await withStore { store in
            try await store.recordProcess(owner: "a", host: "one", pid: 1, throttleKey: secret.fingerprint, now: now, lastPass: nil)
            // Serving no API, it counts nothing: no key to agree on.
            try await store.recordProcess(owner: "b", host: "two", pid: 2, throttleKey: nil, now: now, lastPass: nil)
            #expect(try await store.claimThrottleKey("", owner: "c", host: "three", pid: 3, now: now)?.owner == "a")
            #expect(try await store.claimThrottleKey("0011223344556677", owner: "c", host: "three", pid: 3, now: now)?.pid == 1)
            // Refused, it is not listed; agreeing, it is, under its key, so that the next to start finds it.
            #expect(try await store.liveProcesses(now: now).map(\.owner) == ["a", "b"])
            #expect(try await store.claimThrottleKey(secret.fingerprint, owner: "c", host: "three", pid: 3, now: now) == nil)
            #expect(try await store.liveProcesses(now: now).map(\.owner) == ["a", "b", "c"])
            #expect(try await store.claimThrottleKey("", owner: "d", host: "four", pid: 4, now: now)?.owner == "a")
            // Itself, restarted under the same owner, is not another; nor is a process no longer seen.
            let later = now.addingTimeInterval(PostgresStore.processStaleAfter + 1)
            #expect(try await store.claimThrottleKey("", owner: "d", host: "four", pid: 4, now: later) == nil)
            #expect(try await store.claimThrottleKey("", owner: "d", host: "four", pid: 4, now: later) == nil)
        }
    }

    /// Processes started at once with different keys: one is listed, and every other finds it, whichever came first
    /// (each start is checked and listed under one lock; checked and listed apart, all of them passed).
    @Test func processesStartedAtOnceWithDifferentKeysAgreeOnOne() async throws {
        try await withStore { store in
            let keys = ["", secret.fingerprint, "0011223344556677", "8899aabbccddeeff"]
            let refused = try await withThrowingTaskGroup(of: ProcessRecord?.self) { group in
                for (index, key) in keys.enumerated() {
                    group.addTask { try await store.claimThrottleKey(key, owner: "p\(index)", host: "h", pid: index, now: now) }
                }
                return try await group.reduce(into: [ProcessRecord?]()) { $0.append($1) }
            }
            #expect(refused.filter { $0 == nil }.count == 1 && refused.count == keys.count)
            #expect(try await store.liveProcesses(now: now).count == 1)
        }
    }

    @Test func eachProcessSaysWhichImportsItsContentCopyHolds() async throws {
        try await withStore { store in
            try await store.recordProcess(owner: "a", host: "one", pid: 1, throttleKey: nil, contentImports: "r1", now: now, lastPass: nil)
            try await store.recordProcess(owner: "b", host: "two", pid: 2, throttleKey: nil, now: now, lastPass: nil)
            #expect(try await store.liveProcesses(now: now).map(\.contentImports) == ["r1", nil])
            // A later word replaces it; a tick that could not ask its copy keeps what was said.
            try await store.recordProcess(owner: "a", host: "one", pid: 1, throttleKey: nil, contentImports: "r2", now: now, lastPass: nil)
            try await store.recordProcess(owner: "b", host: "two", pid: 2, throttleKey: nil, contentImports: "r2", now: now, lastPass: nil)
            try await store.recordProcess(owner: "b", host: "two", pid: 2, throttleKey: nil, contentImports: nil, now: now, lastPass: nil)
            #expect(try await store.liveProcesses(now: now).map(\.contentImports) == ["r2", "r2"])
        }
    }
}
