import Foundation
import Logging
import PostgresNIO
import Storage

/// The PostgreSQL half of the store tests: run when `DAILYVERSE_TEST_POSTGRES` names a server (`.ci/run` starts one on
/// loopback and sets it, with `PGPASSWORD`), skipped otherwise with one line saying so. Each test gets a database of
/// its own, created for it and dropped after it, so tests run side by side.
public enum PostgresTesting {
    public static let variable = "DAILYVERSE_TEST_POSTGRES"

    /// The server's address, if one is given.
    public static let address: PostgresAddress? = ProcessInfo.processInfo.environment[variable].flatMap { try? PostgresAddress($0) }

    public static var isAvailable: Bool { address != nil }

    /// Why the PostgreSQL tests did not run, in one line.
    public static var skipped: String {
        if let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty {
            return "PostgreSQL half skipped: \(variable) is not a usable address (\((try? PostgresAddress(text)).map { "\($0)" } ?? "unparsable"))"
        }
        return "PostgreSQL half skipped: set \(variable)=postgresql://USER@HOST:PORT/DATABASE (and PGPASSWORD) to run it; .ci/run does"
    }

    public static var password: String? { address.flatMap { try? PostgresPassword.resolve(for: $0) } }

    public static let logger = Logger(label: "dailyverse.tests.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `body` with the address of a new, empty database on the test server, dropped afterwards (whatever `body`
    /// left connected to it).
    public static func withDatabase<T: Sendable>(_ body: (PostgresAddress) async throws -> T) async throws -> T {
        guard let server = address else { throw NoServer() }
        let name = "dv_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try await administer(server, "CREATE DATABASE \(name)")
        var fresh = server
        fresh.database = String(name)
        do {
            let result = try await body(fresh)
            try await administer(server, "DROP DATABASE \(name) WITH (FORCE)")
            return result
        } catch {
            try? await administer(server, "DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
    }

    /// Runs statements on `address`'s database, one connection, outside a transaction.
    public static func administer(_ address: PostgresAddress, _ statements: String...) async throws {
        let session = try await session(address)
        do {
            for statement in statements { try await session.rows(PostgresQuery(unsafeSQL: statement)) }
            try await session.connection.close()
        } catch {
            try? await session.connection.close()
            throw error
        }
    }

    /// A connection of its own to `address`'s database, outside any transaction, its statements sent as the sources
    /// send theirs (through `PostgresTransaction`, so one on a connection the server ended fails rather than waits for
    /// ever); the caller closes it (`session.connection.close()`).
    public static func session(_ address: PostgresAddress) async throws -> PostgresTransaction {
        PostgresTransaction(connection: try await PostgresStore.connect(address, password: password, logger: logger), logger: logger)
    }

    /// Runs `statements` in a transaction on a connection of its own to `address`'s database, then `body` while that
    /// transaction is open (and holds what the statements locked), then closes the connection.
    public static func holding<T: Sendable>(_ address: PostgresAddress, _ statements: String..., body: () async throws -> T) async throws -> T {
        try await withHeldTransaction(address) { held, _ in
            for statement in statements { try await held.rows(PostgresQuery(unsafeSQL: statement)) }
            return try await body()
        }
    }

    /// Runs `body` with two connections of their own to `address`'s database: `held`, in a transaction begun for it
    /// (what it locks stays locked until `body` commits or the connection closes), and `watcher`, to look from
    /// outside; both closed after.
    public static func withHeldTransaction<T: Sendable>(
        _ address: PostgresAddress, _ body: (_ held: PostgresTransaction, _ watcher: PostgresTransaction) async throws -> T
    ) async throws -> T {
        let held = try await session(address)
        let watcher: PostgresTransaction
        do { watcher = try await session(address) } catch {
            try? await held.connection.close()
            throw error
        }
        do {
            try await held.rows("BEGIN")
            let result = try await body(held, watcher)
            try await held.connection.close()
            try await watcher.connection.close()
            return result
        } catch {
            try? await held.connection.close()
            try? await watcher.connection.close()
            throw error
        }
    }

    /// Returns once a session of `watcher`'s database waits on a lock (as `pg_stat_activity` says): polled, not slept
    /// for. Gives up after `limit` (a session that held the lock may have been ended by the server meanwhile, and then
    /// no one ever waits): an error saying so, not a test that never ends.
    public static func untilALockIsAwaited(watching watcher: PostgresTransaction, limit: Duration = .seconds(60)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while true {
            let waiting =
                try await watcher.rows(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ).first?.decode(Int.self) ?? 0
            if waiting > 0 { return }
            guard clock.now < deadline else { throw NoLockAwaited(limit: limit) }
            await Task.yield()
        }
    }

    public struct NoLockAwaited: Error, CustomStringConvertible {
        public let limit: Duration
        public var description: String { "no session waited on a lock within \(limit)" }
    }

    public struct NoServer: Error, CustomStringConvertible {
        public var description: String { "no PostgreSQL server: \(PostgresTesting.variable) is not set" }
    }
}
