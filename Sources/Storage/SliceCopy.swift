import Diagnostics
import Foundation
import GRDB
import PostgresNIO

/// Part of a table, as both dialects name it: the rows `filter` selects (a condition both read alike, on the table's
/// own columns or through a subquery). Copying a slice replaces the destination's slice with the source's, whichever
/// way it goes (SQLite into PostgreSQL or back).
///
/// - `identity`: an integer key. Rows outside the slice may hold any value of it in the destination, so each copied
///   row gets a fresh one there, and the columns of later slices that `references` name follow it.
/// - `key`: a destination row outside the slice with an incoming row's key is deleted first (an edition imported in
///   the place of a bundled one of the same id; its own rows go with it, by their foreign keys' cascade).
/// - `conflict`: a unique key (spelled as each dialect's index spells it) under which an incoming row takes over the
///   destination's row instead (imported commentary in the place of a bundled entry).
/// - `addsOnly`: the destination's rows are not deleted, only added to or updated (under `conflict`): a table the
///   other slices' rows refer to, which the destination must hold.
public struct RowSlice: Sendable {
    public let table: String
    public let filter: String
    public let identity: String?
    public let references: [String: String]
    public let key: String?
    public let conflict: (sqlite: String, postgres: String)?
    public let addsOnly: Bool

    public init(
        _ table: String, where filter: String, identity: String? = nil, references: [String: String] = [:], key: String? = nil,
        conflict: (sqlite: String, postgres: String)? = nil, addsOnly: Bool = false
    ) {
        (self.table, self.filter, self.identity, self.references, self.key) = (table, filter, identity, references, key)
        (self.conflict, self.addsOnly) = (conflict, addsOnly)
    }
}

/// Copies slices of tables between a SQLite database and PostgreSQL, one way whichever the direction: each slice's
/// rows are staged first, a chunk at a time, in a scratch table beside the destination (held in memory is a chunk,
/// never a table); then the destination, in one transaction, takes the slices' rows out and puts the staged ones in,
/// by the same statements in both dialects: a fresh `identity` each, `references` following it, `key` and
/// `conflict` as the slice names them, and rows that do not hold together stopping the copy with one line.
///
/// Into PostgreSQL: an import published, on the machine that made it, in the caller's transaction (the copy's slices
/// read in one of its transactions into a scratch database attached to it, then sent by `COPY` into temporary tables
/// that go with the transaction). Into SQLite: every process's copy following, staged in a scratch database attached
/// to the copy.
public enum SliceCopy {
    /// The slices' columns and their PostgreSQL types, from PostgreSQL's schema.
    static func columns(_ slices: [RowSlice], _ transaction: PostgresTransaction) async throws -> [String: [StoreCopy.Column]] {
        let all = try await StoreCopy.columns(transaction.connection, logger: transaction.logger)
        var found: [String: [StoreCopy.Column]] = [:]
        for slice in slices {
            guard let columns = all[slice.table] else { throw SliceCopyError("PostgreSQL has no table \(slice.table)") }
            found[slice.table] = columns
        }
        return found
    }

    /// Replaces the slices in `database` (SQLite) with PostgreSQL's, read in `transaction`: each slice's rows go
    /// first, `chunk` rows a transaction, into a scratch database attached to `database`'s writer (SQLite's temporary
    /// database: on disk once it grows, gone when detached). Then `body` runs in one transaction of `database`, given
    /// `replace`, which takes the slices' rows out of `database` and puts the staged ones in; `body` does whatever
    /// must share that transaction, before and after. `body`'s result.
    public static func replace<T>(
        _ slices: [RowSlice], in database: AppDatabase, from transaction: PostgresTransaction, chunk: Int = 1_000,
        _ body: (Database, _ replace: () throws -> Void) throws -> T
    ) async throws -> T {
        let types = try await columns(slices, transaction)
        return try await withStage(in: database) { dialect in
            for slice in slices {
                try await self.stage(slice, columns: types[slice.table] ?? [], from: transaction, into: database, as: dialect, chunk: max(1, chunk))
            }
            return try put(slices, columns: types.mapValues { $0.map(\.name) }, in: database, dialect, body)
        }
    }

    /// Runs `body` with a scratch database attached to `database`'s writer (SQLite's temporary database: on disk once
    /// it grows), detached after whatever happens; `body` is given its dialect.
    static func withStage<T>(in database: AppDatabase, _ body: (Dialect) async throws -> T) async throws -> T {
        // A name of this call's own: the attachment lives on the writer's connection, which other work shares.
        let stage = "slice_stage_\(UInt32.random(in: 0...UInt32.max))"
        try database.writeWithoutTransaction { db in try db.execute(sql: "ATTACH DATABASE '' AS \(stage)") }
        do {
            let result = try await body(.sqlite(stage: stage))
            try database.writeWithoutTransaction { db in try db.execute(sql: "DETACH DATABASE \(stage)") }
            return result
        } catch {
            _ = try? database.writeWithoutTransaction { db in try db.execute(sql: "DETACH DATABASE \(stage)") }
            throw error
        }
    }

    /// Runs `body` in one transaction of `database`, given what takes the slices' rows out and puts the staged ones in.
    static func put<T>(
        _ slices: [RowSlice], columns: [String: [String]], in database: AppDatabase, _ dialect: Dialect,
        _ body: (Database, _ replace: () throws -> Void) throws -> T
    ) throws -> T {
        try database.write { db in
            try body(db) {
                for statement in deletions(slices, dialect) { try db.execute(sql: statement) }
                for slice in slices {
                    for step in try steps(slice, columns: columns[slice.table] ?? [], dialect) {
                        switch step {
                        case .run(let statement): try db.execute(sql: statement)
                        case .check(let query, let failure): if let row = try Row.fetchOne(db, sql: query) { throw failure(row[0]) }
                        }
                    }
                }
            }
        }
    }

    /// Replaces the slices in PostgreSQL, in `transaction`, with `database`'s (SQLite). The slices are read in one
    /// transaction of `database`, so that they hold together whoever writes it meanwhile: copied as they are into a
    /// scratch database attached to its writer (on disk once it grows). From there each slice goes by `COPY`, `chunk`
    /// rows read at a time, into a temporary table of `transaction`, dropped when it ends; then the same statements as
    /// a follow's put them in.
    public static func replace(
        _ slices: [RowSlice], in transaction: PostgresTransaction, from database: AppDatabase, chunk: Int = 1_000
    )
        async throws
    {
        let types = try await columns(slices, transaction)
        try await withStage(in: database) { local in
            try copy(slices, columns: types, in: database, to: local)
            let dialect = Dialect.postgres
            for slice in slices {
                try await self.stage(slice, columns: types[slice.table] ?? [], from: local, of: database, into: transaction, chunk: max(1, chunk))
            }
            for statement in deletions(slices, dialect) { try await transaction.rows(PostgresQuery(unsafeSQL: statement)) }
            for slice in slices {
                for step in try steps(slice, columns: types[slice.table]?.map(\.name) ?? [], dialect) {
                    switch step {
                    case .run(let statement): try await transaction.rows(PostgresQuery(unsafeSQL: statement))
                    case .check(let query, let failure):
                        if let row = try await transaction.rows(PostgresQuery(unsafeSQL: query)).first { throw failure(try row.decode(String?.self)) }
                    }
                }
            }
        }
    }

    /// Copies a slice's rows from PostgreSQL into its scratch table in SQLite, `chunk` rows a transaction: the rows
    /// stream in as they are written (postgres-nio asks the server for more only as they are taken).
    static func stage(
        _ slice: RowSlice, columns: [StoreCopy.Column], from transaction: PostgresTransaction, into database: AppDatabase, as dialect: Dialect,
        chunk: Int
    ) async throws {
        let names = columns.map { StoreCopy.quoted($0.name) }
        let staged = dialect.staged(slice.table)
        try database.writeWithoutTransaction { db in try db.execute(sql: "CREATE TABLE \(staged) (\(names.joined(separator: ", ")))") }
        let insert = "INSERT INTO \(staged) (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
        var pending: [[DatabaseValue]] = []
        pending.reserveCapacity(chunk)
        func flush() throws {
            try database.write { db in
                let statement = try db.makeStatement(sql: insert)
                for row in pending { try statement.execute(arguments: StatementArguments(row)) }
            }
            pending.removeAll(keepingCapacity: true)
        }
        let query = PostgresQuery(unsafeSQL: "SELECT \(StoreCopy.selectList(columns)) FROM \(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)")
        for try await row in try await transaction.query(query) {
            pending.append(try zip(columns, row).map { column, cell in try StoreCopy.value(cell, column).databaseValue })
            if pending.count >= chunk { try flush() }
        }
        if !pending.isEmpty { try flush() }
    }

    /// Copies the slices' rows in `database` as they are into `local`'s scratch tables, in one transaction.
    static func copy(_ slices: [RowSlice], columns: [String: [StoreCopy.Column]], in database: AppDatabase, to local: Dialect) throws {
        try database.write { db in
            for slice in slices {
                let names = (columns[slice.table] ?? []).map { StoreCopy.quoted($0.name) }.joined(separator: ", ")
                try db.execute(sql: "CREATE TABLE \(local.staged(slice.table)) (\(names))")
                try db.execute(
                    sql:
                        "INSERT INTO \(local.staged(slice.table)) (\(names)) SELECT \(names) FROM \(local.destination(slice.table)) WHERE \(slice.filter)"
                )
            }
        }
    }

    /// Copies a slice's rows from its scratch table in SQLite (`local`'s, on `database`'s writer, where it is
    /// attached) into a temporary table in PostgreSQL made like the slice's table, without its constraints, by one
    /// `COPY`: `chunk` rows read and sent at a time, each value in its column's kind.
    static func stage(
        _ slice: RowSlice, columns: [StoreCopy.Column], from local: Dialect, of database: AppDatabase, into transaction: PostgresTransaction,
        chunk: Int
    ) async throws {
        let names = columns.map { StoreCopy.quoted($0.name) }.joined(separator: ", ")
        try await transaction.rows(
            PostgresQuery(
                unsafeSQL:
                    "CREATE TEMP TABLE \(StoreCopy.quoted(Dialect.stagedName(slice.table))) ON COMMIT DROP AS SELECT \(names) FROM \(Dialect.postgres.destination(slice.table)) WITH NO DATA"
            ))
        let read = "SELECT rowid, \(names) FROM \(local.staged(slice.table)) WHERE rowid > ? ORDER BY rowid LIMIT \(chunk)"
        try await transaction.copy(into: Dialect.stagedName(slice.table), columns: columns.map(\.name)) { writer in
            var last: Int64 = 0
            while true {
                let rows = try database.writeWithoutTransaction { db in try Row.fetchAll(db, sql: read, arguments: [last]) }
                guard let final = rows.last else { break }
                var text = CopyTextRows()
                for row in rows {
                    for (index, column) in columns.enumerated() {
                        text.value(try StoreCopy.convert(row[index + 1], column, table: slice.table))
                    }
                    text.endRow()
                }
                try await writer.write(text.buffer)
                last = final[0]
                if rows.count < chunk { break }
            }
        }
    }

    /// How one dialect names a copy's tables and takes fresh identities; the statements are otherwise the same.
    enum Dialect {
        /// SQLite: the scratch tables in the attached database `stage`; fresh identities after the largest there.
        case sqlite(stage: String)
        /// PostgreSQL: the scratch tables temporary, dropped at commit; fresh identities from the column's sequence.
        case postgres

        /// The name of a slice's scratch table, unqualified.
        static func stagedName(_ table: String) -> String { "slice \(table)" }

        /// A slice's own table in the destination.
        func destination(_ table: String) -> String {
            switch self {
            case .sqlite: "main.\(StoreCopy.quoted(table))"
            // The schema the migrations made it in, the first on the role's search path (a schema of the role's own, or
            // public): never the transaction's temporary tables, whose names differ ("slice …").
            case .postgres: StoreCopy.quoted(table)
            }
        }

        /// The scratch table of a slice's staged rows.
        func staged(_ table: String) -> String { scratch(Self.stagedName(table)) }

        /// The scratch table of a table's old identities and the new ones they were given.
        func map(_ table: String) -> String { scratch("map \(table)") }

        func scratch(_ name: String) -> String {
            switch self {
            case .sqlite(let stage): "\(stage).\(StoreCopy.quoted(name))"
            case .postgres: "pg_temp.\(StoreCopy.quoted(name))"
            }
        }

        /// The statement that makes a table's `map`.
        func makeMap(_ table: String) -> String {
            switch self {
            case .sqlite: "CREATE TABLE \(map(table)) (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)"
            case .postgres: "CREATE TEMP TABLE \(StoreCopy.quoted("map \(table)")) (old bigint PRIMARY KEY, new bigint NOT NULL) ON COMMIT DROP"
            }
        }

        /// Fresh identities of a table's identity column, for rows taken in the order of their old one (`old`).
        func fresh(_ table: String, _ identity: String, _ old: String) -> String {
            switch self {
            case .sqlite:
                "(SELECT ifnull(max(\(StoreCopy.quoted(identity))), 0) FROM \(destination(table))) + row_number() OVER (ORDER BY \(old))"
            case .postgres: "nextval(pg_get_serial_sequence('\(destination(table))', '\(identity)'))"
            }
        }

        func conflict(_ slice: RowSlice) -> String? {
            switch self {
            case .sqlite: slice.conflict?.sqlite
            case .postgres: slice.conflict?.postgres
            }
        }
    }

    /// A statement of a slice's put: one to run, or a query whose first row, if there is one, stops the copy with the
    /// error made of its first column.
    enum Step {
        case run(String)
        case check(String, (String?) -> SliceCopyError)
    }

    /// The statements that take the slices' rows out of the destination, children first.
    static func deletions(_ slices: [RowSlice], _ dialect: Dialect) -> [String] {
        slices.reversed().filter { !$0.addsOnly }.map { "DELETE FROM \(dialect.destination($0.table)) WHERE \($0.filter)" }
    }

    /// The statements that put a staged slice's rows (its `columns`) into the destination, in the destination's
    /// transaction, after the slices before it: rows of the same `key` deleted first, a fresh `identity` each (old
    /// to new kept in the table's map, for the slices that reference it), each reference mapped through its parent's
    /// map (a row whose parent was not copied stops the copy), and `conflict` taking over the row there.
    static func steps(_ slice: RowSlice, columns names: [String], _ dialect: Dialect) throws -> [Step] {
        let table = slice.table
        let staged = dialect.staged(table)
        func position(_ column: String) throws -> Int {
            guard let index = names.firstIndex(of: column) else { throw SliceCopyError("\(table) has no column \(column)") }
            return index
        }
        var steps: [Step] = []
        var selected = names.map { "s.\(StoreCopy.quoted($0))" }
        var joins: [String] = []
        var order = ""
        if let identity = slice.identity {
            let index = try position(identity)
            let (map, old) = (dialect.map(table), selected[index])
            steps.append(
                .check("SELECT NULL FROM \(staged) s WHERE \(old) IS NULL LIMIT 1", { _ in SliceCopyError("a row of \(table) has no \(identity)") }))
            // Made though nothing is staged: the slices after look their references up in it.
            steps.append(.run(dialect.makeMap(table)))
            steps.append(
                .run("INSERT INTO \(map) (old, new) SELECT \(old), \(dialect.fresh(table, identity, old)) FROM \(staged) s ORDER BY \(old)"))
            joins.append("JOIN \(map) m0 ON m0.old = \(old)")
            selected[index] = "m0.new"
            order = " ORDER BY m0.new"
        }
        for (number, (column, parent)) in slice.references.sorted(by: { $0.key < $1.key }).enumerated() {
            let index = try position(column)
            let (map, old, alias) = (dialect.map(parent), selected[index], "m\(number + 1)")
            // A row, not its value: a reference that is NULL refers to nothing copied either.
            steps.append(
                .check(
                    "SELECT CAST(\(old) AS TEXT) FROM \(staged) s WHERE NOT EXISTS (SELECT 1 FROM \(map) m WHERE m.old = \(old)) LIMIT 1",
                    { value in SliceCopyError("a row of \(table) refers to \(parent) \(value ?? "NULL"), which was not copied") }))
            joins.append("JOIN \(map) \(alias) ON \(alias).old = \(old)")
            selected[index] = "\(alias).new"
        }
        if let key = slice.key {
            let quoted = StoreCopy.quoted(key)
            steps.append(.run("DELETE FROM \(dialect.destination(table)) WHERE \(quoted) IN (SELECT \(quoted) FROM \(staged))"))
        }
        // `WHERE true`: SQLite's grammar for an upsert after a SELECT, which PostgreSQL reads alike.
        steps.append(
            .run(
                """
                INSERT INTO \(dialect.destination(table)) (\(names.map(StoreCopy.quoted).joined(separator: ", ")))
                SELECT \(selected.joined(separator: ", ")) FROM \(staged) s \(joins.joined(separator: " ")) WHERE true\(order)
                """ + upsert(slice, conflict: dialect.conflict(slice), columns: names)))
        return steps
    }

    /// `ON CONFLICT … DO UPDATE` of every column but the identity, when the slice names a conflict.
    static func upsert(_ slice: RowSlice, conflict: String?, columns: [String]) -> String {
        guard let conflict else { return "" }
        let updated = columns.filter { $0 != slice.identity }.map { "\(StoreCopy.quoted($0)) = excluded.\(StoreCopy.quoted($0))" }
        return " ON CONFLICT \(conflict) DO UPDATE SET \(updated.joined(separator: ", "))"
    }
}

/// Two schemas, or a slice and the rows read for it, that do not agree: nothing is written.
public struct SliceCopyError: UserFacingError {
    public let description: String
    init(_ description: String) { self.description = description }
}
