import AppSchema
import ContentStore
import Foundation
import Storage

/// The repository's root, found from this file's path.
public let repositoryDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The repository's data/ folder.
public let dataDirectory = repositoryDirectory.appendingPathComponent("data")

/// Read once per test process: parsing data/ is the slow part of seeding.
public let bundledContent: BundledContent = try! BundledContent(directory: dataDirectory)

/// Seeded once per test process; each test gets a copy of it.
private let seededTemplate: AppDatabase = {
    let database = try! AppDatabase.inMemory()
    try! database.seed(bundledContent)
    return database
}()

/// A fresh in-memory database with the whole schema, seeded with the bundled content (a copy of one seeded once per
/// test process: seeding the bundled editions each time is the slow part).
public func seededDatabase() throws -> AppDatabase {
    try seededTemplate.inMemoryCopy(schema: .dailyVerse)
}

/// An instant written in ISO 8601 ("2025-03-01T08:00:00Z"): tests pin their clocks to such instants.
public func instant(_ text: String) -> Date {
    guard let date = ISO8601DateFormatter().date(from: text) else { preconditionFailure("not an ISO 8601 instant: \(text)") }
    return date
}

/// The instant most API tests run at: 2025-03-01T08:00:00Z (29 Sha'ban 1446 in Umm al-Qura).
public let fixedNow = instant("2025-03-01T08:00:00Z")
