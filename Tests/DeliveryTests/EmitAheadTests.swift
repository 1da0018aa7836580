import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage
import Testing

@testable import Delivery

/// Fires written ahead of their time: delivered at their time, withdrawn when the device changes, and the same fires,
/// once each, as a daemon that writes only what is due.
@Suite struct EmitAheadTests {
    let ahead = EmitConfiguration(grace: 7200, push: PushConfiguration(apnsTopic: "org.example.quran"), batchSize: 3, ahead: 900)

    /// A sink that records when it was handed each row.
    func utcDevice(_ database: AppDatabase, _ n: Int, at time: String) throws -> Device {
        try database.addDevice(
            DeviceSettings(token: try apnsToken(n), timeZone: "UTC", reminderTime: try ReminderTime(parsing: time)),
            now: instant("2025-03-01T00:00:00Z"))
    }

    func nextAttempt(_ database: AppDatabase, _ device: Device) throws -> Double? {
        try database.read { db in
            try Double.fetchOne(db, sql: "SELECT next_attempt_at FROM outbox WHERE device_id = ?", arguments: [device.id])
        }
    }

    @Test func rowsWrittenAheadWaitForTheirTime() async throws {
        let database = try seededDatabase()
        let early = try utcDevice(database, 1, at: "08:00")
        let later = try utcDevice(database, 2, at: "08:10")
        let last = try utcDevice(database, 3, at: "08:30")
        let emitter = Emitter(database: database, configuration: ahead)
        // The first fire is more than a minute away: the pass writes nothing yet.
        #expect(try emitter.run(now: instant("2025-03-01T07:58:59Z")) == EmitSummary())
        // Within a minute of it: everything due in the next fifteen minutes.
        #expect(try emitter.run(now: instant("2025-03-01T07:59:00Z")).queued == 2)
        #expect(try nextAttempt(database, early) == instant("2025-03-01T08:00:00Z").timeIntervalSince1970)
        #expect(try nextAttempt(database, later) == instant("2025-03-01T08:10:00Z").timeIntervalSince1970)
        // The rows written cover the next minutes: passes meanwhile write nothing.
        for minute in 0..<29 {
            #expect(try emitter.run(now: instant("2025-03-01T08:00:00Z").addingTimeInterval(Double(minute) * 60)).devices == 0)
        }
        let sink = RecordingSink()
        let deliverer = Deliverer(database: database, sink: sink)
        #expect(try await deliverer.run(now: instant("2025-03-01T07:59:59Z")).delivered == 0)
        #expect(try await deliverer.run(now: instant("2025-03-01T08:00:00Z")).delivered == 1)
        #expect(try await deliverer.run(now: instant("2025-03-01T08:09:59Z")).delivered == 0)
        #expect(try await deliverer.run(now: instant("2025-03-01T08:10:00Z")).delivered == 1)
        #expect(sink.handed.map(\.key) == ["\(early.id)/2025-03-01", "\(later.id)/2025-03-01"])
        #expect(try emitter.run(now: instant("2025-03-01T08:29:00Z")).queued == 1)
        #expect(try database.outbox().map(\.deviceID) == [early.id, later.id, last.id])
    }

    @Test func theSameFiresOnceEachAsADaemonThatWritesOnlyWhatIsDue() async throws {
        // Two days across New York's and Lord Howe's clock changes, a pass every five minutes: emitting ahead writes
        // the same rows (device, date, instant) as emitting what is due, and none is handed over before its instant.
        let zones = ["America/New_York", "Australia/Lord_Howe", "Europe/London", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Tehran"]
        let times = ["02:30", "02:10", "01:30", "00:05", "23:55", "08:00"]
        func walk(_ configuration: EmitConfiguration) async throws -> (rows: Set<String>, sink: RecordingSink) {
            let database = try seededDatabase()
            for (n, zone) in zones.enumerated() {
                for (m, time) in times.enumerated() {
                    _ = try database.addDevice(
                        DeviceSettings(token: try apnsToken(n * 10 + m), timeZone: zone, reminderTime: try ReminderTime(parsing: time)),
                        id: "device-\(n)-\(m)", now: instant("2025-02-01T00:00:00Z"))
                }
            }
            let emitter = Emitter(database: database, configuration: configuration)
            let sink = RecordingSink()
            let deliverer = Deliverer(database: database, sink: sink)
            var now = instant("2025-04-05T00:00:00Z")  // Lord Howe falls back on 6 April 2025
            while now < instant("2025-04-07T00:00:00Z") {
                _ = try emitter.run(now: now)
                let at = now
                for record in try await database.read({ db in try AppDatabase.deliverable(db, now: at, limit: 1_000) }) {
                    #expect(record.fireAt <= at)
                }
                _ = try await deliverer.run(now: now)
                now = now.addingTimeInterval(300)
            }
            let rows = try database.outbox()
            #expect(Set(rows.map(\.idempotencyKey)).count == rows.count)
            return (Set(rows.filter { $0.status != .pending }.map { "\($0.idempotencyKey) \($0.fireAt.iso8601UTC) \($0.status)" }), sink)
        }
        let due = try await walk(configuration)
        let early = try await walk(ahead)
        #expect(due.rows.count > 60)
        #expect(early.rows == due.rows)
        #expect(early.sink.handed.map(\.key) == due.sink.handed.map(\.key))
    }

    @Test func aChangeWithdrawsRowsWrittenAheadAndTheDateFiresOnceWithTheNewSettings() async throws {
        let database = try seededDatabase()
        let moved = try utcDevice(database, 4, at: "08:10")
        let sent = try utcDevice(database, 5, at: "08:00")
        let due = try utcDevice(database, 6, at: "08:00")
        let emitter = Emitter(database: database, configuration: ahead)
        #expect(try emitter.run(now: instant("2025-03-01T07:59:30Z")).queued == 3)
        let deliverer = Deliverer(database: database, sink: RecordingSink())
        // `sent` is delivered at 08:00, then (08:05) all three move to 09:00 and `moved` to Arabic; `due` was not
        // delivered yet, but its time had come: it stays and is delivered.
        _ = try await deliverer.run(now: instant("2025-03-01T08:00:00Z"))
        try await database.write { db in
            try db.execute(sql: "UPDATE outbox SET status = 'pending', delivered_at = NULL WHERE device_id = ?", arguments: [due.id])
        }
        let withdrawn = try #require(try database.outbox().first { $0.deviceID == moved.id })
        let nine = try ReminderTime(parsing: "09:00")
        let changedAt = instant("2025-03-01T08:05:00Z")
        _ = try database.updateDevice(id: moved.id, DeviceSettings(reminderTime: nine, locale: .ar), now: changedAt)
        _ = try database.updateDevice(id: sent.id, DeviceSettings(reminderTime: nine), now: changedAt)
        _ = try database.updateDevice(id: due.id, DeviceSettings(reminderTime: nine), now: changedAt)
        #expect(try database.outbox().map(\.deviceID) == [sent.id, due.id])
        // The withdrawn date is not fired: the device's next fire is today at its new time.
        #expect(try database.deviceState(id: moved.id, now: changedAt)?.nextFireAt == instant("2025-03-01T09:00:00Z"))
        #expect(try emitter.run(now: instant("2025-03-01T08:59:00Z")).queued == 1)
        #expect(try await deliverer.run(now: instant("2025-03-01T09:00:00Z")).delivered == 2)
        let rows = try database.outbox(date: try CivilDate(parsing: "2025-03-01"))
        #expect(rows.count == 3)
        let redone = try #require(rows.first { $0.deviceID == moved.id })
        #expect(redone.fireAt == instant("2025-03-01T09:00:00Z"))
        #expect(redone.status == .delivered)
        #expect(redone.payload != withdrawn.payload)  // in Arabic now
        #expect(rows.first { $0.deviceID == sent.id }?.fireAt == instant("2025-03-01T08:00:00Z"))
    }

    /// A row due within `withdrawalMargin` of a change stays as it was written, and the date still fires once: the
    /// deliverer may have taken it already (on its own clock, or while the change waited for the writer), and
    /// withdrawn it would be written and sent again. One due later is withdrawn.
    @Test func aRowDueWithinTheMinuteStaysWhenItsDeviceChanges() async throws {
        let database = try seededDatabase()
        let soon = try utcDevice(database, 10, at: "08:10")
        let later = try utcDevice(database, 11, at: "08:12")
        let emitter = Emitter(database: database, configuration: ahead)
        #expect(try emitter.run(now: instant("2025-03-01T08:09:10Z")).queued == 2)
        let changedAt = instant("2025-03-01T08:09:30Z")
        for device in [soon, later] { _ = try database.updateDevice(id: device.id, DeviceSettings(locale: .ar), now: changedAt) }
        #expect(try database.outbox().map(\.deviceID) == [soon.id])
        #expect(try emitter.run(now: instant("2025-03-01T08:11:00Z")).queued == 1)
        let deliverer = Deliverer(database: database, sink: RecordingSink())
        #expect(try await deliverer.run(now: instant("2025-03-01T08:12:00Z")).delivered == 2)
        #expect(try emitter.run(now: instant("2025-03-01T08:13:00Z")).queued == 0)
        #expect(try database.outbox(date: try CivilDate(parsing: "2025-03-01")).count == 2)
    }

    @Test func aRemovedDeviceIsSentNothingMoreWhoeverRemovesIt() async throws {
        let database = try seededDatabase()
        let removed = try utcDevice(database, 7, at: "08:10")
        let owned = try utcDevice(database, 8, at: "08:10")
        let kept = try utcDevice(database, 9, at: "08:10")
        try await database.write { db in
            try db.execute(sql: "INSERT INTO user (id, mode, created_at, last_active_at) VALUES ('u1', 'guest', 0, 0)")
            try db.execute(sql: "UPDATE device SET user_id = 'u1' WHERE id = ?", arguments: [owned.id])
        }
        #expect(try Emitter(database: database, configuration: ahead).run(now: instant("2025-03-01T08:09:30Z")).queued == 3)
        #expect(try database.removeDevice(id: removed.id))
        // A user's removal takes their devices, and with them their rows.
        try await database.write { db in try db.execute(sql: "DELETE FROM user WHERE id = 'u1'") }
        #expect(try database.outbox().map(\.deviceID) == [kept.id])
        #expect(try await Deliverer(database: database, sink: RecordingSink()).run(now: instant("2025-03-01T08:10:00Z")).delivered == 1)
    }

    @Test func aRowNotHandedOverWithinTheGraceIsRecordedAsMissed() async throws {
        let database = try seededDatabase()
        let stale = try utcDevice(database, 10, at: "08:00")
        let retried = try utcDevice(database, 11, at: "08:00")
        let fresh = try utcDevice(database, 12, at: "10:20")
        let emitter = Emitter(database: database, configuration: ahead)
        #expect(try emitter.run(now: instant("2025-03-01T07:59:30Z")).queued == 2)
        // One was tried and is waiting for its retry; then the daemon was down until 10:30.
        try await database.write { db in
            try db.execute(
                sql: "UPDATE outbox SET attempts = 1, last_error = 'HTTP 503', next_attempt_at = ? WHERE device_id = ?",
                arguments: [instant("2025-03-01T08:00:02Z").timeIntervalSince1970, retried.id])
        }
        #expect(try emitter.run(now: instant("2025-03-01T10:30:00Z")).queued == 1)  // `fresh`, 10 minutes late, within grace
        var deliverer = Deliverer(database: database, sink: RecordingSink())
        deliverer.grace = 7200
        let summary = try await deliverer.run(now: instant("2025-03-01T10:30:00Z"))
        #expect(summary.missed == 1 && summary.delivered == 2)
        let missed = try database.outbox(status: .missed)
        #expect(missed.map(\.deviceID) == [stale.id])
        #expect(missed.first?.lastError?.contains("grace") == true)
        #expect(Set(try database.outbox(status: .delivered).map(\.deviceID)) == [retried.id, fresh.id])
    }

    @Test func aRowWrittenAheadIsShownAsTheNextFire() async throws {
        let database = try seededDatabase()
        let device = try utcDevice(database, 13, at: "08:10")
        _ = try Emitter(database: database, configuration: ahead).run(now: instant("2025-03-01T08:09:30Z"))
        let now = instant("2025-03-01T08:09:45Z")
        let state = try #require(try database.deviceState(id: device.id, now: now))
        #expect(state.lastLocalDate == nil)
        #expect(state.nextFireAt == instant("2025-03-01T08:10:00Z"))
        #expect(try database.deviceSummary(now: now).next.map(\.at) == [instant("2025-03-01T08:10:00Z"), instant("2025-03-02T08:10:00Z")])
        #expect(try database.outboxWrittenAhead(now: now) == 1)
        // Once its time has come, it is the last fired.
        let after = instant("2025-03-01T08:10:00Z")
        #expect(try database.deviceState(id: device.id, now: after)?.lastLocalDate?.description == "2025-03-01")
        #expect(try database.deviceSummary(now: after).next.map(\.at) == [instant("2025-03-02T08:10:00Z")])
        #expect(try database.outboxWrittenAhead(now: after) == 0)
    }
}
