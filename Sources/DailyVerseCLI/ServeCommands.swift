import ArgumentParser
import ContentStore
import Delivery
import Foundation
import Daemon
import HTTPAPI
import HijriCalendar
import Hummingbird
import Onboarding
import Storage
import VerseOfTheDay
import Logging
import Metrics
import NIOCore
import Notifications
import PushServices
import ServiceLifecycle

/// Options of the scheduler and its sinks.
struct EmitOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Where payloads go: push (APNs, FCM and Web Push directly), gorush:URL, jsonl:DIR (default: a spool folder beside the database), stdout, or webhook:URL.",
            valueName: "sink"))
    var sink: String?

    @Option(help: ArgumentHelp("Send a fire this late, record an older one as missed (e.g. 2h, 90m, 7200s). Default 2h.", valueName: "duration"))
    var grace: String?

    @Option(name: .customLong("apns-topic"), help: ArgumentHelp("The app's bundle id, sent as apns-topic. Also $DAILYVERSE_APNS_TOPIC.", valueName: "id"))
    var apnsTopic: String?

    @Option(
        name: .customLong("emit-ahead"),
        help: ArgumentHelp(
            "Write fires this far ahead of their time (e.g. 15m, 0 for none), to be delivered at their time. Default 15m; --once: none.",
            valueName: "duration"))
    var emitAhead: String?

    /// How the scheduler emits; `ahead` applies to a running daemon (a single pass writes only the fires due).
    func configuration(_ global: GlobalOptions, ahead: Bool = false) throws -> EmitConfiguration {
        let topic = try global.setting(flag: apnsTopic, environment: "DAILYVERSE_APNS_TOPIC", key: "apns_topic") ?? "org.dailyverse.app"
        let grace = try global.setting(flag: grace, environment: "DAILYVERSE_GRACE", key: "grace") ?? "2h"
        let emitAhead = try global.setting(flag: emitAhead, environment: "DAILYVERSE_EMIT_AHEAD", key: "emit_ahead") ?? "15m"
        let aheadSeconds = try Self.duration(emitAhead, setting: "emit-ahead", range: Bounds.emitAhead)
        // "default", a sound file of the app's bundle, or "none" for a silent alert.
        let sound = try global.setting(flag: nil, environment: "DAILYVERSE_APNS_SOUND", key: "apns_sound") ?? "default"
        guard (1...64).contains(sound.count), sound.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
            throw CLIError("invalid apns_sound '\(sound)': expected default, none or a sound file's name (letters, digits, . _ -)")
        }
        return EmitConfiguration(
            grace: try Self.duration(grace, setting: "grace", range: Bounds.grace),
            push: PushConfiguration(apnsTopic: topic, sound: sound == "none" ? nil : sound), ahead: ahead ? aheadSeconds : 0)
    }

    /// A deliverer for the configured sink, which records rows found later than the grace period as missed. The
    /// sink is the caller's to shut down.
    func makeDeliverer(
        _ global: GlobalOptions, _ database: AppDatabase, _ configuration: EmitConfiguration, push: PushOptions, clock: @escaping @Sendable () -> Date
    ) throws -> Deliverer {
        var deliverer = Deliverer(database: database, sink: try makeSink(global, database: database, push: push, clock: clock))
        deliverer.grace = configuration.grace
        return deliverer
    }

    func makeSink(_ global: GlobalOptions, database: AppDatabase, push: PushOptions, clock: @escaping @Sendable () -> Date) throws -> any Sink {
        let spec = try global.setting(flag: sink, environment: "DAILYVERSE_SINK", key: "sink")
            ?? "jsonl:" + URL(fileURLWithPath: try global.databasePath()).deletingLastPathComponent().appendingPathComponent("spool").path
        if spec == "stdout" { return StdoutSink() }
        if spec.hasPrefix("jsonl:"), spec.count > 6 { return try JSONLinesSpool(directory: URL(fileURLWithPath: String(spec.dropFirst(6)))) }
        if spec.hasPrefix("webhook:"), let url = URL(string: String(spec.dropFirst(8))) { return try WebhookSink(url: url) }
        if spec == "push" {
            let senders = try push.makeSenders(global, database: database)
            guard senders.missing.count < 3 else {
                try? senders.client.http.syncShutdown()
                throw CLIError("sink push: no push service is configured (set apns_key_file, fcm_service_account_file or vapid_key_file)")
            }
            return PushSink(
                database: database, client: senders.client, apns: senders.apns, fcm: senders.fcm, webPush: senders.webPush, clock: clock)
        }
        if spec.hasPrefix("gorush:") {
            let client: PushClient
            do { client = try PushClient(caFile: try push.value(global, push.caFile, "push_ca_file")) } catch let error as PushConfigurationError {
                throw CLIError(error.description)
            }
            do { return try GorushSink(url: String(spec.dropFirst(7)), client: client, clock: clock) } catch {
                try? client.http.syncShutdown()
                throw error
            }
        }
        throw CLIError("invalid sink '\(WebhookSink.redacted(spec))': expected jsonl:DIR, stdout, webhook:URL, push or gorush:URL")
    }

    /// `90`, `90s`, `15m`, `2h`, `30d` (a decimal point is allowed: `1.5h`), within `range` seconds; `setting` names
    /// the value in the error. Only digits and one point are read, so no exponent, sign, `inf` or `nan` gets through.
    static func duration(_ text: String, setting: String, range: ClosedRange<TimeInterval>) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text)
        var scale = 1.0
        if let last = text.last, let unit = units[last] {
            number = number.dropLast()
            scale = unit
        }
        let bounds = "\(Self.formatted(range.lowerBound)) to \(Self.formatted(range.upperBound))"
        guard !number.isEmpty, number.count <= 12, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            number.filter({ $0 == "." }).count <= 1, number != ".", let value = Double(number)
        else {
            throw CLIError("invalid \(setting) '\(text)': expected a number with s, m, h or d, from \(bounds)")
        }
        let seconds = value * scale
        guard range.contains(seconds) else { throw CLIError("invalid \(setting) '\(text)': expected \(bounds)") }
        return seconds
    }

    /// `90s`, `15m`, `2h`, `30d`: the largest unit that divides the value.
    static func formatted(_ seconds: TimeInterval) -> String {
        for (unit, size) in [("d", 86_400.0), ("h", 3600), ("m", 60)] where seconds >= size && seconds.truncatingRemainder(dividingBy: size) == 0 {
            return "\(Int(seconds / size))\(unit)"
        }
        return "\(Int(seconds))s"
    }

    /// The bounds of each duration setting.
    enum Bounds {
        static let grace: ClosedRange<TimeInterval> = 0...86_400
        static let emitAhead: ClosedRange<TimeInterval> = 0...3600
        static let retention: ClosedRange<TimeInterval> = 86_400...3650 * 86_400
        static let idleTimeout: ClosedRange<TimeInterval> = 1...3600
        static let throttleWindow: ClosedRange<TimeInterval> = 1...86_400
    }
}

/// The HTTP API as a service of the daemon: a failure to listen (or any other that ends the server) becomes one line
/// naming the address and the reason; the group then cancels the scheduler, and `serve` exits with status 1.
struct APIService: Service {
    let address: String
    let run: @Sendable () async throws -> Void

    func run() async throws {
        do { try await run() } catch let error as IOError {
            throw CLIError("cannot listen on \(address): \(String(cString: strerror(error.errnoCode)))")
        } catch is CancellationError {
            return
        } catch {
            throw CLIError("the API on \(address) stopped: \(error)")
        }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send each device its daily verse at its local reminder time.",
        discussion: """
            --once runs a single pass — every fire due as of now (or --now) goes into the outbox, and the outbox is \
            delivered to the sink — and exits: for tests, replays and timer-driven setups.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var emit: EmitOptions
    @OptionGroup var push: PushOptions
    @Flag(help: "Run one pass and exit.") var once = false
    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning or error. Default info.", valueName: "level"))
    var logLevel: String?
    @Option(help: ArgumentHelp("Where the HTTP API listens, HOST:PORT (default 127.0.0.1:8080), or none.", valueName: "address"))
    var listen: String?
    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Close an API connection that sends no complete request for this long (1s to 1h, default 30s).", valueName: "duration"))
    var idleTimeout: String?
    @Option(
        name: .customLong("guest-retention"),
        help: ArgumentHelp("Purge guests inactive this long, with their data, checked hourly (default 30d).", valueName: "duration"))
    var guestRetention: String?
    @Option(
        name: .customLong("outbox-retention"),
        help: ArgumentHelp("Remove delivered, failed and missed outbox rows older than this, hourly (default 30d).", valueName: "duration"))
    var outboxRetention: String?

    func run() async throws {
        // Checked whatever the mode, so that a typo in the configuration is found by a test run (--once) too.
        let (level, idle) = try reportingErrors { (try checkedLogLevel(), try checkedIdleTimeout()) }
        if once { return try await runOnce() }
        let (group, lock, sink) = try reportingErrors { try makeServiceGroup(level: level, idleTimeout: idle) }
        defer { withExtendedLifetime(lock) {} }
        do { try await group.run() } catch {
            await sink.shutdown()
            FileHandle.standardError.write(Data("dailyverse: \(error)\n".utf8))
            throw ExitCode(1)
        }
        await sink.shutdown()
    }

    func checkedLogLevel() throws -> Logger.Level {
        let name = try global.setting(flag: logLevel, environment: "DAILYVERSE_LOG_LEVEL", key: "log_level") ?? "info"
        guard let level = Logger.Level(rawValue: name) else {
            throw CLIError("invalid log level '\(name)': expected trace, debug, info, notice, warning or error")
        }
        return level
    }

    func checkedIdleTimeout() throws -> TimeInterval {
        let text = try global.setting(flag: idleTimeout, environment: "DAILYVERSE_IDLE_TIMEOUT", key: "idle_timeout") ?? "30s"
        return try EmitOptions.duration(text, setting: "idle timeout", range: EmitOptions.Bounds.idleTimeout)
    }

    /// The daemon, and the lock that makes it the database's only scheduler (held while the group runs).
    func makeServiceGroup(level: Logger.Level, idleTimeout idle: TimeInterval) throws -> (ServiceGroup, SchedulerLock, any Sink) {
        let logger = Logger(label: "dailyverse") { LineLogHandler(label: $0, level: level) }
        let (database, lock) = try global.openDatabaseAsScheduler(pool: true)
        let configuration = try emit.configuration(global, ahead: true)
        let emitter = Emitter(database: database, configuration: configuration)
        let clock = try replayClock()
        let path = try global.databasePath()
        let retention = DaemonBuilder.Retention(
            guests: try global.guestRetention(flag: guestRetention), outbox: try global.outboxRetention(flag: outboxRetention))
        var services: [any Service] = []
        let address = try global.setting(flag: listen, environment: "DAILYVERSE_LISTEN", key: "listen") ?? "127.0.0.1:8080"
        let notifier = SystemdNotifier()
        let readiness = Readiness(notifier: notifier, waitsForAPI: address != "none")
        if address != "none" {
            let (host, port) = try Self.hostAndPort(address)
            let environment = try APIEnvironment(
                service: DailyVerseService(database: database), clock: clock, onboarding: try global.onboardingMachine(database),
                copy: try OnboardingCopy.load(from: global.dataDirectory()), hints: try global.hintCatalog(), throttles: try global.throttles(),
                openAPI: try OpenAPIDocument.load(from: global.dataDirectory()), vapidPublicKey: try push.vapidPublicKey(global))
            // The scheduler's counters go to the same registry as the API's.
            MetricsSystem.bootstrap(environment.metricsFactory)
            let application = Application(
                router: buildRouter(environment),
                server: apiServer(idleTimeout: idle),
                configuration: .init(address: .hostname(host, port: port), serverName: "dailyverse"),
                onServerRunning: { _ in
                    logger.info("API listening", metadata: ["address": "\(address)"])
                    readiness.apiReady()
                },
                logger: logger)
            services.append(APIService(address: address) { try await application.run() })
        }
        // Last of what can fail: a push sink holds connections that must be shut down.
        let deliverer = try emit.makeDeliverer(global, database, configuration, push: push, clock: clock)
        logger.info(
            "starting",
            metadata: [
                "database": "\(path)", "sink": "\(deliverer.sink.name)", "listen": "\(address)",
                "emit_ahead": "\(Int(configuration.ahead))s",
            ])
        // Precedence is flags, environment, file: a file setting that loses is said, so that it is not a surprise
        // (the shipped unit sets the database, data and sink in its environment).
        for line in GlobalOptions.overrides.all { logger.warning("configuration: \(line)") }
        if let push = deliverer.sink as? PushSink {
            for (platform, name) in [("apns", "APNs"), ("fcm", "FCM"), ("webpush", "Web Push")] where push.platforms?.contains(platform) != true {
                logger.notice("push: \(name) is not configured: its rows stay pending", metadata: ["platform": "\(platform)"])
            }
        }
        let group = DaemonBuilder.serviceGroup(
            database: database, emitter: emitter, deliverer: deliverer, clock: clock, logger: logger, retention: retention, notifier: notifier,
            readiness: readiness, services: services)
        return (group, lock, deliverer.sink)
    }


    static func hostAndPort(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port),
            colon > text.startIndex
        else { throw CLIError("invalid listen address '\(text)': expected HOST:PORT such as 127.0.0.1:8080, or none") }
        return (String(text[..<colon]), port)
    }

    /// The wall clock; with --now (or DAILYVERSE_NOW) a clock that starts at that instant and runs on, to replay a day.
    func replayClock() throws -> @Sendable () -> Date {
        let pinned = global.now != nil || (global.environment["DAILYVERSE_NOW"].map { !$0.isEmpty } ?? false)
        guard pinned else { return { Date() } }
        let start = try schedulerClock()
        let started = Date()
        return { start.addingTimeInterval(Date().timeIntervalSince(started)) }
    }

    /// The clock a pass runs at. A pass looks at local dates from two days before to a day after its instant, in
    /// zones up to 14 hours from UTC: its instant must leave those dates inside 0001–9999.
    func schedulerClock() throws -> Date {
        let now = try global.clock()
        let earliest = Double(CivilDate.dayNumberRange.lowerBound + 3) * 86_400
        let latest = Double(CivilDate.dayNumberRange.upperBound - 2) * 86_400
        guard (earliest...latest).contains(now.timeIntervalSince1970) else {
            throw CLIError(
                "invalid --now '\(now.iso8601UTC)': the scheduler runs from \(Date(timeIntervalSince1970: earliest).iso8601UTC) "
                    + "to \(Date(timeIntervalSince1970: latest).iso8601UTC)")
        }
        return now
    }

    func runOnce() async throws {
        try await reportingErrors {
            let (database, lock) = try global.openDatabaseAsScheduler()
            defer { withExtendedLifetime(lock) {} }
            let now = try schedulerClock()
            let configuration = try emit.configuration(global)
            let deliverer = try emit.makeDeliverer(global, database, configuration, push: push, clock: { now })
            let sink = deliverer.sink
            let emitted: EmitSummary
            let delivered: DeliverySummary
            do {
                emitted = try Emitter(database: database, configuration: configuration).run(now: now)
                delivered = try await deliverer.run(now: now)
            } catch {
                await sink.shutdown()
                throw error
            }
            await sink.shutdown()
            // Rows the deliverer finds past the grace period are missed fires too.
            let missed = emitted.missed + delivered.missed
            let line =
                "pass at \(now.iso8601UTC): \(emitted.devices) devices due, \(emitted.queued) queued, \(missed) missed; "
                + "\(delivered.delivered) delivered, \(delivered.retrying) to retry, \(delivered.failed) failed (\(sink.name))"
            if global.json {
                let summary: [String: Int] = [
                    "devices": emitted.devices, "queued": emitted.queued, "missed": missed, "delivered": delivered.delivered,
                    "retrying": delivered.retrying, "failed": delivered.failed,
                ]
                if sink is StdoutSink { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { try printJSON(summary) }
                return
            }
            // With the stdout sink, standard output carries the payloads only.
            if sink is StdoutSink { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { print(line) }
        }
    }
}

struct OutboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "Inspect, requeue and prune the outbox.", subcommands: [OutboxList.self, OutboxRequeue.self, OutboxPrune.self])
}

struct OutboxRequeue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "requeue", abstract: "Put failed rows back to pending, with a fresh set of attempts.",
        discussion: """
            After the cause is mended (a webhook's address, a gateway's configuration). Give row ids, or --all for every \
            failed row. A row more than the grace period late is then recorded as missed, as any late fire is.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Every failed row.") var all = false
    @Argument(help: ArgumentHelp("Outbox row ids (from outbox list).", valueName: "id")) var ids: [Int64] = []

    func validate() throws {
        guard all != !ids.isEmpty else { throw ValidationError("give row ids or --all, not both or neither") }
        if let bad = ids.first(where: { $0 < 1 }) { throw ValidationError("invalid row id \(bad): ids start at 1") }
    }

    func run() throws {
        try reportingErrors {
            let count = try global.openDatabase().requeueFailed(ids: all ? nil : ids, now: try global.clock())
            if global.json { return try printJSON(["requeued": count]) }
            print("requeued \(count) failed outbox rows")
        }
    }
}

struct OutboxPrune: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune", abstract: "Remove delivered, failed and missed rows older than the retention; pending rows stay.",
        discussion: "`serve` does this every hour; this is for timer-driven setups and for trying a retention out.")
    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Age after which a settled row goes (default: outbox_retention, else 30d; at least 1d).", valueName: "duration"))
    var retention: String?

    func run() throws {
        try reportingErrors {
            let cutoff = try global.clock().addingTimeInterval(-(try global.outboxRetention(flag: retention)))
            let pruned = try global.openDatabase().pruneOutbox(settledBefore: cutoff)
            if global.json { return try printJSON(["pruned": pruned]) }
            print("removed \(pruned) settled outbox rows created before \(cutoff.iso8601UTC)")
        }
    }
}

struct OutboxList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List outbox rows, oldest first, as they are read.",
        discussion: "For many rows, a page at a time: --limit N, then --after the last id printed.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var page: PageOptions
    @Option(help: ArgumentHelp("Only this local date, YYYY-MM-DD.", valueName: "date")) var date: String?
    @Option(help: ArgumentHelp("pending, delivered, failed or missed.", valueName: "status")) var status: String?
    @Option(help: ArgumentHelp("Only rows with a larger id (the last id of the previous page).", valueName: "id")) var after: Int64?

    func run() throws {
        try reportingErrors {
            let day = try date.map { try CivilDate(parsing: $0) }
            let filter = try status.map { name -> OutboxStatus in
                guard let value = OutboxStatus(rawValue: name) else {
                    throw CLIError("invalid status '\(name)': expected pending, delivered, failed or missed")
                }
                return value
            }
            let limit = try page.checkedLimit()
            if let after, after < 0 { throw CLIError("invalid --after \(after): ids start at 1") }
            let database = try global.openDatabase()
            let out = BufferedOutput()
            var count = 0
            if global.json { out.write("[") }
            try database.forEachOutboxRow(date: day, status: filter, after: after, limit: limit) { record in
                if global.json {
                    out.write((count == 0 ? "" : ",\n") + record.jsonLine(includeStatus: true))
                } else {
                    let error = record.lastError.map { "  last error: \($0)" } ?? ""
                    out.write("\(record.id)  \(record.localDate)  \(record.status.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(record.platform.padding(toLength: 7, withPad: " ", startingAt: 0)) \(record.deviceID)  fire \(record.fireAt.iso8601UTC)  attempts \(record.attempts)\(error)\n")
                }
                count += 1
            }
            if global.json { out.write("]\n") } else if count == 0 { out.write("no outbox rows\n") }
            out.flush()
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Devices, the next fires, the outbox backlog by status, and the last errors.")
    @OptionGroup var global: GlobalOptions

    struct Report: Encodable {
        let devices: Int
        let enabled: Int
        let nextFires: [NextFire]
        let outbox: [String: Int]
        /// Of the pending rows, those written ahead of their time.
        let writtenAhead: Int
        let lastErrors: [LastError]
        let push: [PushLine]
        struct NextFire: Encodable { let deviceID: String; let at: String; enum CodingKeys: String, CodingKey { case deviceID = "device_id", at } }
        struct LastError: Encodable { let outboxID: Int64; let error: String; enum CodingKeys: String, CodingKey { case outboxID = "outbox_id", error } }
        /// A push platform: whether this configuration sends to it, and what happened there.
        struct PushLine: Encodable {
            let configured: Bool
            let status: PushPlatformStatus
            /// APNs: how old the provider token in use is, in seconds.
            let providerTokenAge: Int?
            enum CodingKeys: String, CodingKey { case configured, status, providerTokenAge = "provider_token_age" }
            func encode(to encoder: Encoder) throws {
                try status.encode(to: encoder)
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(configured, forKey: .configured)
                try container.encode(providerTokenAge, forKey: .providerTokenAge)
            }
        }
        enum CodingKeys: String, CodingKey {
            case devices, enabled, nextFires = "next_fires", outbox, writtenAhead = "written_ahead", lastErrors = "last_errors", push
        }
    }

    func run() throws {
        try reportingErrors {
            let database = try global.openDatabase()
            let now = try global.clock()
            let devices = try database.deviceSummary(now: now)
            let counts = try database.outboxCounts()
            let report = Report(
                devices: devices.total, enabled: devices.enabled,
                nextFires: devices.next.map { .init(deviceID: $0.id, at: $0.at.iso8601UTC) },
                outbox: Dictionary(uniqueKeysWithValues: OutboxStatus.allCases.map { ($0.rawValue, counts[$0] ?? 0) }),
                writtenAhead: try database.outboxWrittenAhead(now: now),
                lastErrors: try database.lastDeliveryErrors().map { .init(outboxID: $0.id, error: $0.lastError ?? "") },
                push: try pushLines(database, now: now))
            if global.json { return try printJSON(report) }
            print("devices: \(report.devices) (\(report.enabled) enabled)")
            print("next fires:")
            if report.nextFires.isEmpty { print("  none") }
            for fire in report.nextFires { print("  \(fire.at)  \(fire.deviceID)") }
            print(
                "outbox: "
                    + OutboxStatus.allCases.map { status in
                        let count = "\(status.rawValue) \(report.outbox[status.rawValue] ?? 0)"
                        return status == .pending && report.writtenAhead > 0 ? count + " (\(report.writtenAhead) written ahead)" : count
                    }.joined(separator: ", "))
            print("push (last hour; devices disabled by their service in the last day):")
            for line in report.push {
                let status = line.status
                var text = "  \(status.platform.padding(toLength: 8, withPad: " ", startingAt: 0)) "
                text += line.configured ? "configured" : "not configured"
                if let reason = status.pausedReason { text += ", PAUSED until \(status.pausedUntil ?? "?"): \(reason)" }
                text += "; \(status.deliveredLastHour) delivered, \(status.failedLastHour) failed, \(status.retryingLastHour) retrying"
                text += "; \(status.disabledLastDay) disabled"
                if let age = line.providerTokenAge { text += "; provider token \(age / 60) min old" }
                print(text)
            }
            if !report.lastErrors.isEmpty {
                print("last errors:")
                for error in report.lastErrors { print("  #\(error.outboxID): \(error.error)") }
            }
        }
    }

    /// Per platform: configured in this configuration (its key setting is there), and the database's record.
    func pushLines(_ database: AppDatabase, now: Date) throws -> [Report.PushLine] {
        let keys = ["apns": "apns_key_file", "fcm": "fcm_service_account_file", "webpush": "vapid_key_file"]
        let tokenAge = try database.apnsProviderTokenAge(now: now).map { Int($0) }
        return try database.pushStatus(now: now).map { status in
            let key = keys[status.platform] ?? ""
            let configured = try global.setting(flag: nil, environment: "DAILYVERSE_" + key.uppercased(), key: key).map { !$0.isEmpty } ?? false
            return Report.PushLine(configured: configured, status: status, providerTokenAge: status.platform == "apns" ? tokenAge : nil)
        }
    }
}

struct Guests: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Guest users.", subcommands: [GuestsPurge.self])
}

struct GuestsPurge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Remove guests inactive longer than the retention, with all their data.",
        discussion: "`serve` does this every hour; this is for timer-driven setups and for trying a retention out.")
    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Inactivity after which a guest goes (default: guest_retention, else 30d).", valueName: "duration"))
    var retention: String?

    func run() throws {
        try reportingErrors {
            let cutoff = try global.clock().addingTimeInterval(-(try global.guestRetention(flag: retention)))
            let purged = try global.openDatabase().purgeGuests(inactiveBefore: cutoff)
            if global.json { return try printJSON(["purged": purged]) }
            print("purged \(purged) guests inactive since before \(cutoff.iso8601UTC)")
        }
    }
}
