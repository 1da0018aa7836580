import AppSchema
import ArgumentParser
import ContentStore
import Delivery
import Encodings
import Foundation
import GRDB
import HijriCalendar
import Notifications
import PushServices
import Storage

/// One day of emission for N devices spread over every IANA zone and reminder time, side by side with inserting
/// the same number of rows of the same size into a plain table with one prepared statement.
struct EmitBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "emit", abstract: "A day of emission vs raw SQLite inserts.")
    @Option(help: "Number of devices.") var devices = 1_000_000
    // The defaults are what `serve` does with a million devices: some device is due every minute, so it wakes every
    // minute, and it writes fires 15 minutes ahead.
    @Option(help: "Minutes between scheduler passes over the day.") var step = 1
    @Option(help: "Minutes ahead of their time that fires are written (as serve's --emit-ahead); 0: only those due.") var ahead = 15
    @Option(help: "Devices per transaction.") var batch = EmitConfiguration.defaultBatchSize
    @Option(help: "Days of outbox rows already there (delivered, as the retention keeps them), one per device a day.") var history = 0
    @Option(help: "The data/ folder.") var data: String?
    @Option(
        help: ArgumentHelp(
            "A PostgreSQL server: emit there (SharedEmitter) rather than into SQLite, against COPY and batched INSERTs of the same rows, in a database of the run's own.",
            valueName: "postgresql://…")) var store: String?

    func run() throws {
        if let store {
            let command = self
            return try waitFor { try await command.runPostgres(store) }
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-emit-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (database, zones) = try installation(in: folder)
        let dayStart = Self.dayStart
        print("devices: \(devices) over \(zones.count) zones and all reminder minutes; passes every \(step) min for 24 h, writing \(ahead) min ahead")
        if history > 0 {
            // Copied into the database now, so that the day's figures count only the day's writes.
            try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            print("history: \(devices * history) outbox rows of the \(history) days before")
        }

        // The day: a pass every `step` minutes, each emitting what came due since the one before (or, writing ahead,
        // nothing until the rows written last run out).
        let emitter = Emitter(
            database: database,
            configuration: EmitConfiguration(
                grace: 7200, push: PushConfiguration(apnsTopic: "org.example.quran"), batchSize: batch, ahead: Double(ahead * 60)))
        var queued = 0
        let clock = ContinuousClock()
        let emitStart = clock.now
        let emitWritesBefore = writtenBytes()
        let emitCPUBefore = cpuSeconds()
        let checkpointsBefore = database.checkpointCounts
        var now = dayStart
        while now < dayStart.addingTimeInterval(86_400) {
            now = now.addingTimeInterval(Double(step * 60))
            queued += try emitter.run(now: now).queued
        }
        // The log's checkpoints run on a thread of their own; the day's last ones belong to the day's work.
        database.waitForCheckpoints()
        let emitSeconds = (clock.now - emitStart).seconds
        let emitWrites = writtenBytes() - emitWritesBefore
        let emitCPU = cpuSeconds() - emitCPUBefore
        let (rows, bytes) = try database.read { db in
            // The day's rows, not the history's.
            let row = try Row.fetchOne(
                db, sql: "SELECT count(*), coalesce(sum(length(headers) + length(payload)), 0) FROM outbox WHERE created_at >= ?",
                arguments: [dayStart.timeIntervalSince1970])
            return (row?[0] as Int? ?? 0, row?[1] as Int? ?? 0)
        }
        let averageBytes = rows > 0 ? bytes / rows : 0
        print(
            String(
                format: "emission: %d payloads in %.2f s (%d outbox rows, %d bytes of headers and payload on average)", queued, emitSeconds, rows,
                averageBytes))
        let checkpoints = database.checkpointCounts
        print(
            "log checkpoints: \(checkpoints.thread - checkpointsBefore.thread) on their own thread, \(checkpoints.writer - checkpointsBefore.writer) by the writer (log past the limit)"
        )

        // The baseline: the same number of rows, of the same size and columns, into a plain table (no index but its
        // rowid), with one prepared statement in one transaction: the most SQLite can store here.
        let raw = try DatabaseQueue(path: folder.appendingPathComponent("raw.sqlite").path)
        try raw.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32768")
            try db.execute(
                sql: """
                    CREATE TABLE raw (id INTEGER PRIMARY KEY, device_seq INTEGER NOT NULL, device_id TEXT NOT NULL, platform TEXT NOT NULL,
                        local_date TEXT NOT NULL, fire_at REAL NOT NULL, headers TEXT NOT NULL, payload TEXT NOT NULL,
                        status TEXT NOT NULL, created_at REAL NOT NULL)
                    """)
        }
        let sample = try database.read { db in try Row.fetchOne(db, sql: "SELECT headers, payload FROM outbox WHERE status = 'pending' LIMIT 1") }
        let headers: String = sample?["headers"] ?? String(repeating: "h", count: 300)
        let payload: String = sample?["payload"] ?? String(repeating: "p", count: max(0, averageBytes - 300))
        let rawStart = clock.now
        let rawWritesBefore = writtenBytes()
        let rawCPUBefore = cpuSeconds()
        try raw.write { db in
            // Through SQLite's C API, as the emitter's own inserts are.
            let statement = try DirectStatement(
                db,
                sql:
                    "INSERT INTO raw (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            )
            let deviceID = "00000000-0000-4000-8000-000000000000"
            for n in 0..<queued {
                try statement.execute(
                    db, .integer(Int64(n + 1)), .text(deviceID), .text("apns"), .text("2025-03-10"), .real(1_741_593_600.0), .text(headers),
                    .text(payload),
                    .text("pending"), .real(1_741_593_600.0))
            }
        }
        let rawSeconds = (clock.now - rawStart).seconds
        let rawWrites = writtenBytes() - rawWritesBefore
        let rawCPU = cpuSeconds() - rawCPUBefore
        print(String(format: "raw inserts: %d rows in %.2f s", queued, rawSeconds))
        // What each wrote to its files (WAL, then checkpoints into the database): the emission's extra is mostly the
        // outbox's unique index, most of whose pages every pass dirties again.
        print(
            String(
                format: "bytes written: emission %.0f MB, raw inserts %.0f MB (%.2f×)", Double(emitWrites) / 1e6, Double(rawWrites) / 1e6,
                rawWrites > 0 ? Double(emitWrites) / Double(rawWrites) : 0))
        // Processor time (user and system) is steadier than the clock on a shared machine: a second view of the ratio.
        print(String(format: "processor time: emission %.2f s, raw inserts %.2f s (ratio %.2f)", emitCPU, rawCPU, emitCPU > 0 ? rawCPU / emitCPU : 0))
        let emitRate = Double(queued) / emitSeconds
        let rawRate = Double(queued) / rawSeconds
        print(String(format: "emit payloads_per_s=%.0f ratio_to_raw_insert=%.2f peak_rss_mb=%.0f", emitRate, emitRate / rawRate, peakRSSMegabytes()))
    }

    /// The day every run emits.
    static let dayStart = ISO8601DateFormatter().date(from: "2025-03-10T00:00:00Z")!

    /// A seeded database in `folder` with the devices, each queued for its first fire of `dayStart`; and the zones
    /// they are spread over.
    func installation(in folder: URL) throws -> (AppDatabase, zones: [String]) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = try AppDatabase.open(path: folder.appendingPathComponent("emit.sqlite").path, pool: true)
        try database.seedIfNeeded(from: try DataDirectory.locate(explicit: data))
        let zones = TimeZone.knownTimeZoneIdentifiers.filter { TimeZone(identifier: $0) != nil }
        try insertDevices(database, zones: zones, dayStart: Self.dayStart)
        return (database, zones)
    }

    /// Devices straight into the table, each queued for its first fire of the day.
    func insertDevices(_ database: AppDatabase, zones: [String], dayStart: Date) throws {
        let created = dayStart.addingTimeInterval(-86_400 * 7).timeIntervalSince1970
        var zoneObjects: [String: TimeZone] = [:]
        let platforms = ["apns", "fcm", "webpush"]
        var n = 0
        while n < devices {
            try database.write { db in
                let statement = try db.makeStatement(
                    sql: """
                        INSERT INTO device (id, platform, token, p256dh, auth, timezone, reminder_time, locale, calendar, adjustment,
                            display_theme, enabled, created_at, updated_at, schedule_version)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'umm-al-qura', 0, ?, 1, ?, ?, 1)
                        """)
                let queue = try db.makeStatement(sql: "INSERT INTO schedule (next_fire_at, device_seq, version, last_local_day) VALUES (?, ?, 1, ?)")
                // Past days' rows, small: only their place in the outbox's unique index matters to the day.
                let past = try db.makeStatement(
                    sql: """
                        INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at)
                        VALUES (?, ?, ?, ?, ?, '{}', '{}', 'delivered', ?)
                        """)
                for _ in 0..<min(10_000, devices - n) {
                    let zoneName = zones[n % zones.count]
                    let zone = zoneObjects[zoneName] ?? TimeZone(identifier: zoneName)!
                    zoneObjects[zoneName] = zone
                    let minute = (n * 7919) % 1440
                    let time = try ReminderTime(hour: minute / 60, minute: minute % 60)
                    // The first fire at or after the start of the day; the local date before it counts as fired.
                    var date = CivilDate(instant: dayStart, timeZone: zone).adding(days: -1)
                    var fire = Scheduler.fireInstant(date: date, time: time, zone: zone)
                    while fire <= dayStart {
                        date = date.adding(days: 1)
                        fire = Scheduler.fireInstant(date: date, time: time, zone: zone)
                    }
                    let platform = platforms[n % 3]
                    let token: String
                    var p256dh: String? = nil, auth: String? = nil
                    switch platform {
                    case "apns": token = String(format: "%064x", n)
                    case "fcm": token = "fcm:" + String(format: "%0140x", n)
                    default:
                        token = "https://push.example.org/send/\(n)"
                        p256dh = Base64URL.encode(Data([4] + [UInt8](repeating: UInt8(n % 251), count: 64)))
                        auth = Base64URL.encode(Data(repeating: UInt8(n % 13), count: 16))
                    }
                    let id = String(format: "%08x-0000-4000-8000-%012x", n, n)
                    try statement.execute(arguments: [
                        id, platform, token, p256dh, auth, zoneName, time.description, n % 4 == 0 ? "ar" : "en",
                        ["parchment", "midnight", "emerald", "dawn"][n % 4], created, created,
                    ])
                    let seq = db.lastInsertedRowID
                    try queue.execute(arguments: [fire.timeIntervalSince1970, seq, date.adding(days: -1).dayNumber])
                    for days in stride(from: 1, through: history, by: 1) {
                        let at = fire.timeIntervalSince1970 - Double(days * 86_400)
                        // Created before the day, so that the day's figures leave them out.
                        try past.execute(arguments: [
                            seq, id, platform, date.adding(days: -days).description, at, min(at, dayStart.timeIntervalSince1970 - 1),
                        ])
                    }
                    n += 1
                }
            }
        }
    }

    /// Bytes this process has handed to write(2) and its kin so far (`wchar` of /proc/self/io).
    func writtenBytes() -> Int {
        guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
            let line = io.split(separator: "\n").first(where: { $0.hasPrefix("wchar:") }),
            let bytes = Int(line.split(separator: " ").last ?? "")
        else { return 0 }
        return bytes
    }

    /// User and system time this process has used so far, in seconds.
    func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    func peakRSSMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return -1 }
        return kilobytes / 1024
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
