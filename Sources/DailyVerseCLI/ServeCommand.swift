import Accounts
import ArgumentParser
import ContentStore
import Daemon
import Delivery
import Diagnostics
import Engagement
import Foundation
import HTTPAPI
import HijriCalendar
import Hummingbird
import Logging
import Metrics
import NIOCore
import Notifications
import Onboarding
import PushServices
import ServiceLifecycle
import Storage
import VerseOfTheDay

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

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Send each device its daily verse at its local reminder time.",
        discussion: """
            --once runs a single pass — every fire due as of now (or --now) goes into the outbox, and the outbox is \
            delivered to the sink — and exits: for tests, replays and timer-driven setups.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var emit: EmitOptions
    @OptionGroup var push: PushOptions
    @Flag(help: "Run one pass and exit.") var once = false
    @Option(
        name: .customLong("log-level"), parsing: .unconditional,
        help: ArgumentHelp("trace, debug, info, notice, warning or error. Default info.", valueName: "level"))
    var logLevel: String?
    @Option(
        parsing: .unconditional, help: ArgumentHelp("Where the HTTP API listens, HOST:PORT (default 127.0.0.1:8080), or none.", valueName: "address"))
    var listen: String?
    @Option(
        name: .customLong("max-connections"), parsing: .unconditional,
        help: ArgumentHelp(
            "At most this many API connections at once; one more is answered 503 and closed. Default: 4096, or what the open-file limit allows beside the \(DescriptorBudget.reserve) descriptors kept for the database, the spool and the push services.",
            valueName: "count"))
    var maxConnections: String?
    @Option(
        name: .customLong("trusted-proxies"), parsing: .unconditional,
        help: ArgumentHelp(
            "Addresses or CIDR blocks of the reverse proxies in front of the API, comma-separated: only from these are Forwarded and X-Forwarded-For read for the client's address. Default none.",
            valueName: "list"))
    var trustedProxies: String?
    @Option(
        name: .customLong("idle-timeout"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Close an API connection that sends no complete request for this long (\(DurationSetting.idleTimeout.bounds)).", valueName: "duration"))
    var idleTimeout: TimeSpan?
    @Option(
        name: .customLong("guest-retention"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Purge guests inactive this long, with their data, checked hourly (\(DurationSetting.guestRetention.bounds)).", valueName: "duration"))
    var guestRetention: TimeSpan?
    @Option(
        name: .customLong("outbox-retention"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Remove delivered, failed and missed outbox rows older than this, hourly (\(DurationSetting.outboxRetention.bounds)).",
            valueName: "duration"))
    var outboxRetention: TimeSpan?
    @Option(
        name: .customLong("content-db"), parsing: .unconditional,
        help: ArgumentHelp(
            "With a PostgreSQL database: this process's SQLite copy of the content, seeded from data/ (default: content.sqlite in the XDG data directory). Also $DAILYVERSE_CONTENT_DB, 'content_database'.",
            valueName: "path"))
    var contentDB: String?

    func run() async throws {
        // Read once and checked whatever the mode, so that a typo in the configuration is found by a test run (--once)
        // too.
        let settings = try Settings(self)
        // A push sink builds its senders, and so checks them, as it starts; any other sink has them checked here.
        if try emit.sinkSetting(global)?.text != "push" { try await push.check(global) }
        if let address = try global.postgresAddress() { return try await runShared(address, settings) }
        if once { return try await runOnce() }
        let (group, lock, sink) = try makeServiceGroup(settings)
        defer { withExtendedLifetime(lock) {} }
        do { try await group.run() } catch {
            await sink.shutdown()
            // Printed as every command's error is (`exit(for:)`), once.
            throw error
        }
        await sink.shutdown()
    }

    /// Every setting `serve` reads beside the emission's and the sink's, each checked.
    struct Settings {
        let level: Logger.Level
        let idleTimeout: TimeInterval
        let proxies: TrustedProxies
        /// The connection limit, within the open-file limit (raised to its hard limit first).
        let connections: Int
        let limits: UserLimits
        let throttles: Throttles
        /// What the hourly maintenance removes, and when sessions expire.
        let retention: DaemonBuilder.Retention
        /// What the attempt counts' keys are stored under on PostgreSQL (`throttle_key_file`).
        let throttleKey: ThrottleKey?
        /// Where the API listens ("none": no API), checked.
        let listen: String
        /// How long a process holds the rows it takes on PostgreSQL, and how long a push service may take to answer.
        let lease: TimeInterval
        let pushTimeout: TimeInterval

        init(_ command: ServeCommand) throws {
            let global = command.global
            let listening = try global.setting(flag: ("--listen", command.listen), environment: "DAILYVERSE_LISTEN", key: "listen")
            listen = listening?.text ?? "127.0.0.1:8080"
            if let listening, listen != "none" { _ = try listening.checked(ServeCommand.hostAndPort) }
            lease = try global.duration(.deliveryLease, flag: nil)
            pushTimeout = try command.push.timeout(global)
            level = try command.checkedLogLevel()
            // Before any key file is read (throttle_key_file below, the push services' after): their warnings too.
            KeyFileModes.level.withLock { [level] in $0 = level }
            idleTimeout = try global.duration(.idleTimeout, flag: ("--idle-timeout", command.idleTimeout))
            proxies =
                try global.checked(
                    flag: ("--trusted-proxies", command.trustedProxies), environment: "DAILYVERSE_TRUSTED_PROXIES", key: "trusted_proxies"
                ) { text in
                    do { return try TrustedProxies(parsing: text) } catch let error as TrustedProxiesError {
                        throw SettingRefusal(error.reason)
                    }
                } ?? TrustedProxies(ranges: [])
            let maximum = try global.setting(
                flag: ("--max-connections", command.maxConnections), environment: "DAILYVERSE_MAX_CONNECTIONS", key: "max_connections")
            let requested = try maximum?.checked { try Self.count($0, in: 1...9_999_999) }
            do { connections = try DescriptorBudget.connections(requested: requested, openFileLimit: DescriptorBudget.raiseSoftLimit()) } catch {
                // A limit asked for that the open-file limit cannot hold is that setting's to mend (or LimitNOFILE).
                if let maximum, let reason = error.requestedReason { throw maximum.refused(reason) }
                throw error
            }
            limits = UserLimits(
                devicesPerUser: try global.checked(environment: "DAILYVERSE_MAX_DEVICES_PER_USER", key: "max_devices_per_user") {
                    try Self.count($0, in: 1...10_000)
                } ?? UserLimits().devicesPerUser)
            throttles = try global.throttles()
            retention = DaemonBuilder.Retention(
                guests: try global.duration(.guestRetention, flag: ("--guest-retention", command.guestRetention)),
                outbox: try global.duration(.outboxRetention, flag: ("--outbox-retention", command.outboxRetention)),
                events: try global.duration(.eventRetention, flag: nil),
                sessions: SessionPolicy(
                    idle: try global.duration(.sessionIdle, flag: nil), lifetime: try global.duration(.sessionLifetime, flag: nil)))
            throttleKey = try Self.throttleKey(global)
        }

        /// The throttle key named by `throttle_key_file` (or `DAILYVERSE_THROTTLE_KEY_FILE`, as under systemd
        /// `%d/throttle-key`), if any: 32 to 4096 bytes.
        static func throttleKey(_ global: GlobalOptions) throws -> ThrottleKey? {
            let setting = "throttle_key_file"
            guard let named = try global.setting(environment: "DAILYVERSE_THROTTLE_KEY_FILE", key: setting), !named.text.isEmpty else {
                return nil
            }
            return try named.checked { path in
                let bytes = try PushOptions.readBytes(path, limit: ThrottleKey.sizes.upperBound)
                guard let bytes, let key = ThrottleKey(Array(bytes)) else {
                    throw SettingRefusal(
                        "\(bytes.map { "\($0.count) bytes" } ?? "too long"): expected \(ThrottleKey.sizes.lowerBound) to \(ThrottleKey.sizes.upperBound) (make one with: head -c 32 /dev/urandom > FILE)"
                    )
                }
                PushOptions.keyFiles.check(path, setting: setting)
                return key
            }
        }

        /// A whole number within `range`, as a count setting is written.
        static func count(_ text: String, in range: ClosedRange<Int>) throws -> Int {
            guard let value = Digits.wholeNumber(text, in: range) else {
                throw SettingRefusal("expected a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
    }

    func checkedLogLevel() throws -> Logger.Level {
        try global.checked(flag: ("--log-level", logLevel), environment: "DAILYVERSE_LOG_LEVEL", key: "log_level") { name in
            guard let level = Logger.Level(rawValue: name) else { throw SettingRefusal("expected trace, debug, info, notice, warning or error") }
            return level
        } ?? Logger.Level.info
    }

    /// The daemon, and the lock that makes it the database's only scheduler (held while the group runs).
    func makeServiceGroup(_ settings: Settings) throws -> (ServiceGroup, SchedulerLock, any Sink) {
        let logger = Logger(label: "dailyverse") { LineLogHandler(label: $0, level: settings.level) }
        // The settings first: a bad one is refused before a database is created, migrated and seeded for nothing.
        let configuration = try emit.configuration(global, ahead: true)
        let clock = try replayClock()
        try emit.checkSinkSpelling(global)
        let (database, lock) = try global.openDatabaseAsScheduler(pool: true)
        let emitter = Emitter(database: database, configuration: configuration)
        let path = try global.databasePath()
        var services: [any Service] = []
        let address = settings.listen
        let notifier = SystemdNotifier()
        let readiness = Readiness(notifier: notifier, waitsForAPI: address != "none")
        if address != "none" {
            services.append(
                try apiService(
                    address, content: database, users: SQLiteUserStore(database), throttles: settings.throttles, clock: clock, settings,
                    readiness: readiness, logger: logger))
        }
        // Last of what can fail: a push sink holds connections that must be shut down.
        let deliverer = try emit.makeDeliverer(global, database, configuration, push: push, clock: clock)
        logger.info(
            "starting",
            metadata: [
                "database": "\(path)", "sink": "\(deliverer.sink.name)", "listen": "\(address)",
                "emit_ahead": "\(Int(configuration.ahead))s", "max_connections": "\(settings.connections)",
            ])
        // Precedence is flags, environment, file: a file setting that loses is said, so that it is not a surprise
        // (the shipped unit sets the database, data and sink in its environment).
        for line in GlobalOptions.overrides.all { logger.warning("configuration: \(line)") }
        if let push = deliverer.sink as? PushSink {
            for platform in Platform.allCases where push.senders[platform] == nil {
                logger.notice(
                    "push: \(platform.serviceName) is not configured: its rows stay pending", metadata: ["platform": "\(platform.rawValue)"])
            }
        }
        let group = DaemonBuilder.serviceGroup(
            database: database, emitter: emitter, deliverer: deliverer, clock: clock, logger: logger, retention: settings.retention,
            notifier: notifier,
            readiness: readiness, services: services)
        return (group, lock, deliverer.sink)
    }

    /// The API on `address`, over `content` (today's verse, verses, layers, themes) and `users` (SQLite's own tables,
    /// or PostgreSQL); its metrics registry becomes the process's, so the scheduler's counters are served with it.
    func apiService(
        _ address: String, content: AppDatabase, users: any UserStore, throttles: Throttles, clock: @escaping @Sendable () -> Date,
        _ settings: Settings, readiness: Readiness, logger: Logger
    ) throws -> APIService {
        let (host, port) = try Self.hostAndPort(address)
        let environment = try APIEnvironment(
            reports: DailyVerseReports(database: content), clock: clock, onboarding: try global.onboardingMachine(content),
            copy: try OnboardingCopy.load(from: global.dataDirectory()), hints: try global.hintCatalog(), throttles: throttles,
            openAPI: try OpenAPIDocument.load(from: global.dataDirectory()), vapidPublicKey: try push.vapidPublicKey(global),
            webPushHosts: try PushOptions.webPushHosts(global), trustedProxies: settings.proxies, sessions: settings.retention.sessions,
            limits: settings.limits, users: users)
        MetricsSystem.bootstrap(environment.metricsFactory)
        let application = buildApplication(
            environment, host: host, port: port, idleTimeout: settings.idleTimeout, connections: ConnectionLimit(maximum: settings.connections),
            logger: logger
        ) { bound in
            // The port bound, which is the one asked for unless that was 0 (the kernel's choice, which the log must name).
            let shown = host.contains(":") ? "[\(host)]:\(bound)" : "\(host):\(bound)"
            logger.info("API listening", metadata: ["address": "\(shown)"])
            readiness.apiReady()
        }
        return APIService(address: address) { try await application.run() }
    }

    /// `HOST:PORT`: an IPv4 address, an IPv6 address in brackets (`[::1]:8080`), or a host name; a port from 0 (any
    /// free port, which the log names) to 65535 in digits. Checked at start, so that a bad one is a line before anything runs, not a failure to listen
    /// after the scheduler has started.
    static func hostAndPort(_ text: String) throws -> (String, Int) {
        let bad = SettingRefusal("expected HOST:PORT such as 127.0.0.1:8080 or [::1]:8080, or none")
        guard let colon = text.lastIndex(of: ":"), colon > text.startIndex, case let digits = text[text.index(after: colon)...],
            (1...5).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(digits), (0...65535).contains(port)
        else { throw bad }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            var address = in6_addr()
            guard inet_pton(AF_INET6, host, &address) == 1 else { throw bad }
        } else if host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) {
            var address = in_addr()
            guard inet_pton(AF_INET, host, &address) == 1 else { throw bad }
        } else {
            // A host name (an unbracketed IPv6 address is taken whole, as before: `::1:8080`).
            let isV6 = host.contains(":")
            var address = in6_addr()
            guard
                isV6
                    ? inet_pton(AF_INET6, host, &address) == 1
                    : host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
            else { throw bad }
        }
        return (host, port)
    }

    /// The wall clock; with --now (or DAILYVERSE_NOW) a clock that starts at that instant and runs on, to replay a day.
    func replayClock() throws -> @Sendable () -> Date {
        guard global.clockIsPinned else { return { Date() } }
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
            let reason =
                "the scheduler runs from \(Date(timeIntervalSince1970: earliest).iso8601UTC) to \(Date(timeIntervalSince1970: latest).iso8601UTC)"
            // Pinned (the wall clock is within): --now or DAILYVERSE_NOW, named with its value as given.
            guard let pinned = global.pinnedInstant else { throw CLIError("the clock \(now.iso8601UTC) is out of range: \(reason)") }
            throw pinned.refused(reason)
        }
        return now
    }

    func runOnce() async throws {
        // The settings first: a bad one is refused before a database is created, migrated and seeded for nothing.
        let now = try schedulerClock()
        let configuration = try emit.configuration(global)
        try emit.checkSinkSpelling(global)
        let (database, lock) = try global.openDatabaseAsScheduler()
        defer { withExtendedLifetime(lock) {} }
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
        try report(emitted: emitted, delivered: delivered, now: now, sink: sink)
    }

    /// What `--once` prints of its pass.
    func report(emitted: EmitSummary, delivered: DeliverySummary, now: Date, sink: any Sink) throws {
        do {
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
            for problem in emitted.problems {
                let said =
                    switch problem.kind {
                    case .clockAhead:
                        "error: device \(problem.deviceID) was scheduled more than two days ahead of the clock (\(problem.detail)): rescheduled from now"
                    case .unknownZone: "warning: device \(problem.deviceID) has a time zone this system does not know (\(problem.detail)): not fired"
                    }
                FileHandle.standardError.write(Data((said + "\n").utf8))
            }
            // With the stdout sink, standard output carries the payloads only.
            if sink is StdoutSink { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { print(line) }
        }
    }
}

extension ServeCommand {
    /// Brings this process's content copy up to what is published on PostgreSQL: the month starts (`sighting`) and the
    /// imported content (`import`), each copied only if it changed; what changed, in words (nil: nothing).
    @discardableResult
    static func followTheDatabase(_ store: PostgresStore, _ content: AppDatabase, data: URL, now: Date) async throws -> String? {
        let starts = try await store.publishedMonthStarts()
        let calendars = try content.replacePublishedMonthStarts(with: starts, at: now)
        let imports = try await store.followImports(into: content) { try BundledContent(directory: data) }
        let changed =
            (calendars ? ["the calendars follow the database's published starts"] : [])
            + (imports ? ["the content copy holds the database's imported editions and commentary"] : [])
        return changed.isEmpty ? nil : changed.joined(separator: "; ")
    }

    /// The API's attempt counts are one limit only if every process keys them alike: refused, naming a live process
    /// whose API keys them otherwise. Said at start when they are keyed by their SHA-256 alone.
    static func agree(on throttleKey: String, store: PostgresStore, owner: String, now: Date, logger: Logger) async throws {
        if throttleKey.isEmpty {
            logger.notice(
                "throttles: attempt keys are stored as their SHA-256, which anyone can compute for every address: set throttle_key_file (the same on every machine) to store them under a secret"
            )
        }
        let other: ProcessRecord?
        do {
            other = try await store.claimThrottleKey(throttleKey, owner: owner, host: ProcessInfo.processInfo.hostName, pid: Int(getpid()), now: now)
        } catch {
            throw CLIError(store.describe(error))
        }
        if let other {
            throw CLIError(
                "throttle_key_file: process \(other.pid) on \(other.host), running since \(other.startedAt.iso8601UTC), does not key the API's attempts as this one would (throttle_key_file differs, or is set on one only): every serve on one database needs the same key file (to change it, stop them all)"
            )
        }
    }

    /// How many `push_timeout`s a lease must last at least: a batch waiting for the one before (a provider token's
    /// request, then the batch's own), then its own two.
    static let leaseTimeouts: TimeInterval = 4

    /// `serve` on PostgreSQL: any number of these processes, on any number of machines, share the database. Each
    /// emits with row locks (`SharedEmitter`), delivers by leases (`SharedOutbox`), keeps the push services' tokens and
    /// pauses there, and runs the hourly housekeeping one job at a time across processes; no scheduler lock. The
    /// day's content is read from this process's SQLite copy (`--content-db`), and so are the API's public reads; its
    /// users, sessions, devices, onboarding and hints are in PostgreSQL (`PostgresUserStore`).
    func runShared(_ database: PostgresAddress, _ settings: Settings) async throws {
        let logger = Logger(label: "dailyverse") { LineLogHandler(label: $0, level: settings.level) }
        let (address, lease, pushTimeout) = (settings.listen, settings.lease, settings.pushTimeout)
        // A batch is taken while the one before is sent, and each may wait `push_timeout` for a provider token and
        // again for its requests: a shorter lease ends while its rows are still being sent, and another process sends
        // them too.
        guard lease >= Self.leaseTimeouts * pushTimeout else {
            throw CLIError(
                "delivery_lease \(TimeSpan.formatted(lease)) is shorter than \(Int(Self.leaseTimeouts)) × push_timeout (\(TimeSpan.formatted(Self.leaseTimeouts * pushTimeout))): a batch could still be being sent when its lease ends, and another process would send it too; lengthen delivery_lease or shorten push_timeout"
            )
        }
        try emit.checkSharedSink(global)
        let content = try global.openContentCopy(flag: contentDB, pool: !once)
        let configuration = try emit.configuration(global, ahead: !once)
        let password = try PostgresPassword.resolve(for: database)
        if password != nil, database.exposesPassword {
            logger.warning(
                "the database password goes to a server whose certificate is not checked (sslmode=\(database.tlsMode.rawValue)): anyone on the path could take it; use sslmode=verify-full with sslrootcert (README, PostgreSQL)"
            )
        }
        let data = try global.dataDirectory()
        let store = try await PostgresStore.open(database, password: password, schema: .dailyVerse, logger: logger)
        // The calendars follow the month starts published on the database (`sighting`), and the content its imports
        // (`import`), copied into the content copy now and every minute.
        do { try await Self.followTheDatabase(store, content, data: data, now: try global.clock()) } catch {
            await store.close()
            throw CLIError(store.describe(error))
        }
        // The layers' editions, once the copy has the imports published on the database.
        do { try global.checkLayerEditions(in: content) } catch {
            await store.close()
            throw error
        }
        var emitter = SharedEmitter(store: store, content: content, configuration: configuration, logger: logger)
        // A pinned clock (--now, DAILYVERSE_NOW) is one the operator chose; the wall clock must agree with the server's.
        if !global.clockIsPinned {
            emitter.maximumClockSkew = SharedEmitter.defaultMaximumClockSkew
        }
        let owner = SharedOutbox.processOwner()
        // The key this process's API stores attempt counts under, by its fingerprint ('' for none); nil: no API.
        let throttleKey = once || address == "none" ? nil : settings.throttleKey?.fingerprint ?? ""
        // --once: one pass at the scheduler's instant; else a clock that runs (from --now, if given).
        let now: Date?
        let clock: @Sendable () -> Date
        var deliverer: Deliverer
        var services: [any Service] = []
        let notifier = SystemdNotifier()
        let readiness = Readiness(notifier: notifier, waitsForAPI: !once && address != "none")
        do {
            now = once ? try schedulerClock() : nil
            if let fixed = now {
                clock = { fixed }
            } else {
                clock = try replayClock()
            }
            if let throttleKey { try await Self.agree(on: throttleKey, store: store, owner: owner, now: clock(), logger: logger) }
            if !once, address != "none" {
                let themes = Set(try content.displayThemes().map(\.id))
                services.append(
                    try apiService(
                        address, content: content, users: PostgresUserStore(store: store, themes: themes),
                        // The attempt counts are the database's too: processes behind one load balancer enforce one limit.
                        throttles: settings.throttles.shared(in: PostgresThrottleCounter(store: store, key: settings.throttleKey)), clock: clock,
                        settings,
                        readiness: readiness, logger: logger))
            }
            // Last of what can fail: a push sink holds connections that must be shut down.
            deliverer = try emit.makeDeliverer(
                global, queue: SharedOutbox(store: store, owner: owner, lease: lease, logger: logger), state: .postgres(store), configuration,
                push: push, clock: clock)
            // Batches of one round of the push sink's requests: what a process killed mid-batch leaves sent but not
            // recorded (and sent again by another after the lease) is one round's worth, not 500 rows.
            deliverer.batchSize = SharedOutbox.batchSize
        } catch {
            // A process that does not start leaves the list of live processes (it would show there, and hold the
            // throttle key, for 90 s).
            if throttleKey != nil { try? await store.unregisterProcess(owner: owner) }
            await store.close()
            throw error
        }
        if let now {
            let emitted: EmitSummary
            let delivered: DeliverySummary
            do {
                try await emitter.checkClock()
                emitted = try await emitter.run(now: now)
                delivered = try await deliverer.run(now: now)
            } catch {
                await deliverer.sink.shutdown()
                await store.close()
                throw CLIError(store.describe(error))
            }
            await deliverer.sink.shutdown()
            await store.close()
            return try report(emitted: emitted, delivered: delivered, now: now, sink: deliverer.sink)
        }
        logger.info(
            "starting",
            metadata: [
                "database": "\(database)", "content": "\(content.path)", "sink": "\(deliverer.sink.name)", "listen": "\(address)",
                "emit_ahead": "\(Int(configuration.ahead))s", "lease_owner": "\(owner)",
            ])
        for line in GlobalOptions.overrides.all { logger.warning("configuration: \(line)") }
        let heartbeat = Heartbeat()
        services.append(
            MaintenanceService(name: "published content", interval: 60, clock: clock, logger: logger) { now in
                try await Self.followTheDatabase(store, content, data: data, now: now)
            })
        services.append(
            ProcessRegistryService(
                store: store, owner: owner, throttleKey: throttleKey, heartbeat: heartbeat, contentImports: { try? content.followedImports() },
                clock: clock, logger: logger))
        let group = DaemonBuilder.serviceGroup(
            emitter: emitter, deliverer: deliverer, clock: clock, logger: logger, notifier: notifier, readiness: readiness, heartbeat: heartbeat,
            services: services + DaemonBuilder.maintenance(.postgres(store), retention: settings.retention, clock: clock, logger: logger))
        do { try await group.run() } catch {
            await deliverer.sink.shutdown()
            await store.close()
            throw error
        }
        await deliverer.sink.shutdown()
        await store.close()
    }
}
