import Foundation
import GRDB
import Testing

@testable import Storage

/// What the helpers below need of a database, whether a bare pool or an `AppDatabase` on one.
protocol Writes {
    func write<T>(_ body: (Database) throws -> T) throws -> T
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T
}
extension AppDatabase: Writes {}
extension DatabasePool: Writes {}

@Suite struct WALCheckpointerTests {
    /// SQLite's own threshold, and 64 MiB for the writer: the default limits' rules at sizes a test can write.
    static let small = WALCheckpointer.Limits(requestPages: 1_000, inlinePages: 16_384)
    /// Storage knows no domain: a schema of one table is enough.
    static let schema = Schema([Migration("v1-t", MigrationStep(sql: "CREATE TABLE t (n INTEGER PRIMARY KEY, body BLOB NOT NULL)"))])

    /// A folder of its own, removed when `body` returns.
    func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    /// Commits about `pages` pages of 4 KiB into table `t`.
    func write(pages: Int, into writer: some Writes) throws {
        try writer.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            let insert = try db.makeStatement(sql: "INSERT INTO t (body) VALUES (zeroblob(3900))")
            for _ in 0..<pages { try insert.execute() }
        }
    }

    /// The frames in the log, as a passive checkpoint run now finds them (it copies what is left, so it is asked
    /// last).
    func logFrames(_ writer: some Writes) throws -> Int {
        try writer.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")![1] }
    }

    @Test func aPoolsLogIsCheckpointedOnItsOwnThreadAndRestarts() throws {
        try withFolder { folder in
            let database = try AppDatabase.open(
                path: folder.appendingPathComponent("db.sqlite").path, schema: Self.schema, pool: true, checkpointLimits: Self.small)
            let checkpointer = try #require(database.checkpointer)
            try write(pages: 1_500, into: database)
            database.waitForCheckpoints()
            #expect(checkpointer.completedCount >= 1)
            #expect(database.checkpointCounts.thread == checkpointer.completedCount)
            #expect(database.checkpointCounts.writer == 0)
            // The next transaction starts the log over, since everything in it was copied: it does not keep growing.
            try write(pages: 10, into: database)
            #expect(try logFrames(database) < 100)
            let rows = try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
            #expect(rows == 1_510)
        }
    }

    @Test func aQuietLogIsCheckpointedWhenAsked() throws {
        try withFolder { folder in
            // The default limits: 50 pages are far from a checkpoint of their own.
            let database = try AppDatabase.open(path: folder.appendingPathComponent("db.sqlite").path, schema: Self.schema, pool: true)
            try write(pages: 50, into: database)
            database.waitForCheckpoints()
            #expect(database.checkpointCounts.thread == 0)
            database.requestCheckpoint()
            database.waitForCheckpoints()
            #expect(database.checkpointCounts.thread == 1)
            // Everything was copied: the next transaction starts the log over.
            try write(pages: 10, into: database)
            #expect(try logFrames(database) < 50)
        }
    }

    @Test func smallCommitsLeaveTheLogToLaterCheckpoints() throws {
        try withFolder { folder in
            let path = folder.appendingPathComponent("db.sqlite").path
            let pool = try DatabasePool(path: path)
            let checkpointer = try WALCheckpointer(path: path, pool: pool, limits: Self.small)
            try write(pages: 50, into: pool)
            checkpointer.waitUntilIdle()
            #expect(checkpointer.completedCount == 0)
            #expect(try logFrames(pool) >= 50)
        }
    }

    @Test func theWriterCheckpointsItselfPastTheInlineLimit() throws {
        try withFolder { folder in
            let path = folder.appendingPathComponent("db.sqlite").path
            let pool = try DatabasePool(path: path)
            // The thread is never asked: only the writer's own checkpoint can have copied the log.
            let checkpointer = try WALCheckpointer(path: path, pool: pool, limits: .init(requestPages: .max, inlinePages: 100))
            try write(pages: 300, into: pool)
            checkpointer.waitUntilIdle()
            #expect(checkpointer.completedCount == 0)
            #expect(checkpointer.inlineCount == 1)
            try write(pages: 10, into: pool)
            #expect(try logFrames(pool) < 100)
        }
    }
}
