import AppSchema
import ContentStore
import Foundation
import Storage

/// The repository's data/ folder.
let dataDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("data")

/// Read once per test process: parsing data/ is the slow part of seeding.
let bundledContent: BundledContent = try! BundledContent(directory: dataDirectory)

/// A fresh in-memory database seeded with the bundled content.
func seededDatabase() throws -> AppDatabase {
    let database = try AppDatabase.inMemory()
    try database.seed(bundledContent)
    return database
}
