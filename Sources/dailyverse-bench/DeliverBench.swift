import AppSchema
import ArgumentParser
import ContentStore
import Delivery
import Encodings
import Foundation
import NIOCore
import Notifications
import PushServices
import PushStandIns
import Storage

/// The push senders against Swift stand-ins on loopback (HTTP/2 over TLS), side by side with a plain AsyncHTTPClient
/// loop sending the same prepared requests with the same concurrency and no bookkeeping.
struct DeliverBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliver", abstract: "The push senders vs a raw HTTP/2 client, on loopback stand-ins.")
    @Option(help: "Outbox rows per platform.") var records = 5_000
    @Option(help: "Requests in flight at once (the push sink's concurrency).") var concurrency = 64
    @Option(help: "Rounds; each measures both sides back to back (which goes first alternates), and the medians count.") var rounds = 5
    @Option(help: "The data/ folder.") var data: String?
    @Option(
        help: ArgumentHelp(
            "A PostgreSQL server: deliver APNs rows from there with 1, 2 and 3 processes (--processes) leasing from one outbox, in a database of the run's own.",
            valueName: "postgresql://…")) var store: String?
    @Option(help: "With --store: how many delivering processes, each count in turn (a comma-separated list).") var processes = "1,2,3"

    static let fire = ISO8601DateFormatter().date(from: "2025-03-10T08:00:00Z")!

    func run() throws {
        let command = self
        if let store {
            let counts = processes.split(separator: ",").compactMap { Int($0) }
            guard !counts.isEmpty, counts.allSatisfy({ (1...16).contains($0) }) else {
                throw ValidationError("invalid --processes '\(processes)': expected counts from 1 to 16, such as 1,2,3")
            }
            return try waitFor { try await command.measureShared(store, counts: counts) }
        }
        try waitFor { try await command.measure() }
    }

    func measure() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-deliver-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let now = Self.fire.addingTimeInterval(60)
        let standIn = try PushStandIn(subscriptions: 16, clock: { now })
        let caFile = try standIn.certificates.writeAuthority(in: folder)
        let (records, concurrency, rounds, data) = (records, concurrency, rounds, data)
        // One provider-token store for both sides, as one installation's processes share one (Apple, and the
        // stand-in, refuse a second token within 20 minutes).
        let store = MemoryCredentialStore()
        try await standIn.run { port in
            print(
                "records: \(records) per platform, \(concurrency) in flight, \(rounds) rounds (medians); stand-ins on 127.0.0.1:\(port) (HTTP/2, TLS)"
            )
            // Per platform and round: the sink's and the raw client's seconds, measured back to back.
            var samples: [String: [(sink: Double, raw: Double?)]] = [:]
            for round in 1...rounds {
                for platform in ["apns", "fcm", "webpush"] {
                    let database = try AppDatabase.open(path: folder.appendingPathComponent("deliver-\(round)-\(platform).sqlite").path, pool: true)
                    try database.seedIfNeeded(from: try DataDirectory.locate(explicit: data))
                    try Self.addDevices(database, platform: platform, count: records, standIn: standIn, port: port)
                    _ = try Emitter(
                        database: database,
                        configuration: EmitConfiguration(grace: 7200, push: PushConfiguration(apnsTopic: standIn.topic), batchSize: 2_000)
                    ).run(now: Self.fire.addingTimeInterval(30))
                    let rows = try database.outbox(status: .pending)
                    guard rows.count == records else { throw ValidationError("expected \(records) rows, found \(rows.count)") }

                    // The raw client: the same requests, prepared beforehand, the same concurrency, nothing recorded.
                    let rawClient = try PushClient(caFile: caFile)
                    let prepared = try await Self.prepare(
                        rows, platform: platform, standIn: standIn, port: port, client: rawClient, store: store, now: now)
                    func measureRaw() async throws -> Double? {
                        platform == "webpush"
                            ? nil : try await Self.time { try await Self.sendRaw(prepared, client: rawClient, concurrency: concurrency) }
                    }

                    // The sink, through the deliverer: reading the outbox, sending, recording every answer.
                    let client = try PushClient(caFile: caFile)
                    let sink = try Self.sink(
                        platform, database: database, client: client, standIn: standIn, port: port, concurrency: concurrency, store: store, now: now)
                    var deliverer = Deliverer(database: database, sink: sink)
                    deliverer.batchSize = 2_000
                    func measureSink() async throws -> Double {
                        var summary = DeliverySummary()
                        let seconds = try await Self.time { summary = try await deliverer.run(now: now) }
                        guard summary.delivered == records else {
                            throw ValidationError(
                                "\(platform): \(summary.delivered) of \(records) delivered (last error: \(summary.lastError ?? "none"))")
                        }
                        return seconds
                    }
                    let raw: Double?, seconds: Double
                    if round % 2 == 1 {
                        raw = try await measureRaw()
                        seconds = try await measureSink()
                    } else {
                        seconds = try await measureSink()
                        raw = try await measureRaw()
                    }
                    try await rawClient.shutdown()
                    await sink.shutdown()
                    samples[platform, default: []].append((seconds, raw))
                    print(
                        "round \(round) \(platform.padding(toLength: 8, withPad: " ", startingAt: 0))"
                            + String(format: "sink %8.0f/s", Double(records) / seconds)
                            + (raw.map { String(format: "   raw client %8.0f/s   ratio %.2f", Double(records) / $0, $0 / seconds) } ?? ""))
                }
            }
            let problems = await standIn.script.problems
            guard problems.isEmpty else { throw ValidationError("the stand-ins found: \(problems.prefix(3))") }
            func median(_ values: [Double]) -> Double {
                let sorted = values.sorted()
                return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
            }
            // Rates are the medians over the rounds; a ratio is the median of each round's own ratio (the two sides
            // of a round ran back to back, so the machine's slow spells fall on both).
            func rate(_ platform: String) -> Double { median(samples[platform, default: []].map { Double(records) / $0.sink }) }
            func rawRate(_ platform: String) -> Double { median(samples[platform, default: []].compactMap { $0.raw.map { Double(records) / $0 } }) }
            func ratio(_ platform: String) -> Double { median(samples[platform, default: []].compactMap { pair in pair.raw.map { $0 / pair.sink } }) }
            // Web Push's own cost is mostly the encryption: its share of the sink's time.
            let encryption = try Self.encryptionSeconds(records, standIn: standIn)
            let webSeconds = median(samples["webpush", default: []].map(\.sink))
            print(String(format: "apns:    sink %8.0f/s, raw client %8.0f/s, ratio %.2f", rate("apns"), rawRate("apns"), ratio("apns")))
            print(String(format: "fcm:     sink %8.0f/s, raw client %8.0f/s, ratio %.2f", rate("fcm"), rawRate("fcm"), ratio("fcm")))
            print(
                String(
                    format: "webpush: sink %8.0f/s; encryption %.0f%% of its time (%.0f µs a message)", rate("webpush"),
                    100 * encryption / webSeconds, 1e6 * encryption / Double(records)))
            print(
                String(
                    format: "deliver apns_per_s=%.0f fcm_per_s=%.0f webpush_per_s=%.0f ratio_to_raw_client=%.2f", rate("apns"), rate("fcm"),
                    rate("webpush"),
                    min(ratio("apns"), ratio("fcm"))))
        }
    }

    static func time(_ body: () async throws -> Void) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func addDevices(_ database: AppDatabase, platform: String, count: Int, standIn: PushStandIn, port: Int) throws {
        let created = ISO8601DateFormatter().date(from: "2025-03-09T00:00:00Z")!
        let devices: [(line: Int, settings: DeviceSettings)] = try (0..<count).map { n in
            let token: PushToken
            switch platform {
            case "apns": token = try .apns(validating: String(format: "%064x", n + 1))
            case "fcm": token = try .fcm(validating: String(format: "fcm-token:APA91bBench_%08d", n))
            default:
                let sub = standIn.subscription(n % 16, port: port)
                token = try .webpush(validatingEndpoint: sub.endpoint + "?n=\(n)", p256dh: sub.p256dh, auth: sub.auth)
            }
            return (n + 1, DeviceSettings(token: token, timeZone: "UTC"))
        }
        _ = try database.addDevices(devices, now: created)
    }

    static func sink(
        _ platform: String, database: AppDatabase, client: PushClient, standIn: PushStandIn, port: Int, concurrency: Int,
        store: MemoryCredentialStore,
        now: Date
    ) throws -> PushSink {
        let base = "https://127.0.0.1:\(port)"
        let apns = APNsSender(
            client: client, keyID: standIn.apnsKeyID, teamID: standIn.teamID, key: standIn.apnsKey, environment: .sandbox, baseURL: base,
            store: store)
        let fcm = FCMSender(
            client: client, account: try ServiceAccount.parse(Data(standIn.serviceAccountJSON(port: port).utf8)), baseURL: base, store: store)
        let web = WebPushSender(
            client: client, vapid: try VAPIDKey(privateKey: standIn.vapidKey, subject: "mailto:bench@example.org"), allowedHosts: ["127.0.0.1"],
            store: store)
        let senders: [any PushSender] = [apns, fcm, web]
        return PushSink(
            pauses: database, client: client, senders: senders.filter { $0.platform.rawValue == platform }, concurrency: concurrency, clock: { now })
    }

    struct Prepared: Sendable {
        let url: String
        let headers: [(String, String)]
        let body: ByteBuffer
    }

    /// The requests the senders make for these rows, with a provider token or access token made once.
    static func prepare(
        _ rows: [OutboxRecord], platform: String, standIn: PushStandIn, port: Int, client: PushClient, store: MemoryCredentialStore, now: Date
    ) async throws -> [Prepared] {
        let base = "https://127.0.0.1:\(port)"
        switch platform {
        case "apns":
            let tokens = APNsSender(
                client: client, keyID: standIn.apnsKeyID, teamID: standIn.teamID, key: standIn.apnsKey, environment: .sandbox, baseURL: base,
                store: store
            ).tokens
            let bearer = try await tokens.token(now: now)
            return try rows.map { row in
                let headers = try JSONSerialization.jsonObject(with: Data(row.headers.utf8)) as? [String: String] ?? [:]
                let list = headers.filter { !$0.key.hasPrefix(":") }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
                return Prepared(
                    url: base + (headers[":path"] ?? ""),
                    headers: list + [("authorization", "bearer \(bearer)"), ("content-type", "application/json")],
                    body: ByteBuffer(string: row.payload))
            }
        case "fcm":
            let sender = FCMSender(
                client: client, account: try ServiceAccount.parse(Data(standIn.serviceAccountJSON(port: port).utf8)), baseURL: base, store: store)
            let bearer = try await sender.tokens.token(now: now)
            return rows.map { row in
                Prepared(
                    url: "\(base)/v1/projects/\(standIn.projectID)/messages:send",
                    headers: [("authorization", "Bearer \(bearer)"), ("content-type", "application/json; charset=utf-8")],
                    body: ByteBuffer(string: row.payload))
            }
        default:
            return []
        }
    }

    static func sendRaw(_ requests: [Prepared], client: PushClient, concurrency: Int) async throws {
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = requests[...]
            var running = 0
            while !next.isEmpty || running > 0 {
                while running < concurrency, let request = next.popFirst() {
                    group.addTask { try await client.send(request.url, headers: request.headers, body: request.body).status }
                    running += 1
                }
                if let status = try await group.next() {
                    running -= 1
                    guard (200..<300).contains(status) else { throw ValidationError("raw client: HTTP \(status)") }
                }
            }
        }
    }

    /// The encryption alone, for as many messages of the size the sink sends.
    static func encryptionSeconds(_ count: Int, standIn: PushStandIn) throws -> Double {
        let secrets = standIn.subscriptionSecrets(0)
        let sub = standIn.subscription(0, port: 1)
        guard let key = Base64URL.decode(sub.p256dh) else { throw ValidationError("bad stand-in key") }
        let plaintext = Data(repeating: 0x41, count: 900)
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count { _ = try WebPushEncryption.encrypt(plaintext, p256dh: key, auth: secrets.auth) }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// Runs `work` to its end from a synchronous command (the bench's command line is synchronous; its work is not), and
/// throws what it threw.
func waitFor(_ work: @escaping @Sendable () async throws -> Void) throws {
    final class Outcome: @unchecked Sendable { var error: (any Error)? }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { try await work() } catch { outcome.error = error }
        done.signal()
    }
    done.wait()
    if let error = outcome.error { throw error }
}
