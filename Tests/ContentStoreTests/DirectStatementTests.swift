import ContentStore
import GRDB
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
            try DirectStatement(db, sql: "SELECT n, label, amount, note, typeof(note) FROM t WHERE n >= ? ORDER BY n").forEachRow(db, .integer(1)) { row in
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
}
