import AppSchema
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import Storage
import Testing

@testable import ContentStore
@testable import Delivery

/// An outbox row as the migrations from v6 on store it: device, date and status given.
private let insert = """
    INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at)
    VALUES (?, ?, 'apns', ?, 0, '{}', '{}', ?, 0)
    """

/// The program SQLite runs for `insert`.
private func insertOpcodes(_ db: Database) throws -> [String] {
    try Row.fetchAll(db, sql: "EXPLAIN " + insert, arguments: [0, "", "2025-03-01", "pending"]).map { $0["opcode"] as String }
}

@Suite struct ScheduleMigrationTests {
    /// A database as the v3 schema left it: the schedule in the device row, outbox keyed by the device's UUID.
    @Test func v4MovesTheScheduleIntoTheQueueAndKeepsTheOutbox() async throws {
        let queue = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(queue, upTo: "v3-accounts")
        try await queue.write { db in
            for (id, enabled, last, next) in [("a-1", true, "2025-03-01", 1_740_906_000.0), ("b-2", false, nil, nil)]
                as [(String, Bool, String?, Double?)]
            {
                try db.execute(
                    sql: """
                        INSERT INTO device (id, platform, token, timezone, reminder_time, locale, calendar, adjustment, display_theme,
                            enabled, created_at, updated_at, last_local_date, next_fire_at)
                        VALUES (?, 'apns', ?, 'UTC', '08:00', 'en', 'umm-al-qura', 0, 'parchment', ?, 0, 0, ?, ?)
                        """, arguments: [id, id, enabled, last, next])
            }
            for (device, date) in [("a-1", "2025-03-01"), ("gone", "2025-02-01")] {
                try db.execute(
                    sql: """
                        INSERT INTO outbox (device_id, platform, local_date, fire_at, headers, payload, status, created_at)
                        VALUES (?, 'apns', ?, 0, '{}', '{}', 'delivered', 0)
                        """, arguments: [device, date])
            }
        }
        try Schema.dailyVerse.migrator.migrate(queue)
        try await queue.read { db in
            let seq = try #require(try Int64.fetchOne(db, sql: "SELECT seq FROM device WHERE id = 'a-1'"))
            // Only the enabled device is queued, at its old instant, remembering the date it last fired.
            let entries = try Row.fetchAll(db, sql: "SELECT * FROM schedule")
            #expect(entries.count == 1)
            #expect(entries.first?["device_seq"] == seq)
            #expect(entries.first?["next_fire_at"] == 1_740_906_000.0)
            #expect(entries.first?["last_local_day"] == (try CivilDate(parsing: "2025-03-01").dayNumber))
            // Outbox rows keep their ids and text keys; a removed device's row gets a key no device can have.
            let rows = try Row.fetchAll(db, sql: "SELECT device_id, device_seq FROM outbox ORDER BY id")
            #expect(rows.map { $0["device_id"] as String } == ["a-1", "gone"])
            #expect(rows[0]["device_seq"] == seq)
            #expect((rows[1]["device_seq"] as Int64) < 0)
        }
        // The emitter and the device store work on the migrated data.
        let database = try AppDatabase(queue)
        let state = try #require(try database.deviceState(id: "a-1", now: Date(timeIntervalSince1970: 1_740_906_000)))
        #expect(state.lastLocalDate?.description == "2025-03-01")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO display_theme VALUES ('parchment', 'Parchment', '#fff', '#fff', '#000', '#000')")
            // Sequence numbers are never reused: a device added after one is removed gets a new one.
            try db.execute(sql: "DELETE FROM device WHERE id = 'b-2'")
        }
        let added = try database.addDevice(
            DeviceSettings(token: try .apns(validating: String(repeating: "ab", count: 32)), timeZone: "UTC"), now: Date(timeIntervalSince1970: 0))
        let seqs = try await queue.read { db in try Int64.fetchAll(db, sql: "SELECT seq FROM device ORDER BY seq") }
        #expect(try await queue.read { db in try Int64.fetchOne(db, sql: "SELECT seq FROM device WHERE id = ?", arguments: [added.id]) } == 3)
        #expect(seqs.count == 2)
    }

    /// v6 rebuilds the outbox around a smaller unique key: rows kept as they were, the key as strict as before.
    @Test func v6KeepsOutboxRowsAndStillRefusesASecondRowForADeviceAndDate() async throws {
        let queue = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(queue, upTo: "v5-hints")
        try await queue.write { db in
            for (seq, date, status) in [(1, "2025-03-01", "delivered"), (1, "2025-03-02", "pending"), (2, "2025-03-01", "missed")] {
                try db.execute(sql: insert, arguments: [seq, "d-\(seq)", date, status])
            }
        }
        try Schema.dailyVerse.migrator.migrate(queue)
        try await queue.write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, device_seq, local_date, status FROM outbox ORDER BY id")
            #expect(
                rows.map { "\($0["id"] as Int) \($0["device_seq"] as Int) \($0["local_date"] as String) \($0["status"] as String)" }
                    == ["1 1 2025-03-01 delivered", "2 1 2025-03-02 pending", "3 2 2025-03-01 missed"])
            #expect(throws: DatabaseError.self) { try db.execute(sql: insert, arguments: [1, "d-1", "2025-03-02", "pending"]) }
            // The emitter's form: a second row for the same device and date is silently not written.
            try db.execute(sql: insert + " ON CONFLICT DO NOTHING", arguments: [2, "d-2", "2025-03-01", "pending"])
            #expect(db.changesCount == 0)
            // Another date, or another device, is a new row; a date that is not one is refused.
            try db.execute(sql: insert, arguments: [2, "d-2", "2025-03-02", "pending"])
            try db.execute(sql: insert, arguments: [3, "d-3", "2025-03-01", "pending"])
            #expect(throws: DatabaseError.self) { try db.execute(sql: insert, arguments: [4, "d-4", "someday", "pending"]) }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") == 5)
        }
    }
}

@Suite struct OutboxStatusCheckMigrationTests {
    /// v7 rewrites the status rule in place: the rows stay, the rule is as strict, and an insert no longer builds a
    /// temporary table for it.
    @Test func v7KeepsRowsAndTheRuleAndDropsTheTemporaryTable() async throws {
        let queue = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(queue, upTo: "v6-outbox-key")
        try await queue.write { db in
            for (seq, status) in [(1, "delivered"), (2, "pending"), (3, "missed"), (4, "failed")] {
                try db.execute(sql: insert, arguments: [seq, "d-\(seq)", "2025-03-01", status])
            }
        }
        try Schema.dailyVerse.migrator.migrate(queue)
        try await queue.write { db in
            #expect(!(try insertOpcodes(db).contains("OpenEphemeral")))
            #expect(try String.fetchAll(db, sql: "SELECT status FROM outbox ORDER BY id") == ["delivered", "pending", "missed", "failed"])
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
            // Still only the four statuses, on insert and on update; the other constraints are untouched.
            #expect(throws: DatabaseError.self) { try db.execute(sql: insert, arguments: [5, "d-5", "2025-03-01", "sent"]) }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE outbox SET status = 'Pending' WHERE id = 1") }
            #expect(throws: DatabaseError.self) { try db.execute(sql: insert, arguments: [5, "d-5", "someday", "pending"]) }
            #expect(throws: DatabaseError.self) { try db.execute(sql: insert, arguments: [1, "d-1", "2025-03-01", "pending"]) }
            try db.execute(sql: "UPDATE outbox SET status = 'delivered' WHERE id = 2")
            try db.execute(sql: insert, arguments: [5, "d-5", "2025-03-01", "pending"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE status = 'delivered'") == 2)
        }
        // A new database gets the same definition as a migrated one.
        let fresh = try AppDatabase.inMemory()
        let definition = { (db: Database) in try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'outbox'") }
        let migrated = try queue.read(definition)
        #expect(migrated == (try fresh.read(definition)))
        #expect(migrated?.contains("CHECK (status = 'pending' OR status = 'delivered' OR status = 'failed' OR status = 'missed')") == true)
    }

    /// A database whose outbox is not as v6 left it is refused, and left as it was.
    @Test func v7RefusesAnOutboxItDoesNotKnow() async throws {
        let queue = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(queue, upTo: "v6-outbox-key")
        let before = try await queue.write { db in
            try db.execute(sql: "DROP INDEX outbox_pending; DROP INDEX outbox_once; ALTER TABLE outbox RENAME TO outbox_old")
            try db.execute(sql: "CREATE TABLE outbox (id INTEGER PRIMARY KEY, status TEXT NOT NULL CHECK (status <> ''))")
            return try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'outbox'")
        }
        #expect(throws: DatabaseError.self) { try Schema.dailyVerse.migrator.migrate(queue) }
        let (after, applied) = try await queue.read { db in
            (
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'outbox'"),
                try Schema.dailyVerse.migrator.appliedIdentifiers(db)
            )
        }
        #expect(after == before)
        #expect(!applied.contains("v7-outbox-status-check"))
    }
}

@Suite struct OutboxByDayMigrationTests {
    /// v8 puts the day first in the outbox's unique key: the rows stay, the key is as strict as before.
    @Test func v8KeepsRowsAndKeysTheOutboxByDayThenDevice() async throws {
        let queue = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(queue, upTo: "v7-outbox-status-check")
        try await queue.write { db in
            for (seq, date) in [(1, "2025-03-01"), (2, "2025-03-01"), (1, "2025-03-02")] {
                try db.execute(sql: insert, arguments: [seq, "d-\(seq)", date, "delivered"])
            }
        }
        try Schema.dailyVerse.migrator.migrate(queue)
        try await queue.write { db in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") == 3)
            let index = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'outbox_once'")
            #expect(index?.contains("(\(AppDatabase.outboxDay), device_seq)") == true)
            #expect(throws: DatabaseError.self) { try db.execute(sql: insert, arguments: [2, "d-2", "2025-03-01", "pending"]) }
            try db.execute(sql: insert, arguments: [2, "d-2", "2025-03-02", "pending"])
            // The day number of the key is the one Swift computes for the day lists.
            let day = try Int.fetchOne(db, sql: "SELECT \(AppDatabase.outboxDay) FROM outbox WHERE local_date = '2025-03-02' LIMIT 1")
            #expect(day == AppDatabase.outboxDay(dayNumber: try CivilDate(parsing: "2025-03-02").dayNumber))
        }
    }

    /// A device's last fire is found day by day through the key, not by reading the whole outbox.
    @Test func aDevicesLastFireIsLookedUpThroughTheKey() async throws {
        let database = try AppDatabase.inMemory()
        let plan = try await database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT \(AppDatabase.stateColumns(Date())) WHERE d.id = ?", arguments: [0, "x"])
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("USING INDEX outbox_once") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN o") }, "\(plan)")
    }

    @Test func theLastFireIsFoundWeeksLaterAndARemovalTakesOnlyRowsNotDelivered() async throws {
        let database = try seededDatabase()
        let created = instant("2025-02-01T00:00:00Z")
        let quiet = try database.addDevice(DeviceSettings(token: try apnsToken(40), timeZone: "UTC"), now: created)
        let removed = try database.addDevice(DeviceSettings(token: try apnsToken(41), timeZone: "UTC"), now: created)
        let other = try database.addDevice(DeviceSettings(token: try apnsToken(42), timeZone: "UTC"), now: created)
        let emitter = Emitter(database: database, configuration: configuration)
        _ = try emitter.run(now: instant("2025-02-10T09:00:00Z"))
        _ = try database.updateDevice(id: quiet.id, DeviceSettings(enabled: false), now: instant("2025-02-10T10:00:00Z"))
        _ = try await Deliverer(database: database, sink: RecordingSink()).run(now: instant("2025-02-10T09:00:00Z"))
        _ = try emitter.run(now: instant("2025-03-01T09:00:00Z"))
        // Disabled for three weeks: its last fire is still known.
        #expect(try database.deviceState(id: quiet.id, now: instant("2025-03-01T09:00:00Z"))?.lastLocalDate?.description == "2025-02-10")
        #expect(try database.removeDevice(id: removed.id))
        let left = try database.outbox().filter { $0.deviceID == removed.id }.map { "\($0.localDate) \($0.status)" }
        #expect(left.contains("2025-02-10 delivered"))
        #expect(!left.contains { $0.hasSuffix("pending") })
        #expect(try database.outbox(status: .pending).map(\.deviceID) == [other.id])
    }
}
