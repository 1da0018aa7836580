import AppSchema
import DailyVerseTestSupport
import Foundation
import GRDB
import PostgresNIO
import Storage
import Testing

/// `migrate-store`'s copy on a real server: a seeded installation with users, devices, a queue and an outbox arrives
/// whole (counts and checksums read back), identity columns continue after the copied rows, and a copy that cannot
/// finish leaves PostgreSQL as it was.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct StoreCopyTests {
    let logger = PostgresTesting.logger

    /// A seeded database with a user of each mode, two devices (one of the account), their queue entries, outbox rows
    /// in each status, events and a bookmark.
    func installation() throws -> AppDatabase {
        let database = try seededDatabase()
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO "user" (id, mode, email, password_hash, created_at, last_active_at, email_key)
                        VALUES ('acc', 'account', 'zahra@example.org', 'scrypt$…', 1.5, 2.25, 'zahra@example.org'),
                               ('guest', 'guest', NULL, NULL, 3, 4, NULL);
                    INSERT INTO session (token_hash, user_id, created_at, last_used_at) VALUES ('h1', 'acc', 1, 2);
                    INSERT INTO bookmark (user_id, verse_key, created_at) VALUES ('acc', '2:255', 5);
                    INSERT INTO device (id, platform, token, timezone, reminder_time, locale, calendar, adjustment, display_theme, enabled,
                        created_at, updated_at, user_id)
                        VALUES ('d1', 'apns', 'aa11', 'Asia/Tehran', '07:30', 'ar', 'predicted', -1, 'night', 1, 10.125, 11, 'acc'),
                               ('d2', 'webpush', 'https://push.example/x', 'Europe/London', '21:00', 'en', 'umm-al-qura', 0, 'light', 0, 12, 12, NULL);
                    INSERT INTO schedule (next_fire_at, device_seq, version, last_local_day) VALUES (1764217800.5, 1, 1, 20419);
                    INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, attempts, created_at)
                        VALUES (1, 'd1', 'apns', '2026-11-26', 1764131400, '{"apns-collapse-id":"x"}', '{"aps":{}}', 'delivered', 1, 1),
                               (1, 'd1', 'apns', '2026-11-27', 1764217800, '{}', '{"aps":{"alert":"بسم الله"}}', 'pending', 0, 2),
                               (2, 'd2', 'webpush', '2026-11-27', 1764277200, '{}', '{}', 'missed', 0, 3);
                    INSERT INTO analytics_event (user_id, name, properties, at) VALUES ('guest', 'onboarding_started', '{}', 7);
                    """)
        }
        return database
    }

    func counts(_ database: AppDatabase) throws -> [String: Int] {
        try database.read { db in
            var counts: [String: Int] = [:]
            for name in try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('grdb_migrations', 'sqlite_sequence')")
            {
                counts[name] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \"\(name)\"")
            }
            return counts
        }
    }

    func copy(_ source: AppDatabase, into address: PostgresAddress) async throws -> [TableCopy] {
        let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
        await store.close()
        let connection = try await PostgresStore.connect(address, password: PostgresTesting.password, logger: logger)
        do {
            let copies = try await StoreCopy.copy(from: source, into: connection, address: address, schema: .dailyVerse, logger: logger)
            try await connection.close()
            return copies
        } catch {
            try? await connection.close()
            throw error
        }
    }

    @Test func anInstallationArrivesWholeAndItsIdentitiesContinue() async throws {
        let source = try installation()
        let expected = try counts(source)
        try await PostgresTesting.withDatabase { address in
            let copies = try await copy(source, into: address)
            #expect(Dictionary(uniqueKeysWithValues: copies.map { ($0.table, $0.rows) }) == expected)
            #expect(expected["ayah_text", default: 0] > 12_000 && expected["outbox"] == 3)
            // Parents before children.
            let order = copies.map(\.table)
            #expect(
                order.firstIndex(of: "user")! < order.firstIndex(of: "device")!
                    && order.firstIndex(of: "layer")! < order.firstIndex(of: "commentary")!)
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
            let rows = try await store.rows(
                """
                SELECT d.id, d.timezone, d.adjustment, d.created_at, o.local_date::text, o.payload
                FROM device d JOIN outbox o ON o.device_seq = d.seq WHERE o.status = 'pending'
                """)
            let row = try #require(rows.first).decode((String, String, Int, Double, String, String).self)
            #expect(row.0 == "d1" && row.1 == "Asia/Tehran" && row.2 == -1 && row.3 == 10.125 && row.4 == "2026-11-27")
            #expect(row.5 == #"{"aps":{"alert":"بسم الله"}}"#)
            // A device added after the copy takes the next number, not one already copied.
            let seq = try await store.rows(
                """
                INSERT INTO device (id, platform, token, timezone, reminder_time, locale, calendar, adjustment, display_theme, enabled,
                    created_at, updated_at) VALUES ('d3', 'fcm', 'f3', 'UTC', '08:00', 'en', 'tabular', 0, 'light', 1, 0, 0) RETURNING seq
                """
            ).first?.decode(Int.self)
            #expect(seq == 3)
            // The epoch is the source's, not the migration's nor the copy's inserts', and stays (pg5) after a device is added.
            let epoch = try await store.rows("SELECT value FROM device_epoch").first?.decode(Int.self)
            let sourceEpoch = try await source.read { db in try Int.fetchOne(db, sql: "SELECT value FROM device_epoch") }
            #expect(epoch == (sourceEpoch ?? -1))
            await store.close()
        }
    }

    /// A device removed before the copy leaves its number behind (in SQLite's AUTOINCREMENT counter, and in queue
    /// entries and outbox rows it may leave): a device registered on PostgreSQL after the copy never takes it.
    @Test func aRemovedDevicesNumberIsNotHandedOutAgain() async throws {
        let source = try installation()
        try await source.write { db in
            try db.execute(
                sql: """
                    INSERT INTO device (id, platform, token, timezone, reminder_time, locale, calendar, adjustment, display_theme, enabled,
                        created_at, updated_at) VALUES ('gone', 'fcm', 'f-gone', 'UTC', '08:00', 'en', 'tabular', 0, 'light', 1, 0, 0);
                    DELETE FROM device WHERE id = 'gone';
                    """)
        }
        try await PostgresTesting.withDatabase { address in
            _ = try await copy(source, into: address)
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
            let seq = try await store.rows(
                """
                INSERT INTO device (id, platform, token, timezone, reminder_time, locale, calendar, adjustment, display_theme, enabled,
                    created_at, updated_at) VALUES ('new', 'fcm', 'f-new', 'UTC', '08:00', 'en', 'tabular', 0, 'light', 1, 0, 0) RETURNING seq
                """
            ).first?.decode(Int.self)
            #expect(seq == 4)
            await store.close()
        }
    }

    /// A NUL character in text (which SQLite keeps and PostgreSQL cannot) stops the copy naming its table and column;
    /// read through SQLite's C strings it was cut there, and both checksums agreed on the cut text.
    @Test func aNulCharacterInTextStopsTheCopyNamingWhere() async throws {
        let source = try installation()
        try await source.write { db in
            try db.execute(sql: "UPDATE bookmark SET verse_key = '2:255' || char(0) || 'hidden' WHERE user_id = 'acc'")
        }
        try await PostgresTesting.withDatabase { address in
            let error = await #expect(throws: StorageError.self) { try await copy(source, into: address) }
            #expect(
                error.map { "\($0)" }?.contains("table bookmark, column verse_key: a value holds a NUL character") == true,
                "\(String(describing: error))")
        }
    }

    /// The copy's source is a snapshot: the file is only read, and a file that is no DailyVerse database (an empty one:
    /// a mistyped path) is refused, not given a schema and copied as an empty installation.
    @Test func theSourceIsOnlyRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-snapshot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.sqlite").path
        FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(throws: StorageError.self) { try AppDatabase.snapshot(of: empty, into: empty + ".copy", schema: .dailyVerse) }
        #expect((try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int) == 0)
        let real = folder.appendingPathComponent("real.sqlite").path
        _ = try AppDatabase.open(path: real, schema: .dailyVerse)
        let before = try Data(contentsOf: URL(fileURLWithPath: real))
        let snapshot = try AppDatabase.snapshot(of: real, into: real + ".copy", schema: .dailyVerse)
        #expect(try snapshot.read { db in try db.tableExists("device") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: real)) == before)
    }

    /// A database that already holds data is not written to; a value PostgreSQL cannot hold stops the copy naming it,
    /// and nothing of it stays.
    @Test func aCopyThatCannotFinishLeavesNothing() async throws {
        let source = try installation()
        try await PostgresTesting.withDatabase { address in
            _ = try await copy(source, into: address)
            let again = await #expect(throws: StorageError.self) { try await copy(source, into: address) }
            #expect(again.map { "\($0)" }?.contains("already holds data") == true, "\(String(describing: again))")
        }
        // SQLite keeps what its column's affinity cannot convert: text in an integer column.
        try await source.write { db in try db.execute(sql: "UPDATE outbox SET attempts = 'many' WHERE status = 'missed'") }
        try await PostgresTesting.withDatabase { address in
            let error = await #expect(throws: StorageError.self) { try await copy(source, into: address) }
            let line = error.map { "\($0)" } ?? ""
            #expect(line.contains("table outbox, column attempts: 'many' cannot be stored as PostgreSQL integer"), "\(line)")
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
            let left = try await store.rows("SELECT (SELECT count(*) FROM surah) + (SELECT count(*) FROM device)").first?.decode(Int.self)
            #expect(left == 0)
            await store.close()
        }
    }
}
