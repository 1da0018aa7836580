import AppSchema
import ArgumentParser
import ContentStore
import Delivery
import Foundation
import Logging
import Notifications
import PostgresNIO
import PushServices
import PushStandIns
import Storage

extension DeliverBench {
    /// APNs rows delivered from one PostgreSQL outbox by 1, 2, 3… processes at once, each with its own pool, leases
    /// (`SharedOutbox`), push client and sink, as `serve` processes are (here in one OS process, on one machine's cores):
    /// the rows a second each count takes, and every row delivered once.
    func measureShared(_ server: String, counts: [Int]) async throws {
        let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-deliver-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let now = Self.fire.addingTimeInterval(60)
        let (records, concurrency) = (records, concurrency)
        let content = try AppDatabase.open(path: folder.appendingPathComponent("content.sqlite").path, pool: true)
        try content.seedIfNeeded(from: try DataDirectory.locate(explicit: data))
        print("records: \(records) APNs rows, \(concurrency) in flight per process, leases of \(SharedOutbox.batchSize) rows; a stand-in on loopback")
        var rates: [Int: Double] = [:]
        // A stand-in of its own per count: each count's database makes its own provider token, which a service that
        // had seen another's within 20 minutes would refuse.
        for count in counts {
            let standIn = try PushStandIn(subscriptions: 1, clock: { now })
            let caFile = try standIn.certificates.writeAuthority(in: folder)
            if count == counts[0] { try Self.addDevices(content, platform: "apns", count: records, standIn: standIn, port: 0) }
            rates[count] = try await standIn.run { port -> Double in
                var rate = 0.0
                let scratch = try await BenchDatabase.Scratch(server, prefix: "dv_deliver_\(count)")
                var sinks: [PushSink] = []
                do {
                    let schema = try await scratch.open(connections: 1)
                    let copy = try await PostgresStore.connect(scratch.address, password: scratch.password, logger: logger)
                    _ = try await StoreCopy.copy(from: content, into: copy, address: scratch.address, schema: .dailyVerse, logger: logger)
                    try await copy.close()
                    _ = try await SharedEmitter(
                        store: schema, content: content,
                        configuration: EmitConfiguration(grace: 7200, push: PushConfiguration(apnsTopic: standIn.topic), batchSize: 2_000),
                        logger: logger
                    ).run(now: Self.fire.addingTimeInterval(30))
                    // One pool, client and sink per process; the provider token shared through the database.
                    var deliverers: [Deliverer] = []
                    for index in 0..<count {
                        let store = try await scratch.open(connections: 4)
                        let client = try PushClient(caFile: caFile)
                        let apns = APNsSender(
                            client: client, keyID: standIn.apnsKeyID, teamID: standIn.teamID, key: standIn.apnsKey, environment: .sandbox,
                            baseURL: "https://127.0.0.1:\(port)", store: PostgresCredentialStore(store: store))
                        let sink = PushSink(pauses: store, client: client, senders: [apns], concurrency: concurrency, clock: { now })
                        var deliverer = Deliverer(queue: SharedOutbox(store: store, owner: "bench-\(index)", logger: logger), sink: sink)
                        deliverer.batchSize = SharedOutbox.batchSize
                        deliverers.append(deliverer)
                        sinks.append(sink)
                    }
                    let ready = deliverers
                    var delivered = 0
                    let seconds = try await Self.time {
                        delivered = try await withThrowingTaskGroup(of: Int.self) { group in
                            for deliverer in ready { group.addTask { try await deliverer.run(now: now).delivered } }
                            return try await group.reduce(0, +)
                        }
                    }
                    for sink in sinks { await sink.shutdown() }
                    sinks = []
                    let left =
                        try await schema.rows("SELECT count(*) FROM outbox WHERE status = 'pending' OR lease_owner IS NOT NULL")
                        .first?.decode(Int.self) ?? -1
                    guard delivered == records, left == 0 else {
                        let states = try await schema.rows(
                            "SELECT status || ' ' || coalesce(lease_owner, '-') || ' ' || count(*) FROM outbox GROUP BY status, lease_owner"
                        ).map { try $0.decode(String.self) }
                        throw ValidationError("\(count) processes: \(delivered) of \(records) delivered, \(left) rows pending or leased: \(states)")
                    }
                    rate = Double(records) / seconds
                    print(String(format: "%d processes: %d rows in %.2f s, %.0f rows/s", count, records, seconds, Double(records) / seconds))
                    await scratch.drop()
                } catch {
                    for sink in sinks { await sink.shutdown() }
                    await scratch.drop()
                    throw error
                }
                let problems = await standIn.script.problems
                guard problems.isEmpty else { throw ValidationError("the stand-in found: \(problems.prefix(3))") }
                return rate
            }
        }
        print("deliver store=postgres " + counts.map { String(format: "processes_%d_rows_per_s=%.0f", $0, rates[$0] ?? 0) }.joined(separator: " "))
    }
}
