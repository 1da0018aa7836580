import AppSchema
import ContentStore
import DailyVerseTestSupport
import Delivery
import Foundation
import Logging
import Notifications
import ServiceLifecycle
import Storage
import Synchronization
import Testing

@testable import Daemon

@Suite struct ConfigFileTests {
    /// A setting read from the file is its value as written, whatever its TOML type: `serve` reads every setting as the
    /// command line gives it (a number stopped it, read as a string), and a number keeps its leading zero (an id of
    /// digits is the id).
    @Test func aSettingIsItsValueAsWritten() throws {
        let file = try ConfigFile(parsing: "max_devices_per_user = 20\napns_team_id = 0123456789\nratio = 1.50\nflag = true\nname = \"x\"")
        #expect(file.text("max_devices_per_user") == "20")
        #expect(file.text("apns_team_id") == "0123456789")
        #expect(file.text("ratio") == "1.50")
        #expect(file.text("flag") == "true")
        #expect(file.text("name") == "x")
        #expect(file.text("missing") == nil)
    }

    @Test func readsTheDocumentedSubset() throws {
        let file = try ConfigFile(
            parsing: """
                # comment
                database = "/var/lib/dailyverse/db.sqlite"   # trailing comment
                grace = '90m'
                retries = 8
                ratio = 0.5
                verbose = true
                quote = "a \\"b\\" # not a comment"
                """)
        #expect(try file.string("database") == "/var/lib/dailyverse/db.sqlite")
        #expect(try file.string("grace") == "90m")
        #expect(try file.integer("retries") == 8)
        #expect(file.values["ratio"] == .float(0.5))
        #expect(file.values["verbose"] == .bool(true))
        #expect(try file.string("quote") == "a \"b\" # not a comment")
        #expect(throws: ConfigError.wrongType(key: "retries", expected: "a string")) { try file.string("retries") }
    }

    /// A file saved with Windows line ends, or with a byte-order mark, reads as the same file saved on Linux: its
    /// settings are read, and its errors are on their own lines (it was one line, all comment after a first `#`).
    @Test func windowsLineEndsAndAByteOrderMarkReadAsLinux() throws {
        let linux = "# DailyVerse\ngrace = '90m'\nretries = 8\n"
        for text in [
            linux.replacingOccurrences(of: "\n", with: "\r\n"), "\u{FEFF}" + linux, "\u{FEFF}" + linux.replacingOccurrences(of: "\n", with: "\r\n"),
        ] {
            let file = try ConfigFile(parsing: text)
            #expect(try file.string("grace") == "90m" && file.integer("retries") == 8, "\(text.debugDescription)")
        }
        let error = #expect(throws: ConfigError.self) { try ConfigFile(parsing: "# x\r\ngrace = '90m'\r\nsink stdout\r\n", file: "c.toml") }
        #expect(error?.description.hasPrefix("c.toml:3: expected key = value") == true, "\(String(describing: error))")
    }

    /// A database address written without its quotes is an invalid value, said without its password.
    @Test func anInvalidValueNeverShowsAPassword() {
        // Unquoted, a value is cut at `#`, which a password may hold: `postgresql://u:S3cret#x@db/dv` reads as `…u:S3cret`.
        for text in [
            "database = postgresql://u:S3cret@db/dv", "database = \"postgresql://u:S3cret@db/dv", "x = a?password=S3cret",
            "database = postgresql://u:S3cret#x@db/dv",
        ] {
            let error = #expect(throws: ConfigError.self) { try ConfigFile(parsing: text, file: "c.toml") }
            let line = error?.description ?? ""
            #expect(line.hasPrefix("c.toml:1: invalid value for ") && !line.contains("S3cret"), "\(line)")
        }
        #expect(ConfigFile.shown("2h x") == "2h x")
    }

    @Test func anUnknownKeyIsNamedWithItsFileAndLine() throws {
        let file = try ConfigFile(parsing: "grace = '2h'\n\nsink = 'stdout'\ngrase = '1h'\n", file: "/etc/dailyverse/config.toml")
        #expect(throws: ConfigError.unknownKey(file: "/etc/dailyverse/config.toml", line: 4, key: "grase")) { try file.checkKeys(["grace", "sink"]) }
        #expect(throws: Never.self) { try file.checkKeys(["grace", "sink", "grase"]) }
        #expect(ConfigError.unknownKey(file: "c.toml", line: 4, key: "grase").description == "c.toml:4: unknown configuration key 'grase'")
    }

    /// The file is read as every input file is (`InputFile`), within a limit: a folder or a file over the limit is
    /// one line naming the file and what is wrong (a FIFO and a device, which would hang a test that reads them through
    /// anything else, are the command line tests').
    @Test func readsARegularFileWithinItsLimit() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let setting = Data("grace = '90m'\n".utf8)
        let atLimit = folder.appendingPathComponent("at-limit.toml").path
        try (setting + Data(repeating: UInt8(ascii: "#"), count: ConfigFile.maximumBytes - setting.count)).write(to: URL(fileURLWithPath: atLimit))
        #expect(try ConfigFile(contentsOf: atLimit).string("grace") == "90m")
        let overLimit = folder.appendingPathComponent("over-limit.toml").path
        try (setting + Data(repeating: UInt8(ascii: "#"), count: ConfigFile.maximumBytes - setting.count + 1)).write(
            to: URL(fileURLWithPath: overLimit))
        #expect(throws: ConfigError.unreadable(path: overLimit, reason: "larger than the limit of 1 MiB")) { try ConfigFile(contentsOf: overLimit) }
        #expect(throws: ConfigError.unreadable(path: folder.path, reason: "not a regular file (a folder)")) {
            try ConfigFile(contentsOf: folder.path)
        }
        let missing = folder.appendingPathComponent("missing.toml").path
        #expect(throws: ConfigError.unreadable(path: missing, reason: "no such file")) { try ConfigFile(contentsOf: missing) }
        #expect(
            ConfigError.unreadable(path: "c.toml", reason: "not a regular file (a FIFO)").description
                == "cannot read configuration file 'c.toml': not a regular file (a FIFO)")
    }

    @Test(arguments: [
        ("key", 1, "expected key = value"),
        ("key = ", 1, "invalid value"),
        ("a = 1\na = 2", 2, "set twice"),
        // Every setting is a top-level key: a section, even an empty one, is refused (`[extra]` passed unnoticed).
        ("[bad name]", 1, "a section ([bad name]) is not read"),
        ("grace = '2h'\n[extra]", 2, "a section ([extra]) is not read"),
        ("[webhook]\nurl = \"https://gateway.example/push\"", 1, "a section ([webhook]) is not read"),
        ("[[servers]]", 1, "is not read"),
        ("x = \"open", 1, "invalid value"),
        ("ok = 1\nk y = 2", 2, "invalid key"),
        ("v = [1, 2]", 1, "invalid value"),
    ])
    func refusesWhatItDoesNotUnderstand(text: String, line: Int, reason: String) {
        let error = #expect(throws: ConfigError.self) { try ConfigFile(parsing: text, file: "c.toml") }
        #expect(error?.description.hasPrefix("c.toml:\(line): ") == true, "\(String(describing: error))")
        #expect(error?.description.contains(reason) == true, "\(String(describing: error))")
    }
}

@Suite struct ServiceTests {
    @Test func theSchedulerRunsAPassAndStopsOnGracefulShutdown() async throws {
        let database = try AppDatabase.inMemory()
        try database.seed(bundledContent)
        let now = instant("2025-03-01T08:05:00Z")
        _ = try database.addDevice(
            DeviceSettings(token: try .apns(validating: String(repeating: "a", count: 64)), timeZone: "UTC"),
            now: now.addingTimeInterval(-86_400 * 30))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-daemon-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let emitter = Emitter(database: database, configuration: EmitConfiguration(push: PushConfiguration(apnsTopic: "t")))
        let deliverer = Deliverer(database: database, sink: try JSONLinesSpool(directory: folder))
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let group = DaemonBuilder.serviceGroup(
            database: database, emitter: emitter, deliverer: deliverer, clock: { now }, logger: logger, notifier: SystemdNotifier(environment: [:]))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // Wait for the pass to land (bounded), then shut down.
            for _ in 0..<500 where try database.outbox(status: .delivered).isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(try database.outbox(status: .delivered).count == 1)
    }

    @Test func emittingAheadTheSchedulerWakesAMinuteBeforeTheFirstFireThenAtEachRowsTime() async throws {
        let database = try AppDatabase.inMemory()
        try database.seed(bundledContent)
        let at = instant
        for (n, time) in ["08:10", "08:12"].enumerated() {
            _ = try database.addDevice(
                DeviceSettings(
                    token: try .apns(validating: String(format: "%064x", n + 1)), timeZone: "UTC", reminderTime: try ReminderTime(parsing: time)),
                now: at("2025-03-01T00:00:00Z"))
        }
        func scheduler(ahead: TimeInterval) throws -> SchedulerService {
            SchedulerService(
                emitter: Emitter(database: database, configuration: EmitConfiguration(push: PushConfiguration(apnsTopic: "t"), ahead: ahead)),
                deliverer: Deliverer(database: database, sink: StdoutSink()), clock: { at("2025-03-01T08:00:00Z") },
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, notifier: SystemdNotifier(environment: [:]), heartbeat: Heartbeat(),
                maximumSleep: 3600)
        }
        #expect(try await scheduler(ahead: 0).nextWake(after: at("2025-03-01T08:00:00Z")) == 600)
        let early = try scheduler(ahead: 900)
        #expect(try await early.nextWake(after: at("2025-03-01T08:00:00Z")) == 540)
        // Woken then, it writes both fires; it next wakes for the first row's time, then the second's.
        #expect(try await early.emitter.emit(now: at("2025-03-01T08:09:00Z"), shouldStop: { false }).queued == 2)
        #expect(try await early.nextWake(after: at("2025-03-01T08:09:00Z")) == 60)
        try await database.write { db in
            try db.execute(
                sql: "UPDATE outbox SET status = 'delivered' WHERE fire_at = ?", arguments: [at("2025-03-01T08:10:00Z").timeIntervalSince1970])
        }
        #expect(try await early.nextWake(after: at("2025-03-01T08:10:00Z")) == 120)
        // A sink that does not take the rows' platform never sends them: it waits for the queue instead (an hour at
        // most here), where it woke every 50 ms.
        let fcmOnly = SchedulerService(
            emitter: early.emitter, deliverer: Deliverer(database: database, sink: FCMOnlySink()), clock: { at("2025-03-01T08:00:00Z") },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, notifier: SystemdNotifier(environment: [:]), heartbeat: Heartbeat(),
            maximumSleep: 3600)
        #expect(try await fcmOnly.nextWake(after: at("2025-03-01T08:10:00Z")) == 3600)
    }

    /// A sink of FCM rows only.
    struct FCMOnlySink: Sink {
        let name = "fcm only"
        var platforms: Set<String>? { ["fcm"] }
        func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] { [:] }
    }

    @Test func notifierSpeaksTheSdNotifyProtocol() throws {
        // A datagram socket stands in for systemd's.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dv-notify-\(UUID().uuidString.prefix(8))").path
        let server = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer {
            close(server)
            unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, b) in path.utf8.enumerated() { buffer[i] = b } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "60000000"])
        #expect(notifier.watchdogInterval == 60)
        notifier.ready(status: "scheduling")
        notifier.watchdog()
        notifier.stopping()
        var messages: [String] = []
        for _ in 0..<3 {
            var buffer = [UInt8](repeating: 0, count: 256)
            let n = recv(server, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { messages.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
        }
        #expect(messages == ["READY=1\nSTATUS=scheduling", "WATCHDOG=1", "STOPPING=1"])
    }
}

/// A service that fails: as the HTTP API does when its address is taken.
struct FailingService: Service {
    struct Failure: Error {}
    func run() async throws { throw Failure() }
}

@Suite struct CancellationTests {

    /// When one service fails, the group cancels the others: each must return (no busy loop on a cancelled sleep),
    /// and the group's run throws the failure. The watchdog runs its loop here (WATCHDOG_USEC set).
    @Test func whenAServiceFailsEveryOtherServiceReturns() async throws {
        let database = try AppDatabase.inMemory()
        try database.seed(bundledContent)
        let now = instant("2025-03-01T08:05:00Z")
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let group = DaemonBuilder.serviceGroup(
            database: database, emitter: Emitter(database: database, configuration: EmitConfiguration(push: PushConfiguration(apnsTopic: "t"))),
            deliverer: Deliverer(database: database, sink: StdoutSink()), clock: { now }, logger: logger,
            notifier: SystemdNotifier(environment: ["WATCHDOG_USEC": "2000000"]), services: [FailingService()])
        let started = Date()
        await #expect(throws: FailingService.Failure.self) { try await group.run() }
        // Every service returned: run() came back, long before the hourly maintenance's sleep would have ended
        // (under a busy loop it would never come back). Generous, for a loaded machine.
        #expect(Date().timeIntervalSince(started) < 600)
    }

    /// The scheduler returns on cancellation too (not only on graceful shutdown), with the pass it was in finished.
    @Test func theSchedulerReturnsWhenItsTaskIsCancelled() async throws {
        let database = try AppDatabase.inMemory()
        try database.seed(bundledContent)
        let now = instant("2025-03-01T08:05:00Z")
        let readiness = Readiness(notifier: SystemdNotifier(environment: [:]), waitsForAPI: false)
        let scheduler = SchedulerService(
            emitter: Emitter(database: database, configuration: EmitConfiguration(push: PushConfiguration(apnsTopic: "t"))),
            deliverer: Deliverer(database: database, sink: StdoutSink()), clock: { now },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            notifier: SystemdNotifier(environment: [:]), heartbeat: Heartbeat(), maximumSleep: 3600, readiness: readiness)
        // (The clock is pinned and no device is due: the scheduler sleeps its maximum, an hour.)
        let task = Task { try await scheduler.run() }
        // Wait (bounded) for its first pass, then cancel while it sleeps.
        for _ in 0..<1000 where !readiness.isReady { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(readiness.isReady)
        let started = Date()
        task.cancel()
        try await task.value
        #expect(Date().timeIntervalSince(started) < 600, "long before its hour-long sleep would have ended")
    }

    @Test func readyIsSentOnceBothTheSchedulerAndTheAPIAreUp() {
        let readiness = Readiness(notifier: SystemdNotifier(environment: [:]), waitsForAPI: true)
        readiness.schedulerReady()
        #expect(!readiness.isReady, "the API does not listen yet")
        readiness.apiReady()
        #expect(readiness.isReady)
        let schedulerOnly = Readiness(notifier: SystemdNotifier(environment: [:]), waitsForAPI: false)
        #expect(!schedulerOnly.isReady)
        schedulerOnly.schedulerReady()
        #expect(schedulerOnly.isReady)
    }

    @Test(
        arguments: [
            ("60000000", 60.0), ("1", 0.000_001), ("0", nil), ("-5", nil), ("1e9", nil), ("9223372036854775807", nil), ("86400000001", nil),
            ("", nil), ("abc", nil), ("99999999999999999999", nil),
        ] as [(String, Double?)])
    func theWatchdogIntervalFromTheEnvironmentIsRangeChecked(text: String, expected: Double?) {
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": text]).watchdogInterval == expected)
    }

    @Test func sleepsOfAnyLengthNeverTrap() async throws {
        // Nothing to wait for: these return at once.
        for seconds in [-1, .nan, -.infinity, 0, -1e300] as [TimeInterval] {
            try await SchedulerService.sleep(seconds: seconds)
        }
        // Past a day (infinity included) it sleeps a day: cancelled, each ends with CancellationError at once.
        for seconds in [.infinity, 1e300, 1e20, Double(Int.max)] as [TimeInterval] {
            let task = Task { try await SchedulerService.sleep(seconds: seconds) }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }
}

/// Keeps what is logged, to check levels and causes.
final class CapturedLog: Sendable {
    private let lines = Mutex<[(Logger.Level, String)]>([])
    func append(_ level: Logger.Level, _ text: String) { lines.withLock { $0.append((level, text)) } }
    var all: [(Logger.Level, String)] { lines.withLock { $0 } }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt)
        {
            let fields = (metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            log.append(level, "\(message) \(fields)")
        }
    }
}

@Suite struct PassLogTests {
    /// A scheduler on an empty database whose log lines are kept, for `log` to be read back.
    func loggingScheduler() throws -> (SchedulerService, CapturedLog) {
        let captured = CapturedLog()
        let logger = Logger(label: "test") { _ in CapturedLog.Handler(log: captured) }
        let database = try AppDatabase.inMemory()
        let scheduler = SchedulerService(
            emitter: Emitter(database: database, configuration: EmitConfiguration(push: PushConfiguration(apnsTopic: "t"))),
            deliverer: Deliverer(database: database, sink: StdoutSink()), clock: { Date() }, logger: logger,
            notifier: SystemdNotifier(environment: [:]), heartbeat: Heartbeat())
        return (scheduler, captured)
    }

    @Test func failuresAreLoggedAtWarningOrErrorWithTheirCauseAndEveryPassWithItsDuration() throws {
        let (scheduler, captured) = try loggingScheduler()
        var delivered = DeliverySummary()
        delivered.delivered = 3
        delivered.retrying = 2
        delivered.lastError = "webhook: HTTP 503"
        var emitted = EmitSummary()
        emitted.devices = 5
        emitted.skippedDays = 4
        emitted.problems = [
            ScheduleProblem(deviceID: "d-ahead", kind: .clockAhead, detail: "next fire 2031-01-02T08:00:00Z, last fired 2031-01-01"),
            ScheduleProblem(deviceID: "d-zone", kind: .unknownZone, detail: "US/Pacific"),
        ]
        scheduler.log(.init(emitted: emitted, delivered: delivered, seconds: 1.25, emitError: nil), now: fixedNow)
        var failing = DeliverySummary()
        failing.failed = 1
        failing.deferred = 7
        failing.lastError = "cannot write spool file '/s/2025-03-01.jsonl': No space left on device (errno 28)"
        failing.localError = failing.lastError
        scheduler.log(
            .init(emitted: EmitSummary(), delivered: failing, seconds: 0.5, emitError: "database '/db': database or disk is full (SQLite code 13)"),
            now: fixedNow)
        let lines = captured.all
        #expect(lines.contains { $0.0 == .info && $0.1.contains("pass done") && $0.1.contains("seconds=1.250") })
        #expect(lines.contains { $0.0 == .warning && $0.1.contains("retry") && $0.1.contains("HTTP 503") })
        #expect(lines.contains { $0.0 == .warning && $0.1.contains("skipped=4") })
        #expect(
            lines.contains { $0.0 == .error && $0.1.contains("ahead of the clock") && $0.1.contains("device=d-ahead") && $0.1.contains("2031-01-01") }
        )
        #expect(lines.contains { $0.0 == .warning && $0.1.contains("time zone is unknown") && $0.1.contains("zone=US/Pacific") })
        #expect(lines.contains { $0.0 == .error && $0.1.contains("No space left on device (errno 28)") && $0.1.contains("pending=7") })
        #expect(lines.contains { $0.0 == .error && $0.1.contains("failed=1") })
        #expect(lines.contains { $0.0 == .error && $0.1.contains("database '/db'") && $0.1.contains("disk is full") })
        #expect(!lines.contains { $0.0 <= .info && $0.1.hasPrefix("deliveries") }, "retries and failures are never only info")
    }

    /// A clock that ran ahead moved every device: the pass names the first few of a kind and counts the rest in one
    /// line (a line per device, at a million devices, buried the journal).
    @Test func aProblemOfManyDevicesIsNamedForAFewAndCountedForTheRest() throws {
        let (scheduler, captured) = try loggingScheduler()
        var emitted = EmitSummary()
        emitted.problems =
            (0..<5000).map { ScheduleProblem(deviceID: "d-\($0)", kind: .clockAhead, detail: "next fire 2031-01-02T08:00:00Z, last fired never") }
            + [ScheduleProblem(deviceID: "d-zone", kind: .unknownZone, detail: "US/Pacific")]
        scheduler.log(.init(emitted: emitted, delivered: DeliverySummary(), seconds: 1, emitError: nil), now: fixedNow)
        let lines = captured.all
        #expect(lines.filter { $0.1.contains("ahead of the clock") }.count == SchedulerService.problemLines)
        #expect(lines.contains { $0.0 == .error && $0.1.contains("4990 not listed") && $0.1.contains("problem=clock_ahead") })
        #expect(lines.contains { $0.1.contains("zone=US/Pacific") })
        #expect(lines.count < 20, "\(lines.count) lines")
    }
}

/// No page may be added to the database from now on (synchronous, outside the async test: GRDB's async overloads).
func limitPages(_ database: AppDatabase) throws {
    try database.writeWithoutTransaction { db in
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        _ = try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)")
    }
}

@Suite struct FullDatabaseTests {
    /// The database's disk full (here: SQLite's page limit reached, which fails a write with SQLITE_FULL as a full disk
    /// does): the pass says so, naming the file and the cause, and still delivers the rows committed before.
    @Test func aPassWhoseEmissionFailsStillDeliversWhatWasCommitted() async throws {
        let database = try AppDatabase.inMemory()
        try database.seed(bundledContent)
        let created = instant("2025-02-01T00:00:00Z")
        _ = try database.addDevice(DeviceSettings(token: try .apns(validating: String(format: "%064x", 1)), timeZone: "UTC"), now: created)
        let configuration = EmitConfiguration(push: PushConfiguration(apnsTopic: "t"))
        let emitter = Emitter(database: database, configuration: configuration)
        #expect(try emitter.run(now: instant("2025-03-01T08:05:00Z")).queued == 1)
        // Many more devices due at 08:30, then no page may be added.
        for n in 2...400 {
            _ = try database.addDevice(
                DeviceSettings(
                    token: try .apns(validating: String(format: "%064x", n)), timeZone: "UTC", reminderTime: try ReminderTime(parsing: "08:30")),
                now: created)
        }
        try limitPages(database)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-fulldb-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let scheduler = SchedulerService(
            emitter: emitter, deliverer: Deliverer(database: database, sink: try JSONLinesSpool(directory: folder)),
            clock: { Date() }, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, notifier: SystemdNotifier(environment: [:]),
            heartbeat: Heartbeat())
        let result = try await scheduler.pass(now: instant("2025-03-01T08:35:00Z"), stop: StopFlag())
        let error = try #require(result.emitError)
        #expect(error.contains("database ':memory:'") || error.contains("database '"), "\(error)")
        #expect(error.contains("full"), "\(error)")
        #expect(result.delivered.delivered == 1, "the row committed before the failure went out")
        #expect(try database.outbox(status: .delivered).count == 1)
    }
}

/// API connections get what the open-file limit leaves beside the descriptors kept for everything else.
@Suite struct DescriptorBudgetTests {
    @Test func theConnectionLimitFitsTheOpenFileLimit() throws {
        let reserve = DescriptorBudget.reserve
        #expect(try DescriptorBudget.connections(requested: nil, openFileLimit: 65_536) == DescriptorBudget.defaultConnections)
        #expect(try DescriptorBudget.connections(requested: nil, openFileLimit: 1_024) == 1_024 - reserve)
        #expect(try DescriptorBudget.connections(requested: 500, openFileLimit: 1_024) == 500)
        #expect(try DescriptorBudget.connections(requested: 1_024 - reserve, openFileLimit: 1_024) == 1_024 - reserve)
        #expect(throws: DescriptorBudgetError.self) { try DescriptorBudget.connections(requested: 1_024 - reserve + 1, openFileLimit: 1_024) }
        #expect(throws: DescriptorBudgetError.self) { try DescriptorBudget.connections(requested: nil, openFileLimit: reserve + 15) }
        let error = DescriptorBudgetError(requested: 5_000, openFileLimit: 1_024)
        #expect(error.description.contains("5000") && error.description.contains("1024") && error.description.contains("LimitNOFILE"))
        // This process's soft limit is raised to its hard limit, and never lowered.
        var before = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before)
        #expect(DescriptorBudget.raiseSoftLimit() >= Int(min(before.rlim_cur, rlim_t(Int32.max))))
    }
}

/// An emitter whose store says this process must not work now (a clock too far from a shared store's).
struct RefusingEmitter: EmissionWork {
    let inner: Emitter
    struct Refusal: Error {}
    var configuration: EmitConfiguration { inner.configuration }
    func emit(now: Date, shouldStop: @escaping @Sendable () -> Bool) async throws -> EmitSummary {
        try await inner.emit(now: now, shouldStop: shouldStop)
    }
    func nextWork(platforms: Set<String>?) async throws -> Double? { try await inner.nextWork(platforms: platforms) }
    func checkStore() throws { try inner.checkStore() }
    func describe(_ error: any Error) -> String { inner.describe(error) }
    func checkClock() async throws { throw Refusal() }
}

/// Records what it is given.
final class GivenSink: Sink, Sendable {
    let name = "given"
    let given = Mutex<[Int64]>([])
    func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome] {
        given.withLock { $0 += records.map(\.id) }
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, .delivered()) })
    }
}

@Suite struct ClockRefusalTests {
    /// A pass the store refuses to run (its clock too far from the server's) neither emits nor delivers: delivering on
    /// the local clock would take rows other processes are sending. (Only emitting stopped, and delivery went on.)
    @Test func aRefusedPassNeitherEmitsNorDelivers() async throws {
        let database = try AppDatabase.inMemory()
        try database.seed(bundledContent)
        let now = instant("2025-03-01T08:05:00Z")
        for n in 0..<2 {
            _ = try database.addDevice(
                DeviceSettings(token: try .apns(validating: String(format: "%064x", 700 + n)), timeZone: "UTC"), now: now.addingTimeInterval(-86_400))
        }
        let emitter = Emitter(database: database, configuration: EmitConfiguration(push: PushConfiguration(apnsTopic: "t")))
        _ = try emitter.run(now: now)
        #expect(try database.outbox(status: .pending).count == 2)
        let sink = GivenSink()
        let scheduler = SchedulerService(
            emitter: RefusingEmitter(inner: emitter), deliverer: Deliverer(database: database, sink: sink), clock: { now },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, notifier: SystemdNotifier(environment: [:]), heartbeat: Heartbeat())
        await #expect(throws: RefusingEmitter.Refusal.self) { try await scheduler.pass(now: now, stop: StopFlag()) }
        #expect(sink.given.withLock { $0 }.isEmpty)
        #expect(try database.outbox(status: .pending).count == 2)
    }
}
