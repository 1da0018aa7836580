import Logging
import PostgresNIO

/// One transaction on PostgreSQL, as the domains' queries take it (GRDB's `Database` is SQLite's): its connection and
/// the logger its statements are logged under.
public struct PostgresTransaction: Sendable {
    public let connection: PostgresConnection
    public let logger: Logger

    public init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Runs `query`; its rows.
    @discardableResult
    public func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await guarded { [connection, logger] in try await connection.query(query, logger: logger).collect() }
    }

    /// Runs `query`; its rows as they come, for results too large to hold at once. (A connection lost while they
    /// come ends the sequence with the error: only a statement's start can wait for ever.)
    public func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        try await guarded { [connection, logger] in try await connection.query(query, logger: logger) }
    }

    /// Runs a prepared statement (parsed and planned once a connection); its rows.
    public func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        try await guarded { [connection, logger] in
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// `COPY table (columns) FROM STDIN` (text format), the data written by `writeData`.
    public func copy(
        into table: String, columns: [String], _ writeData: @escaping @Sendable (PostgresCopyFromWriter) async throws -> Void
    )
        async throws
    {
        try await guarded { [connection, logger] in
            try await connection.copyFrom(table: table, columns: columns, logger: logger, writeData: writeData)
        }
    }

    /// Runs `work`, statements on this transaction's connection, to their answer, or until the connection closes
    /// (`PostgresConnectionLost`): see `ConnectionWatch` for why every statement goes through here.
    func guarded<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await ConnectionWatch.shared.run(on: connection, work)
    }

    /// Runs `body` between BEGIN and COMMIT on `connection`; on its error, ROLLBACK, and the error as it is (a domain's
    /// own, for the caller to answer). A connection the server ended is not asked to roll back (the server did, and
    /// the statement would be lost); one that cannot roll back is closed, never handed back to the pool inside a
    /// failed transaction.
    public static func run<T>(
        on connection: PostgresConnection, logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresTransaction) async throws -> sending T
    ) async throws -> sending T {
        let transaction = PostgresTransaction(connection: connection, logger: logger)
        try await transaction.rows("BEGIN")
        let value: T
        do { value = try await body(transaction) } catch {
            await transaction.rollBack()
            throw error
        }
        try await transaction.rows("COMMIT")
        return value
    }

    /// ROLLBACK, unless the connection is gone; a connection that cannot is closed.
    func rollBack() async {
        guard !connection.isClosed else { return }
        do { try await rows("ROLLBACK") } catch { try? await connection.close() }
    }

    /// The first column of the first row, if there is one and it is not NULL.
    public func value<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) async throws -> T? where T._DecodableType == T {
        try await rows(query).first?.decode(T?.self) ?? nil
    }

    /// Runs a statement that ends `RETURNING 1` (or anything): how many rows it changed.
    public func changes(_ query: PostgresQuery) async throws -> Int { try await rows(query).count }

    /// Holds a lock named `name` until the transaction ends (`pg_advisory_xact_lock`): what SQLite's one writer gives
    /// for free — a check and the write it allows, with no other process's write between them.
    public func lock(_ name: String) async throws {
        try await rows("SELECT pg_advisory_xact_lock(hashtext(\("dailyverse: " + name)))")
    }

    /// Lifts the role's or the server's time limits for the rest of this transaction: for work that may rightly take
    /// long (publishing or following an import, copying an installation), which a `statement_timeout` or an
    /// `idle_in_transaction_session_timeout` an operator set for the API's short requests would end every time.
    public func liftTimeLimits() async throws {
        try await PostgresStore.liftTimeLimits(on: connection, transactionOnly: true, logger: logger)
    }

    /// Takes the lock named `name` shared, beside other transactions holding it shared, unless one holds it as `lock`
    /// takes it (then at once false, without waiting); held until the transaction ends.
    public func tryLockShared(_ name: String) async throws -> Bool {
        try await value("SELECT pg_try_advisory_xact_lock_shared(hashtext(\("dailyverse: " + name)))", as: Bool.self) ?? false
    }
}

extension PostgresStore {
    /// Runs `body` in one transaction on a pooled connection: everything it does, or nothing. The error `body`
    /// throws comes out as it is (a domain's own error, for the caller to answer), not wrapped in postgres-nio's.
    @discardableResult
    public func transaction<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresTransaction) async throws -> sending T
    ) async throws -> sending T {
        try await withoutTransaction(isolation: isolation) { session in
            try await PostgresTransaction.run(on: session.connection, logger: session.logger, body)
        }
    }

    /// Runs `body` in one read-only transaction that sees the database as it was at its first read (`REPEATABLE READ`),
    /// whatever other transactions commit meanwhile: for reads of several statements that must agree with one
    /// another, such as rows of several tables that another process replaces together, without taking its lock.
    /// (A `transaction`, `READ COMMITTED` as PostgreSQL's default, sees each statement's own moment.)
    @discardableResult
    public func snapshot<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresTransaction) async throws -> sending T
    ) async throws -> sending T {
        try await transaction(isolation: isolation) { transaction in
            try await transaction.rows("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try await body(transaction)
        }
    }

    /// Runs `body` on a pooled connection outside any transaction: each statement commits on its own. For what one
    /// statement answers (a read) or what need not be all or nothing: a round trip each, not BEGIN and COMMIT too.
    /// The one place a connection is taken from the pool (`transaction` runs its BEGIN and COMMIT here), so each is
    /// given the address's keep-alive at its first use.
    @discardableResult
    public func withoutTransaction<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresTransaction) async throws -> sending T
    ) async throws -> sending T {
        let logger = backgroundLogger
        return try await client.withConnection(isolation: isolation) { connection in
            await keepAlive.prepare(connection, logger: logger)
            return try await body(PostgresTransaction(connection: connection, logger: logger))
        }
    }

    /// Runs one statement on a pooled connection, outside a transaction; its rows.
    @discardableResult
    public func rows(_ query: PostgresQuery) async throws -> [PostgresRow] { try await withoutTransaction { try await $0.rows(query) } }

    /// Whether `error` is PostgreSQL's refusal of a row that names one no longer there (SQLSTATE 23503): the user a
    /// request was acting for was removed meanwhile.
    public static func isMissingReference(_ error: any Error) -> Bool { sqlState(error) == "23503" }

    /// Whether `error` is PostgreSQL's refusal of a value itself (class 22, data exception: a NUL character in text,
    /// a number out of its column's range, text that is not a date).
    public static func isDataException(_ error: any Error) -> Bool { sqlState(error)?.hasPrefix("22") == true }

    /// Whether `error` is PostgreSQL's refusal of a row whose unique key another row has (SQLSTATE 23505).
    public static func isUniqueViolation(_ error: any Error) -> Bool { sqlState(error) == "23505" }

    /// Whether `error` is the server's, or the connection's, rather than the request's: the database cannot be used now
    /// (no connection, the server shutting down or restarting, the connection lost mid-statement).
    public static func isUnavailable(_ error: any Error) -> Bool {
        // The pool's own refusals (shut down, its circuit breaker tripped after failed connects): a type of a module
        // postgres-nio does not export as a product, known here by name.
        if String(describing: type(of: error)) == "ConnectionPoolError" || error is PostgresConnectionLost { return true }
        guard let error = error as? PSQLError else { return false }
        guard error.code == .server else {
            // Connecting, the connection lost or closed, the pool closed; not a statement the server refused.
            return [.connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .uncleanShutdown, .sslUnsupported]
                .contains(error.code)
        }
        // Class 08 (connection exception), 53 (insufficient resources: too many connections, disk full), 57 (operator
        // intervention: the server shutting down or not yet accepting connections, a statement cancelled or past
        // `statement_timeout`), 58 (system error); class 40, a transaction the server gave up (a deadlock, a
        // serialization failure); 55P03, a lock not had within `lock_timeout`; and 25006, a write refused by a
        // server that is read-only (a standby, as a failover can leave a connection): all of which the client may
        // send again shortly; and 25P03 and 25P04, a session the server ended for idling in its transaction or for a
        // transaction past `transaction_timeout` (the statement in flight may read either this or the close).
        let state = error.serverInfo?[.sqlState] ?? ""
        return ["08", "53", "57", "58", "40", "55P03", "25006", "25P03", "25P04"].contains { state.hasPrefix($0) }
    }

    static func sqlState(_ error: any Error) -> String? { (error as? PSQLError)?.serverInfo?[.sqlState] }
}
