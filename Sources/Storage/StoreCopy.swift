import Crypto
import Foundation
import GRDB
import Logging
import PostgresNIO

/// One table copied from SQLite into PostgreSQL: its rows, and a checksum of them that both sides computed alike.
public struct TableCopy: Sendable, Codable, Equatable {
    public let table: String
    public let rows: Int
    /// The sum (modulo 2⁶⁴) of each row's SHA-256, first eight bytes, in hexadecimal: independent of the order rows
    /// come in, which differs between the two databases.
    public let checksum: String
}

/// Copies every table of a SQLite database into an empty PostgreSQL database with the same schema, in one transaction:
/// all of it, checked (each table's row count and checksum read back from PostgreSQL before committing), or nothing.
///
/// Table-agnostic: it reads the tables and their columns from both databases (the domains' schemas, which a test keeps
/// alike), copies parents before the tables that refer to them, converts each value to its PostgreSQL column's type,
/// and sets each identity column's sequence past the largest copied value.
public enum StoreCopy {
    /// Tables the PostgreSQL migrations fill: their rows are replaced by the source's.
    static let filledByMigrations: Set<String> = ["device_epoch"]

    /// Rows per INSERT (PostgreSQL takes at most 65,535 parameters a statement).
    static let batchRows = 500

    struct Column {
        let name: String
        let type: String
        let isIdentity: Bool
    }

    /// Copies `source` into the database `connection` is on. `progress` is told rows copied of the total. Throws a
    /// `StorageError` naming the table, column or value that stopped it; nothing is then left in PostgreSQL.
    public static func copy(
        from source: AppDatabase, into connection: PostgresConnection, address: PostgresAddress, schema: Schema, logger: Logger,
        progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws(StorageError) -> [TableCopy] {
        let shown = address.description
        @Sendable func failed(_ reason: String) -> StorageError { .server(address: shown, reason: reason) }
        do {
            let tables = try await columns(connection, logger: logger).filter { !schema.postgresOnlyTables.contains($0.key) }
            // Tables the migrations fill go last: inserting into other tables (devices) fires triggers that write them.
            let parentsFirst = try await parentsFirst(Array(tables.keys), connection: connection, logger: logger)
            let order = parentsFirst.filter { !filledByMigrations.contains($0) } + parentsFirst.filter(filledByMigrations.contains)
            // SQLite's own tables (the AUTOINCREMENT counters, an operator's ANALYZE statistics) are not the schema's.
            let (counts, counters) = try await source.read { db -> ([String: Int], [String: Int64]) in
                let names = try String.fetchAll(
                    db,
                    sql:
                        "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'grdb_migrations' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                )
                var counts: [String: Int] = [:]
                for name in names {
                    let columns = Set(try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [name]))
                    guard let target = tables[name], Set(target.map(\.name)) == columns else {
                        throw failed("the two schemas differ at table \(name); upgrade both with the same dailyverse")
                    }
                    counts[name] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoted(name))") ?? 0
                    // A NUL character in text: PostgreSQL cannot hold one, and read through SQLite's C strings the text
                    // would end there, unnoticed by the checksums (both taken after the read). One scan of the table.
                    let nul = columns.sorted().map { "instr(CAST(\(quoted($0)) AS BLOB), x'00') > 0" }
                    if !nul.isEmpty,
                        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoted(name)) WHERE \(nul.joined(separator: " OR ")))") == true
                    {
                        let column = try columns.sorted().first { column in
                            try Bool.fetchOne(
                                db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoted(name)) WHERE instr(CAST(\(quoted(column)) AS BLOB), x'00') > 0)")
                                == true
                        }
                        throw failed(
                            "table \(name), column \(column ?? "?"): a value holds a NUL character, which PostgreSQL cannot store; nothing was copied"
                        )
                    }
                }
                guard Set(names) == Set(tables.keys) else {
                    throw failed("the two schemas differ (tables only in PostgreSQL: \(Set(tables.keys).subtracting(names).sorted()))")
                }
                // The largest value each AUTOINCREMENT key ever had, removed rows' included: never handed out again.
                var counters: [String: Int64] = [:]
                if try db.tableExists("sqlite_sequence") {
                    for row in try Row.fetchAll(db, sql: "SELECT name, seq FROM sqlite_sequence") { counters[row["name"]] = row["seq"] }
                }
                return (counts, counters)
            }
            for table in order where !filledByMigrations.contains(table) {
                let any = try await PostgresTransaction(connection: connection, logger: logger).value(
                    PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(quoted(table)))"), as: Bool.self)
                if any == true { throw failed("it already holds data (table \(table)); migrate-store copies into an empty database") }
            }
            let total = counts.values.reduce(0, +)
            progress(0, total)
            return try await PostgresTransaction.run(on: connection, logger: logger) { transaction in
                // A whole installation in one transaction: no time limit of the role's ends it part-way.
                try await transaction.liftTimeLimits()
                var copies: [TableCopy] = []
                var done = 0
                for table in filledByMigrations {
                    try await transaction.rows(PostgresQuery(unsafeSQL: "DELETE FROM \(quoted(table))"))
                }
                for table in order {
                    let columns = tables[table] ?? []
                    let before = done
                    let written = try await copyTable(table, columns: columns, from: source, into: connection, logger: logger) { rows in
                        progress(before + rows, total)
                    }
                    done += written.rows
                    // Past the largest value copied and the largest SQLite ever handed out: a device removed before the
                    // copy leaves its number in the queue and the outbox, and a new device must not take it.
                    for column in columns where column.isIdentity {
                        try await transaction.rows(
                            PostgresQuery(
                                unsafeSQL: """
                                    SELECT setval(pg_get_serial_sequence('\(quoted(table))', '\(column.name)'),
                                        greatest(coalesce(max(\(quoted(column.name))), 0), \(counters[table] ?? 0)) + 1, false)
                                    FROM \(quoted(table))
                                    """))
                    }
                    let read = try await checksum(table, columns: columns, connection: connection, logger: logger)
                    guard written.rows == counts[table] ?? 0 else {
                        throw failed("table \(table) had \(counts[table] ?? 0) rows and \(written.rows) were read from it; nothing was copied")
                    }
                    guard read.rows == written.rows, read.sum == written.sum else {
                        throw failed(
                            "table \(table) reads back \(read.rows) rows (checksum \(hex(read.sum))) where \(written.rows) were written (checksum \(hex(written.sum))); nothing was copied"
                        )
                    }
                    copies.append(TableCopy(table: table, rows: written.rows, checksum: hex(written.sum)))
                }
                return copies
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw failed(PostgresStore.reason(error))
        }
    }

    /// Each table's columns in PostgreSQL, in order, with their types.
    static func columns(_ connection: PostgresConnection, logger: Logger) async throws -> [String: [Column]] {
        var tables: [String: [Column]] = [:]
        let rows = try await PostgresTransaction(connection: connection, logger: logger).query(
            """
            SELECT table_name::text, column_name::text, data_type::text, is_identity::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name <> 'dailyverse_migration' ORDER BY table_name, ordinal_position
            """)
        for try await (table, column, type, identity) in rows.decode((String, String, String, String).self) {
            tables[table, default: []].append(Column(name: column, type: type, isIdentity: identity == "YES"))
        }
        return tables
    }

    /// `tables` with every table after the tables its foreign keys refer to (alphabetical among equals).
    static func parentsFirst(_ tables: [String], connection: PostgresConnection, logger: Logger) async throws -> [String] {
        var parents: [String: Set<String>] = [:]
        let rows = try await PostgresTransaction(connection: connection, logger: logger).query(
            """
            SELECT c.relname::text, p.relname::text FROM pg_constraint k
            JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
            WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace
            """)
        for try await (child, parent) in rows.decode((String, String).self) where child != parent { parents[child, default: []].insert(parent) }
        var order: [String] = []
        var placed: Set<String> = []
        while order.count < tables.count {
            guard let next = tables.sorted().first(where: { !placed.contains($0) && parents[$0, default: []].isSubset(of: placed) }) else {
                throw StoreCopyCycle()
            }
            order.append(next)
            placed.insert(next)
        }
        return order
    }

    struct StoreCopyCycle: Error, CustomStringConvertible {
        var description: String { "the tables' foreign keys form a cycle" }
    }

    /// A value as both databases give it, in the PostgreSQL column's kind.
    enum Value {
        case null, integer(Int64), real(Double), text(String)

        /// As GRDB holds it.
        var databaseValue: DatabaseValue {
            switch self {
            case .null: .null
            case .integer(let number): number.databaseValue
            case .real(let number): number.databaseValue
            case .text(let text): text.databaseValue
            }
        }

        /// Into `hasher` with its kind and, for text, its length: ("ab", "c") and ("a", "bc") differ.
        func feed(_ hasher: inout SHA256) {
            switch self {
            case .null: hasher.update(data: [0])
            case .integer(let value): hasher.update(data: [1] + withUnsafeBytes(of: value.littleEndian, Array.init))
            case .real(let value): hasher.update(data: [2] + withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init))
            case .text(let value):
                let bytes = Array(value.utf8)
                hasher.update(data: [3] + withUnsafeBytes(of: UInt64(bytes.count).littleEndian, Array.init))
                hasher.update(data: bytes)
            }
        }
    }

    static func isInteger(_ type: String) -> Bool { type == "integer" || type == "bigint" || type == "smallint" }
    static func isReal(_ type: String) -> Bool { type == "double precision" || type == "real" }

    /// A SQLite value in `column`'s PostgreSQL kind; throws naming it when it has none (a fraction in an integer
    /// column, bytes anywhere).
    static func convert(_ value: DatabaseValue, _ column: Column, table: String) throws -> Value {
        func refuse(_ shown: String) -> StoreCopyValueError {
            StoreCopyValueError(table: table, column: column.name, value: shown, type: column.type)
        }
        switch value.storage {
        case .null: return .null
        case .int64(let number):
            if isInteger(column.type) { return .integer(number) }
            if isReal(column.type) { return .real(Double(number)) }
            return .text(String(number))
        case .double(let number):
            if isReal(column.type) { return .real(number) }
            if isInteger(column.type) {
                guard let exact = Int64(exactly: number) else { throw refuse("\(number)") }
                return .integer(exact)
            }
            return .text("\(number)")
        case .string(let text):
            if isInteger(column.type) {
                guard let number = Int64(text) else { throw refuse("'\(text.prefix(40))'") }
                return .integer(number)
            }
            if isReal(column.type) {
                guard let number = Double(text) else { throw refuse("'\(text.prefix(40))'") }
                return .real(number)
            }
            return .text(text)
        case .blob(let data): throw refuse("\(data.count) bytes")
        }
    }

    /// Copies one table batch by batch, in its key's order (rowid, or the primary key of a table without one), telling
    /// `copied` the rows written so far, and returns them with their checksum.
    static func copyTable(
        _ table: String, columns: [Column], from source: AppDatabase, into connection: PostgresConnection, logger: Logger,
        copied: @Sendable (Int) -> Void
    ) async throws -> (rows: Int, sum: UInt64) {
        let key = try await source.read { db -> [String] in
            let withoutRowid = try Bool.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE name = ?", arguments: [table]) ?? false
            guard withoutRowid else { return ["rowid"] }
            return try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", arguments: [table])
        }
        let names = columns.map { quoted($0.name) }.joined(separator: ", ")
        let keyList = key == ["rowid"] ? "rowid" : key.map(quoted).joined(separator: ", ")
        var cursor: [DatabaseValue]? = nil
        var rows = 0
        var sum: UInt64 = 0
        while true {
            let last = cursor
            let batch = try await source.read { db -> (rows: [[DatabaseValue]], last: [DatabaseValue]?) in
                let after = last.map { _ in "WHERE (\(keyList)) > (\(key.map { _ in "?" }.joined(separator: ", ")))" } ?? ""
                let fetched = try Row.fetchAll(
                    db, sql: "SELECT \(keyList), \(names) FROM \(quoted(table)) \(after) ORDER BY \(keyList) LIMIT \(batchRows)",
                    arguments: StatementArguments(last ?? []))
                let values = fetched.map { row in (key.count..<row.count).map { row[$0] as DatabaseValue } }
                return (values, fetched.last.map { row in (0..<key.count).map { row[$0] as DatabaseValue } })
            }
            guard !batch.rows.isEmpty else { break }
            try await insert(batch.rows, into: table, columns: columns, connection: connection, logger: logger) { values in
                var hasher = SHA256()
                for value in values { value.feed(&hasher) }
                sum &+= rowSum(hasher)
            }
            rows += batch.rows.count
            copied(rows)
            cursor = batch.last
            if batch.rows.count < batchRows { break }
        }
        return (rows, sum)
    }

    /// One INSERT of `rows` (SQLite's values) into `table`'s `columns`, each value converted to its column's kind;
    /// `bound` is told each row's values as they were bound.
    static func insert(
        _ rows: some Collection<[DatabaseValue]>, into table: String, columns: [Column], connection: PostgresConnection,
        logger: Logger, bound: ([Value]) -> Void = { _ in }
    ) async throws {
        let placeholders = columns.enumerated().map { index, column in column.type == "date" ? "$\(index + 1)::date" : "$\(index + 1)" }
        var bindings = PostgresBindings(capacity: rows.count * columns.count)
        var tuples: [String] = []
        for row in rows {
            let values = try zip(columns, row).map { column, stored in try convert(stored, column, table: table) }
            for value in values {
                switch value {
                case .null: bindings.appendNull()
                case .integer(let number): bindings.append(number)
                case .real(let number): bindings.append(number)
                case .text(let text): bindings.append(text)
                }
            }
            bound(values)
            let offset = tuples.count * columns.count
            tuples.append("(" + placeholders.map { shifted($0, by: offset) }.joined(separator: ", ") + ")")
        }
        let names = columns.map { quoted($0.name) }.joined(separator: ", ")
        try await PostgresTransaction(connection: connection, logger: logger).rows(
            PostgresQuery(unsafeSQL: "INSERT INTO \(quoted(table)) (\(names)) VALUES \(tuples.joined(separator: ", "))", binds: bindings))
    }

    /// The select list of `columns` as both sides compare them (a date as its text).
    static func selectList(_ columns: [Column]) -> String {
        columns.map { $0.type == "date" ? "\(quoted($0.name))::text" : quoted($0.name) }.joined(separator: ", ")
    }

    /// A PostgreSQL cell in `column`'s kind.
    static func value(_ cell: PostgresCell, _ column: Column) throws -> Value {
        if isInteger(column.type) { return try cell.decode(Int64?.self).map(Value.integer) ?? .null }
        if isReal(column.type) { return try cell.decode(Double?.self).map(Value.real) ?? .null }
        return try cell.decode(String?.self).map(Value.text) ?? .null
    }

    /// `$3::date` shifted by `offset` places: `$(3 + offset)::date`.
    static func shifted(_ placeholder: String, by offset: Int) -> String {
        let digits = placeholder.dropFirst().prefix(while: \.isNumber)
        return "$\(Int(digits)! + offset)" + placeholder.dropFirst(1 + digits.count)
    }

    /// The rows of `table` as PostgreSQL holds them: their count and checksum, computed as `copyTable` computed them.
    static func checksum(_ table: String, columns: [Column], connection: PostgresConnection, logger: Logger) async throws -> (rows: Int, sum: UInt64)
    {
        let list = selectList(columns)
        var rows = 0
        var sum: UInt64 = 0
        let session = PostgresTransaction(connection: connection, logger: logger)
        for try await row in try await session.query(PostgresQuery(unsafeSQL: "SELECT \(list) FROM \(quoted(table))")) {
            var hasher = SHA256()
            for (column, cell) in zip(columns, row) { try value(cell, column).feed(&hasher) }
            sum &+= rowSum(hasher)
            rows += 1
        }
        return (rows, sum)
    }

    static func rowSum(_ hasher: SHA256) -> UInt64 {
        hasher.finalize().withUnsafeBytes { bytes in bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }
    }

    static func hex(_ sum: UInt64) -> String {
        let digits = String(sum, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A name as both dialects read it (`user` is reserved in PostgreSQL).
    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}

/// A stored value its PostgreSQL column cannot hold.
struct StoreCopyValueError: Error, CustomStringConvertible {
    let table: String
    let column: String
    let value: String
    let type: String

    var description: String { "table \(table), column \(column): \(value) cannot be stored as PostgreSQL \(type); nothing was copied" }
}
