import Foundation
import GRDB
import Metrics
import NIOCore
import Notifications
import PushServices
import Storage
import Synchronization

/// Delivers outbox rows to APNs, FCM and Web Push directly, each platform to its own service. A platform without a
/// sender is not taken: its rows stay pending (`platforms`), and `status` says it is not configured.
///
/// Each row is sent as rendered, with what depends on the moment of sending computed then: a row whose local day has
/// ended is not sent (missed), FCM's `android.ttl` and Web Push's `TTL` count from now to the end of that day (APNs'
/// `apns-expiration` is that instant already). Rows go concurrently, at most `concurrency` at once; the HTTP client
/// multiplexes them over one HTTP/2 connection per service.
///
/// A configuration error (a key the service refuses) pauses that platform for `pauseInterval`: its rows stay
/// pending, nothing is sent meanwhile, and the pause is kept in the database for `status`. The first row accepted
/// after the pause ends it.
public final class PushSink: Sink, Sendable {
    public let name = "push"
    /// One sender a platform, for the services that are configured.
    public let senders: [Platform: any PushSender]
    public let client: PushClient
    public let concurrency: Int
    public let pauseInterval: TimeInterval
    /// The time rows are sent at: the deliverer's clock (a replayed day's under `--now`).
    public let clock: @Sendable () -> Date
    /// Where the counters go (the process's metrics system unless a test gives its own), made once per platform
    /// and outcome: a million rows a day go through them.
    let meters: PushMeters
    let pauses: PauseBoard

    /// A sink sending each platform's rows with its sender in `senders` (the first, should two share a platform),
    /// whose pauses are kept in `pauses` (the SQLite database, or PostgreSQL's shared by every process).
    public init(
        pauses store: any PauseStore, client: PushClient, senders: [any PushSender], concurrency: Int = 64, pauseInterval: TimeInterval = 300,
        clock: @escaping @Sendable () -> Date = { Date() }, metrics: (any MetricsFactory)? = nil
    ) {
        self.meters = PushMeters(factory: metrics ?? MetricsSystem.factory)
        self.client = client
        self.clock = clock
        self.senders = Dictionary(senders.map { ($0.platform, $0) }, uniquingKeysWith: { first, _ in first })
        self.concurrency = max(1, concurrency)
        self.pauseInterval = pauseInterval
        self.pauses = PauseBoard(store: store)
    }

    /// The push client's connections end here.
    public func shutdown() async { try? await client.shutdown() }

    /// A batch is seconds of network: the one before is recorded meanwhile.
    public var overlapsRecording: Bool { true }

    /// Sends one record now and gives the outcome without recording it: `push test`.
    public func sendNow(_ record: OutboxRecord) async -> DeliveryOutcome {
        await send(record, now: clock())
    }

    public var platforms: Set<String>? { Set(senders.keys.map(\.rawValue)) }

    public func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] {
        let now = clock()
        await pauses.refresh(now: now)
        var outcomes: [Int64: DeliveryOutcome] = [:]
        try await withThrowingTaskGroup(of: (Int64, DeliveryOutcome).self) { group in
            var pending = records[...]
            var running = 0
            while !pending.isEmpty || running > 0 {
                while running < concurrency, let record = pending.popFirst() {
                    group.addTask { (record.id, await self.send(record, now: now)) }
                    running += 1
                }
                if let (id, outcome) = try await group.next() {
                    outcomes[id] = outcome
                    running -= 1
                }
            }
        }
        return outcomes
    }

    /// One row: paused platforms wait, a day that has ended is missed, the rest is sent and its answer recorded.
    func send(_ record: OutboxRecord, now: Date) async -> DeliveryOutcome {
        if let wait = pauses.remaining(record.platform, now: now) {
            return .paused(error: pauses.reason(record.platform) ?? "\(record.platform) paused", after: wait)
        }
        let request: PushRequest
        do { request = try PushRequest(record) } catch {
            return .failed(error: "\(error)")
        }
        let secondsLeft = Int(request.endOfDay.timeIntervalSince(now).rounded(.down))
        if secondsLeft <= 0 {
            return .missed(error: "its local day ended at \(request.endOfDay.iso8601UTC), before it could be sent")
        }
        guard let sender = senders[request.platform] else {
            return .paused(error: "\(request.platform.serviceName) is not configured", after: pauseInterval)
        }
        let started = ContinuousClock.now
        let outcome = await sender.send(request, secondsLeft: secondsLeft, now: now)
        meters.count(outcome, platform: record.platform, duration: ContinuousClock.now - started)
        return await translate(outcome, record: record, token: request.token, now: now)
    }

    func translate(_ outcome: PushOutcome, record: OutboxRecord, token: String, now: Date) async -> DeliveryOutcome {
        switch outcome {
        case .delivered(let id):
            await pauses.clear(record.platform)
            return .delivered(id: id)
        case .retry(let reason, let after): return .retry(error: reason, after: after)
        case .failed(let reason): return .failed(error: reason)
        case .unregistered(let reason): return .disabled(error: reason, token: token)
        case .configuration(let reason):
            await pauses.pause(record.platform, reason: reason, now: now, until: now.addingTimeInterval(pauseInterval))
            return .paused(error: reason, after: pauseInterval)
        case .renewCredentials(let reason): return .retry(error: reason, after: nil)
        }
    }
}

/// Per platform and outcome, through swift-metrics (Prometheus under `serve`): `dailyverse_push_total`, the services'
/// answer time `dailyverse_push_duration_seconds`, and the devices their services disabled.
struct PushMeters: Sendable {
    static let platforms = Platform.allCases.map(\.rawValue)
    static let outcomes = ["delivered", "retry", "failed", "unregistered", "configuration_error"]
    let totals: [String: Counter]
    let durations: [String: Timer]
    let disabled: [String: Counter]

    init(factory: any MetricsFactory) {
        var totals: [String: Counter] = [:], durations: [String: Timer] = [:], disabled: [String: Counter] = [:]
        for platform in Self.platforms {
            for outcome in Self.outcomes {
                totals[platform + "/" + outcome] = Counter(
                    label: "dailyverse_push_total", dimensions: [("platform", platform), ("outcome", outcome)], factory: factory)
            }
            durations[platform] = Timer(label: "dailyverse_push_duration_seconds", dimensions: [("platform", platform)], factory: factory)
            disabled[platform] = Counter(label: "dailyverse_push_devices_disabled_total", dimensions: [("platform", platform)], factory: factory)
        }
        (self.totals, self.durations, self.disabled) = (totals, durations, disabled)
    }

    func count(_ outcome: PushOutcome, platform: String, duration: Duration) {
        let name: String
        switch outcome {
        case .delivered: name = "delivered"
        case .retry, .renewCredentials: name = "retry"
        case .failed: name = "failed"
        case .unregistered: name = "unregistered"
        case .configuration: name = "configuration_error"
        }
        totals[platform + "/" + name]?.increment()
        durations[platform]?.record(duration: duration)
        if case .unregistered = outcome { disabled[platform]?.increment() }
    }
}

/// An outbox row taken apart for its service.
public struct PushRequest: Sendable {
    /// What each service's request is made of, read off the row.
    public enum Kind: Sendable {
        case apns(token: String, headers: [(String, String)])
        /// The message's bytes and where its `android.ttl` value is, to be rewritten when it is sent.
        case fcm(bytes: [UInt8], ttl: Range<Int>)
        case webPush(endpoint: String, p256dh: String, auth: String, urgency: String, topic: String)
    }

    public let platform: Platform
    public let kind: Kind
    /// The row's payload as rendered (APNs' body, Web Push's plaintext).
    public let payload: String
    /// The token as the device table keeps it (a Web Push endpoint), for disabling the device.
    public let token: String
    /// When the row's local day ends: nothing is sent after.
    public let endOfDay: Date

    struct Malformed: Error, CustomStringConvertible { let description: String }

    init(_ record: OutboxRecord) throws {
        guard let pairs = FlatJSON.strings(record.headers) else {
            throw Malformed(description: "outbox row \(record.id): its headers are not a JSON object of strings")
        }
        let headers = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        payload = record.payload
        guard let platform = Platform(rawValue: record.platform) else {
            throw Malformed(description: "outbox row \(record.id): unknown platform '\(record.platform)'")
        }
        self.platform = platform
        switch platform {
        case .apns:
            guard let path = headers[":path"], path.hasPrefix("/3/device/"), let expiration = headers["apns-expiration"].flatMap(Double.init) else {
                throw Malformed(description: "outbox row \(record.id): no APNs path or expiration")
            }
            let token = String(path.dropFirst("/3/device/".count))
            kind = .apns(token: token, headers: pairs.filter { !$0.0.hasPrefix(":") })
            self.token = token
            endOfDay = Date(timeIntervalSince1970: expiration)
        case .fcm:
            // Read off the rendered message rather than parsed whole (a million a day): `"token":"` and `"ttl":"` are
            // written once each, and cannot occur inside a string, where every quote is escaped.
            // `android` comes first in the message and `token` last: one is looked for from the start, the other
            // from the end.
            let bytes = Array(record.payload.utf8)
            guard let ttlRange = Self.valueRange(of: "ttl", in: bytes, fromEnd: false),
                let tokenRange = Self.valueRange(of: "token", in: bytes, fromEnd: true),
                let ttl = Double(String(decoding: bytes[ttlRange].dropLast(), as: UTF8.self))
            else { throw Malformed(description: "outbox row \(record.id): no FCM token or ttl") }
            kind = .fcm(bytes: bytes, ttl: ttlRange)
            self.token = String(decoding: bytes[tokenRange], as: UTF8.self)
            endOfDay = record.fireAt.addingTimeInterval(ttl)
        case .webpush:
            guard let endpoint = headers[":url"], let p256dh = headers["x-webpush-p256dh"], let auth = headers["x-webpush-auth"],
                let ttl = headers["TTL"].flatMap(Double.init)
            else { throw Malformed(description: "outbox row \(record.id): no Web Push endpoint, keys or TTL") }
            kind = .webPush(endpoint: endpoint, p256dh: p256dh, auth: auth, urgency: headers["Urgency"] ?? "normal", topic: headers["Topic"] ?? "")
            self.token = endpoint
            endOfDay = record.fireAt.addingTimeInterval(ttl)
        }
    }

    /// Where the string value of `"key":"…"` is in rendered JSON (a value without escapes: a token, a ttl), the first
    /// from the start or the last from the end.
    static func valueRange(of key: String, in bytes: [UInt8], fromEnd: Bool) -> Range<Int>? {
        let needle = Array("\"\(key)\":\"".utf8)
        guard bytes.count >= needle.count else { return nil }
        let last = bytes.count - needle.count
        var index = fromEnd ? last : 0
        while index >= 0 && index <= last {
            if bytes[index] == needle[0] && bytes[index..<(index + needle.count)].elementsEqual(needle) {
                let start = index + needle.count
                guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return start..<end
            }
            index += fromEnd ? -1 : 1
        }
        return nil
    }

    /// The FCM message with `android.ttl` counted from now, as the bytes to send.
    static func replacingTTL(in bytes: [UInt8], ttl: Range<Int>, seconds: Int) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(bytes.count + 8)
        buffer.writeBytes(bytes[..<ttl.lowerBound])
        buffer.writeString("\(max(0, seconds))s")
        buffer.writeBytes(bytes[ttl.upperBound...])
        return buffer
    }
}

/// Where a platform's pause is kept for `status` (table `push_pause`).
public protocol PauseStore: Sendable {
    func savePause(platform: String, reason: String, since: Date, until: Date) async throws
    func clearPause(platform: String) async throws
}

/// Pauses many processes share (PostgreSQL): what one process paused, the others read back and honour.
public protocol SharedPauseStore: PauseStore {
    /// The pauses in force at `now`, by platform.
    func activePauses(now: Date) async throws -> [String: (reason: String, until: Date)]
}

extension AppDatabase: PauseStore {
    public func savePause(platform: String, reason: String, since: Date, until: Date) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO push_pause (platform, reason, since, until) VALUES (?, ?, ?, ?)
                    ON CONFLICT (platform) DO UPDATE SET reason = excluded.reason, until = excluded.until
                    """, arguments: [platform, reason, since.timeIntervalSince1970, until.timeIntervalSince1970])
        }
    }

    public func clearPause(platform: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM push_pause WHERE platform = ?", arguments: [platform]) }
    }
}

/// Which platforms are paused by a configuration error, until when and why; kept in the database for `status`.
/// Asked for every row, so a lock rather than an actor: no hop on the common path, where nothing is paused.
final class PauseBoard: Sendable {
    let store: any PauseStore
    private struct State {
        var pauses: [String: (reason: String, until: Date)] = [:]
        /// Platforms known not to be paused in the database (a pause left by an earlier process is removed by the
        /// first row accepted).
        var cleared: Set<String> = []
        /// When the shared pauses were last read.
        var refreshed: Date?
        /// The platforms paused because the database said so (another process's pause), not by an answer here: they
        /// follow the database, and end when it no longer has them (the key fixed and a process's send accepted).
        var adopted: Set<String> = []
    }
    private let state = Mutex(State())
    /// How often the shared pauses are read back, at most.
    static let refreshInterval: TimeInterval = 5

    init(store: any PauseStore) { self.store = store }

    /// Reads back the pauses other processes put in the shared store (none on SQLite, whose one process wrote them
    /// all), at most every `refreshInterval`: a platform another process found misconfigured waits here too, rather
    /// than each process spending requests to find it out; a pause taken from the database ends when the database no
    /// longer has it (a process's send was accepted: the key was fixed). A read that fails changes nothing.
    func refresh(now: Date) async {
        guard let shared = store as? any SharedPauseStore else { return }
        let due = state.withLock { state in
            guard state.refreshed.map({ now.timeIntervalSince($0) >= Self.refreshInterval || now < $0 }) ?? true else { return false }
            state.refreshed = now
            return true
        }
        guard due, let active = try? await shared.activePauses(now: now) else { return }
        state.withLock { state in
            for platform in state.adopted where active[platform] == nil {
                state.pauses[platform] = nil
                state.adopted.remove(platform)
            }
            for (platform, pause) in active where (state.pauses[platform]?.until ?? .distantPast) < pause.until {
                state.pauses[platform] = pause
                state.cleared.remove(platform)
                state.adopted.insert(platform)
            }
        }
    }

    func remaining(_ platform: String, now: Date) -> TimeInterval? {
        state.withLock {
            guard let pause = $0.pauses[platform], now < pause.until else { return nil }
            return pause.until.timeIntervalSince(now)
        }
    }

    func reason(_ platform: String) -> String? { state.withLock { $0.pauses[platform]?.reason } }

    func pause(_ platform: String, reason: String, now: Date, until: Date) async {
        state.withLock {
            $0.pauses[platform] = (reason, until)
            $0.cleared.remove(platform)
            $0.adopted.remove(platform)
        }
        try? await store.savePause(platform: platform, reason: reason, since: now, until: until)
    }

    func clear(_ platform: String) async {
        let write = state.withLock { state -> Bool in
            state.pauses[platform] = nil
            state.adopted.remove(platform)
            return state.cleared.insert(platform).inserted
        }
        guard write else { return }
        try? await store.clearPause(platform: platform)
    }
}

/// Provider tokens in the database, shared by every process of an installation (`serve`, `push test`).
public struct DatabaseCredentialStore: CredentialStore {
    public let database: AppDatabase

    public init(database: AppDatabase) { self.database = database }

    public func load(_ name: String) async throws -> StoredCredential? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM push_credential WHERE name = ?", arguments: [name]).map(Self.credential)
        }
    }

    public func save(_ credential: StoredCredential, unlessNewerThan bound: Date?) async throws -> StoredCredential {
        try await database.write { db in
            // In one transaction: a token another process stored since we looked wins, so that both use it.
            if let current = try Row.fetchOne(db, sql: "SELECT * FROM push_credential WHERE name = ?", arguments: [credential.name]).map(
                Self.credential),
                current.issuedAt > (bound ?? .distantPast)
            {
                return current
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO push_credential (name, value, issued_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [credential.name, credential.value, credential.issuedAt.timeIntervalSince1970, credential.expiresAt.timeIntervalSince1970])
            return credential
        }
    }

    static func credential(_ row: Row) -> StoredCredential {
        StoredCredential(
            name: row["name"], value: row["value"], issuedAt: Date(timeIntervalSince1970: row["issued_at"]),
            expiresAt: Date(timeIntervalSince1970: row["expires_at"]))
    }
}

/// A flat JSON object of strings (the headers the renderer writes), read without Foundation's parser: a million rows
/// a day are taken apart. Nil for anything else.
enum FlatJSON {
    static func strings(_ text: String) -> [(String, String)]? {
        var bytes = Array(text.utf8)[...]
        func skipSpace() { while let first = bytes.first, first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 { bytes.removeFirst() } }
        func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard bytes.first == byte else { return false }
            bytes.removeFirst()
            return true
        }
        func string() -> String? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            var out: [UInt8] = []
            while let byte = bytes.popFirst() {
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = bytes.popFirst() else { return nil }
                    switch escaped {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard bytes.count >= 4, let code = UInt32(String(decoding: bytes.prefix(4), as: UTF8.self), radix: 16),
                            let scalar = Unicode.Scalar(code)
                        else { return nil }
                        bytes.removeFirst(4)
                        out.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default: out.append(escaped)
                    }
                default: out.append(byte)
                }
            }
            return nil
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        var pairs: [(String, String)] = []
        skipSpace()
        if bytes.first == UInt8(ascii: "}") {
            bytes.removeFirst()
        } else {
            repeat {
                guard let key = string(), expect(UInt8(ascii: ":")), let value = string() else { return nil }
                pairs.append((key, value))
            } while expect(UInt8(ascii: ","))
            guard expect(UInt8(ascii: "}")) else { return nil }
        }
        skipSpace()
        return bytes.isEmpty ? pairs : nil
    }
}
