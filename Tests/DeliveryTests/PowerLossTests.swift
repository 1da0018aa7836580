import AppSchema
import ContentStore
import DailyVerseTestSupport
import Foundation
import HijriCalendar
import Notifications
import Storage
import Testing

@testable import Delivery

/// Exactly once on the spool through a power loss: the database's log is synced at checkpoints and the spool at each
/// append, so after a power loss the database may be further back than the spool. Simulated as the probe did: the
/// database's files copied mid-run (the durable state), the run finished (the spool holds every line), then the copy
/// restored and the deliverer started again as a new process would.
@Suite struct PowerLossTests {
    static let now = instant("2025-03-01T08:00:30Z")

    /// A database on disk with `count` devices whose fires for 1 March are pending, and its folder.
    func fixture(count: Int) throws -> (AppDatabase, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-power-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = try AppDatabase.open(path: folder.appendingPathComponent("db.sqlite").path)
        try database.seedIfNeeded(from: dataDirectory)
        let devices = try (0..<count).map { (line: $0 + 1, settings: DeviceSettings(token: try apnsToken(1000 + $0), timeZone: "UTC")) }
        _ = try database.addDevices(devices, now: instant("2025-02-28T00:00:00Z"))
        _ = try Emitter(database: database, configuration: configuration).run(now: Self.now)
        return (database, folder)
    }

    func lines(_ spool: URL) throws -> [String] {
        try String(contentsOf: spool.appendingPathComponent("2025-03-01.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Runs until two batches are recorded, copies the database, finishes, restores the copy and runs again.
    func powerLoss(count: Int, recorded: Bool) async throws -> (lines: [String], delivered: Int) {
        let (database, folder) = try fixture(count: count)
        defer { try? FileManager.default.removeItem(at: folder) }
        let spool = folder.appendingPathComponent("spool")
        let copy = folder.appendingPathComponent("copy.sqlite").path
        do {
            let sink = try JSONLinesSpool(directory: spool, reconcileLines: 100, recordedSize: { recorded ? try database.spoolMark(path: $0) : nil })
            var deliverer = Deliverer(database: database, sink: sink)
            deliverer.batchSize = 100
            var batches = 0
            _ = try await deliverer.run(now: Self.now) {
                batches += 1
                return batches == 2
            }
            try database.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
            _ = try await deliverer.run(now: Self.now)
            #expect(try lines(spool).count == count)
        }
        let restored = try AppDatabase.open(path: copy)
        let sink = try JSONLinesSpool(directory: spool, reconcileLines: 100, recordedSize: { recorded ? try restored.spoolMark(path: $0) : nil })
        var deliverer = Deliverer(database: restored, sink: sink)
        deliverer.batchSize = 100
        let summary = try await deliverer.run(now: Self.now)
        return (try lines(spool), summary.delivered)
    }

    @Test func aDatabaseTakenBackFurtherThanTheSpoolWritesNoLineTwice() async throws {
        let (lines, delivered) = try await powerLoss(count: 1000, recorded: true)
        // The rows the restored database did not know were on the spool are recorded, and none is written again.
        #expect(delivered == 800)
        #expect(lines.count == 1000)
        let keys = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["idempotency_key"] as? String }
        #expect(Set(keys).count == 1000)
    }

    @Test func withoutTheRecordedSizeTheSpoolWroteLinesTwice() async throws {
        // As before v13: only the last lines were read back, and the batches before them were written again.
        let (lines, _) = try await powerLoss(count: 1000, recorded: false)
        #expect(lines.count > 1000)
    }
}
