import Diagnostics
import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// A PostgreSQL database shared by any number of DailyVerse processes: a pool of connections (postgres-nio's
/// `PostgresClient`), the schema migrated once whoever opens it first.
///
/// Opening connects once on its own connection, checks the server (PostgreSQL 15 or later), and migrates under an
/// advisory lock, so that processes started together wait for one another and migrate once; a database that a newer
/// version migrated is refused, as with SQLite. Then the pool runs in a task of its own until `close()`.
public final class PostgresStore: Sendable {
    public let address: PostgresAddress
    /// The pool the domains run their queries on.
    public let client: PostgresClient
    /// The logger of the store's own statements (housekeeping) and of postgres-nio's pool.
    public let backgroundLogger: Logger
    /// Sets the address's TCP keep-alive on each pooled connection as it is first used.
    let keepAlive: KeepAliveSetter
    private let runner: Task<Void, Never>

    /// The advisory lock migrations run under ("DailyVer" in ASCII): one per database, held by one session at a time.
    static let migrationLock: Int64 = 0x4461_696C_7956_6572

    /// The oldest server accepted: PostgreSQL 15, the version the tests run on (nothing older is tried).
    public static let minimumServerVersion = 150_000

    private init(address: PostgresAddress, client: PostgresClient, logger: Logger) {
        self.address = address
        self.client = client
        backgroundLogger = logger
        keepAlive = KeepAliveSetter(address.keepAlive)
        runner = Task { await client.run() }
    }

    /// Connects to `address` with `password`, migrates it to `schema.postgres`, and starts the pool
    /// (`maximumConnections` at most). Every failure is one `StorageError` line naming the address and the cause.
    public static func open(
        _ address: PostgresAddress, password: String?, schema: Schema, logger: Logger, maximumConnections: Int = 20
    ) async throws(StorageError) -> PostgresStore {
        let tls = try tlsSettings(address)
        try await migrate(address, password: password, tls: tls, schema: schema, logger: logger)
        var configuration: PostgresClient.Configuration
        if let folder = address.socketFolder {
            configuration = .init(
                unixSocketPath: socketPath(folder, port: address.port), username: address.user, password: password, database: address.database)
        } else {
            configuration = .init(
                host: address.host ?? "localhost", port: address.port, username: address.user, password: password, database: address.database,
                tls: tls.map { address.tlsMode == .prefer ? .prefer($0) : .require($0) } ?? .disable)
        }
        configuration.options.connectTimeout = .seconds(Int64(address.connectTimeout))
        configuration.options.maximumConnections = max(1, maximumConnections)
        // One connection kept (and made again when it closes): postgres-nio (1.33) opens a connection for a request
        // waiting for one only when a request comes or the pool falls below this, so with none kept, requests waiting
        // while every connection closed (a restart under load) would wait for ever (vapor/postgres-nio#657).
        configuration.options.minimumConnections = 1
        // No keep-alive query on idle connections. With a connection kept, a keep-alive the server ends (a restart)
        // leaves the pool below its minimum until the close is processed, and a request leased in that moment stops
        // the process on the pool's precondition; and a keep-alive written as the connection closes is dropped like
        // any statement, which `close()` would wait for. A connection found closed when used fails at once instead
        // (`ConnectionWatch`), and its request answers 503 or its pass is tried again.
        configuration.options.keepAliveBehavior = nil
        configuration.options.additionalStartupParameters = PostgresStore.startupParameters(address)
        return PostgresStore(address: address, client: PostgresClient(configuration: configuration, backgroundLogger: logger), logger: logger)
    }

    /// Stops the pool: its connections close, and queries after this fail. Waits `closeWait` at most: a connection
    /// still being made to a server that does not answer (its connect timeout) does not hold up a process's stop.
    public func close() async {
        runner.cancel()
        let runner = runner
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = Waiting(continuation)
            Task {
                await runner.value
                waiting.resume()
            }
            Task {
                try? await Task.sleep(for: Self.closeWait)
                waiting.resume()
            }
        }
    }

    /// A continuation resumed by whichever comes first.
    private final class Waiting: Sendable {
        private let continuation: Mutex<CheckedContinuation<Void, Never>?>
        init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = Mutex(continuation) }
        func resume() { continuation.withLock { $0.take() }?.resume() }
    }

    /// How long `close()` waits for the pool to stop.
    static let closeWait: Duration = .seconds(5)

    /// One line for an error met on this database: the server's message and SQLSTATE, or what stopped the connection
    /// (never the password: postgres-nio's own description hides everything, and its details carry none).
    public func describe(_ error: any Error) -> String { "database '\(address)': \(Self.reason(error))" }

    /// Why `error` happened, in the server's words where it said (postgres-nio's own description of its errors is a
    /// fixed text that names nothing). `detail`: with the server's DETAIL, which can quote a row's values (a key that
    /// is taken: a push token, an email); the API's logs leave it out.
    public static func reason(_ error: any Error, detail withDetail: Bool = true) -> String {
        if let error = error as? StorageError { return error.description }
        guard let error = error as? PSQLError else { return "\(error)" }
        if let info = error.serverInfo, let message = info[.message] {
            let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            let detail = withDetail ? info[.detail].map { ": \($0)" } ?? "" : ""
            return message + detail + state
        }
        if let underlying = error.underlying {
            if let io = underlying as? IOError {
                // NIO's description of the error begins with the system call that failed: connecting, or a read or
                // write on a connection made (a network that went silent: "Connection timed out").
                let what = "\(io)".hasPrefix("connect(") ? "cannot connect" : "the connection was lost"
                return "\(what): \(String(cString: strerror(io.errnoCode)))"
            }
            if let connection = underlying as? NIOConnectionError {
                // The system's reasons, once each ("Connection refused"), not NIO's description of its error objects.
                let reasons = connection.connectionErrors.map { failure in
                    (failure.error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(failure.error)"
                }
                if !reasons.isEmpty { return "cannot connect: " + Set(reasons).sorted().joined(separator: "; ") }
                if connection.dnsAError != nil || connection.dnsAAAAError != nil { return "cannot connect: the host name does not resolve" }
                return "cannot connect"
            }
            if underlying is ChannelError { return "cannot connect: \(underlying)" }
            if let tls = underlying as? NIOSSLError { return "TLS failed: \(tls)" }
            return "\(error.code): \(underlying)"
        }
        switch error.code {
        case .sslUnsupported: return "the server does not offer TLS, and sslmode=require or stricter asks for it"
        case .authMechanismRequiresPassword:
            return "the server asks for a password and none was given (PGPASSWORD, a passfile, or the credential 'database-password')"
        case .serverClosedConnection: return "the server closed the connection"
        default: return "\(error.code)"
        }
    }

    // MARK: - Housekeeping

    /// Deletes the rows of `table` that `condition` (its parameters `arguments`, `$1`…) selects, a chunk of them (by
    /// `key`, in `order` if given) a transaction, until a chunk removes fewer rows than its size; how many rows went.
    /// Housekeeping that every process runs hourly is done by one at a time: each chunk first takes the job's advisory
    /// lock for its transaction, and a process that finds it taken stops there (nil), leaving the job to the one that
    /// holds it.
    ///
    /// The condition is asked again of each row as it is deleted (`… WHERE key IN (SELECT key … WHERE c LIMIT n) AND
    /// c`): a row another transaction changed while the DELETE waited for it is judged as it now is, so a guest active
    /// again, or a row put back to pending, stays.
    public func deleteInChunks(
        job: String, from table: String, key: String, where condition: String, order: String? = nil, arguments: [Double], chunk: Int = 10_000
    ) async throws -> Int? {
        let ordered = order.map { " ORDER BY \($0)" } ?? ""
        let sql = """
            DELETE FROM \(table) WHERE \(key) IN (SELECT \(key) FROM \(table) WHERE \(condition)\(ordered) LIMIT $\(arguments.count + 1))
                AND (\(condition))
            """
        var removed = 0
        while true {
            let count = try await transaction { transaction -> Int? in
                let held = try await transaction.value("SELECT pg_try_advisory_xact_lock(hashtext(\("dailyverse job: " + job)))", as: Bool.self)
                guard held == true else { return nil }
                var bindings = PostgresBindings()
                for argument in arguments { bindings.append(argument) }
                bindings.append(Int64(chunk))
                return try await transaction.changes(PostgresQuery(unsafeSQL: sql + " RETURNING 1", binds: bindings))
            }
            guard let count else { return removed > 0 ? removed : nil }
            removed += count
            if count < chunk { return removed }
        }
    }

    /// The settings by which a role or the server limits a statement's time, a wait for a lock and a transaction's
    /// idle time.
    static let timeLimits = ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"]

    /// Lifts `timeLimits` on `connection`: for its current transaction (`transactionOnly`), or for the whole session
    /// of a connection of its own that is closed after.
    static func liftTimeLimits(on connection: PostgresConnection, transactionOnly: Bool, logger: Logger) async throws {
        let session = PostgresTransaction(connection: connection, logger: logger)
        for setting in timeLimits {
            try await session.rows(PostgresQuery(unsafeSQL: "SET \(transactionOnly ? "LOCAL " : "")\(setting) = 0"))
        }
    }

    // MARK: - Migrating

    private static func migrate(
        _ address: PostgresAddress, password: String?, tls: TLSConfiguration?, schema: Schema, logger: Logger
    )
        async throws(StorageError)
    {
        func failed(_ error: any Error) -> StorageError { .server(address: address.description, reason: reason(error)) }
        let connection = try await connect(address, password: password, tls: tls, logger: logger)
        let session = PostgresTransaction(connection: connection, logger: logger)
        do {
            let version = try await session.value("SHOW server_version_num", as: String.self)
            guard let number = version.flatMap(Int.init), number >= minimumServerVersion else {
                throw StorageError.server(
                    address: address.description, reason: "PostgreSQL 15 or later is needed (this server reports \(version ?? "no version"))")
            }
            // The migrations' own connection, closed after: no time limit of the role's ends a long step, and the lock
            // is waited for while another process migrates.
            try await liftTimeLimits(on: connection, transactionOnly: false, logger: logger)
            try await session.rows("SELECT pg_advisory_lock(\(migrationLock))")
            try await applyMissing(schema.postgres, on: session, address: address)
            try await session.rows("SELECT pg_advisory_unlock(\(migrationLock))")
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error as? StorageError ?? failed(error)
        }
    }

    /// Runs the migrations `connection`'s database lacks, each in its own transaction, after refusing a database that
    /// knows migrations this binary does not.
    private static func applyMissing(_ migrations: [PostgresMigration], on session: PostgresTransaction, address: PostgresAddress) async throws {
        try await session.rows(
            "CREATE TABLE IF NOT EXISTS dailyverse_migration (identifier text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        var applied: Set<String> = []
        for row in try await session.rows("SELECT identifier FROM dailyverse_migration") { applied.insert(try row.decode(String.self)) }
        let unknown = applied.subtracting(migrations.map(\.identifier)).sorted()
        guard unknown.isEmpty else {
            throw StorageError.server(
                address: address.description,
                reason: "it was written by a newer version of dailyverse (unknown migrations: \(unknown.joined(separator: ", "))); upgrade dailyverse"
            )
        }
        for migration in migrations where !applied.contains(migration.identifier) {
            do {
                try await PostgresTransaction.run(on: session.connection, logger: session.logger) { transaction in
                    for statement in migration.steps.flatMap(\.statements) { try await transaction.rows(PostgresQuery(unsafeSQL: statement)) }
                    try await transaction.rows("INSERT INTO dailyverse_migration (identifier) VALUES (\(migration.identifier))")
                }
            } catch {
                throw StorageError.server(address: address.description, reason: "migration \(migration.identifier) failed: \(reason(error))")
            }
            session.logger.info("migrated", metadata: ["migration": "\(migration.identifier)"])
        }
    }

    // MARK: - Connecting

    /// One connection to `address`, outside any pool: for migrating, and for tools that need a session of their own
    /// (creating a database, copying one in). The caller closes it.
    public static func connect(_ address: PostgresAddress, password: String?, logger: Logger) async throws(StorageError) -> PostgresConnection {
        try await connect(address, password: password, tls: tlsSettings(address), logger: logger)
    }

    private static func connect(
        _ address: PostgresAddress, password: String?, tls: TLSConfiguration?, logger: Logger
    ) async throws(StorageError)
        -> PostgresConnection
    {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: connectionConfiguration(address, password: password, tls: tls), id: 0, logger: logger)
        } catch {
            throw .server(address: address.description, reason: reason(error))
        }
        await KeepAliveSetter(address.keepAlive).apply(to: connection, logger: logger)
        return connection
    }

    /// What every connection starts with: its application name, and dates read as ISO text (`DateStyle`, which a
    /// database or role can set otherwise; PgBouncer passes it on). The schema is the role's own search path: the
    /// migrations create their tables in its first schema (a schema of the role's own, or `public`), and the queries
    /// that read the catalogue ask for `current_schema()`. (Pinning `search_path` at start-up is refused by PgBouncer,
    /// and would have hidden the tables of a role with a schema of its own.)
    static func startupParameters(_ address: PostgresAddress) -> [(String, String)] {
        [("application_name", address.applicationName), ("DateStyle", "ISO, YMD")]
    }

    static func connectionConfiguration(
        _ address: PostgresAddress, password: String?, tls: TLSConfiguration?
    ) throws
        -> PostgresConnection.Configuration
    {
        var configuration: PostgresConnection.Configuration
        if let folder = address.socketFolder {
            configuration = .init(
                unixSocketPath: socketPath(folder, port: address.port), username: address.user, password: password, database: address.database)
        } else {
            let mode: PostgresConnection.Configuration.TLS =
                if let tls {
                    address.tlsMode == .prefer ? .prefer(try NIOSSLContext(configuration: tls)) : .require(try NIOSSLContext(configuration: tls))
                } else {
                    .disable
                }
            configuration = .init(
                host: address.host ?? "localhost", port: address.port, username: address.user, password: password, database: address.database,
                tls: mode)
        }
        configuration.options.connectTimeout = .seconds(Int64(address.connectTimeout))
        configuration.options.additionalStartupParameters = PostgresStore.startupParameters(address)
        return configuration
    }

    /// The server's socket in `folder`, as libpq names it.
    static func socketPath(_ folder: String, port: Int) -> String { folder + "/.s.PGSQL.\(port)" }

    /// TLS for `address.tlsMode`, as libpq means it: `prefer` and `require` encrypt without checking the certificate,
    /// `verify-ca` checks its chain, `verify-full` its chain and name; the chain ends at `sslrootcert` (or
    /// ~/.postgresql/root.crt), or at the system's roots for `sslrootcert=system`. nil for `disable` and for a Unix
    /// socket.
    static func tlsSettings(_ address: PostgresAddress) throws(StorageError) -> TLSConfiguration? {
        guard address.socketFolder == nil, address.tlsMode != .disable else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch address.tlsMode {
        case .disable, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let caFile = address.caFile, address.tlsMode == .verifyCA || address.tlsMode == .verifyFull {
            let certificates: [NIOSSLCertificate]
            do {
                // Read as every file handed to the program is (a FIFO or a device is refused, not waited on).
                certificates = try NIOSSLCertificate.fromPEMBytes(
                    InputFile.contents(of: caFile, maximumBytes: InputFile.maximumCertificateFileBytes))
            } catch let error as InputFileError {
                throw .badAddress(address: address.description, reason: "sslrootcert '\(caFile)': \(InputFile.settingReason(error))")
            } catch {
                throw .badAddress(address: address.description, reason: "sslrootcert '\(caFile)' cannot be read as PEM certificates (\(error))")
            }
            guard !certificates.isEmpty else {
                throw .badAddress(address: address.description, reason: "sslrootcert '\(caFile)' holds no certificate")
            }
            tls.trustRoots = .certificates(certificates)
        }
        return tls
    }
}
