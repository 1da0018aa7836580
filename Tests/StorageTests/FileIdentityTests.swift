import Foundation
import GRDB
import Testing

@testable import Storage

/// A database file removed or replaced under the process is noticed before anything more is written into it.
@Suite struct FileIdentityTests {
    static let schema = Schema([Migration("v1-t", MigrationStep(sql: "CREATE TABLE t (n INTEGER PRIMARY KEY)"))])

    func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-identity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: [false, true])
    func aRemovedOrReplacedFileStopsEveryWrite(replaced: Bool) throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("db.sqlite").path
        let database = try AppDatabase.open(path: path, schema: Self.schema, pool: true)
        try database.write { db in try db.execute(sql: "INSERT INTO t (n) VALUES (1)") }
        try database.checkFile()
        if replaced {
            // A backup moved into place.
            let backup = folder.appendingPathComponent("backup.sqlite").path
            try FileManager.default.copyItem(atPath: path, toPath: backup)
            #expect(rename(backup, path) == 0)
        } else {
            try FileManager.default.removeItem(atPath: path)
        }
        #expect {
            try database.checkFile()
        } throws: { error in
            guard case .fileChanged(let named, let reason) = error as? StorageError else { return false }
            return named == path && reason.contains(replaced ? "replaced" : "removed")
        }
        #expect(throws: StorageError.self) { try database.write { db in try db.execute(sql: "INSERT INTO t (n) VALUES (2)") } }
        // In memory, there is no file to lose.
        try AppDatabase.inMemory(schema: Self.schema).checkFile()
    }
}
