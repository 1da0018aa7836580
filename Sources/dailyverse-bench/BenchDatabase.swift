import AppSchema
import Foundation
import Logging
import PostgresNIO
import Storage
import Synchronization

/// The PostgreSQL benchmarks' databases: each run creates one of its own on the server given, and drops it after.
enum BenchDatabase {
    static func administer(_ address: PostgresAddress, password: String?, _ statement: String) async throws {
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let connection = try await PostgresStore.connect(address, password: password, logger: logger)
        try await PostgresTransaction(connection: connection, logger: logger).rows(PostgresQuery(unsafeSQL: statement))
        try await connection.close()
    }

    /// A database of the run's own, for benchmarks whose measurement is not all async: created, opened, dropped.
    final class Scratch: Sendable {
        let server: PostgresAddress
        let address: PostgresAddress
        let password: String?
        let stores = Mutex<[PostgresStore]>([])

        init(_ server: String, prefix: String) async throws {
            self.server = try PostgresAddress(server)
            password = try PostgresPassword.resolve(for: self.server)
            var address = self.server
            address.database = "\(prefix)_\(getpid())"
            self.address = address
            try await administer(self.server, password: password, "CREATE DATABASE \(address.database)")
        }

        /// The database, migrated, with a pool of `connections`; closed by `drop`.
        func open(connections: Int = 20) async throws -> PostgresStore {
            let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
            let store = try await PostgresStore.open(
                address, password: password, schema: .dailyVerse, logger: logger, maximumConnections: connections)
            stores.withLock { $0.append(store) }
            return store
        }

        func drop() async {
            for store in stores.withLock({ $0 }) { await store.close() }
            try? await administer(server, password: password, "DROP DATABASE \(address.database) WITH (FORCE)")
        }
    }

    /// Runs `body` on a new database named after `prefix` and this process on the server `server` names (with its
    /// password), dropped afterwards whatever happens.
    static func withScratch(_ server: String, prefix: String, _ body: (PostgresAddress, String?) async throws -> Void) async throws {
        let scratch = try await Scratch(server, prefix: prefix)
        do { try await body(scratch.address, scratch.password) } catch {
            await scratch.drop()
            throw error
        }
        await scratch.drop()
    }
}
