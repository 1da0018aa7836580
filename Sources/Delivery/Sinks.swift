import ContentStore
import Foundation
import GRDB
import Notifications

/// What became of one record handed to a sink.
public enum DeliveryOutcome: Equatable, Sendable {
    case delivered
    /// Try again, after the given delay if the gateway named one (Retry-After).
    case retry(error: String, after: TimeInterval?)
    /// Will never succeed (a 4xx other than 429): recorded as failed.
    case failed(error: String)
}

/// Where outbox rows go. A sink returns an outcome for every record it was given.
public protocol Sink: Sendable {
    var name: String { get }
    func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome]
}

/// Prints each record as a JSON line on standard output.
public struct StdoutSink: Sink {
    public let name = "stdout"
    public init() {}

    public func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome] {
        let text = records.map { $0.jsonLine() + "\n" }.joined()
        FileHandle.standardOutput.write(Data(text.utf8))
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, .delivered) })
    }
}

/// A spool directory of JSON Lines files, one per local date (`2025-03-01.jsonl`), for a gateway to pick up.
///
/// Crash-safe: lines are written and synced before the outbox records them as delivered. After a crash between
/// the two, the records already on disk are found (by idempotency key) and marked delivered without being written
/// again; a line cut short by the crash is removed and written whole.
public final class JSONLinesSpool: Sink, @unchecked Sendable {
    public let name: String
    public let directory: URL
    private let lock = NSLock()
    private var known: [String: Set<String>] = [:]  // file name -> idempotency keys on disk
    private let lockFile: Int32

    public init(directory: URL) throws {
        self.directory = directory
        self.name = "jsonl:\(directory.path)"
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
            throw SinkError("cannot create spool directory '\(directory.path)'")
        }
        // One writer at a time: a second process on the same spool would break the reconciliation.
        lockFile = open(directory.appendingPathComponent(".lock").path, O_CREAT | O_RDWR, 0o644)
        guard lockFile >= 0 else { throw SinkError("cannot write in spool directory '\(directory.path)'") }
        guard flock(lockFile, LOCK_EX | LOCK_NB) == 0 else {
            close(lockFile)
            throw SinkError("spool directory '\(directory.path)' is in use by another process")
        }
    }

    deinit {
        flock(lockFile, LOCK_UN)
        close(lockFile)
    }

    public func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome] {
        lock.lock()
        defer { lock.unlock() }
        var outcomes: [Int64: DeliveryOutcome] = [:]
        let byFile = Dictionary(grouping: records) { "\($0.localDate).jsonl" }
        for (file, group) in byFile.sorted(by: { $0.key < $1.key }) {
            let url = directory.appendingPathComponent(file)
            var keys = try known[file] ?? reconcile(url)
            var text = ""
            for record in group {
                if keys.insert(record.idempotencyKey).inserted { text += record.jsonLine() + "\n" }
                outcomes[record.id] = .delivered
            }
            if !text.isEmpty { try append(text, to: url) }
            known[file] = keys
        }
        return outcomes
    }

    /// The keys already in a spool file; a last line without its newline (a write cut short) is cut off.
    private func reconcile(_ url: URL) throws -> Set<String> {
        guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
        var complete = data
        if let last = data.last, last != UInt8(ascii: "\n") {
            let end = data.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? data.startIndex
            complete = data[data.startIndex..<end]
            guard truncate(url.path, off_t(complete.count)) == 0 else { throw SinkError("cannot repair spool file '\(url.path)'") }
        }
        var keys = Set<String>()
        for line in complete.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let key = object["idempotency_key"] as? String
            else { continue }
            keys.insert(key)
        }
        return keys
    }

    private func append(_ text: String, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw SinkError("cannot open spool file '\(url.path)'") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard n > 0 else { throw SinkError("cannot write spool file '\(url.path)'") }
            written += n
        }
        guard fsync(descriptor) == 0 else { throw SinkError("cannot sync spool file '\(url.path)'") }
    }
}

public struct SinkError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public struct DeliverySummary: Equatable, Sendable {
    public var delivered = 0
    public var retrying = 0
    public var failed = 0
    /// Rows found later than the grace period, never sent.
    public var missed = 0
    public init() {}
}

/// Hands pending outbox rows to a sink and records what happened, in batches.
public struct Deliverer: Sendable {
    public let database: AppDatabase
    public let sink: any Sink
    public var batchSize = 500
    /// Backoff for retries: base × 2^(attempts−1), at most `maximumBackoff`, with full jitter.
    public var baseBackoff: TimeInterval = 2
    public var maximumBackoff: TimeInterval = 600
    public var maximumAttempts = 8
    public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }
    /// A row never handed to the sink by this long after its fire (the daemon was down) is recorded as missed and
    /// not sent, as the scheduler does with a fire found that late; nil: every row is sent, however late.
    public var grace: TimeInterval?

    public init(database: AppDatabase, sink: any Sink) {
        self.database = database
        self.sink = sink
    }

    public func run(now: Date, shouldStop: () -> Bool = { false }) throws -> DeliverySummary {
        var summary = DeliverySummary()
        var seen = Set<Int64>()
        while true {
            let records = try database.deliverable(now: now, limit: batchSize).filter { !seen.contains($0.id) }
            if records.isEmpty { break }
            seen.formUnion(records.map(\.id))
            var live: [OutboxRecord] = [], expired: [OutboxRecord] = []
            for record in records {
                if let grace, record.attempts == 0, Scheduler.action(fireAt: record.fireAt, now: now, grace: grace) == .missed {
                    expired.append(record)
                } else {
                    live.append(record)
                }
            }
            var outcomes: [Int64: DeliveryOutcome] = [:]
            if !live.isEmpty {
                do { outcomes = try sink.deliver(live) } catch {
                    outcomes = Dictionary(uniqueKeysWithValues: live.map { ($0.id, .retry(error: "\(error)", after: nil)) })
                }
            }
            try database.writer.write { db in
                for record in expired {
                    try db.execute(
                        sql: """
                            UPDATE outbox SET status = 'missed', last_error = ?, next_attempt_at = NULL WHERE id = ? AND status = 'pending'
                            """,
                        arguments: ["not handed to \(sink.name) within the grace period of its fire", record.id])
                    summary.missed += 1
                }
                for record in live {
                    let attempts = record.attempts + 1
                    switch outcomes[record.id] ?? .retry(error: "no outcome from \(sink.name)", after: nil) {
                    case .delivered:
                        try db.execute(
                            sql: "UPDATE outbox SET status = 'delivered', attempts = ?, delivered_at = ?, next_attempt_at = NULL WHERE id = ?",
                            arguments: [attempts, now.timeIntervalSince1970, record.id])
                        summary.delivered += 1
                    case .retry(let error, let after) where attempts < maximumAttempts:
                        let backoff = min(maximumBackoff, baseBackoff * pow(2, Double(attempts - 1))) * random()
                        try db.execute(
                            sql: "UPDATE outbox SET attempts = ?, last_error = ?, next_attempt_at = ? WHERE id = ?",
                            arguments: [attempts, error, now.timeIntervalSince1970 + max(after ?? 0, backoff), record.id])
                        summary.retrying += 1
                    case .retry(let error, _), .failed(let error):
                        try db.execute(
                            sql: "UPDATE outbox SET status = 'failed', attempts = ?, last_error = ?, next_attempt_at = NULL WHERE id = ?",
                            arguments: [attempts, error, record.id])
                        summary.failed += 1
                    }
                }
            }
            if records.count < batchSize || shouldStop() { break }
        }
        return summary
    }
}
