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

/// A slice's rows as read from SQLite: its columns (in PostgreSQL's order, which the two schemas share) and their
/// values.
struct SliceRows: Sendable {
    let table: String
    let columns: [String]
    let rows: [[DatabaseValue]]
}

/// Copies slices of tables between a SQLite database and PostgreSQL. Into PostgreSQL (an import published, on the
/// machine that made it): the SQLite rows read whole, written in the caller's transaction. Into SQLite (every
/// process's copy following): a chunk of rows held at a time, the last step in one transaction.
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

    /// The slices' rows in SQLite, each table's `columns` (PostgreSQL's, in its order).
    static func read(_ slices: [RowSlice], from db: Database, columns: [String: [String]]) throws -> [SliceRows] {
        try slices.map { slice in
            let names = columns[slice.table] ?? []
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(names.map(StoreCopy.quoted).joined(separator: ", ")) FROM \(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)")
            return SliceRows(table: slice.table, columns: names, rows: rows.map { row in (0..<names.count).map { row[$0] as DatabaseValue } })
        }
    }

    /// Replaces the slices in `database` (SQLite) with PostgreSQL's, read in `transaction`, holding a chunk of rows
    /// in memory at a time rather than all of them: each slice's rows go first, `chunk` rows a transaction, into a
    /// scratch database attached to `database`'s writer (SQLite's temporary database: on disk once it grows, gone
    /// when detached). Then `body` runs in one transaction of `database`, given `replace`, which takes the slices'
    /// rows out of `database` and puts the staged ones in, each with a fresh `identity` and its `references`
    /// following; `body` does whatever must share that transaction, before and after. `body`'s result.
    public static func replace<T>(
        _ slices: [RowSlice], in database: AppDatabase, from transaction: PostgresTransaction, chunk: Int = 1_000,
        _ body: (Database, _ replace: () throws -> Void) throws -> T
    ) async throws -> T {
        let types = try await columns(slices, transaction)
        // A name of this call's own: the attachment lives on the writer's connection, which other work shares.
        let stage = "slice_stage_\(UInt32.random(in: 0...UInt32.max))"
        try database.writeWithoutTransaction { db in try db.execute(sql: "ATTACH DATABASE '' AS \(stage)") }
        do {
            for slice in slices {
                try await self.stage(slice, columns: types[slice.table] ?? [], from: transaction, into: database, as: stage, chunk: chunk)
            }
            let result = try put(slices, columns: types.mapValues { $0.map(\.name) }, from: stage, in: database, body)
            try database.writeWithoutTransaction { db in try db.execute(sql: "DETACH DATABASE \(stage)") }
            return result
        } catch {
            _ = try? database.writeWithoutTransaction { db in try db.execute(sql: "DETACH DATABASE \(stage)") }
            throw error
        }
    }

    /// Copies a slice's rows from PostgreSQL into a table of the same name in the scratch database `stage`, `chunk`
    /// rows a transaction: the rows stream in as they are written (postgres-nio asks the server for more only as
    /// they are taken).
    static func stage(
        _ slice: RowSlice, columns: [StoreCopy.Column], from transaction: PostgresTransaction, into database: AppDatabase, as stage: String,
        chunk: Int
    ) async throws {
        let names = columns.map { StoreCopy.quoted($0.name) }
        let staged = "\(stage).\(StoreCopy.quoted(slice.table))"
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
        for try await row in try await transaction.connection.query(query, logger: transaction.logger) {
            pending.append(try zip(columns, row).map { column, cell in try StoreCopy.value(cell, column).databaseValue })
            if pending.count >= chunk { try flush() }
        }
        if !pending.isEmpty { try flush() }
    }

    /// Runs `body` in one transaction of `database`, given what takes the slices' rows out and puts the staged ones in.
    static func put<T>(
        _ slices: [RowSlice], columns: [String: [String]], from stage: String, in database: AppDatabase,
        _ body: (Database, _ replace: () throws -> Void) throws -> T
    ) throws -> T {
        try database.write { db in
            try body(db) {
                for slice in slices.reversed() where !slice.addsOnly {
                    try db.execute(sql: "DELETE FROM main.\(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)")
                }
                for slice in slices { try put(slice, columns: columns[slice.table] ?? [], from: stage, in: db) }
            }
        }
    }

    /// Puts a staged slice's rows into `main`, in the caller's transaction: rows of the same `key` deleted first, a
    /// fresh `identity` each (old to new kept in the stage's "map <table>", for the slices that reference it), each
    /// reference mapped through its parent's map (a row whose parent was not copied stops the copy), and `conflict`
    /// taking over the row there.
    static func put(_ slice: RowSlice, columns names: [String], from stage: String, in db: Database) throws {
        let table = StoreCopy.quoted(slice.table)
        let staged = "\(stage).\(table)"
        func position(_ column: String) throws -> Int {
            guard let index = names.firstIndex(of: column) else { throw SliceCopyError("\(slice.table) has no column \(column)") }
            return index
        }
        var selected = names.map { "s.\(StoreCopy.quoted($0))" }
        var joins: [String] = []
        if let identity = slice.identity {
            let index = try position(identity)
            let map = "\(stage).\(StoreCopy.quoted("map \(slice.table)"))"
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(staged) s WHERE \(selected[index]) IS NULL)") == true {
                throw SliceCopyError("a row of \(slice.table) has no \(identity)")
            }
            // Made though nothing is staged: the slices after look their references up in it.
            try db.execute(sql: "CREATE TABLE \(map) (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
            try db.execute(
                sql: """
                    INSERT INTO \(map) (old, new)
                    SELECT \(selected[index]), (SELECT ifnull(max(\(StoreCopy.quoted(identity))), 0) FROM main.\(table)) + row_number() OVER (ORDER BY s.rowid)
                    FROM \(staged) s
                    """)
            joins.append("JOIN \(map) m0 ON m0.old = \(selected[index])")
            selected[index] = "m0.new"
        }
        for (number, (column, parent)) in slice.references.sorted(by: { $0.key < $1.key }).enumerated() {
            let index = try position(column)
            let map = "\(stage).\(StoreCopy.quoted("map \(parent)"))"
            let alias = "m\(number + 1)"
            // A row, not its value: a reference that is NULL refers to nothing copied either.
            if let missing = try Row.fetchOne(
                db,
                sql: "SELECT \(selected[index]) FROM \(staged) s WHERE NOT EXISTS (SELECT 1 FROM \(map) m WHERE m.old = \(selected[index])) LIMIT 1")
            {
                throw SliceCopyError("a row of \(slice.table) refers to \(parent) \(missing[0] as DatabaseValue), which was not copied")
            }
            joins.append("JOIN \(map) \(alias) ON \(alias).old = \(selected[index])")
            selected[index] = "\(alias).new"
        }
        if let key = slice.key {
            let quoted = StoreCopy.quoted(key)
            try db.execute(sql: "DELETE FROM main.\(table) WHERE \(quoted) IN (SELECT \(quoted) FROM \(staged))")
        }
        // `WHERE true`: SQLite's grammar for an upsert after a SELECT.
        try db.execute(
            sql: """
                INSERT INTO main.\(table) (\(names.map(StoreCopy.quoted).joined(separator: ", ")))
                SELECT \(selected.joined(separator: ", ")) FROM \(staged) s \(joins.joined(separator: " ")) WHERE true ORDER BY s.rowid
                """ + upsert(slice, conflict: slice.conflict?.sqlite, columns: names))
    }

    /// Replaces the slices in PostgreSQL, in `transaction`, with `database`'s (SQLite), read whole.
    public static func replace(_ slices: [RowSlice], in transaction: PostgresTransaction, from database: AppDatabase) async throws {
        let types = try await columns(slices, transaction)
        let names = types.mapValues { $0.map(\.name) }
        let rows = try await database.read { db in try read(slices, from: db, columns: names) }
        for slice in slices.reversed() where !slice.addsOnly {
            try await transaction.rows(PostgresQuery(unsafeSQL: "DELETE FROM \(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)"))
        }
        var renumbered: [String: [Int64: Int64]] = [:]
        for (slice, incoming) in zip(slices, rows) where !incoming.rows.isEmpty {
            let table = StoreCopy.quoted(slice.table)
            let columns = types[slice.table] ?? []
            if let key = slice.key {
                let keys = try keyValues(incoming, key).compactMap(String.fromDatabaseValue)
                try await transaction.rows(
                    PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(StoreCopy.quoted(key)) = ANY($1)", binds: binds(keys)))
            }
            var fresh: [Int64] = []
            if let identity = slice.identity {
                let sequence = "pg_get_serial_sequence('\(table)', '\(identity)')"
                let allocated = try await transaction.rows(
                    PostgresQuery(unsafeSQL: "SELECT nextval(\(sequence)) FROM generate_series(1, \(incoming.rows.count))"))
                fresh = try allocated.map { try $0.decode(Int64.self) }
            }
            let values = try renumber(incoming, slice, fresh: fresh, maps: &renumbered)
            for start in stride(from: 0, to: values.count, by: StoreCopy.batchRows) {
                try await StoreCopy.insert(
                    values[start..<min(start + StoreCopy.batchRows, values.count)], into: slice.table, columns: columns,
                    suffix: upsert(slice, conflict: slice.conflict?.postgres, columns: incoming.columns), connection: transaction.connection,
                    logger: transaction.logger)
            }
        }
    }

    static func binds(_ texts: [String]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(texts)
        return bindings
    }

    /// `ON CONFLICT … DO UPDATE` of every column but the identity, when the slice names a conflict.
    static func upsert(_ slice: RowSlice, conflict: String?, columns: [String]) -> String {
        guard let conflict else { return "" }
        let updated = columns.filter { $0 != slice.identity }.map { "\(StoreCopy.quoted($0)) = excluded.\(StoreCopy.quoted($0))" }
        return " ON CONFLICT \(conflict) DO UPDATE SET \(updated.joined(separator: ", "))"
    }

    static func keyValues(_ rows: SliceRows, _ key: String) throws -> [DatabaseValue] {
        guard let index = rows.columns.firstIndex(of: key) else { throw SliceCopyError("\(rows.table) has no column \(key)") }
        return rows.rows.map { $0[index] }
    }

    /// The rows with their identity taken from `fresh` (old → new recorded in `maps` under the table) and each
    /// referencing column mapped through the table it names.
    static func renumber(_ rows: SliceRows, _ slice: RowSlice, fresh: [Int64], maps: inout [String: [Int64: Int64]]) throws -> [[DatabaseValue]] {
        var values = rows.rows
        if let identity = slice.identity {
            guard let index = rows.columns.firstIndex(of: identity) else {
                throw SliceCopyError("\(rows.table) has no column \(identity)")
            }
            var map: [Int64: Int64] = [:]
            for (position, row) in values.enumerated() {
                guard let old = Int64.fromDatabaseValue(row[index]) else {
                    throw SliceCopyError("a row of \(rows.table) has no \(identity)")
                }
                map[old] = fresh[position]
                values[position][index] = fresh[position].databaseValue
            }
            maps[slice.table] = map
        }
        for (column, parent) in slice.references {
            guard let index = rows.columns.firstIndex(of: column) else { throw SliceCopyError("\(rows.table) has no column \(column)") }
            let map = maps[parent] ?? [:]
            for position in values.indices {
                guard let old = Int64.fromDatabaseValue(values[position][index]), let new = map[old] else {
                    throw SliceCopyError("a row of \(rows.table) refers to \(parent) \(values[position][index]), which was not copied")
                }
                values[position][index] = new.databaseValue
            }
        }
        return values
    }
}

/// Two schemas, or a slice and the rows read for it, that do not agree: nothing is written.
public struct SliceCopyError: UserFacingError {
    public let description: String
    init(_ description: String) { self.description = description }
}
