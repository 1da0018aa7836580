import AppSchema
import DailyVerseTestSupport
import Delivery
import Foundation
import Notifications
import PostgresNIO
import Storage
import Synchronization
import Testing

/// Delivering from PostgreSQL with several processes at once: each row is taken by one (a lease), delivered once, and
/// a process that dies holding rows leaves them to another once its lease ends.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct SharedOutboxTests {
    let logger = PostgresTesting.logger
    let start = instant("2025-03-01T00:00:00Z")

    /// A sink that accepts every row and remembers which it was given.
    final class CountingSink: Sink, Sendable {
        let name = "counting"
        let given = Mutex<[Int64]>([])

        func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] {
            given.withLock { $0 += records.map(\.id) }
            return Dictionary(uniqueKeysWithValues: records.map { ($0.id, .delivered(id: "message-\($0.id)")) })
        }
    }

    /// A database with `devices` devices whose fires of a day are in the outbox, pending; and how many rows that is.
    func emitted(devices: Int, into address: PostgresAddress) async throws -> Int {
        let emitterTests = SharedEmitterTests()
        let sqlite = try emitterTests.installation(devices: devices)
        try await emitterTests.copy(sqlite, into: address)
        let store = try await emitterTests.open(address)
        let emitter = SharedEmitter(store: store, content: sqlite, configuration: emitterTests.configuration, logger: logger)
        for step in 0..<(25 * 4) { _ = try await emitter.run(now: start.addingTimeInterval(Double(step) * 900)) }
        let pending = try await store.rows("SELECT count(*) FROM outbox WHERE status = 'pending'").first?
            .decode(Int.self)
        await store.close()
        return pending ?? 0
    }

    @Test func threeProcessesDeliverEveryRowOnce() async throws {
        try await PostgresTesting.withDatabase { address in
            let pending = try await emitted(devices: 150, into: address)
            try #require(pending >= 150)
            let stores = try await (0..<3).asyncMap { _ in try await SharedEmitterTests().open(address) }
            let sinks = stores.map { _ in CountingSink() }
            let deliverers = zip(stores, sinks).enumerated().map { index, pair in
                var deliverer = Deliverer(queue: SharedOutbox(store: pair.0, owner: "process-\(index)", logger: logger), sink: pair.1)
                deliverer.batchSize = 20
                return deliverer
            }
            let late = start.addingTimeInterval(25 * 3600)
            let summaries = try await withThrowingTaskGroup(of: DeliverySummary.self) { group in
                for deliverer in deliverers { group.addTask { try await deliverer.run(now: late) } }
                return try await group.reduce(into: [DeliverySummary]()) { $0.append($1) }
            }
            let given = sinks.flatMap { $0.given.withLock { $0 } }
            #expect(given.count == pending && Set(given).count == pending, "\(given.count) handed over for \(pending) rows")
            #expect(summaries.map(\.delivered).reduce(0, +) == pending)
            let left = try await stores[0].rows(
                "SELECT count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE lease_owner IS NOT NULL) FROM outbox"
            ).first?.decode((Int, Int).self)
            #expect(left?.0 == 0 && left?.1 == 0)
            for store in stores { await store.close() }
        }
    }

    /// A sink whose every batch takes `seconds` of `clock`, during which another process (`other`) takes the first row
    /// it may.
    final class SlowSink: Sink, Sendable {
        let name = "slow"
        let clock: Mutex<Date>
        let seconds: TimeInterval
        let other: SharedOutbox
        let given = Mutex<[Int64]>([])
        let takenByOther = Mutex<[Int64]>([])

        init(from start: Date, seconds: TimeInterval, other: SharedOutbox) {
            clock = Mutex(start)
            (self.seconds, self.other) = (seconds, other)
        }

        var now: Date { clock.withLock { $0 } }

        func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] {
            let now = clock.withLock { clock in
                clock.addTimeInterval(seconds)
                return clock
            }
            given.withLock { $0 += records.map(\.id) }
            let taken = try await other.take(after: nil, now: now.addingTimeInterval(1), limit: 1, platforms: nil)
            takenByOther.withLock { $0 += taken.map(\.id) }
            return Dictionary(uniqueKeysWithValues: records.map { ($0.id, .delivered(id: "message-\($0.id)")) })
        }
    }

    /// A pass that lasts longer than a lease (a backlog at the peak: here each batch takes a third of the lease)
    /// leases each batch from when it takes it: another process taking rows meanwhile never takes one this pass still
    /// holds, and every row goes to one of them. (Leased from the pass's start, the batches taken after the first
    /// lease's end were taken by both.)
    @Test func aPassLongerThanALeaseLeasesEachBatchFromWhenItTakesIt() async throws {
        try await PostgresTesting.withDatabase { address in
            let pending = try await emitted(devices: 8, into: address)
            try #require(pending >= 8)
            let store = try await SharedEmitterTests().open(address)
            let passStart = start.addingTimeInterval(25 * 3600)
            let sink = SlowSink(from: passStart, seconds: 100, other: SharedOutbox(store: store, owner: "other", lease: 300, logger: logger))
            var deliverer = Deliverer(queue: SharedOutbox(store: store, owner: "slow", lease: 300, logger: logger), sink: sink)
            deliverer.batchSize = 1
            deliverer.clock = { sink.now }
            _ = try await deliverer.run(now: passStart)
            let (given, other) = (sink.given.withLock { $0 }, sink.takenByOther.withLock { $0 })
            #expect(Set(given).isDisjoint(with: other), "sent by both: \(Set(given).intersection(other).sorted())")
            // The other process never records what it takes, so it takes its own rows again once their lease is over.
            #expect(Set(given).union(other).count == pending && Set(given).count == given.count, "\(given) \(other)")
            #expect(!other.isEmpty)
            await store.close()
        }
    }

    /// A sink that fails on this machine (a full disk): the pass ends at its first batch.
    struct FullDiskSink: Sink {
        let name = "full disk"
        func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] {
            throw SinkError.local("cannot write spool file 'x'", errno: ENOSPC)
        }
    }

    /// A pass that stops early (a local failure here; a stop asked for alike) gives back the batch it had read ahead:
    /// no row is left leased, to wait out a lease before another process may send it.
    @Test func aPassThatStopsGivesBackTheBatchItReadAhead() async throws {
        try await PostgresTesting.withDatabase { address in
            let pending = try await emitted(devices: 8, into: address)
            try #require(pending >= 3)
            let store = try await SharedEmitterTests().open(address)
            var deliverer = Deliverer(queue: SharedOutbox(store: store, owner: "stopping", lease: 300, logger: logger), sink: FullDiskSink())
            deliverer.batchSize = 1
            let summary = try await deliverer.run(now: start.addingTimeInterval(25 * 3600))
            #expect(summary.localError != nil && summary.deferred == 1)
            let leased = try await store.rows("SELECT count(*) FROM outbox WHERE lease_owner IS NOT NULL")
                .first?.decode(Int.self)
            #expect(leased == 0)
            await store.close()
        }
    }

    /// The loop wakes for the pending rows the sink takes only: a row of a platform it does not take is never due for
    /// it (counted, it woke the loop every 50 ms).
    @Test func theNextWorkIsOfThePlatformsTheSinkTakes() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await SharedEmitterTests().open(address)
            try await PostgresTesting.administer(
                address,
                """
                INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at, next_attempt_at)
                VALUES (1, 'd', 'fcm', '2026-01-01', 1000, '{}', '{}', 'pending', 10, 1000)
                """)
            let emitter = SharedEmitter(
                store: store, content: try AppDatabase.inMemory(), configuration: SharedEmitterTests().configuration, logger: logger)
            #expect(try await emitter.nextWork(platforms: nil) == 1000)
            #expect(try await emitter.nextWork(platforms: ["fcm", "apns"]) == 1000)
            #expect(try await emitter.nextWork(platforms: ["apns"]) == nil)
            #expect(try await emitter.nextWork(platforms: []) == nil)
            // Leased by another process: work when the lease ends, though it was due before (it woke every other
            // process 20 times a second for the lease's five minutes).
            try await PostgresTesting.administer(address, "UPDATE outbox SET lease_owner = 'other', lease_until = 1300")
            #expect(try await emitter.nextWork(platforms: nil) == 1300)
            try await PostgresTesting.administer(address, "UPDATE outbox SET next_attempt_at = NULL")
            #expect(try await emitter.nextWork(platforms: nil) == 1300)
            try await PostgresTesting.administer(address, "UPDATE outbox SET next_attempt_at = 2000")
            #expect(try await emitter.nextWork(platforms: nil) == 2000)
            await store.close()
        }
    }

    /// A process takes a batch and dies before recording it: nobody takes those rows while its lease runs; after, another
    /// process takes and delivers them, and the first one's late record (it was only slow) changes nothing.
    @Test func aProcessThatDiesLeavesItsRowsToAnotherWhenItsLeaseEnds() async throws {
        try await PostgresTesting.withDatabase { address in
            let pending = try await emitted(devices: 8, into: address)
            let store = try await SharedEmitterTests().open(address)
            let dying = SharedOutbox(store: store, owner: "dying", lease: 300, logger: logger)
            let other = SharedOutbox(store: store, owner: "other", lease: 300, logger: logger)
            let now = start.addingTimeInterval(25 * 3600)
            let taken = try await dying.take(after: nil, now: now, limit: 1000, platforms: nil)
            #expect(taken.count == pending)
            #expect(try await other.take(after: nil, now: now.addingTimeInterval(299), limit: 1000, platforms: nil).isEmpty)
            let sink = CountingSink()
            let summary = try await Deliverer(queue: other, sink: sink).run(now: now.addingTimeInterval(301))
            #expect(summary.delivered == pending && sink.given.withLock { $0.count } == pending)
            // The first process comes back and records the batch as failed: the rows are no longer its own.
            var late = OutboxSettlement()
            late.rows = taken.map { .failed(id: $0.id, attempts: 1, error: "late") }
            _ = try await dying.settle(late, now: now.addingTimeInterval(400))
            let delivered = try await store.rows("SELECT count(*) FROM outbox WHERE status = 'delivered'").first?
                .decode(Int.self)
            #expect(delivered == pending)
            await store.close()
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
