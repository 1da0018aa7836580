import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import Storage
import Synchronization
import Testing

@testable import Delivery

/// A small filesystem of its own (tmpfs), to fill: needs the right to mount, which root has (CI runs as root).
struct SmallFilesystem {
    let folder: URL

    static let available: Bool = {
        guard getuid() == 0 else { return false }
        guard let probe = try? SmallFilesystem(kilobytes: 16) else { return false }
        probe.remove()
        return true
    }()

    init(kilobytes: Int) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", folder.path]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            try? FileManager.default.removeItem(at: folder)
            throw POSIXError(.EPERM)
        }
    }

    /// Fills the filesystem but for `free` bytes, with a file to delete later.
    func fill(leaving free: Int) throws -> URL {
        let filler = folder.appendingPathComponent("filler")
        var stats = statvfs()
        guard statvfs(folder.path, &stats) == 0 else { throw POSIXError(.EIO) }
        let available = Int(stats.f_bavail) * Int(stats.f_frsize)
        try Data(count: max(0, available - free)).write(to: filler)
        return filler
    }

    func remove() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = [folder.path]
        try? process.run()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }
}

@Suite struct SpoolFaultTests {
    /// `count` devices due at 08:00 UTC on 1 March, emitted: as many pending rows.
    func pendingRows(_ count: Int) throws -> AppDatabase {
        let database = try seededDatabase()
        for n in 0..<count {
            _ = try database.addDevice(DeviceSettings(token: try apnsToken(n + 1), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        }
        _ = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T08:05:00Z"))
        #expect(try database.outbox(status: .pending).count == count)
        return database
    }

    /// Every line of the day's file: whole JSON objects, each key once.
    func spoolKeys(_ folder: URL) throws -> [String] {
        let text = try String(contentsOf: folder.appendingPathComponent("2025-03-01.jsonl"), encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "no cut-off last line")
        return try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "a corrupt line: \(line.prefix(80))")
            return try #require(object["idempotency_key"] as? String)
        }
    }

    @Test(.enabled(if: SmallFilesystem.available, "needs root to mount a tmpfs"))
    func aFullSpoolDiskKeepsRowsPendingWritesNothingHalfAndNothingTwice() async throws {
        let disk = try SmallFilesystem(kilobytes: 256)
        defer { disk.remove() }
        let spool = disk.folder.appendingPathComponent("spool")
        let database = try pendingRows(40)
        var deliverer = Deliverer(database: database, sink: try JSONLinesSpool(directory: spool))
        deliverer.batchSize = 10
        // Room for the first batch or so, not for all: a batch's append fails part-way.
        let filler = try disk.fill(leaving: 20_000)
        var now = instant("2025-03-01T08:06:00Z")
        let first = try await deliverer.run(now: now)
        #expect(first.delivered > 0 && first.delivered < 40, "\(first)")
        #expect(first.deferred > 0)
        #expect(first.failed == 0 && first.retrying == 0)
        #expect(first.localError?.contains("No space left on device (errno 28)") == true, "\(first.localError ?? "")")
        #expect(first.localError?.contains(spool.path) == true)
        // The disk stays full for a long while: rows are never failed, attempts are not spent.
        for _ in 0..<20 {
            now = now.addingTimeInterval(31)
            let pass = try await deliverer.run(now: now)
            #expect(pass.failed == 0 && pass.delivered == 0)
        }
        let waiting = try database.outbox(status: .pending)
        #expect(waiting.count == 40 - first.delivered)
        #expect(waiting.allSatisfy { $0.attempts == 0 })
        // The rows tried say why they wait (a pass stops at the first local failure: the rest were not tried).
        #expect(waiting.filter { ($0.lastError ?? "").contains("No space left on device (errno 28)") }.count >= 10)
        // What is on disk is whole and once.
        let before = try spoolKeys(spool)
        #expect(before.count == first.delivered && Set(before).count == before.count)

        // Freed: everything goes, each line once, in this process and then in a new one.
        try FileManager.default.removeItem(at: filler)
        now = now.addingTimeInterval(31)
        let freed = try await deliverer.run(now: now)
        #expect(freed.delivered == 40 - first.delivered)
        #expect(try database.outbox(status: .delivered).count == 40)
        let after = try spoolKeys(spool)
        #expect(after.count == 40 && Set(after).count == 40)
    }

    @Test(.enabled(if: SmallFilesystem.available, "needs root to mount a tmpfs"))
    func aFullDiskFoundByANewProcessIsRepairedAsAfterACrash() async throws {
        let disk = try SmallFilesystem(kilobytes: 256)
        defer { disk.remove() }
        let spool = disk.folder.appendingPathComponent("spool")
        let database = try pendingRows(30)
        let records = try database.outbox(status: .pending)
        // A first process fills the disk mid-line and dies before the outbox records anything.
        do {
            let sink = try JSONLinesSpool(directory: spool)
            _ = try sink.deliver(Array(records.prefix(5)))
            let file = try FileHandle(forWritingTo: spool.appendingPathComponent("2025-03-01.jsonl"))
            try file.seekToEnd()
            try file.write(contentsOf: Data(#"{"id":77,"idempotency_key":"cut-off"#.utf8))
            try file.close()
        }
        let filler = try disk.fill(leaving: 0)
        var now = instant("2025-03-01T08:06:00Z")
        let deliverer = Deliverer(database: database, sink: try JSONLinesSpool(directory: spool))
        // Full: the five already on disk are recognised (their keys read back), the rest wait.
        let full = try await deliverer.run(now: now)
        #expect(full.failed == 0)
        try FileManager.default.removeItem(at: filler)
        now = now.addingTimeInterval(31)
        _ = try await deliverer.run(now: now)
        #expect(try database.outbox(status: .delivered).count == 30)
        let keys = try spoolKeys(spool)
        #expect(keys.count == 30 && Set(keys).count == 30)
        #expect(!keys.contains("cut-off"))
    }

    /// A spool running for months remembers the keys of a few files, not of every day's, and a late row for a file it
    /// let go is still written once (the file's end is read back, as a new process reads it).
    @Test func aLongRunningSpoolRemembersAFewFilesAndStillWritesEachRowOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-days-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        func record(_ day: Int) -> OutboxRecord {
            let date = day < 31 ? String(format: "2025-03-%02d", day + 1) : String(format: "2025-04-%02d", day - 30)
            return OutboxRecord(
                Row([
                    "id": Int64(day + 1), "device_id": "device", "platform": "apns", "local_date": date,
                    "fire_at": 1_740_816_000.0 + Double(day) * 86_400,
                    "headers": "{}", "payload": "{}", "status": "pending", "attempts": 0, "last_error": nil, "delivered_at": nil,
                ]))
        }
        let sink = try JSONLinesSpool(directory: folder)
        for day in 0..<40 { _ = try sink.deliver([record(day)]) }
        #expect(sink.filesRemembered == JSONLinesSpool.rememberedFiles)
        // The first day's row again (its batch's record was lost): one line still.
        _ = try sink.deliver([record(0)])
        let first = try String(contentsOf: folder.appendingPathComponent("2025-03-01.jsonl"), encoding: .utf8)
        #expect(first.split(separator: "\n").count == 1)
        #expect(sink.filesRemembered == JSONLinesSpool.rememberedFiles)
    }

    /// An outbox as the spool sees it: the sizes recorded with each batch's outcomes, and the keys of the rows settled.
    final class LedgerStandIn: Sendable {
        let recorded = Mutex<[String: Int64]>([:])
        let settled = Mutex<Set<String>>([])

        func spool(_ folder: URL) throws -> JSONLinesSpool {
            try JSONLinesSpool(
                directory: folder, recordedSize: { path in self.recorded.withLock { $0[path] } },
                unsettled: { date, devices in self.settled.withLock { settled in Set(devices.filter { !settled.contains("\($0)/\(date)") }) } })
        }

        /// Hands `records` to `sink` and records the outcomes with its sizes, as the deliverer does (unless the
        /// recording fails): those the sink delivered, all of them or those before a failure part-way. The ids of
        /// the records still pending after.
        @discardableResult
        func deliver(_ records: [OutboxRecord], to sink: JSONLinesSpool, recording: Bool = true) -> Set<Int64> {
            var delivered = Set(records.map(\.id))
            do { _ = try sink.deliver(records) } catch let error as SinkError { delivered = error.delivered } catch { delivered = [] }
            let marks = sink.takeMarks()
            guard recording else { return Set(records.map(\.id)) }
            recorded.withLock { $0.merge(marks) { $1 } }
            settled.withLock { $0.formUnion(records.filter { delivered.contains($0.id) }.map(\.idempotencyKey)) }
            return Set(records.map(\.id)).subtracting(delivered)
        }
    }

    func record(_ n: Int, date: String, id: Int? = nil) -> OutboxRecord {
        OutboxRecord(
            Row([
                "id": Int64(id ?? n), "device_id": "device-\(n)", "platform": "apns", "local_date": date, "fire_at": 1_740_816_000.0,
                "headers": "{}", "payload": "{}", "status": "pending", "attempts": 0, "last_error": nil, "delivered_at": nil,
            ]))
    }

    func lines(_ folder: URL, _ file: String) throws -> [Substring] {
        try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8).split(separator: "\n")
    }

    /// A batch whose rows go to two files, one of which cannot be written: the file written before the failure is
    /// recorded as delivered with its size (its rows would otherwise wait, and could be judged missed while their lines
    /// are in the spool), the other's rows wait. Later batches write to the first file meanwhile; when the rest comes
    /// back, in this process or after a restart, no line is written twice.
    @Test(arguments: [false, true]) func aBatchThatFailedPartWayRecordsWhatItWrote(restarting: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-stuck-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ledger = LedgerStandIn()
        var sink: JSONLinesSpool? = try ledger.spool(folder)
        // The second day's file cannot be opened for writing (a directory stands in its place).
        let blocked = folder.appendingPathComponent("2025-03-02.jsonl")
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: true)
        let stuck = [record(1, date: "2025-03-01"), record(1000, date: "2025-03-02")]
        let waiting = ledger.deliver(stuck, to: try #require(sink))
        #expect(waiting == [1000])
        #expect(ledger.recorded.withLock { $0[folder.appendingPathComponent("2025-03-01.jsonl").path] } != nil)
        for n in 2...13 { #expect(ledger.deliver([record(n, date: "2025-03-01")], to: try #require(sink)).isEmpty) }
        try FileManager.default.removeItem(at: blocked)
        if restarting {
            sink = nil
            sink = try ledger.spool(folder)
        }
        #expect(ledger.deliver(stuck.filter { waiting.contains($0.id) }, to: try #require(sink)).isEmpty)
        let first = try lines(folder, "2025-03-01.jsonl")
        #expect(first.count == 13 && Set(first).count == 13)
        #expect(try lines(folder, "2025-03-02.jsonl").count == 1)
        // Everything settled: what is remembered is let go at the next append.
        ledger.deliver([record(50, date: "2025-03-01")], to: try #require(sink))
        ledger.deliver([record(51, date: "2025-03-01")], to: try #require(sink))
        #expect(try #require(sink).appendsRemembered("2025-03-01.jsonl") == 1)
    }

    /// A batch written whole whose outcomes were not recorded (the database refused the write) comes back after other
    /// batches were recorded, in this process or after a restart: its lines are found, not written again. (The spool
    /// forgot them after four appends, and a restart read the file from a recorded size already past them.)
    @Test(arguments: [false, true]) func aBatchWhoseRecordingFailedFindsItsLinesAfterOtherBatches(restarting: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-unrecorded-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ledger = LedgerStandIn()
        var sink: JSONLinesSpool? = try ledger.spool(folder)
        let unrecorded = (1...3).map { record($0, date: "2025-03-01") }
        ledger.deliver(unrecorded, to: try #require(sink), recording: false)
        for n in 4...15 { ledger.deliver([record(n, date: "2025-03-01")], to: try #require(sink)) }
        if restarting {
            sink = nil
            sink = try ledger.spool(folder)
        }
        #expect(ledger.deliver(unrecorded, to: try #require(sink)).isEmpty)
        let written = try lines(folder, "2025-03-01.jsonl")
        #expect(written.count == 15 && Set(written).count == 15)
    }

    /// A power loss takes the database back to before the rows were emitted and recorded, while the spool keeps their
    /// lines: emitted again (under other row ids), they are found by their keys, not written twice. (Asked by row id,
    /// the outbox had none of the old ids, and the lines were written again.)
    @Test func rowsEmittedAgainAfterThePowerLossFindTheirLines() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-rollback-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ledger = LedgerStandIn()
        var sink: JSONLinesSpool? = try ledger.spool(folder)
        ledger.deliver((1...3).map { record($0, date: "2025-03-01") }, to: try #require(sink))
        // The database as it was before: no mark, no rows.
        ledger.recorded.withLock { $0 = [:] }
        ledger.settled.withLock { $0 = [] }
        sink = nil
        sink = try ledger.spool(folder)
        #expect(ledger.deliver((1...3).map { record($0, date: "2025-03-01", id: 100 + $0) }, to: try #require(sink)).isEmpty)
        let written = try lines(folder, "2025-03-01.jsonl")
        #expect(written.count == 3)
    }

    /// A batch written to the spool whose outcomes the database could not record for longer than the grace period (its
    /// disk full for hours) is found by the next pass past that period: its rows are delivered, as their lines went out
    /// in time, not judged missed; no line is written twice. (They were recorded missed while their lines were sent.)
    @Test func rowsWhoseLinesAreInTheSpoolAreNeverJudgedMissed() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-late-record-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try pendingRows(3)
        let spool = {
            try JSONLinesSpool(
                directory: folder, recordedSize: { try database.spoolMark(path: $0) },
                unsettled: { try database.unsettledOutboxDevices(localDate: $0, deviceIDs: $1) })
        }
        var sink: JSONLinesSpool? = try spool()
        // Written at 08:05; the database refused the outcomes.
        let rows = try database.outbox(status: .pending)
        _ = try #require(sink).deliver(rows)
        _ = try #require(sink).takeMarks()
        for restarting in [false, true] {
            if restarting {
                sink = nil
                sink = try spool()
            }
            let held = try #require(sink).holding(rows)
            #expect(held == Set(rows.map(\.id)), "restarting: \(restarting)")
        }
        var deliverer = Deliverer(database: database, sink: try #require(sink))
        deliverer.grace = 7200
        let summary = try await deliverer.run(now: instant("2025-03-01T10:30:00Z"))
        #expect(summary.delivered == 3 && summary.missed == 0, "\(summary)")
        #expect(try database.outbox(status: .delivered).count == 3)
        #expect(try spoolKeys(folder).count == 3)
        // A row no line was written for is still judged missed that late.
        let other = try pendingRows(1)
        var late = Deliverer(database: other, sink: try JSONLinesSpool(directory: folder.appendingPathComponent("other")))
        late.grace = 7200
        #expect(try await late.run(now: instant("2025-03-01T10:30:00Z")).missed == 1)
    }

    /// A new process reads back the end of the day's file only, not all of it.
    @Test func reconcilingReadsTheFilesTailOnly() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-tail-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func line(_ n: Int) -> String { #"{"id":\#(n),"idempotency_key":"device-\#(n)/2025-03-01","local_date":"2025-03-01"}"# }
        // 5,000 lines, the last cut short.
        let text = (0..<5000).map(line).joined(separator: "\n") + "\n" + #"{"id":5000,"idem"#
        try Data(text.utf8).write(to: folder.appendingPathComponent("2025-03-01.jsonl"))
        func record(_ n: Int) -> OutboxRecord {
            OutboxRecord(
                Row([
                    "id": Int64(n), "device_id": "device-\(n)", "platform": "apns", "local_date": "2025-03-01", "fire_at": 1_740_816_000.0,
                    "headers": "{}", "payload": "{}", "status": "pending", "attempts": 0, "last_error": nil, "delivered_at": nil,
                ]))
        }
        let sink = try JSONLinesSpool(directory: folder, reconcileLines: 100)
        // Keys among the last 100 lines are found and not written again; one far back is beyond what a crash can
        // leave unrecorded, and one never written is new: both are written.
        let outcomes = try sink.deliver([record(4990), record(4901), record(10), record(7000)])
        #expect(outcomes.count == 4)
        let lines = try String(contentsOf: folder.appendingPathComponent("2025-03-01.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 5002)
        #expect(lines[4999].contains("device-4999"), "the cut-off line was removed")
        #expect(lines.suffix(2).map { $0.contains("device-10/") || $0.contains("device-7000/") } == [true, true])
    }
}
