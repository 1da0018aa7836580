import AppSchema
import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage
import Testing

@testable import Delivery

@Suite struct EmissionTests {
    @Test func onePayloadPerDeviceAndDateHoweverOftenItRuns() async throws {
        let database = try seededDatabase()
        let created = instant("2025-02-01T00:00:00Z")
        for (n, zone) in [
            "Asia/Baghdad", "Asia/Tokyo", "America/Los_Angeles", "Europe/London", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Australia/Lord_Howe",
        ].enumerated() {
            _ = try database.addDevice(DeviceSettings(token: try apnsToken(n), timeZone: zone), now: created)
        }
        let emitter = Emitter(database: database, configuration: configuration)
        // Walk two days in 10-minute steps: every device gets exactly one pending row per local date.
        var now = instant("2025-03-01T00:00:00Z")
        while now < instant("2025-03-03T00:00:00Z") {
            _ = try emitter.run(now: now)
            now = now.addingTimeInterval(600)
        }
        let rows = try database.outbox()
        let keys = rows.map(\.idempotencyKey)
        #expect(Set(keys).count == keys.count)
        let perDevice = Dictionary(grouping: rows.filter { $0.status == .pending }, by: \.deviceID)
        #expect(perDevice.count == 7)
        for (_, deviceRows) in perDevice {
            let dates = deviceRows.map(\.localDate).sorted()
            #expect(Set(dates).count == dates.count)
            #expect(dates.count >= 2)
        }
        // Running the same instant again adds nothing.
        let before = try database.outbox().count
        #expect(try emitter.run(now: now).queued == 0)
        #expect(try database.outbox().count == before)
    }

    @Test func theOutboxRefusesASecondRowEvenIfTheDeviceStateIsLost() async throws {
        let database = try seededDatabase()
        let device = try database.addDevice(DeviceSettings(token: try apnsToken(1), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        let emitter = Emitter(database: database, configuration: configuration)
        #expect(try emitter.run(now: instant("2025-03-01T08:05:00Z")).queued == 1)
        try await database.write { db in
            try db.execute(
                sql: "UPDATE schedule SET last_local_day = NULL, next_fire_at = 0 WHERE device_seq = (SELECT seq FROM device WHERE id = ?)",
                arguments: [device.id])
        }
        #expect(try emitter.run(now: instant("2025-03-01T08:06:00Z")).queued == 0)
        #expect(try database.outbox(date: try CivilDate(parsing: "2025-03-01")).count == 1)
    }

    @Test func changingZoneOrTimeDoesNotRepeatADate() async throws {
        let database = try seededDatabase()
        let device = try database.addDevice(DeviceSettings(token: try apnsToken(2), timeZone: "Asia/Tokyo"), now: instant("2025-02-01T00:00:00Z"))
        let emitter = Emitter(database: database, configuration: configuration)
        #expect(try emitter.run(now: instant("2025-02-28T23:05:00Z")).queued == 1)  // 08:05 on 1 March in Tokyo
        _ = try database.updateDevice(
            id: device.id, DeviceSettings(timeZone: "America/Los_Angeles", reminderTime: try ReminderTime(parsing: "09:00")),
            now: instant("2025-02-28T23:10:00Z"))
        // 09:00 on 1 March in Los Angeles: that local date has had its verse.
        #expect(try emitter.run(now: instant("2025-03-01T17:30:00Z")).queued == 0)
        #expect(try emitter.run(now: instant("2025-03-02T17:30:00Z")).queued == 1)
        let dates = try database.outbox(status: .pending).map { "\($0.localDate) \($0.status.rawValue)" }
        #expect(dates == ["2025-03-01 pending", "2025-03-02 pending"])
    }

    @Test func entriesLeftBehindByAChangeAreDroppedNotFired() async throws {
        let database = try seededDatabase()
        let created = instant("2025-02-01T00:00:00Z")
        let kept = try database.addDevice(DeviceSettings(token: try apnsToken(20), timeZone: "UTC"), now: created)
        let disabled = try database.addDevice(DeviceSettings(token: try apnsToken(21), timeZone: "UTC"), now: created)
        let removed = try database.addDevice(DeviceSettings(token: try apnsToken(22), timeZone: "UTC"), now: created)
        // Three changes to the same device: only its newest entry is live.
        for time in ["06:00", "07:00", "08:00"] {
            _ = try database.updateDevice(id: kept.id, DeviceSettings(reminderTime: try ReminderTime(parsing: time)), now: created)
        }
        _ = try database.updateDevice(id: disabled.id, DeviceSettings(enabled: false), now: created)
        #expect(try database.removeDevice(id: removed.id))
        let queued = try await database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM schedule") }
        #expect(queued == 5)  // `kept` at 06:00, 07:00 and 08:00 (its first entry, replaced), `disabled` and `removed` at 08:00
        let summary = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T08:30:00Z"))
        #expect(summary.queued == 1)
        #expect(Set(try database.outbox().map(\.deviceID)) == [kept.id])
        #expect(try database.outbox(status: .pending).map(\.localDate) == ["2025-03-01"])
        // What is left is the live entry for tomorrow.
        let left = try database.read { db in try Row.fetchAll(db, sql: "SELECT * FROM schedule") }
        #expect(left.count == 1)
        #expect(left.first?["next_fire_at"] == instant("2025-03-02T08:00:00Z").timeIntervalSince1970)
        // Enabled again, the device is queued again.
        _ = try database.updateDevice(id: disabled.id, DeviceSettings(enabled: true), now: instant("2025-03-01T09:00:00Z"))
        #expect(try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-02T08:01:00Z")).queued == 2)
    }

    @Test func aZoneTheSystemNoLongerKnowsDoesNotStopThePass() async throws {
        let database = try seededDatabase()
        let created = instant("2025-02-01T00:00:00Z")
        let lost = try database.addDevice(DeviceSettings(token: try apnsToken(30), timeZone: "UTC"), now: created)
        _ = try database.addDevice(DeviceSettings(token: try apnsToken(31), timeZone: "UTC"), now: created)
        // As if a time zone data update had dropped the device's zone.
        try await database.write { db in try db.execute(sql: "UPDATE device SET timezone = 'Mars/Olympus' WHERE id = ?", arguments: [lost.id]) }
        let emitter = Emitter(database: database, configuration: configuration)
        #expect(try emitter.run(now: instant("2025-03-01T08:05:00Z")).queued == 1)
        // It stays queued, to be tried again a day later.
        let retry = try await database.read { db in
            try Double.fetchOne(db, sql: "SELECT next_fire_at FROM schedule JOIN device ON seq = device_seq WHERE id = ?", arguments: [lost.id])
        }
        #expect(retry == instant("2025-03-02T08:05:00Z").timeIntervalSince1970)
    }

    @Test func lateFiresAreSentWithinGraceAndMissedAfter() async throws {
        let database = try seededDatabase()
        _ = try database.addDevice(DeviceSettings(token: try apnsToken(3), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        _ = try database.addDevice(
            DeviceSettings(token: try apnsToken(4), timeZone: "UTC", reminderTime: try ReminderTime(parsing: "05:00")),
            now: instant("2025-02-01T00:00:00Z"))
        // Down since before both fires; back at 09:30: the 08:00 fire is 1.5 h late (sent), the 05:00 one 4.5 h (missed).
        let summary = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T09:30:00Z"))
        #expect(summary.queued == 1)
        #expect(try database.outbox(status: .missed).map(\.localDate).contains("2025-03-01"))
    }

    /// 14 June 2025 is Eid al-Ghadir (18 Dhu al-Hijjah 1446) by Umm al-Qura and the 17th by the predicted calendar (the
    /// default, Iran), which keeps it on the 15th: each device is sent its own calendar's day.
    @Test func payloadsCarryTheDaysVerseForTheDevicesCalendar() async throws {
        let database = try seededDatabase()
        let saudi = try database.addDevice(
            DeviceSettings(token: try apnsToken(5), timeZone: "Asia/Baghdad", locale: .ar, calendar: .ummAlQura), now: instant("2025-02-01T00:00:00Z")
        )
        let shia = try database.addDevice(
            DeviceSettings(token: try apnsToken(6), timeZone: "Asia/Baghdad", locale: .ar), now: instant("2025-02-01T00:00:00Z"))
        #expect(shia.calendar == .predicted)
        let emitter = Emitter(database: database, configuration: configuration)
        _ = try emitter.run(now: instant("2025-06-14T05:10:00Z"))
        let first = try database.outbox(status: .pending)
        let row = try #require(first.first { $0.deviceID == saudi.id })
        #expect(row.payload.contains("\"verse_key\":\"5:67\""))
        #expect(row.payload.contains("عيد الغدير"))
        #expect(row.headers.contains("\"apns-priority\":\"10\""))
        let shiaRow = try #require(first.first { $0.deviceID == shia.id })
        #expect(shiaRow.payload.contains("\"hijri_date\":\"1446-12-17\"") && !shiaRow.payload.contains("عيد الغدير"), "\(shiaRow.payload)")
        _ = try emitter.run(now: instant("2025-06-15T05:10:00Z"))
        let next = try #require(try database.outbox(status: .pending).first { $0.deviceID == shia.id && $0.localDate == "2025-06-15" })
        #expect(next.payload.contains("\"verse_key\":\"5:67\"") && next.payload.contains("عيد الغدير"), "\(next.payload)")
    }
}

@Suite struct SinkTests {
    func records(_ database: AppDatabase) throws -> [OutboxRecord] {
        for n in 0..<4 {
            _ = try database.addDevice(DeviceSettings(token: try apnsToken(10 + n), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        }
        _ = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T08:05:00Z"))
        return try database.outbox(status: .pending)
    }

    @Test func fireDaysOlderThanTheLookBackAreCounted() async throws {
        let database = try seededDatabase()
        _ = try database.addDevice(DeviceSettings(token: try apnsToken(1), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        let emitter = Emitter(database: database, configuration: configuration)
        #expect(try emitter.run(now: instant("2025-03-01T08:05:00Z")).skippedDays == 0)
        // Down for ten days: 2 March to 9 March fall before the two-day look-back of 11 March; 9 and 10 are missed.
        let after = try emitter.run(now: instant("2025-03-11T08:05:00Z"))
        #expect(after.skippedDays == 7)
        #expect(after.missed == 2 && after.queued == 1)
        #expect(try emitter.run(now: instant("2025-03-12T08:05:00Z")).skippedDays == 0)
    }

    func spoolFolder() -> URL { FileManager.default.temporaryDirectory.appendingPathComponent("dv-spool-\(UUID().uuidString)") }

    func lines(_ folder: URL) throws -> [String] {
        try String(contentsOf: folder.appendingPathComponent("2025-03-01.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
    }

    @Test func spoolLinesHaveTheDocumentedKeys() async throws {
        let database = try seededDatabase()
        let folder = spoolFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let summary = try await Deliverer(database: database, sink: try JSONLinesSpool(directory: folder)).run(now: instant("2025-03-01T08:06:00Z"))
        _ = try records(database)
        let second = try await Deliverer(database: database, sink: try JSONLinesSpool(directory: folder)).run(now: instant("2025-03-01T08:06:00Z"))
        #expect(summary.delivered == 0 && second.delivered == 4)
        for line in try lines(folder) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["id", "idempotency_key", "device_id", "platform", "local_date", "fire_at", "headers", "payload"])
            #expect((object["fire_at"] as? String)?.hasSuffix("Z") == true)
            #expect(object["payload"] is [String: Any])
        }
        #expect(try database.outbox(status: .delivered).count == 4)
    }

    @Test func afterACrashNothingIsWrittenTwiceAndCutLinesAreRepaired() async throws {
        let database = try seededDatabase()
        let folder = spoolFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pending = try records(database)
        // The first process wrote the lines, then died before the outbox recorded them.
        do {
            let spool = try JSONLinesSpool(directory: folder)
            _ = try spool.deliver(Array(pending.prefix(3)))
        }
        // … and the last of its lines was cut short.
        let file = folder.appendingPathComponent("2025-03-01.jsonl")
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"id":99,"idempotency_key":"cut"#.utf8))
        try handle.close()
        // A new process delivers everything still pending.
        let summary = try await Deliverer(database: database, sink: try JSONLinesSpool(directory: folder)).run(now: instant("2025-03-01T08:10:00Z"))
        #expect(summary.delivered == 4)
        let keys = try lines(folder).map { (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["idempotency_key"] as? String }
        #expect(keys.count == 4)
        #expect(Set(keys.compactMap { $0 }) == Set(pending.map(\.idempotencyKey)))
    }

    @Test func aSecondProcessCannotShareTheSpool() async throws {
        let folder = spoolFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try JSONLinesSpool(directory: folder)
        #expect(throws: SinkError.self) { try JSONLinesSpool(directory: folder) }
        _ = first
    }

    /// A sink that answers from a script, to drive the retry policy.
    final class ScriptedSink: Sink, @unchecked Sendable {
        let name = "scripted"
        var answers: [DeliveryOutcome]
        var calls = 0
        init(_ answers: [DeliveryOutcome]) { self.answers = answers }
        func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome] {
            let answer = answers[min(calls, answers.count - 1)]
            calls += 1
            return Dictionary(uniqueKeysWithValues: records.map { ($0.id, answer) })
        }
    }

    @Test func retriesBackOffHonourRetryAfterAndGiveUpOnPermanentErrors() async throws {
        let database = try seededDatabase()
        _ = try records(database)
        let sink = ScriptedSink([.retry(error: "HTTP 503", after: nil), .retry(error: "HTTP 429", after: 120), .delivered()])
        var deliverer = Deliverer(database: database, sink: sink)
        deliverer.random = { 1.0 }  // no jitter, so the delay is exact
        let start = instant("2025-03-01T08:10:00Z")
        #expect(try await deliverer.run(now: start).retrying == 4)
        // Not yet due again one second later (2 s backoff) …
        #expect(try await deliverer.run(now: start.addingTimeInterval(1)) == DeliverySummary())
        // … due after it; the gateway asks for 120 s.
        #expect(try await deliverer.run(now: start.addingTimeInterval(2)).retrying == 4)
        #expect(try await deliverer.run(now: start.addingTimeInterval(100)) == DeliverySummary())
        #expect(try await deliverer.run(now: start.addingTimeInterval(125)).delivered == 4)
        let delivered = try database.outbox(status: .delivered)
        #expect(delivered.allSatisfy { $0.attempts == 3 && $0.lastError == "HTTP 429" })

        let other = try seededDatabase()
        _ = try records(other)
        let failing = Deliverer(database: other, sink: ScriptedSink([.failed(error: "HTTP 410 Unregistered")]))
        #expect(try await failing.run(now: start).failed == 4)
        #expect(try other.outbox(status: .failed).allSatisfy { $0.lastError == "HTTP 410 Unregistered" })
    }
}
