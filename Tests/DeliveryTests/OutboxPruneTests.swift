import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import Testing

@testable import Delivery

@Suite struct OutboxPruneTests {
    @Test func settledRowsOlderThanTheCutoffGoPendingAndNewerOnesStay() throws {
        let database = try seededDatabase()
        for n in 0..<2 { _ = try database.addDevice(DeviceSettings(token: try apnsToken(n), timeZone: "UTC"), now: instant("2025-02-28T12:00:00Z")) }
        let emitter = Emitter(database: database, configuration: configuration)
        // Five days of fires at 08:00 UTC, each emitted at 08:05.
        for day in 1...5 { _ = try emitter.run(now: instant("2025-03-0\(day)T08:05:00Z")) }
        let all = try database.outbox().map { "\($0.localDate) \($0.status)" }
        #expect(all.count == 10, "\(all)")
        // Device 0's rows were delivered, device 1's first row failed and the rest wait.
        try database.write { db in
            try db.execute(sql: "UPDATE outbox SET status = 'delivered' WHERE device_seq = (SELECT min(seq) FROM device)")
            try db.execute(sql: "UPDATE outbox SET status = 'failed' WHERE id = (SELECT min(id) FROM outbox WHERE status = 'pending')")
        }
        // Keep what was created from 3 March on; one row per transaction, to go through the chunking.
        let pruned = try database.pruneOutbox(settledBefore: instant("2025-03-03T00:00:00Z"), chunk: 1)
        #expect(pruned == 3)  // device 0's rows of 1 and 2 March, device 1's failed row of 1 March
        let left = try database.outbox().map { "\($0.localDate) \($0.status.rawValue)" }
        #expect(
            left.sorted() == [
                "2025-03-02 pending", "2025-03-03 delivered", "2025-03-03 pending", "2025-03-04 delivered", "2025-03-04 pending",
                "2025-03-05 delivered", "2025-03-05 pending",
            ])
        // Pruned dates never come back: the queue remembers each device's last fired date.
        #expect(try emitter.run(now: instant("2025-03-05T09:00:00Z")).queued == 0)
        #expect(try database.pruneOutbox(settledBefore: instant("2025-03-03T00:00:00Z")) == 0)
        #expect(try database.outbox().count == 7)
    }
}
