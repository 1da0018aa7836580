import Accounts
import AppSchema
import ContentStore
import DailyVerseTestSupport
import Delivery
import Foundation
import GRDB
import Storage
import Testing

/// A database written by an earlier release opens with this build with nothing lost.
///
/// `Fixtures/schema-v10.sqlite.gz` was written by `scripts/make-upgrade-fixture.sh` with the build of 2026-11-24 (migrations
/// v1 to v10): content seeded, a commentary import, a published month start, a guest and an account, settings,
/// bookmarks, devices, onboarding progress, hints, app events and three delivered outbox rows. Its Quran text was cut to
/// one sura to keep it small (the bundled text is seeded again from data/ whatever the file holds).
@Suite struct UpgradeTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The fixture, unpacked into a folder of its own (removed by the caller).
    static func unpack(_ name: String) throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-upgrade-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("dailyverse.sqlite").path
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-dc", fixtures.appendingPathComponent(name).path]
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        gzip.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try gzip.run()
        gzip.waitUntilExit()
        try #require(gzip.terminationStatus == 0)
        return (folder, path)
    }

    /// Every table, index and trigger, as SQLite keeps their definitions.
    static func schema(_ db: Database) throws -> Set<String> {
        Set(
            try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
                .map { "\($0["type"] as String) \($0["name"] as String) on \($0["tbl_name"] as String): \($0["sql"] as String? ?? "")" })
    }

    @Test func theV10DatabaseOpensWithEverythingKept() throws {
        let (folder, path) = try Self.unpack("schema-v10.sqlite.gz")
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try DatabaseQueue(path: path).read(Self.schema)

        let database = try AppDatabase.open(path: path)
        _ = try database.seedIfNeeded(from: dataDirectory)
        let now = Date(timeIntervalSince1970: 1_740_900_000)  // 2025-03-02T07:20:00Z

        // The schema the old release left is the one a fresh database gets from the migrations up to v10: none of
        // those was edited. Upgraded, it is the one a fresh database gets from them all: none is missing.
        let freshAtV10 = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(freshAtV10, upTo: "v10-occasions-and-nights")
        #expect(try freshAtV10.read(Self.schema) == before)
        let fresh = try AppDatabase.inMemory()
        #expect(try database.read(Self.schema) == fresh.read(Self.schema))

        // Accounts: the account signs in with its password; its settings and bookmarks; the guest is still a guest.
        let account = try #require(try database.passwordHash(email: "reader@example.org"))
        #expect(PasswordHasher.verify("correct horse battery", against: account.hash))
        #expect(!PasswordHasher.verify("wrong horse battery", against: account.hash))
        let settings = try database.settings(userID: account.userID)
        #expect(settings.reminderTime.description == "05:45")
        #expect(settings.timezone == "Asia/Tehran")
        #expect(settings.adjustment.days == 1)
        #expect(try database.bookmarks(userID: account.userID).map(\.verseKey) == ["2:255"])
        let guest = try #require(try database.read { db in try String.fetchOne(db, sql: "SELECT id FROM user WHERE mode = 'guest'") })
        #expect(try database.bookmarks(userID: guest).map(\.verseKey) == ["94:5-6"])

        // Devices keep their owners, settings and schedules; the outbox keeps its delivered rows.
        let accountDevices = try database.devices(userID: account.userID, now: now)
        #expect(accountDevices.map(\.device.timeZone) == ["Asia/Tehran"])
        #expect(try database.devices(userID: guest, now: now).map { "\($0.device.platform)" } == ["fcm"])
        let summary = try database.deviceSummary(now: now)
        #expect(summary.total == 3)
        #expect(summary.enabled == 2)
        #expect(summary.next.count == 2)
        let outbox = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT local_date, status FROM outbox ORDER BY local_date, id").map { "\($0[0] as String) \($0[1] as String)" }
        }
        #expect(outbox == ["2025-03-01 delivered", "2025-03-01 delivered", "2025-03-02 delivered"])

        // Onboarding progress, hints, app events and the session's tutorial mode.
        try database.read { db in
            let state = try #require(try String.fetchOne(db, sql: "SELECT state FROM onboarding WHERE user_id = ?", arguments: [account.userID]))
            #expect(state.contains("\"currentScreen\":\"layers\""))
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM analytics_event") == 6)
            #expect(
                try Row.fetchOne(db, sql: "SELECT hint_id, shown_at IS NOT NULL, dismissed_at IS NOT NULL FROM hint_state")?.description
                    == #"[hint_id:"layers_swipe" shown_at IS NOT NULL:1 dismissed_at IS NOT NULL:1]"#)
            #expect(try Int.fetchOne(db, sql: "SELECT count FROM app_event_count WHERE name = 'verse_opened'") == 2)
            #expect(try Int.fetchOne(db, sql: "SELECT sum(tutorial) FROM session WHERE user_id = ?", arguments: [account.userID]) == 1)
        }

        // Content: the imported note survives the seeding; the published month start is kept.
        #expect(
            try database.verse(.init(surah: 1, start: 1, end: 1), translation: "en.pickthall").layers.contains {
                $0.entry?.body.contains("team note") == true
            })
        #expect(try database.publishedMonthStarts().map { "\($0.year)-\($0.month) \($0.firstDay)" } == ["1446-10 2025-03-31"])
    }
}
