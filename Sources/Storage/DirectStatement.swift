import GRDB
import GRDBSQLite

/// A prepared statement driven through SQLite's C API, for the few statements that run a million times a day (the
/// scheduler's reads and inserts): values are bound and read by position, with none of the boxing that GRDB's
/// general `StatementArguments` and `Row` need. Everything else goes through GRDB.
///
/// Borrowed from GRDB's statement cache: valid only inside the access (`read`/`write`) it was made in.
public struct DirectStatement {
    let handle: OpaquePointer

    /// SQLite copies the bytes of text bound with this destructor before `bind` returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// SQLite reads text bound with this one in place, for as long as it stays bound.
    private static let isStatic = unsafeBitCast(0, to: sqlite3_destructor_type.self)

    public init(_ db: Database, sql: String) throws {
        let statement = try db.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values` to the parameters from 1 on, runs the statement to its end and resets it; returns the number
    /// of rows it changed.
    @discardableResult
    public func execute(_ db: Database, _ values: DirectValue...) throws -> Int {
        try bound(db, values) {
            var code = sqlite3_step(handle)
            while code == SQLITE_ROW { code = sqlite3_step(handle) }
            guard code == SQLITE_DONE else { throw error(db, code) }
            return Int(sqlite3_changes(db.sqliteConnection))
        }
    }

    /// Binds `values`, then calls `row` for each result row; an error thrown by `row` ends the rows early.
    public func forEachRow(_ db: Database, _ values: DirectValue..., row: (DirectRow) throws -> Void) throws {
        try bound(db, values) {
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_DONE { return }
                guard code == SQLITE_ROW else { throw error(db, code) }
                try row(DirectRow(handle: handle))
            }
        }
    }

    /// Runs `body` with `values` bound to the parameters from 1 on, then resets the statement.
    private func bound<T>(_ db: Database, _ values: [DirectValue], _ body: () throws -> T) throws -> T {
        let borrowed = values.contains { if case .borrowedText = $0 { true } else { false } }
        defer {
            sqlite3_reset(handle)
            // No binding may outlive the bytes it points to.
            if borrowed { sqlite3_clear_bindings(handle) }
        }
        for (index, value) in values.enumerated() {
            try bind(db, value, at: Int32(index + 1))
        }
        return try body()
    }

    private func bind(_ db: Database, _ value: DirectValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
        case .real(let number): code = sqlite3_bind_double(handle, index, number)
        case .text(var text):
            code = text.withUTF8 { bytes in
                UnsafeRawBufferPointer(bytes).withMemoryRebound(to: CChar.self) { chars in
                    // An empty string still binds text, not NULL: SQLite wants a non-null pointer for that.
                    guard let start = chars.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, Self.transient) }
                    return sqlite3_bind_text(handle, index, start, Int32(chars.count), Self.transient)
                }
            }
        case .borrowedText(let bytes):
            if let start = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) {
                code = sqlite3_bind_text(handle, index, start, Int32(bytes.count), Self.isStatic)
            } else {
                code = sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
        guard code == SQLITE_OK else { throw error(db, code) }
    }

    private func error(_ db: Database, _ code: Int32) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
            sql: sqlite3_sql(handle).map { String(cString: $0) })
    }
}

/// A value bound to a `DirectStatement`.
public enum DirectValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// UTF-8 text read in place, without a copy: the caller keeps the bytes alive and unchanged until the call that
    /// binds them returns (the binding is cleared before it does).
    case borrowedText(UnsafeRawBufferPointer)

    public static func optional(_ text: String?) -> DirectValue { text.map(DirectValue.text) ?? .null }
    public static func optional(_ number: Int?) -> DirectValue { number.map { .integer(Int64($0)) } ?? .null }
}

/// The current row of a `DirectStatement`, read by column position (from 0); valid only inside `forEachRow`'s call.
public struct DirectRow {
    let handle: OpaquePointer

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func integer(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    public func real(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    public func optionalInteger(_ column: Int32) -> Int? { isNull(column) ? nil : integer(column) }
    public func optionalReal(_ column: Int32) -> Double? { isNull(column) ? nil : real(column) }

    public func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    public func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
}
