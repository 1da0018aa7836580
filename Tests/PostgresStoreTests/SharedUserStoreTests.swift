import Accounts
import AppSchema
import DailyVerseTestSupport
import Delivery
import Engagement
import Foundation
import Notifications
import PostgresNIO
import Storage
import Testing

/// The API's users on PostgreSQL when several processes take requests at once: what SQLite's one writer kept in order
/// (a user's device count, a token changing hands, an email being taken) holds across processes, and the route tests
/// (run on both stores) cover the rest.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct SharedUserStoreTests {
    let now = instant("2025-03-01T06:00:00Z")
    let themes: Set<String> = ["parchment", "night"]

    /// Two processes' stores on one new database.
    func twoProcesses(_ body: ([PostgresUserStore]) async throws -> Void) async throws {
        try await PostgresTesting.withDatabase { address in
            var stores: [PostgresStore] = []
            for _ in 0..<2 {
                stores.append(
                    try await PostgresStore.open(
                        address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger, maximumConnections: 8))
            }
            do {
                try await body(stores.map { PostgresUserStore(store: $0, themes: themes) })
                for store in stores { await store.close() }
            } catch {
                for store in stores { await store.close() }
                throw error
            }
        }
    }

    func device(_ n: Int) -> DeviceSettings { DeviceSettings(token: .apns(String(format: "%064x", n)), timeZone: "Asia/Baghdad") }

    @Test func aUsersDeviceLimitHoldsAcrossProcesses() async throws {
        try await twoProcesses { processes in
            let (user, _) = try await processes[0].createGuest(now: now)
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<30 {
                    group.addTask {
                        do {
                            _ = try await processes[n % 2].registerDevice(device(n), userID: user.id, now: now, maximum: 20)
                            return true
                        } catch DeviceError.tooMany { return false }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 20)
            #expect(try await processes[1].devices(userID: user.id, now: now).count == 20)
        }
    }

    @Test func aTokenRegisteredByTwoUsersAtOnceEndsWithOneDevice() async throws {
        try await twoProcesses { processes in
            var users: [String] = []
            for process in processes { users.append(try await process.createGuest(now: now).0.id) }
            let ids = users
            try await withThrowingTaskGroup(of: Void.self) { group in
                for round in 0..<10 {
                    for index in 0..<2 {
                        group.addTask {
                            _ = try await processes[index].registerDevice(device(round), userID: ids[index], now: now, maximum: 20)
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Each token is one device, whoever registered it last; its schedule entry is the one of that device.
            let first = try await processes[0].devices(userID: ids[0], now: now)
            let second = try await processes[1].devices(userID: ids[1], now: now)
            #expect(first.count + second.count == 10)
            let tokens = (first + second).map { $0.device.token }
            #expect(Set(tokens.map { "\($0)" }).count == 10)
            let queued = try await processes[0].store.rows(
                """
                SELECT count(*), count(DISTINCT d.seq) FROM schedule s JOIN device d ON d.seq = s.device_seq AND d.schedule_version = s.version
                """
            ).first?.decode((Int, Int).self)
            #expect(queued?.0 == 10 && queued?.1 == 10, "\(String(describing: queued))")
        }
    }

    @Test func emailsThatReadAlikeSignedUpAtOnceMakeOneAccount() async throws {
        try await twoProcesses { processes in
            // "bob" and its fullwidth spelling: one key (`Email.key`).
            let spellings = ["bob@example.org", "\u{FF42}\u{FF4F}\u{FF42}@example.org"]
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await processes[n % 2].createAccount(
                                email: spellings[n % 2], passwordHash: "hash", displayName: nil, upgrading: nil, now: now)
                            return true
                        } catch SignInError.emailTaken { return false }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
        }
    }

    /// An emission batch holds its devices `FOR SHARE` until it commits their rows. A device changed meanwhile waits
    /// for that batch, then withdraws what it wrote: the day fires under the new settings, not the old ones.
    @Test func aDeviceChangedWhileABatchHoldsItWithdrawsWhatTheBatchWrote() async throws {
        try await twoProcesses { processes in
            let (user, _) = try await processes[0].createGuest(now: now)
            let (state, _) = try await processes[0].registerDevice(device(1), userID: user.id, now: now, maximum: 20)
            let id = state.device.id
            // The batch: the device read FOR SHARE, as `SharedEmitter` reads it.
            try await PostgresTesting.withHeldTransaction(processes[0].store.address) { batch, watcher in
                let seq = try await batch.rows("SELECT seq FROM device WHERE id = \(id) FOR SHARE").first?.decode(Int64.self)
                let change = Task {
                    try await processes[1].updateDevice(id: id, userID: user.id, now: now) { _ in
                        DeviceSettings(reminderTime: try ReminderTime(hour: 9, minute: 30))
                    }
                }
                try await PostgresTesting.untilALockIsAwaited(watching: watcher)
                // The batch writes tomorrow's row under the old settings (08:00 in Baghdad) and commits.
                _ = try await batch.rows(
                    """
                    INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at, next_attempt_at)
                    VALUES (\(seq), \(id), 'apns', '2025-03-02', \(instant("2025-03-02T05:00:00Z").timeIntervalSince1970), '{}', '{}', 'pending',
                        \(now.timeIntervalSince1970), \(instant("2025-03-02T05:00:00Z").timeIntervalSince1970))
                    """)
                _ = try await batch.rows("COMMIT")
                let changed = try await change.value
                #expect(changed.device.reminderTime.description == "09:30")
                let left = try await watcher.rows("SELECT count(*) FROM outbox WHERE device_id = \(id)").first?.decode(Int.self)
                #expect(left == 0, "the row written with the old reminder time is still to be sent")
            }
        }
    }

    /// An import holds no lock per token: a million would pass the server's lock table. A token another transaction
    /// adds meanwhile is refused by the device's unique key, and named as a duplicate on its line.
    @Test func anImportLocksNoTokenByNameAndATokenAddedMeanwhileIsADuplicateOnItsLine() async throws {
        try await twoProcesses { processes in
            let store = processes[0].store
            let items = (1...50).map { (line: $0, settings: device($0)) }
            let locks = try await store.transaction { transaction in
                _ = try await transaction.addDevices(items, now: now, themes: themes)
                return try await transaction.value(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()", as: Int.self)
            }
            #expect(locks == 0)
            let token = String(format: "%064x", 999)
            // Another transaction adds one of the import's tokens and holds it uncommitted.
            try await PostgresTesting.withHeldTransaction(store.address) { other, watcher in
                _ = try await other.rows(
                    """
                    INSERT INTO device (id, platform, token, timezone, reminder_time, locale, calendar, adjustment, display_theme, enabled,
                        created_at, updated_at) VALUES ('meanwhile', 'apns', \(token), 'UTC', '08:00', 'en', 'predicted', 0, 'parchment', 1, 0, 0)
                    """)
                let importing = Task {
                    try await processes[1].store.transaction { transaction in
                        try await transaction.addDevices(
                            [(line: 1, settings: device(1000)), (line: 2, settings: device(999))], now: now, themes: themes)
                    }
                }
                try await PostgresTesting.untilALockIsAwaited(watching: watcher)
                _ = try await other.rows("COMMIT")
                let refusal = await #expect(throws: DeviceImportError.self) { try await importing.value }
                #expect(refusal?.line == 2 && refusal?.reason == DeviceError.duplicateToken(token).description, "\(String(describing: refusal))")
            }
        }
    }

    /// postgres-nio keeps a failed preparation for the life of its connection: the token lookup answers by the same
    /// query unprepared then, rather than refusing every token that connection serves.
    @Test func aTokenIsLookedUpOnAConnectionWhereItsPreparedStatementCannotBe() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger)
            let (user, token) = try await PostgresUserStore(store: store, themes: themes).createGuest(now: now)
            await store.close()
            let session = try await PostgresTesting.session(address)
            let connection = session.connection
            // The statement's name taken on this connection (as a pooler that does not reset sessions could leave it):
            // preparing it fails, and keeps failing.
            _ = try await session.rows(PostgresQuery(unsafeSQL: "PREPARE dailyverse_session_lookup AS SELECT 1"))
            do {
                for _ in 0..<3 {
                    #expect(try await session.authenticate(token: token, now: now, policy: SessionPolicy())?.id == user.id)
                }
                #expect(try await session.authenticate(token: SessionToken.generate().token, now: now, policy: SessionPolicy()) == nil)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// The server's refusals of the moment (a statement past `statement_timeout`, a lock not had within
    /// `lock_timeout`, a write to a read-only server, as a failover can leave a connection) are the database being
    /// unavailable, which the API answers 503 and the client may send again; a refusal of what was asked (a key taken,
    /// a value too large for an index) is not.
    @Test func theServersRefusalsOfTheMomentAreUnavailableAndTheRequestsAreNot() async throws {
        try await PostgresTesting.withDatabase { address in
            let logger = PostgresTesting.logger
            let connection = try await PostgresTesting.session(address)
            func refusal(_ statements: String...) async -> (any Error)? {
                do {
                    _ = try await connection.rows("BEGIN")
                    for statement in statements { _ = try await connection.rows(PostgresQuery(unsafeSQL: statement)) }
                    Issue.record("not refused: \(statements)")
                } catch {
                    _ = try? await connection.rows("ROLLBACK")
                    return error
                }
                _ = try? await connection.rows("ROLLBACK")
                return nil
            }
            _ = try await connection.rows("CREATE TABLE refusals (k text PRIMARY KEY)")
            _ = try await connection.rows("INSERT INTO refusals VALUES ('taken')")
            let timedOut = await refusal("SET LOCAL statement_timeout = '1ms'", "SELECT pg_sleep(30)")
            let readOnly = await refusal("SET TRANSACTION READ ONLY", "INSERT INTO refusals VALUES ('x')")
            let locked = try await PostgresTesting.holding(address, "LOCK TABLE refusals IN ACCESS EXCLUSIVE MODE") {
                await refusal("SET LOCAL lock_timeout = '1ms'", "SELECT * FROM refusals")
            }
            let taken = await refusal("INSERT INTO refusals VALUES ('taken')")
            // A NUL character in a text sent as a parameter, as a request's would be.
            var nul: (any Error)? = nil
            do { _ = try await connection.rows("SELECT \("a\u{0}")::text") } catch { nul = error }
            // Incompressible text past the largest entry a B-tree index takes (about 2,700 bytes).
            let tooLarge = await refusal(
                "INSERT INTO refusals SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g")
            try await connection.connection.close()
            for (name, error, unavailable) in [
                ("statement_timeout", timedOut, true), ("read only", readOnly, true), ("lock_timeout", locked, true), ("key taken", taken, false),
                ("index entry too large", tooLarge, false), ("NUL", nul, false),
            ] {
                #expect(error.map(PostgresStore.isUnavailable) == unavailable, "\(name): \(String(reflecting: error))")
            }
            // A value the server cannot hold is the request's to mend (400), not the database's.
            #expect(nul.map(PostgresStore.isDataException) == true && taken.map(PostgresStore.isDataException) == false)
        }
    }

    /// Every SQLSTATE PostgreSQL ends a session with, or refuses one with for the moment, is the database being
    /// unavailable (503, try again), and a refusal of the request is not. The server sends the session-ending ones as
    /// FATAL and closes, and a statement in flight may read either the error or the close: each state is raised here
    /// (at ERROR, on a live session) to check the classification of the error, and one session is then really ended
    /// for idling in its transaction to check the close. (An API request read 25P03, a transaction ended for idling
    /// past `idle_in_transaction_session_timeout`, and answered 500.)
    @Test func everySQLStateThatEndsASessionIsUnavailable() async throws {
        let ofTheMoment = [
            "25P03",  // idle_in_transaction_session_timeout
            "25P04",  // transaction_timeout (PostgreSQL 17)
            "57P05",  // idle_session_timeout
            "57P01", "57P02", "57P03",  // an administrator's shutdown, a crash, the server starting
            "57014",  // statement_timeout, a cancel
            "08006", "08003",  // the connection failed
            "53300", "53100", "53200",  // too many connections, a full disk, out of memory
            "58030",  // an I/O error
            "40001", "40P01",  // a serialization failure, a deadlock
            "55P03",  // lock_timeout
            "25006",  // a read-only server (a standby after a failover)
        ]
        let ofTheRequest = ["23505", "23503", "22021", "22001", "42601", "42P01", "25001", "P0001"]
        try await PostgresTesting.withDatabase { address in
            let session = try await PostgresTesting.session(address)
            func raised(_ state: String) async -> (any Error)? {
                do {
                    try await session.rows(PostgresQuery(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '\(state)'; END $$"))
                    return nil
                } catch { return error }
            }
            for state in ofTheMoment + ofTheRequest {
                let error = await raised(state)
                #expect((error as? PSQLError)?.serverInfo?[.sqlState] == state, "\(state): \(String(describing: error))")
                #expect(error.map(PostgresStore.isUnavailable) == ofTheMoment.contains(state), "\(state)")
            }
            // Ended for real: a transaction left idle past its timeout, its session looked for until it is gone.
            let pid = try #require(try await session.value("SELECT pg_backend_pid()", as: Int32.self))
            try await session.rows("BEGIN")
            try await session.rows("SET LOCAL idle_in_transaction_session_timeout = '1ms'")
            let watcher = try await PostgresTesting.session(address)
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(60))
            while try await watcher.value("SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid)", as: Int.self) != 0, clock.now < deadline {
                await Task.yield()
            }
            let ended = await #expect(throws: (any Error).self) { try await session.rows("SELECT 1") }
            #expect(ended.map(PostgresStore.isUnavailable) == true, "\(String(describing: ended))")
            try await watcher.connection.close()
            try? await session.connection.close()
        }
    }

    @Test func aClosedPoolIsUnavailableNotAnInternalError() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger)
            let users = PostgresUserStore(store: store, themes: themes)
            _ = try await users.createGuest(now: now)
            await store.close()
            let error = await #expect(throws: (any Error).self) { try await users.check() }
            #expect(error.map(PostgresStore.isUnavailable) == true, "\(String(describing: error))")
        }
    }
}
