import GRDB
import GRDBSQLite
import Storage
import Testing

@Suite struct DirectStatementTests {
    func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (n INTEGER PRIMARY KEY, label TEXT, amount REAL, note TEXT NOT NULL UNIQUE)")
        }
        return queue
    }

    @Test func bindsAndReadsEveryKindByPosition() throws {
        let queue = try database()
        let rows: [[String]] = try queue.write { db in
            let insert = try DirectStatement(db, sql: "INSERT INTO t (n, label, amount, note) VALUES (?, ?, ?, ?)")
            #expect(try insert.execute(db, .integer(1), .null, .real(2.5), .text("")) == 1)
            #expect(try insert.execute(db, .integer(2), .optional("سلام ✨" as String?), .real(-1), .text("b")) == 1)
            var rows: [[String]] = []
            try DirectStatement(db, sql: "SELECT n, label, amount, note, typeof(note) FROM t WHERE n >= ? ORDER BY n").forEachRow(db, .integer(1)) {
                row in
                rows.append([
                    String(row.integer(0)), row.optionalText(1) ?? "NULL", String(row.real(2)), "[\(row.text(3))]", row.text(4),
                ])
            }
            return rows
        }
        // An empty string stays text (not NULL); UTF-8 comes back whole.
        #expect(rows == [["1", "NULL", "2.5", "[]", "text"], ["2", "سلام ✨", "-1.0", "[b]", "text"]])
    }

    @Test func aFailedStepThrowsSQLitesErrorAndLeavesTheStatementReusable() throws {
        let queue = try database()
        try queue.write { db in
            let insert = try DirectStatement(db, sql: "INSERT INTO t (note) VALUES (?)")
            try insert.execute(db, .text("same"))
            #expect {
                try insert.execute(db, .text("same"))
            } throws: { error in
                (error as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT && "\(error)".contains("UNIQUE")
            }
            #expect(try insert.execute(db, .text("other")) == 1)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 2)
        }
    }

    /// Borrowed text is stored as its bytes, and the statement keeps no pointer to them once the call returns: stepped
    /// again without a value for that parameter, it stores NULL, not the old (since overwritten) bytes.
    @Test func borrowedTextIsStoredAndNotKeptBound() throws {
        let queue = try database()
        let notes: [String?] = try queue.write { db in
            let sql = "INSERT INTO t (n, label, note) VALUES (?, ?, 'n' || ?)"
            let insert = try DirectStatement(db, sql: sql)
            var buffer = Array("{\"a\":\"سلام\"}xyz".utf8)
            try buffer.withUnsafeBytes { bytes in
                try insert.execute(db, .integer(1), .borrowedText(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 3)])), .integer(1))
                try insert.execute(db, .integer(2), .borrowedText(UnsafeRawBufferPointer(start: nil, count: 0)), .integer(2))
            }
            buffer.replaceSubrange(0..., with: repeatElement(UInt8(ascii: "!"), count: buffer.count))
            // The same prepared statement, stepped with only the other two parameters bound.
            let handle = try db.cachedStatement(sql: sql).sqliteStatement
            sqlite3_bind_int64(handle, 1, 3)
            sqlite3_bind_int64(handle, 3, 3)
            #expect(sqlite3_step(handle) == SQLITE_DONE)
            sqlite3_reset(handle)
            return try String?.fetchAll(db, sql: "SELECT label FROM t ORDER BY n")
        }
        #expect(notes == ["{\"a\":\"سلام\"}", "", nil])
    }
}
