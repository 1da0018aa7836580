import AppSchema
import DailyVerseTestSupport
import Delivery
import Foundation
import GRDB
import HijriCalendar
import Notifications
import PostgresNIO
import Storage
import Synchronization
import Testing

/// The emission pass on PostgreSQL with several processes at once: every device's fire is written once, the same
/// rows SQLite's pass writes for the same devices and clock, and a device being changed is passed over, not waited for.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct SharedEmitterTests {
    let logger = PostgresTesting.logger
    let configuration = EmitConfiguration(grace: 7200, push: PushConfiguration(apnsTopic: "org.example.quran"), batchSize: 40)
    let start = instant("2025-03-01T00:00:00Z")

    /// `count` devices over zones on both sides of the date line, at times through the day, on both platforms and
    /// every calendar, added a day before `start`.
    func installation(devices count: Int) throws -> AppDatabase {
        let database = try seededDatabase()
        let zones = ["Asia/Tehran", "Europe/London", "America/New_York", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata"]
        let calendars: [CalendarKind] = [.predicted, .ummAlQura, .tabular, .sighted]
        let devices = try (0..<count).map { index in
            let token: PushToken =
                index % 2 == 0 ? .apns(String(format: "%064x", index)) : .fcm("fcm-token-\(index)-" + String(repeating: "x", count: 20))
            return (
                line: index + 1,
                settings: DeviceSettings(
                    token: token, timeZone: zones[index % zones.count], reminderTime: try ReminderTime(hour: index * 7 % 24, minute: index * 13 % 60),
                    locale: index % 3 == 0 ? .ar : .en, calendar: calendars[index % calendars.count])
            )
        }
        _ = try database.addDevices(devices, now: start.addingTimeInterval(-86_400))
        return database
    }

    /// The outbox as (device, local date) → status and payload.
    func sqliteOutbox(_ database: AppDatabase) throws -> [String: String] {
        try database.read { db in
            var rows: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device_id, local_date, status, headers, payload FROM outbox") {
                rows["\(row[0] as String) \(row[1] as String)"] = "\(row[2] as String) \(row[3] as String) \(row[4] as String)"
            }
            return rows
        }
    }

    func postgresOutbox(_ store: PostgresStore) async throws -> [String: String] {
        var rows: [String: String] = [:]
        let result = try await store.rows("SELECT device_id, local_date::text, status, headers, payload FROM outbox")
        for row in result {
            let (id, date, status, headers, payload) = try row.decode((String, String, String, String, String).self)
            rows["\(id) \(date)"] = "\(status) \(headers) \(payload)"
        }
        return rows
    }

    func open(_ address: PostgresAddress) async throws -> PostgresStore {
        try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger, maximumConnections: 2)
    }

    func copy(_ source: AppDatabase, into address: PostgresAddress) async throws {
        let store = try await open(address)
        await store.close()
        let connection = try await PostgresStore.connect(address, password: PostgresTesting.password, logger: logger)
        _ = try await StoreCopy.copy(from: source, into: connection, address: address, schema: .dailyVerse, logger: logger)
        try await connection.close()
    }

    /// With the wall clock, a pass refuses to run on a machine whose clock is far from the server's (it would take rows
    /// other processes are sending, and fire early), saying by how much and which way; a few seconds apart it runs.
    /// (`ClockRefusalTests`: a refused pass neither emits nor delivers.)
    @Test func aClockFarFromTheServersRefusesThePass() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await open(address)
            var emitter = SharedEmitter(store: store, content: try seededDatabase(), configuration: configuration, logger: logger)
            emitter.maximumClockSkew = 10
            emitter.localClock = { Date().addingTimeInterval(3) }
            try await emitter.checkClock()
            for (offset, way) in [(90.0, "s ahead of"), (-90.0, "s behind")] {
                emitter.localClock = { Date().addingTimeInterval(offset) }
                let error = await #expect(throws: (any Error).self) { try await emitter.checkClock() }
                let line = error.map { "\($0)" } ?? ""
                // The figure, within what a loaded machine's round trip can move it.
                let figure = line.components(separatedBy: "clock is ").dropFirst().first?.split(separator: " ").first.flatMap { Double($0) }
                #expect(figure.map { abs($0 - 90) < 5 } == true && line.contains(way) && line.contains("timedatectl"), "\(line)")
            }
            await store.close()
        }
    }

    /// `count` UTC devices (APNs tokens numbered from `tokensFrom`) added on SQLite and copied into `address`, with an
    /// emitter on it and the store it uses.
    func emitterOverDevices(_ count: Int, tokensFrom first: Int, address: PostgresAddress) async throws -> (SharedEmitter, PostgresStore, [Device]) {
        let sqlite = try seededDatabase()
        let devices = try (0..<count).map { n in
            try sqlite.addDevice(
                DeviceSettings(token: try .apns(validating: String(format: "%064x", first + n)), timeZone: "UTC"),
                now: instant("2025-02-01T00:00:00Z"))
        }
        try await copy(sqlite, into: address)
        let store = try await open(address)
        return (SharedEmitter(store: store, content: sqlite, configuration: configuration, logger: logger), store, devices)
    }

    /// A clock that ran ahead moved every device: they are moved back a chunk at a time, a transaction each, the
    /// watchdog fed between chunks; a stop leaves the rest for the next pass. (One transaction for all of them, at a
    /// million devices, outlasted the watchdog and was rolled back at every restart.)
    @Test func devicesAheadOfTheClockAreMovedBackAChunkAtATime() async throws {
        try await PostgresTesting.withDatabase { address in
            let (emitter, store, _) = try await emitterOverDevices(5, tokensFrom: 200, address: address)
            #expect(try await emitter.run(now: instant("2025-03-08T11:31:00Z")).devices == 5)
            let back = instant("2025-03-01T12:00:00Z")
            let asked = Mutex(0)
            let stopped = try await emitter.rescheduleAheadOfClock(now: back, chunk: 2) {
                asked.withLock { $0 += 1 }
                return true
            }
            #expect(stopped.count == 2 && asked.withLock { $0 } == 1, "stopped after the first chunk")
            let rest = try await emitter.rescheduleAheadOfClock(now: back, chunk: 2) {
                asked.withLock { $0 += 1 }
                return false
            }
            #expect(rest.count == 3 && asked.withLock { $0 } == 2, "two more chunks, asked after the whole one")
            #expect(try await emitter.rescheduleAheadOfClock(now: back, chunk: 2).isEmpty)
            #expect(try await emitter.run(now: instant("2025-03-02T08:00:30Z")).queued == 5)
            await store.close()
        }
    }

    /// As on SQLite: a clock that ran a week ahead (here, or on another machine sharing the database) left every
    /// device queued a week on; back at the real time, each is found, said once, and queued from now, its rows for the
    /// days ahead gone, so that the next real day fires, once, for every device. (PostgreSQL's pass did not look, and
    /// the devices were silent for the week.)
    @Test func aClockSteppedForwardThenBackFiresOnTheNextRealDay() async throws {
        try await PostgresTesting.withDatabase { address in
            let (emitter, store, devices) = try await emitterOverDevices(3, tokensFrom: 100, address: address)
            #expect(try await emitter.run(now: instant("2025-03-01T08:01:00Z")).queued == 3)
            #expect(try await emitter.run(now: instant("2025-03-08T11:31:00Z")).devices == 3)
            let back = try await emitter.run(now: instant("2025-03-01T12:00:00Z"))
            #expect(back.problems.count == 3 && back.problems.allSatisfy { $0.kind == .clockAhead })
            #expect(back.queued == 0)
            #expect(try await emitter.run(now: instant("2025-03-02T08:00:30Z")).queued == 3)
            #expect(try await emitter.run(now: instant("2025-03-02T08:05:00Z")).queued == 0)
            #expect(try await emitter.run(now: instant("2025-03-03T08:00:30Z")).problems.isEmpty)
            let outbox = try await postgresOutbox(store)
            for device in devices {
                let dates = outbox.filter { $0.key.hasPrefix(device.id) && !$0.value.hasPrefix("missed") }.map { $0.key.split(separator: " ")[1] }
                #expect(dates.sorted() == ["2025-03-01", "2025-03-02", "2025-03-03"], "\(device.id)")
            }
            let found = try await store.rows("SELECT count(*) FROM schedule_problem WHERE kind = 'clock_ahead'")
                .first?.decode(Int.self)
            #expect(found == 3)
            await store.close()
        }
    }

    /// As on SQLite: a clock a little more than two days ahead leaves no row that stops a real day from firing.
    @Test func aClockTwoDaysAheadLeavesNoRowThatStopsARealDay() async throws {
        try await PostgresTesting.withDatabase { address in
            let sqlite = try seededDatabase()
            let device = try sqlite.addDevice(
                DeviceSettings(token: try .apns(validating: String(format: "%064x", 100)), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
            try await copy(sqlite, into: address)
            let store = try await open(address)
            let emitter = SharedEmitter(store: store, content: sqlite, configuration: configuration, logger: logger)
            #expect(try await emitter.run(now: instant("2025-02-28T08:01:00Z")).queued == 1)
            #expect(try await emitter.run(now: instant("2025-03-03T10:30:00Z")).missed >= 2)
            #expect(try await emitter.run(now: instant("2025-03-01T07:00:00Z")).problems.map(\.kind) == [.clockAhead])
            #expect(try await emitter.run(now: instant("2025-03-01T08:00:30Z")).queued == 1)
            #expect(try await emitter.run(now: instant("2025-03-02T08:00:30Z")).queued == 1)
            let dates = try await postgresOutbox(store).filter { $0.key.hasPrefix(device.id) && !$0.value.hasPrefix("missed") }
                .map { String($0.key.split(separator: " ")[1]) }
            #expect(dates.sorted() == ["2025-02-28", "2025-03-01", "2025-03-02"])
            await store.close()
        }
    }

    /// Three processes pass every quarter of an hour through a day and more, all at once on one database: the outbox
    /// ends exactly as one SQLite pass leaves it (each device's fire written once, with the same payload), and the
    /// rows they say they wrote add up to it.
    @Test func threeProcessesWriteWhatOneSQLitePassWritesOnce() async throws {
        let sqlite = try installation(devices: 240)
        let content = try sqlite.inMemoryCopy(schema: .dailyVerse)
        try await PostgresTesting.withDatabase { address in
            try await copy(sqlite, into: address)
            let stores = try await [open(address), open(address), open(address)]
            let emitters = stores.map { SharedEmitter(store: $0, content: content, configuration: configuration, logger: logger) }
            let reference = Emitter(database: sqlite, configuration: configuration)
            var expected = EmitSummary()
            var written = EmitSummary()
            for step in 0..<(27 * 4) {
                let now = start.addingTimeInterval(Double(step) * 900)
                let one = try reference.run(now: now)
                expected.queued += one.queued
                expected.missed += one.missed
                let summaries = try await withThrowingTaskGroup(of: EmitSummary.self) { group in
                    for emitter in emitters { group.addTask { try await emitter.run(now: now) } }
                    return try await group.reduce(into: [EmitSummary]()) { $0.append($1) }
                }
                for summary in summaries {
                    written.queued += summary.queued
                    written.missed += summary.missed
                }
            }
            let want = try sqliteOutbox(sqlite)
            let got = try await postgresOutbox(stores[0])
            #expect(want.count >= 240 && want.count == got.count, "SQLite wrote \(want.count) rows, PostgreSQL \(got.count)")
            let differing = want.keys.filter { want[$0] != got[$0] }.sorted()
            #expect(differing.isEmpty, "rows that differ: \(differing.prefix(5))")
            #expect(written.queued == expected.queued && written.missed == expected.missed, "\(written) against \(expected)")
            // Each device is queued once, for its next fire, as on SQLite.
            let queue = try await stores[0].rows("SELECT count(*), count(DISTINCT device_seq) FROM schedule")
            let (entries, devices) = try #require(queue.first).decode((Int, Int).self)
            #expect(entries == 240 && devices == 240)
            for store in stores { await store.close() }
        }
    }

    /// A row already in the outbox for a device and day that a batch writes (here, put there by hand) ends the batch's
    /// `COPY`; the batch is taken again by `INSERT … ON CONFLICT DO NOTHING`, which keeps that row as it is and writes
    /// the rest as SQLite's pass writes them, and the counts leave it out.
    @Test func aRowAlreadyThereIsKeptAndTheRestWritten() async throws {
        let sqlite = try installation(devices: 12)
        let content = try sqlite.inMemoryCopy(schema: .dailyVerse)
        try await PostgresTesting.withDatabase { address in
            try await copy(sqlite, into: address)
            let late = start.addingTimeInterval(86_400)
            let expected = try Emitter(database: sqlite, configuration: configuration).run(now: late)
            let want = try sqliteOutbox(sqlite)
            let key = try #require(want.keys.sorted().first)
            let (deviceID, date) = (String(key.split(separator: " ")[0]), String(key.split(separator: " ")[1]))
            let store = try await open(address)
            _ = try await store.rows(
                """
                INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at)
                SELECT seq, id, platform, \(date)::date, 0, '{}', 'by hand', 'delivered', 0 FROM device WHERE id = \(deviceID)
                """)
            let emitter = SharedEmitter(store: store, content: content, configuration: configuration, logger: logger)
            let summary = try await emitter.run(now: late)
            #expect(summary.queued + summary.missed == expected.queued + expected.missed - 1, "\(summary) against \(expected)")
            let got = try await postgresOutbox(store)
            #expect(got.count == want.count)
            #expect(got[key] == "delivered {} by hand")
            let differing = want.keys.filter { $0 != key && got[$0] != want[$0] }
            #expect(differing.isEmpty, "rows that differ: \(differing.prefix(5))")
            await store.close()
        }
    }

    /// A device whose row another transaction holds (a change under way) is passed over, not waited for: the others
    /// are written, and it is written by the first pass after the change ends.
    @Test func aDeviceBeingChangedIsPassedOverNotWaitedFor() async throws {
        let sqlite = try installation(devices: 6)
        try await PostgresTesting.withDatabase { address in
            try await copy(sqlite, into: address)
            let store = try await open(address)
            let emitter = SharedEmitter(store: store, content: sqlite, configuration: configuration, logger: logger)
            let late = start.addingTimeInterval(86_400)
            try await PostgresTesting.withHeldTransaction(address) { holder, _ in
                _ = try await holder.rows("SELECT 1 FROM device WHERE id = (SELECT min(id) FROM device) FOR UPDATE")
                let first = try await emitter.run(now: late)
                #expect(first.devices == 5, "\(first)")
                _ = try await holder.rows("COMMIT")
            }
            let second = try await emitter.run(now: late)
            #expect(second.devices == 1, "\(second)")
            let rows = try await store.rows("SELECT count(DISTINCT device_seq) FROM outbox").first?.decode(Int.self)
            #expect(rows == 6)
            await store.close()
        }
    }
}
