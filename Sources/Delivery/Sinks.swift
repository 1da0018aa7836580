import Diagnostics
import Foundation
import GRDB
import Notifications
import Storage
import Synchronization

/// What became of one record handed to a sink.
public enum DeliveryOutcome: Equatable, Sendable {
    /// Accepted; `id` is the service's name for the message where it gives one (`apns-id`, FCM's message name).
    case delivered(id: String? = nil)
    /// Try again, after the given delay if the gateway named one (Retry-After).
    case retry(error: String, after: TimeInterval?)
    /// Will never succeed (a 4xx other than 429): recorded as failed.
    case failed(error: String)
    /// The service no longer knows the device's token (`token`, as it was sent): the row failed and the device is
    /// disabled with the reason, unless it has registered another token since.
    case disabled(error: String, token: String)
    /// Not sent: too late to be of use (its local day ended first). Recorded as missed, as a fire past its grace is.
    case missed(error: String)
    /// Our side is misconfigured for this service (a refused key): the row stays pending, not counted as an attempt,
    /// and waits `after` seconds.
    case paused(error: String, after: TimeInterval)
}

/// Where outbox rows go. A sink returns an outcome for every record it was given.
public protocol Sink: Sendable {
    var name: String { get }
    /// The platforms whose rows this sink takes; nil: all. Rows of the others stay pending, untouched.
    var platforms: Set<String>? { get }
    func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome]
    /// Lets go of connections; the sink is not used after.
    func shutdown() async
    /// Whether a batch may be sent while the one before is still being recorded (see `Deliverer.run`).
    var overlapsRecording: Bool { get }
    /// What the last `deliver` made durable, for the outbox to record in the same transaction as the batch's
    /// outcomes: the spool's files and their sizes after the append (`spool_mark`); empty after a failed `deliver`,
    /// and for other sinks.
    func takeMarks() -> [String: Int64]
    /// Of `records`, those the sink already holds, handed to it before without their outcomes recorded (the spool's
    /// lines of a batch the database could not record): delivered, however late they are found now, and never
    /// judged missed. Empty for a sink that keeps nothing.
    func holding(_ records: [OutboxRecord]) -> Set<Int64>
}

extension Sink {
    public var platforms: Set<String>? { nil }
    public func shutdown() async {}
    public var overlapsRecording: Bool { false }
    public func takeMarks() -> [String: Int64] { [:] }
    public func holding(_ records: [OutboxRecord]) -> Set<Int64> { [] }
}

/// Prints each record as a JSON line on standard output.
public struct StdoutSink: Sink {
    public let name = "stdout"
    public init() {}

    public func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome] {
        let text = records.map { $0.jsonLine() + "\n" }.joined()
        FileHandle.standardOutput.write(Data(text.utf8))
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, .delivered()) })
    }
}

/// A spool directory of JSON Lines files, one per local date (`2025-03-01.jsonl`), for a gateway to pick up.
///
/// Crash-safe: lines are written and synced before the outbox records them as delivered. After a crash between
/// the two, the records already on disk are found (by idempotency key) and marked delivered without being written
/// again; a line cut short by the crash is removed and written whole.
///
/// Only what can be on disk without the outbox knowing it is read back: every line after the size the outbox
/// recorded for the file (`spool_mark`, written in the same transaction as the batch's outcomes), so that a power loss
/// that takes the database back further than the spool (its log is synced at checkpoints, the spool at each append)
/// writes no line twice. A restart reads what the last durable record does not know — in a normal restart the last
/// batch — not the whole day's file; without a recorded size (a spool written before v13, a database without one) it
/// reads the last `reconcileLines` lines.
///
/// While it runs it keeps, per file, the keys of the lines the outbox has not settled (`unsettled` asks it, before each
/// append to the file: a row still pending, or none at all for a device that still exists, as after a power loss that
/// took the database back): a batch whose outcomes were not recorded comes back later, perhaps after other batches,
/// and finds its lines. The size given to the outbox to record is held back to the start of the oldest append with
/// such a line, so a restart reads them back too. Past a few appends it lets the file go and reads it back from the recorded size at its next append,
/// as a restart does. Memory and start-up time do not grow with the spool.
///
/// An append is all or nothing: when a write or sync fails (a full disk), the file is cut back to where the append
/// began, and the error says so as a `local` failure that the deliverer retries until it clears.
public final class JSONLinesSpool: Sink, Sendable {
    public let name: String
    public let directory: URL
    /// How many lines are read back from a file's end the first time this process writes to it.
    public let reconcileLines: Int
    /// How many appends with rows still pending are remembered per file; one more and the file is read back instead.
    /// (Forgetting the oldest, as this did, wrote its lines again when their batch went unrecorded that long: another
    /// file of the batch that could not be written.)
    static let rememberedAppends = 8
    /// How many files' appends are remembered: a day's file is written for two days or so (the zones, retries); an
    /// older one's keys are let go, and a late row for it reads the file's end back, as a new process does. (Kept
    /// for every file, the keys grew by a day's file each day, for as long as the process ran.)
    static let rememberedFiles = 8
    /// By file name, its appends whose rows the outbox may not have recorded, oldest first. Held for a whole delivery:
    /// appends are one at a time.
    private let recent = Mutex<[String: [Appended]]>([:])

    /// Lines of a file from `start` to `end`, by their keys (`device/date`).
    struct Appended {
        let start: Int64
        let end: Int64
        var keys: Set<String>
    }
    /// The files appended to by the last delivery, with their sizes after it: for the outbox to record.
    private let marks = Mutex<[String: Int64]>([:])
    /// The size the outbox recorded for a file (by path), if any.
    private let recordedSize: @Sendable (String) throws -> Int64?
    /// Of these devices, those whose row for this local date the outbox has not settled: pending, or none while the
    /// device exists (without an outbox to ask: all of them).
    private let unsettled: @Sendable (_ localDate: String, _ deviceIDs: [String]) throws -> Set<String>
    private let lockFile: Int32

    public init(
        directory: URL, reconcileLines: Int = 2000, recordedSize: @escaping @Sendable (String) throws -> Int64? = { _ in nil },
        unsettled: @escaping @Sendable (_ localDate: String, _ deviceIDs: [String]) throws -> Set<String> = { Set($1) }
    ) throws {
        self.directory = directory
        self.recordedSize = recordedSize
        self.unsettled = unsettled
        self.name = "jsonl:\(directory.path)"
        self.reconcileLines = max(1, reconcileLines)
        // The spool folder itself is made, not the folders above it: a mistyped path (`jsonl:/var/lib/dailyvesre/spool`)
        // is refused, as a database's missing folder is, rather than made from the root down.
        switch FileKind.of(path: directory.path) {
        case nil:
            guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
                let reason = errno == ENOENT ? "its parent folder does not exist (create it first)" : String(cString: strerror(errno))
                throw SinkError("cannot create spool directory '\(directory.path)': \(reason)")
            }
        case .folder?: break
        case let kind?: throw SinkError("cannot use spool directory '\(directory.path)': \(kind.refusal(wanted: .folder))")
        }
        // One writer at a time: a second process on the same spool would break the reconciliation.
        lockFile = open(directory.appendingPathComponent(".lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lockFile >= 0 else { throw SinkError("cannot write in spool directory '\(directory.path)': \(String(cString: strerror(errno)))") }
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
        // The sizes are the outbox's to record with the records delivered: all of them, or, after a failure part-way,
        // those of the files written before it (`SinkError.delivered`).
        marks.withLock { $0 = [:] }
        return try recent.withLock { recent in
            var outcomes: [Int64: DeliveryOutcome] = [:]
            var sizes: [String: Int64] = [:]
            let byFile = Dictionary(grouping: records) { "\($0.localDate).jsonl" }
            for (file, group) in byFile.sorted(by: { $0.key < $1.key }) {
                do { try deliver(group, to: file, recent: &recent, outcomes: &outcomes, sizes: &sizes) } catch var error as SinkError {
                    marks.withLock { $0 = sizes }
                    error.delivered = Set(outcomes.keys)
                    throw error
                }
            }
            marks.withLock { $0 = sizes }
            // Files are named by their local date: the earliest not written just now go first.
            while recent.count > Self.rememberedFiles, let oldest = recent.keys.filter({ byFile[$0] == nil }).min() { recent[oldest] = nil }
            return outcomes
        }
    }

    /// One file's records of a batch: each key's line written once, their outcomes and the file's size to record.
    private func deliver(
        _ group: [OutboxRecord], to file: String, recent: inout [String: [Appended]], outcomes: inout [Int64: DeliveryOutcome],
        sizes: inout [String: Int64]
    ) throws {
        let url = directory.appendingPathComponent(file)
        var appends = try appendsUnsettled(in: file, recent: &recent)
        var written = Set<String>()
        var text = ""
        for record in group where !written.contains(record.idempotencyKey) && !appends.contains(where: { $0.keys.contains(record.idempotencyKey) }) {
            written.insert(record.idempotencyKey)
            text += record.jsonLine() + "\n"
        }
        if !text.isEmpty {
            let (start, end): (Int64, Int64)
            do { (start, end) = try append(text, to: url) } catch {
                // What is on disk is no longer what we remember: read it back before the next write.
                recent[file] = nil
                throw error
            }
            appends.append(Appended(start: start, end: end, keys: written))
        }
        for record in group { outcomes[record.id] = .delivered() }
        // The size for the outbox to record with this batch: the file's end, or the start of the oldest append with a
        // line of a row this batch does not record, which a restart must read back.
        let inBatch = Set(group.map(\.idempotencyKey))
        if let end = appends.map(\.end).max() {
            sizes[url.path] = appends.filter { !$0.keys.isSubset(of: inBatch) }.map(\.start).min() ?? end
        }
        // Too many appends with rows unsettled: the file is read back from its recorded size before its next append.
        recent[file] = appends.count <= Self.rememberedAppends ? appends : nil
    }

    /// The records whose lines are in their day's file, remembered or read back as the next append would (`deliver`
    /// finds them there and writes none again); none when the file cannot be read.
    public func holding(_ records: [OutboxRecord]) -> Set<Int64> {
        recent.withLock { recent in
            var held: Set<Int64> = []
            for (file, group) in Dictionary(grouping: records, by: { "\($0.localDate).jsonl" }) {
                guard let appends = try? appendsUnsettled(in: file, recent: &recent) else { continue }
                if appends.count > Self.rememberedAppends { recent[file] = nil }
                let keys = Set(appends.flatMap(\.keys))
                held.formUnion(group.filter { keys.contains($0.idempotencyKey) }.map(\.id))
            }
            return held
        }
    }

    /// `file`'s appends whose rows the outbox may not have recorded: those remembered, or the file read back from its
    /// recorded size; kept in `recent`. What the outbox has settled will not come back: only the lines of rows it has
    /// not are kept.
    private func appendsUnsettled(in file: String, recent: inout [String: [Appended]]) throws -> [Appended] {
        let appends = try recent[file].map { unsettledOnly($0, file: file) } ?? [try reconcile(directory.appendingPathComponent(file))]
        recent[file] = appends
        return appends
    }

    /// `appends` with only the lines of rows the outbox has not settled (all of them when it cannot say).
    private func unsettledOnly(_ appends: [Appended], file: String) -> [Appended] {
        let keys = appends.flatMap(\.keys)
        guard !keys.isEmpty, file.hasSuffix(".jsonl") else { return appends }
        let date = String(file.dropLast(6))
        let devices = keys.compactMap { key in key.hasSuffix("/" + date) ? String(key.dropLast(date.count + 1)) : nil }
        guard let kept = try? unsettled(date, devices) else { return appends }
        return appends.compactMap { append in
            var left = append
            left.keys = append.keys.filter { !$0.hasSuffix("/" + date) || kept.contains(String($0.dropLast(date.count + 1))) }
            return left.keys.isEmpty ? nil : left
        }
    }

    /// How many files' appends are remembered now.
    var filesRemembered: Int { recent.withLock { $0.count } }

    /// How many of `file`'s appends with rows pending are remembered now (nil: none; it is read back before its next
    /// append).
    func appendsRemembered(_ file: String) -> Int? { recent.withLock { $0[file]?.count } }

    public func takeMarks() -> [String: Int64] {
        marks.withLock { marks in
            defer { marks = [:] }
            return marks
        }
    }

    /// The lines of a spool file that the outbox may not know of: those after the size it recorded, or without one the
    /// last `reconcileLines`, of rows it still has pending; a last line without its newline (a write cut short) is cut
    /// off first.
    private func reconcile(_ url: URL) throws -> Appended {
        let descriptor = open(url.path, O_RDWR | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return Appended(start: 0, end: 0, keys: []) }
            throw SinkError.local("cannot open spool file '\(url.path)'", errno: errno)
        }
        defer { close(descriptor) }
        let size = lseek(descriptor, 0, SEEK_END)
        guard size > 0 else { return Appended(start: 0, end: 0, keys: []) }
        let (start, keys) = try keys(in: descriptor, size: size, url: url)
        // Lines another process wrote and had not synced when it was killed are on disk before they are taken for
        // written: their rows are about to be recorded as delivered.
        guard fsync(descriptor) == 0 else { throw SinkError.local("cannot sync spool file '\(url.path)'", errno: errno) }
        let read = Appended(start: Int64(start), end: Int64(lseek(descriptor, 0, SEEK_END)), keys: keys)
        return unsettledOnly([read], file: url.lastPathComponent).first ?? Appended(start: read.end, end: read.end, keys: [])
    }

    private func keys(in descriptor: Int32, size: off_t, url: URL) throws -> (start: off_t, keys: Set<String>) {
        let recorded: Int64?
        do { recorded = try recordedSize(url.path) } catch { throw SinkError("cannot read the spool's recorded size: \(error)", isLocal: true) }
        if let recorded, recorded >= 0, recorded <= Int64(size) {
            return (off_t(recorded), try keys(descriptor, from: off_t(recorded), to: size, url: url))
        }
        // Read backwards in chunks until enough lines are in hand (one more newline than lines, or the file's start).
        var tail: [UInt8] = []
        var offset = size
        var newlines = 0
        let chunk: off_t = 64 * 1024
        while offset > 0 && newlines <= reconcileLines {
            let length = min(chunk, offset)
            offset -= length
            var buffer = [UInt8](repeating: 0, count: Int(length))
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, Int(length), offset) }
            guard count == Int(length) else { throw SinkError.local("cannot read spool file '\(url.path)'", errno: errno) }
            newlines += buffer.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            tail = buffer + tail
        }
        // A cut-off last line goes.
        if tail.last != UInt8(ascii: "\n") {
            let keep = tail.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let newSize = offset + off_t(keep)
            guard ftruncate(descriptor, newSize) == 0, fsync(descriptor) == 0 else {
                throw SinkError.local("cannot repair spool file '\(url.path)'", errno: errno)
            }
            tail.removeSubrange(keep...)
        }
        var lines = tail.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        if offset > 0, !lines.isEmpty { lines.removeFirst() }  // the first may be the end of a line before the tail
        return (offset, Set(lines.suffix(reconcileLines).compactMap(Self.key)))
    }

    /// A line's key; nil for a line that is not a record.
    static func key(of line: some Collection<UInt8>) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["idempotency_key"] as? String
    }

    /// The keys of the whole lines from `start` (a line's start) to `end`; a last line without its newline is cut
    /// off the file. Read forwards in chunks, holding only the keys.
    private func keys(_ descriptor: Int32, from start: off_t, to end: off_t, url: URL) throws -> Set<String> {
        var keys = Set<String>()
        var offset = start
        var partial: [UInt8] = []
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk)
        while offset < end {
            let length = Int(min(off_t(chunk), end - offset))
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, length, offset) }
            guard count == length else { throw SinkError.local("cannot read spool file '\(url.path)'", errno: errno) }
            offset += off_t(count)
            var lineStart = 0
            for index in 0..<count where buffer[index] == UInt8(ascii: "\n") {
                partial.append(contentsOf: buffer[lineStart..<index])
                if let key = Self.key(of: partial) { keys.insert(key) }
                partial.removeAll(keepingCapacity: true)
                lineStart = index + 1
            }
            partial.append(contentsOf: buffer[lineStart..<count])
        }
        // A cut-off last line goes.
        if !partial.isEmpty {
            guard ftruncate(descriptor, end - off_t(partial.count)) == 0, fsync(descriptor) == 0 else {
                throw SinkError.local("cannot repair spool file '\(url.path)'", errno: errno)
            }
        }
        return keys
    }

    /// Appends and syncs `text`, or leaves the file as it was: on a failed write or sync it is cut back. Where the
    /// append began and the file's size after it.
    private func append(_ text: String, to url: URL) throws -> (start: Int64, end: Int64) {
        let descriptor = open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SinkError.local("cannot open spool file '\(url.path)'", errno: errno) }
        defer { close(descriptor) }
        let start = lseek(descriptor, 0, SEEK_END)
        let bytes = Array(text.utf8)
        var written = 0
        var failure: Int32? = nil
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if n > 0 {
                written += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            failure = n < 0 ? errno : ENOSPC
            break
        }
        if failure == nil, fsync(descriptor) != 0 { failure = errno }
        guard let code = failure else { return (Int64(start), Int64(start) + Int64(bytes.count)) }
        // All or nothing: cut back to where this append began (if that fails too, the next write reads the file back
        // and repairs it).
        if start >= 0 {
            _ = ftruncate(descriptor, start)
            _ = fsync(descriptor)
        }
        throw SinkError.local("cannot write spool file '\(url.path)'", errno: code)
    }
}

public struct SinkError: UserFacingError, Equatable {
    public let description: String
    /// A failure of this machine (a full disk, an I/O error), not of the records: retried until it clears, never
    /// counted against a row's attempts.
    public let isLocal: Bool
    /// The records a sink delivered before it failed (the spool's files written before the one that could not be):
    /// recorded as delivered, with the sink's marks for them, rather than tried again.
    public var delivered: Set<Int64> = []

    public init(_ description: String, isLocal: Bool = false) {
        self.description = description
        self.isLocal = isLocal
    }

    /// "cannot write spool file '…': No space left on device (errno 28)".
    public static func local(_ what: String, errno code: Int32) -> SinkError {
        SinkError("\(what): \(String(cString: strerror(code))) (errno \(code))", isLocal: true)
    }
}

public struct DeliverySummary: Equatable, Sendable {
    public var delivered = 0
    public var retrying = 0
    public var failed = 0
    /// Rows found later than the grace period, never sent.
    public var missed = 0
    /// Rows kept pending because this machine could not write (a full disk) or a service is paused by a configuration
    /// error: not an attempt, tried again after a wait.
    public var deferred = 0
    /// Devices disabled because their service no longer knows their token.
    public var disabled = 0
    /// The last error met (a row's retry or failure, or the local failure), for the log.
    public var lastError: String?
    /// Set when the sink failed locally (a full disk, an I/O error): the log says it at error level.
    public var localError: String?
    /// Why a service paused, when one did.
    public var pausedError: String?
    public init() {}
}

/// Hands pending outbox rows to a sink and records what happened, in batches.
public struct Deliverer: Sendable {
    /// Where the rows come from and their outcomes go: the SQLite outbox, or PostgreSQL's shared by many processes.
    public let queue: any OutboxQueue
    public let sink: any Sink
    public var batchSize = 500
    /// Backoff for retries: base × 2^(attempts−1), at most `maximumBackoff`, with full jitter.
    public var baseBackoff: TimeInterval = 2
    public var maximumBackoff: TimeInterval = 600
    public var maximumAttempts = 8
    /// How long rows wait after a local failure (the spool's disk full) before they are tried again.
    public var localRetryDelay: TimeInterval = 30
    public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }
    /// A row never handed to the sink by this long after its fire (the daemon was down) is recorded as missed and
    /// not sent, as the scheduler does with a fire found that late; nil: every row is sent, however late.
    public var grace: TimeInterval?
    /// The time each batch is taken, judged and recorded at; nil: the pass's `now`. A pass can outlast a lease (a
    /// backlog at the peak): a batch taken late is leased from when it is taken, not from when the pass began, or
    /// another process would find its lease already over and send it too.
    public var clock: (@Sendable () -> Date)?

    public init(queue: any OutboxQueue, sink: any Sink) {
        self.queue = queue
        self.sink = sink
    }

    /// A deliverer of the SQLite outbox of `database`.
    public init(database: AppDatabase, sink: any Sink) { self.init(queue: SQLiteOutbox(database: database), sink: sink) }

    /// Delivers every row due by `now`, batch by batch, in id order; `shouldStop` is asked between batches.
    ///
    /// The next batch is read while the sink sends the current one. A sink that `overlapsRecording` (the push
    /// services, where a batch is seconds of network) sends a batch while the one before is being recorded; the
    /// others are recorded before the next is handed over (the spool's crash recovery counts on it).
    public func run(now: Date, shouldStop: () -> Bool = { false }) async throws -> DeliverySummary {
        var summary = DeliverySummary()
        let overlap = sink.overlapsRecording
        var recording: Task<DeliverySummary, any Error>? = nil
        let clock = clock
        let moment: @Sendable () -> Date = { clock?() ?? now }
        do {
            var next = try await fetch(after: nil, now: moment())
            while let last = next.last {
                let records = next
                var live: [OutboxRecord] = [], expired: [OutboxRecord] = []
                let judged = moment()
                for record in records {
                    if let grace, record.attempts == 0, Scheduler.action(fireAt: record.fireAt, now: judged, grace: grace) == .missed {
                        expired.append(record)
                    } else {
                        live.append(record)
                    }
                }
                // Rows the sink already holds went out when they were handed to it, in time: they are delivered (the
                // sink finds their lines and writes none again), however long the database took to say so.
                if !expired.isEmpty {
                    let held = sink.holding(expired)
                    live += expired.filter { held.contains($0.id) }
                    expired.removeAll { held.contains($0.id) }
                }
                let prefetch: Task<[OutboxRecord], any Error>? =
                    records.count < batchSize ? nil : Task { [self] in try await fetch(after: last.id, now: moment()) }
                var outcomes: [Int64: DeliveryOutcome] = [:]
                var marks: [String: Int64] = [:]
                if !live.isEmpty {
                    do {
                        outcomes = try await sink.deliver(live)
                        marks = sink.takeMarks()
                    } catch let error as SinkError where error.isLocal {
                        // Not the records' fault: they stay pending with their attempts as they were, and wait a little;
                        // those the sink delivered before it failed are recorded so, with what it made durable for them.
                        summary.localError = error.description
                        marks = sink.takeMarks()
                        outcomes = Dictionary(
                            uniqueKeysWithValues: live.map {
                                ($0.id, error.delivered.contains($0.id) ? .delivered() : .paused(error: error.description, after: localRetryDelay))
                            })
                    } catch {
                        outcomes = Dictionary(uniqueKeysWithValues: live.map { ($0.id, .retry(error: "\(error)", after: nil)) })
                    }
                }
                if let previous = recording {
                    recording = nil
                    summary.add(try await previous.value)
                }
                if overlap {
                    let outcomesOfBatch = outcomes
                    recording = Task { [self] in
                        try await record(live: live, outcomes: outcomesOfBatch, expired: expired, marks: marks, now: moment())
                    }
                } else {
                    summary.add(try await record(live: live, outcomes: outcomes, expired: expired, marks: marks, now: moment()))
                }
                // After a local failure the next batch would fail alike: the pass ends, and the rows wait their delay.
                // The batch read ahead was taken: it is given back, not left to wait out a lease.
                if shouldStop() || summary.localError != nil {
                    if let taken = try? await prefetch?.value, !taken.isEmpty { try? await queue.release(taken.map(\.id)) }
                    break
                }
                next = try await prefetch?.value ?? []
            }
        } catch {
            // What was sent is recorded before the error goes up.
            if let recording { _ = try? await recording.value }
            throw error
        }
        if let recording { summary.add(try await recording.value) }
        return summary
    }

    /// The next batch of rows due, after the one with id `after`.
    func fetch(after: Int64?, now: Date) async throws -> [OutboxRecord] {
        try await queue.take(after: after, now: now, limit: batchSize, platforms: sink.platforms)
    }

    /// Records a batch's outcomes in one transaction, with what the sink made durable for it (`marks`).
    func record(
        live: [OutboxRecord], outcomes: [Int64: DeliveryOutcome], expired: [OutboxRecord], marks: [String: Int64] = [:], now: Date
    ) async throws -> DeliverySummary {
        var (settlement, summary) = settle(live: live, outcomes: outcomes, expired: expired, now: now)
        settlement.marks = marks
        summary.disabled = try await queue.settle(settlement, now: now)
        return summary
    }

    /// What a batch's outcomes do to its rows (pure): each row's new state, the devices their service no longer
    /// knows, and the summary (but for the devices the store finds it did disable).
    func settle(live: [OutboxRecord], outcomes: [Int64: DeliveryOutcome], expired: [OutboxRecord], now: Date) -> (OutboxSettlement, DeliverySummary) {
        let at = now.timeIntervalSince1970
        var settlement = OutboxSettlement()
        var summary = DeliverySummary()
        for record in expired {
            settlement.rows.append(.missed(id: record.id, error: "not handed to \(sink.name) within the grace period of its fire"))
            summary.missed += 1
        }
        for record in live {
            let attempts = record.attempts + 1
            switch outcomes[record.id] ?? .retry(error: "no outcome from \(sink.name)", after: nil) {
            case .delivered(let id):
                settlement.rows.append(.delivered(id: record.id, attempts: attempts, serviceID: id))
                summary.delivered += 1
            case .missed(let error):
                settlement.rows.append(.missed(id: record.id, error: error))
                summary.missed += 1
            case .paused(let error, let after):
                settlement.rows.append(.deferred(id: record.id, error: error, until: at + max(0, min(after, 86_400))))
                summary.deferred += 1
                summary.lastError = error
                if summary.pausedError == nil { summary.pausedError = error }
            case .retry(let error, let after) where attempts < maximumAttempts:
                let backoff = min(maximumBackoff, baseBackoff * pow(2, Double(attempts - 1))) * random()
                settlement.rows.append(.retry(id: record.id, attempts: attempts, error: error, next: at + max(after ?? 0, backoff)))
                summary.retrying += 1
                summary.lastError = error
            case .retry(let error, _), .failed(let error), .disabled(let error, _):
                settlement.rows.append(.failed(id: record.id, attempts: attempts, error: error))
                summary.failed += 1
                summary.lastError = error
            }
            if case .disabled(let error, let token) = outcomes[record.id] {
                settlement.disable.append((deviceID: record.deviceID, token: token, reason: error))
            }
        }
        return (settlement, summary)
    }
}

/// What a batch's outcomes change in the outbox, worked out once and written by each store in its own SQL.
public struct OutboxSettlement: Sendable {
    public enum Row: Sendable, Equatable {
        case delivered(id: Int64, attempts: Int, serviceID: String?)
        /// Not sent, and never will be (its day ended, or it was found past the grace period); only while pending.
        case missed(id: Int64, error: String)
        /// Kept pending with its attempts as they were (a paused service, a full disk), until `until`.
        case deferred(id: Int64, error: String, until: Double)
        case retry(id: Int64, attempts: Int, error: String, next: Double)
        case failed(id: Int64, attempts: Int, error: String)
    }

    public var rows: [Row] = []
    /// Devices whose service no longer knows the token they had when the row was sent.
    public var disable: [(deviceID: String, token: String, reason: String)] = []
    /// How far each spool file is known to hold its rows (`spool_mark`), written with the outcomes.
    public var marks: [String: Int64] = [:]

    public init() {}
}

/// Where a `Deliverer` takes rows from and records their outcomes.
public protocol OutboxQueue: Sendable {
    /// The next rows due by `now` after the one with id `after` (in id order, at most `limit`), for the platforms a
    /// sink takes (nil: all).
    func take(after: Int64?, now: Date, limit: Int, platforms: Set<String>?) async throws -> [OutboxRecord]

    /// Writes a batch's settlement in one transaction; how many devices it disabled.
    func settle(_ settlement: OutboxSettlement, now: Date) async throws -> Int

    /// Gives back rows taken and not handed to the sink (a pass stopping with a batch read ahead), so that they wait
    /// for no lease.
    func release(_ ids: [Int64]) async throws
}

extension OutboxQueue {
    /// Nothing to give back where rows are read, not leased.
    public func release(_ ids: [Int64]) async throws {}
}

/// The SQLite outbox: one process delivers from it (the scheduler lock), so rows are read, not leased.
public struct SQLiteOutbox: OutboxQueue {
    public let database: AppDatabase

    public init(database: AppDatabase) { self.database = database }

    public func take(after: Int64?, now: Date, limit: Int, platforms: Set<String>?) async throws -> [OutboxRecord] {
        try await database.read { db in try AppDatabase.deliverable(db, now: now, limit: limit, platforms: platforms, after: after) }
    }

    public func settle(_ settlement: OutboxSettlement, now: Date) async throws -> Int {
        let at = now.timeIntervalSince1970
        return try await database.write { db in
            for (path, size) in settlement.marks {
                try db.execute(
                    sql:
                        "INSERT INTO spool_mark (path, size, at) VALUES (?, ?, ?) ON CONFLICT (path) DO UPDATE SET size = excluded.size, at = excluded.at",
                    arguments: [path, size, at])
            }
            for row in settlement.rows {
                switch row {
                case .delivered(let id, let attempts, let serviceID):
                    try db.execute(
                        sql: """
                            UPDATE outbox SET status = 'delivered', attempts = ?, delivered_at = ?, last_attempt_at = ?, next_attempt_at = NULL,
                                service_id = ? WHERE id = ?
                            """,
                        arguments: [attempts, at, at, serviceID, id])
                case .missed(let id, let error):
                    try db.execute(
                        sql: "UPDATE outbox SET status = 'missed', last_error = ?, next_attempt_at = NULL WHERE id = ? AND status = 'pending'",
                        arguments: [error, id])
                case .deferred(let id, let error, let until):
                    try db.execute(
                        sql: "UPDATE outbox SET last_error = ?, next_attempt_at = ? WHERE id = ? AND status = 'pending'",
                        arguments: [error, until, id])
                case .retry(let id, let attempts, let error, let next):
                    try db.execute(
                        sql: "UPDATE outbox SET attempts = ?, last_error = ?, last_attempt_at = ?, next_attempt_at = ? WHERE id = ?",
                        arguments: [attempts, error, at, next, id])
                case .failed(let id, let attempts, let error):
                    try db.execute(
                        sql:
                            "UPDATE outbox SET status = 'failed', attempts = ?, last_error = ?, last_attempt_at = ?, next_attempt_at = NULL WHERE id = ?",
                        arguments: [attempts, error, at, id])
                }
            }
            var disabled = 0
            for device in settlement.disable {
                disabled += try AppDatabase.disableDevice(db, id: device.deviceID, token: device.token, reason: device.reason, now: now) ? 1 : 0
            }
            return disabled
        }
    }
}

extension DeliverySummary {
    mutating func add(_ other: DeliverySummary) {
        delivered += other.delivered
        retrying += other.retrying
        failed += other.failed
        missed += other.missed
        deferred += other.deferred
        disabled += other.disabled
        lastError = other.lastError ?? lastError
        localError = localError ?? other.localError
        pausedError = pausedError ?? other.pausedError
    }
}
