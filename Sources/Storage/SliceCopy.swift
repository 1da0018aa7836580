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

/// A slice's rows as read from one database: its columns (in PostgreSQL's order, which the two schemas share) and
/// their values.
public struct SliceRows: Sendable, Equatable {
    public let table: String
    public let columns: [String]
    public var rows: [[DatabaseValue]]
}

/// Copies slices of tables between a SQLite database and PostgreSQL, each side in one transaction its caller holds.
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

    /// The column names of each slice's table, as PostgreSQL orders them: what `read(_:from:columns:)` reads in SQLite.
    public static func columnNames(_ slices: [RowSlice], _ transaction: PostgresTransaction) async throws -> [String: [String]] {
        try await columns(slices, transaction).mapValues { $0.map(\.name) }
    }

    /// The slices' rows in PostgreSQL.
    public static func read(_ slices: [RowSlice], from transaction: PostgresTransaction) async throws -> [SliceRows] {
        let types = try await columns(slices, transaction)
        var read: [SliceRows] = []
        for slice in slices {
            let columns = types[slice.table] ?? []
            var rows: [[DatabaseValue]] = []
            let query = PostgresQuery(
                unsafeSQL: "SELECT \(StoreCopy.selectList(columns)) FROM \(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)")
            for try await row in try await transaction.connection.query(query, logger: transaction.logger) {
                rows.append(try zip(columns, row).map { column, cell in try StoreCopy.value(cell, column).databaseValue })
            }
            read.append(SliceRows(table: slice.table, columns: columns.map(\.name), rows: rows))
        }
        return read
    }

    /// The slices' rows in SQLite, each table's `columns` (`columnNames`).
    public static func read(_ slices: [RowSlice], from db: Database, columns: [String: [String]]) throws -> [SliceRows] {
        try slices.map { slice in
            let names = columns[slice.table] ?? []
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(names.map(StoreCopy.quoted).joined(separator: ", ")) FROM \(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)")
            return SliceRows(table: slice.table, columns: names, rows: rows.map { row in (0..<names.count).map { row[$0] as DatabaseValue } })
        }
    }

    /// Replaces the slices in SQLite with `rows` (read from the other side, one per slice, in order).
    public static func replace(_ slices: [RowSlice], with rows: [SliceRows], in db: Database) throws {
        try check(slices, rows)
        for slice in slices.reversed() where !slice.addsOnly {
            try db.execute(sql: "DELETE FROM \(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)")
        }
        var renumbered: [String: [Int64: Int64]] = [:]
        for (slice, incoming) in zip(slices, rows) where !incoming.rows.isEmpty {
            let table = StoreCopy.quoted(slice.table)
            if let key = slice.key {
                let keys = try keyValues(incoming, key)
                for start in stride(from: 0, to: keys.count, by: 500) {
                    let chunk = Array(keys[start..<min(start + 500, keys.count)])
                    try db.execute(
                        sql: "DELETE FROM \(table) WHERE \(StoreCopy.quoted(key)) IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))",
                        arguments: StatementArguments(chunk))
                }
            }
            var fresh: [Int64] = []
            if let identity = slice.identity {
                let largest = try Int64.fetchOne(db, sql: "SELECT max(\(StoreCopy.quoted(identity))) FROM \(table)") ?? 0
                fresh = (0..<Int64(incoming.rows.count)).map { largest + 1 + $0 }
            }
            let values = try renumber(incoming, slice, fresh: fresh, maps: &renumbered)
            let names = incoming.columns.map(StoreCopy.quoted)
            let statement = try db.makeStatement(
                sql: "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))"
                    + upsert(slice, conflict: slice.conflict?.sqlite, columns: incoming.columns))
            for row in values { try statement.execute(arguments: StatementArguments(row)) }
        }
    }

    /// Replaces the slices in PostgreSQL with `rows` (read from SQLite, one per slice, in order).
    public static func replace(_ slices: [RowSlice], with rows: [SliceRows], in transaction: PostgresTransaction) async throws {
        try check(slices, rows)
        let types = try await columns(slices, transaction)
        for slice in slices.reversed() where !slice.addsOnly {
            try await transaction.rows(PostgresQuery(unsafeSQL: "DELETE FROM \(StoreCopy.quoted(slice.table)) WHERE \(slice.filter)"))
        }
        var renumbered: [String: [Int64: Int64]] = [:]
        for (slice, incoming) in zip(slices, rows) where !incoming.rows.isEmpty {
            let table = StoreCopy.quoted(slice.table)
            let byName = Dictionary(uniqueKeysWithValues: (types[slice.table] ?? []).map { ($0.name, $0) })
            let columns = try incoming.columns.map { name in
                guard let column = byName[name] else { throw SliceCopyError("PostgreSQL's \(slice.table) has no column \(name)") }
                return column
            }
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

    static func check(_ slices: [RowSlice], _ rows: [SliceRows]) throws {
        guard slices.map(\.table) == rows.map(\.table) else {
            throw SliceCopyError("the rows read are of \(rows.map(\.table)), the slices of \(slices.map(\.table))")
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
