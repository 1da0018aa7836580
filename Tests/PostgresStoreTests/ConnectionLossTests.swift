import AppSchema
import DailyVerseTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import Storage

/// A connection the server ends (its idle-in-transaction timeout, `pg_terminate_backend`, a restart, a failover) ends
/// the statement waiting on it with an error the callers take for "unavailable", and the store goes on with a new
/// connection. postgres-nio alone drops a statement written to a connection just closed, and its caller waited for
/// ever: each test below hung before `ConnectionWatch`.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct ConnectionLossTests {
    /// A store on a new database, closed after `body`.
    func withStore(_ body: (PostgresStore, PostgresAddress) async throws -> Void) async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(
                address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger, maximumConnections: 2)
            do { try await body(store, address) } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    /// The server ends the session of a transaction between two of its statements; the next statement is written to
    /// the closed connection. It fails, the transaction does not wait to roll back, and the store's next statement runs.
    @Test func aStatementAfterTheServerEndedTheSessionFails() async throws {
        try await withStore { store, address in
            var ended: (any Error)?
            do {
                try await store.transaction { transaction in
                    try await transaction.rows("INSERT INTO meta (key, value) VALUES ('lost', 'x')")
                    let pid = try await transaction.value("SELECT pg_backend_pid()", as: Int32.self) ?? 0
                    try await PostgresTesting.administer(address, "SELECT pg_terminate_backend(\(pid))")
                    // Once the connection has closed, its handlers are gone: what is written now is dropped.
                    try? await transaction.connection.closeFuture.get()
                    try await transaction.rows("SELECT 1")
                }
            } catch {
                ended = error
            }
            let error = try #require(ended)
            #expect(PostgresStore.isUnavailable(error), "\(PostgresStore.reason(error))")
            #expect(try await store.rows("SELECT count(*)::int8 FROM meta WHERE key = 'lost'").first?.decode(Int.self) == 0)
        }
    }

    /// The server ends the session while a statement of the transaction runs (here, waits for a lock): the statement
    /// fails with the server's reason, and the transaction's ROLLBACK, which would be written to the closed connection,
    /// is not waited for.
    @Test func aStatementTheServerEndsMidwayFailsWithTheServersReason() async throws {
        try await withStore { store, address in
            try await PostgresTesting.withHeldTransaction(address) { held, watcher in
                _ = try await held.rows("SELECT pg_advisory_xact_lock(7)")
                async let outcome: (any Error)? = {
                    do {
                        try await store.transaction { transaction in try await transaction.rows("SELECT pg_advisory_xact_lock(7)") }
                        return nil
                    } catch {
                        return error
                    }
                }()
                try await PostgresTesting.untilALockIsAwaited(watching: watcher)
                _ = try await watcher.rows(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """)
                let error = try #require(await outcome)
                #expect(PostgresStore.isUnavailable(error), "\(PostgresStore.reason(error))")
            }
            #expect(try await store.rows("SELECT 1::int8").first?.decode(Int.self) == 1)
        }
    }

    /// A statement already written when its connection closes, whose answer will never come (postgres-nio dropped
    /// it): its caller is told the connection was lost, `ConnectionWatch.grace` after the close.
    @Test func aStatementNeverAnsweredEndsWhenItsConnectionCloses() async throws {
        try await PostgresTesting.withDatabase { address in
            let connection = try await PostgresStore.connect(address, password: PostgresTesting.password, logger: PostgresTesting.logger)
            let session = PostgresTransaction(connection: connection, logger: PostgresTesting.logger)
            // Stands for the dropped statement: a wait nothing ends until the test does.
            let (never, stop) = AsyncStream<Int>.makeStream()
            async let outcome: Result<Int, any Error> = {
                do {
                    return .success(
                        try await session.guarded {
                            for await _ in never {}
                            return 1
                        })
                } catch { return .failure(error) }
            }()
            try await connection.close()
            let result = await outcome
            stop.finish()
            #expect(throws: PostgresConnectionLost.self) { try result.get() }
        }
    }

    /// A request waiting for a connection while the pool's only one is ended gets a new one. (postgres-nio makes a
    /// connection for a waiting request only when another request comes or the pool falls below its minimum: with no
    /// minimum, it waited for ever.)
    @Test func aRequestWaitingForTheConnectionTheServerEndsGetsAnother() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(
                address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger, maximumConnections: 1)
            var waiting: Task<Int?, any Error>?
            await #expect(throws: PostgresConnectionLost.self) {
                try await store.transaction { transaction in
                    // The pool's one connection is this transaction's: the request waits for it (connecting to end it
                    // takes the time for the request to be queued).
                    waiting = Task { try await store.rows("SELECT 1::int8").first?.decode(Int.self) }
                    let pid = try await transaction.value("SELECT pg_backend_pid()", as: Int32.self) ?? 0
                    try await PostgresTesting.administer(address, "SELECT pg_terminate_backend(\(pid))")
                    try? await transaction.connection.closeFuture.get()
                    try await transaction.rows("SELECT 1")
                }
            }
            #expect(try await waiting?.value == 1)
            await store.close()
        }
    }

    /// Every connection of the pool ended at once, between transactions: the next ones, on connections leased as the
    /// old ones close or after, fail as unavailable or run; none waits for ever.
    @Test func connectionsEndedBetweenTransactionsLeaveTheStoreWorking() async throws {
        try await withStore { store, address in
            // Two connections in the pool, both idle.
            async let first = store.transaction { try await $0.value("SELECT pg_backend_pid()", as: Int32.self) }
            async let second = store.transaction { try await $0.value("SELECT pg_backend_pid()", as: Int32.self) }
            _ = try await (first, second)
            try await PostgresTesting.administer(
                address, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(address.database)' AND pid <> pg_backend_pid()")
            // A statement on a connection not yet known closed fails at once; the pool replaces the connections as it
            // learns of their closing (on a loaded machine, after more tries than six): tried until one answers, a
            // bounded number of times, every failure on the way unavailable.
            var answered = 0
            for _ in 0..<10_000 where answered == 0 {
                do {
                    if try await store.rows("SELECT 1::int8").first?.decode(Int.self) == 1 { answered += 1 }
                } catch {
                    #expect(PostgresStore.isUnavailable(error), "\(PostgresStore.reason(error))")
                    await Task.yield()
                }
            }
            #expect(answered > 0)
        }
    }
}
