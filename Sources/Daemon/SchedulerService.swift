import Accounts
import Delivery
import Engagement
import Foundation
import Logging
import Metrics
import Notifications
import ServiceLifecycle
import Storage
import Synchronization

/// A flag set once, read from any thread: how the blocking passes learn of a graceful shutdown.
public final class StopFlag: Sendable {
    private let value = Mutex(false)
    public init() {}
    public var isSet: Bool { value.withLock { $0 } }
    public func set() { value.withLock { $0 = true } }
}

/// The time of the last completed batch, for the watchdog.
public final class Heartbeat: Sendable {
    private let last = Mutex(Date())
    private let pass = Mutex<Date?>(nil)
    public init() {}
    public func beat() { last.withLock { $0 = Date() } }
    public var age: TimeInterval { last.withLock { Date().timeIntervalSince($0) } }
    /// A pass finished, at the scheduler's clock.
    func passed(at now: Date) { pass.withLock { $0 = now } }
    /// When the last pass finished, if one has.
    public var lastPass: Date? { pass.withLock { $0 } }
}

/// The scheduler: a pass (emit what is due, deliver the outbox), then sleep until the next fire or retry.
///
/// On SIGTERM or SIGINT the pass stops after the transaction it is in, and the service returns.
public struct SchedulerService: Service {
    /// The emission pass, on whichever store.
    let emitter: any EmissionWork
    let deliverer: Deliverer
    let clock: @Sendable () -> Date
    let logger: Logger
    let notifier: SystemdNotifier
    let heartbeat: Heartbeat
    let maximumSleep: TimeInterval
    /// Told when the first pass is done.
    let readiness: Readiness

    public init(
        emitter: any EmissionWork, deliverer: Deliverer, clock: @escaping @Sendable () -> Date, logger: Logger,
        notifier: SystemdNotifier, heartbeat: Heartbeat, maximumSleep: TimeInterval = 30, readiness: Readiness? = nil
    ) {
        self.readiness = readiness ?? Readiness(notifier: notifier, waitsForAPI: false)
        self.emitter = emitter
        self.deliverer = deliverer
        self.clock = clock
        self.logger = logger
        self.notifier = notifier
        self.heartbeat = heartbeat
        self.maximumSleep = maximumSleep
    }

    public func run() async throws {
        let stop = StopFlag()
        // A graceful shutdown (SIGTERM) and a cancellation (another service of the group failed) end the loop alike:
        // the pass stops after the transaction it is in.
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await loop(stop)
            } onGracefulShutdown: {
                stop.set()
                notifier.stopping()
                logger.info("shutting down: finishing the current transaction")
            }
        } onCancel: {
            stop.set()
        }
        logger.info("scheduler stopped")
    }

    struct PassResult: Sendable {
        let emitted: EmitSummary
        let delivered: DeliverySummary
        /// How long the pass took.
        let seconds: Double
        /// Why emitting failed, if it did (what was committed before was delivered all the same).
        let emitError: String?
        /// Fires missed: found too late by the emitter, or left unsent past the grace period and found by the deliverer.
        var missed: Int { emitted.missed + delivered.missed }
    }

    /// Emits what is due, then delivers the outbox, even when emitting failed: rows committed before a failure (a full
    /// database disk) go out while later passes keep failing.
    func pass(now: Date, stop: StopFlag) async throws -> PassResult {
        let heartbeat = heartbeat
        // A database file removed or replaced under the process ends it (below), before anything is written; a clock
        // too far from a shared store's fails the pass before either half runs.
        try emitter.checkStore()
        try await emitter.checkClock()
        let started = ContinuousClock.now
        let emitted: EmitSummary
        let emitError: String?
        do {
            emitted = try await emitter.emit(
                now: now,
                shouldStop: {
                    heartbeat.beat()
                    return stop.isSet
                })
            emitError = nil
        } catch {
            (emitted, emitError) = (EmitSummary(), emitter.describe(error))
        }
        // Delivering after a failed emission keeps no heartbeat: passes that never recover let the watchdog restart
        // the service.
        let healthy = emitError == nil
        let delivered: DeliverySummary
        do {
            delivered = try await deliverer.run(
                now: now,
                shouldStop: {
                    if healthy { heartbeat.beat() }
                    return stop.isSet
                })
        } catch {
            throw PassError(
                description: [emitError.map { "emitting: \($0)" }, "delivering: \(emitter.describe(error))"].compactMap { $0 }
                    .joined(separator: "; "))
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return PassResult(emitted: emitted, delivered: delivered, seconds: seconds, emitError: emitError)
    }

    struct PassError: Error, CustomStringConvertible { let description: String }

    /// How long the loop waits after a failed pass before the next.
    static let failureDelay: TimeInterval = 30
    /// How many devices of one kind of schedule problem a pass names in the log; the rest are counted in one line.
    static let problemLines = 10

    func loop(_ stop: StopFlag) async throws {
        var ready = false
        while !stop.isSet && !Task.isCancelled {
            let now = clock()
            var wait: TimeInterval
            do {
                let result = try await pass(now: now, stop: stop)
                Self.count(result)
                log(result, now: now)
                if result.emitError == nil {
                    heartbeat.beat()
                    heartbeat.passed(at: now)
                    if !ready {
                        readiness.schedulerReady()
                        logger.info("scheduler ready", metadata: ["sink": "\(deliverer.sink.name)"])
                        ready = true
                    }
                }
                wait = try await nextWake(after: now)
                if result.emitError != nil || result.delivered.localError != nil { wait = min(wait, Self.failureDelay) }
            } catch let error as StorageError where error.isFileChange {
                // The file was removed or replaced: no pass can succeed, and writing on would lose what it wrote.
                logger.critical("database file gone: stopping", metadata: ["error": "\(error)"])
                throw error
            } catch {
                // A failed pass (the database's disk full, an I/O error) is said, and tried again: nothing it did is
                // half-written (each batch is a transaction), and the watchdog notices if it never recovers.
                logger.error("pass failed", metadata: ["error": "\(emitter.describe(error))", "retry_in": "\(Int(Self.failureDelay))s"])
                wait = Self.failureDelay
            }
            if stop.isSet { break }
            // A sleep ended by shutdown or cancellation ends the loop: swallowing its error would make a busy loop.
            do { try await Self.sleep(seconds: wait) } catch is CancellationError { break }
        }
    }

    /// One line a pass at info (with its duration), and what went wrong at warning or error, with its cause.
    func log(_ result: PassResult, now: Date) {
        let delivered = result.delivered
        if result.emitted.devices > 0 || delivered != DeliverySummary() || result.emitError != nil {
            logger.info(
                "pass done",
                metadata: [
                    "devices": "\(result.emitted.devices)", "queued": "\(result.emitted.queued)", "missed": "\(result.missed)",
                    "delivered": "\(delivered.delivered)", "retrying": "\(delivered.retrying)", "failed": "\(delivered.failed)",
                    "deferred": "\(delivered.deferred)", "seconds": "\(String(format: "%.3f", result.seconds))",
                ])
        }
        if let error = result.emitError {
            logger.error("emitting failed; what was committed before was delivered", metadata: ["error": "\(error)"])
        }
        // A line for each of the first few devices of a kind, then one line with how many more: a clock that ran ahead
        // moved every device, and a million lines would bury the journal.
        var said: [ScheduleProblem.Kind: Int] = [:]
        for problem in result.emitted.problems {
            said[problem.kind, default: 0] += 1
            guard said[problem.kind]! <= Self.problemLines else { continue }
            switch problem.kind {
            case .clockAhead:
                logger.error(
                    "a device was scheduled more than two days ahead of the clock: rescheduled from now (did the clock run ahead, or a pass run with --now in the future?)",
                    metadata: ["device": "\(problem.deviceID)", "found": "\(problem.detail)", "now": "\(now.iso8601UTC)"])
            case .unknownZone:
                logger.warning(
                    "a device's time zone is unknown to this system's time zone data: it does not fire until its zone is changed",
                    metadata: ["device": "\(problem.deviceID)", "zone": "\(problem.detail)"])
            }
        }
        for (kind, count) in said.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where count > Self.problemLines {
            logger.error(
                "more devices with the same problem: \(count - Self.problemLines) not listed here (each is in the table schedule_problem; dailyverse status counts them)",
                metadata: ["problem": "\(kind.rawValue)", "devices": "\(count)"])
        }
        if result.emitted.skippedDays > 0 {
            logger.warning(
                "fire-days older than the look-back were skipped (the scheduler was not running)",
                metadata: ["skipped": "\(result.emitted.skippedDays)", "look_back_days": "\(Scheduler.lookbackDays)"])
        }
        if let local = delivered.localError {
            logger.error(
                "cannot deliver: rows kept pending until it clears",
                metadata: [
                    "sink": "\(deliverer.sink.name)", "error": "\(local)",
                    "pending": "\(delivered.deferred)", "retry_in": "\(Int(deliverer.localRetryDelay))s",
                ])
        } else if let paused = delivered.pausedError {
            logger.error(
                "a push service refused our configuration: its rows kept pending",
                metadata: ["error": "\(paused)", "pending": "\(delivered.deferred)"])
        }
        if delivered.disabled > 0 {
            logger.notice("devices disabled: their push service no longer knows them", metadata: ["disabled": "\(delivered.disabled)"])
        }
        if delivered.failed > 0 {
            logger.error("deliveries failed", metadata: ["failed": "\(delivered.failed)", "last_error": "\(delivered.lastError ?? "")"])
        } else if delivered.retrying > 0 {
            logger.warning("deliveries to retry", metadata: ["retrying": "\(delivered.retrying)", "last_error": "\(delivered.lastError ?? "")"])
        }
    }

    /// Sleeps `seconds` (clamped to 0…1 day, so no value can overflow the nanoseconds), ended early by a graceful
    /// shutdown or a cancellation, both of which throw `CancellationError`.
    static func sleep(seconds: TimeInterval) async throws {
        let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), 86_400)
        try await cancelWhenGracefulShutdown { try await Task.sleep(nanoseconds: UInt64(clamped * 1e9)) }
    }

    /// Each pass's work, through swift-metrics (to Prometheus under `serve`; nowhere unless bootstrapped).
    static func count(_ result: PassResult) {
        Counter(label: "dailyverse_payloads_queued_total").increment(by: result.emitted.queued)
        Counter(label: "dailyverse_fires_missed_total").increment(by: result.missed)
        Counter(label: "dailyverse_payloads_delivered_total").increment(by: result.delivered.delivered)
        Counter(label: "dailyverse_deliveries_failed_total").increment(by: result.delivered.failed)
        Counter(label: "dailyverse_passes_total").increment()
    }

    /// Seconds until the next device fires (emitting ahead: until it is within the emitter's refill time), or a
    /// row written ahead or a retry is due, at most `maximumSleep`. (The queue's first entry may be one left behind
    /// by a change: that only wakes the loop early.)
    func nextWake(after now: Date) async throws -> TimeInterval {
        guard let next = try await emitter.nextWork(platforms: deliverer.sink.platforms) else { return maximumSleep }
        return min(maximumSleep, max(0.05, next - now.timeIntervalSince1970))
    }
}

/// Pings systemd's watchdog at half its interval, as long as the scheduler's batches keep completing.
public struct WatchdogService: Service {
    let notifier: SystemdNotifier
    let heartbeat: Heartbeat
    let logger: Logger

    public init(notifier: SystemdNotifier, heartbeat: Heartbeat, logger: Logger) {
        self.notifier = notifier
        self.heartbeat = heartbeat
        self.logger = logger
    }

    public func run() async throws {
        guard let interval = notifier.watchdogInterval, interval > 0 else { return try await gracefulShutdown() }
        while !Task.isCancelledOrShuttingDown {
            if heartbeat.age < interval { notifier.watchdog() } else { logger.warning("scheduler stalled: watchdog not pinged") }
            do { try await SchedulerService.sleep(seconds: interval / 2) } catch { return }
        }
    }
}

/// Builds the daemon the way production runs it: `serve` and the tests call the same function.
public enum DaemonBuilder {
    /// How long what the daemon removes hourly is kept.
    public struct Retention: Sendable {
        /// A guest inactive this long is removed, with everything of theirs.
        public var guests: TimeInterval
        /// Delivered, failed and missed outbox rows this old are removed.
        public var outbox: TimeInterval
        /// Analytics events this old are removed.
        public var events: TimeInterval
        /// When sessions expire; expired ones are removed.
        public var sessions: SessionPolicy

        public init(
            guests: TimeInterval = 30 * 86_400, outbox: TimeInterval = 30 * 86_400, events: TimeInterval = 365 * 86_400,
            sessions: SessionPolicy = SessionPolicy()
        ) {
            self.guests = guests
            self.outbox = outbox
            self.events = events
            self.sessions = sessions
        }
    }

    /// The scheduler, the watchdog and the hourly maintenance (guest purge, outbox prune, log checkpoint), with
    /// `services` beside them (the HTTP API, which tells `readiness` when it listens). When any service fails, the
    /// group cancels the others, and each returns.
    public static func serviceGroup(
        database: AppDatabase, emitter: Emitter, deliverer: Deliverer, clock: @escaping @Sendable () -> Date, logger: Logger,
        retention: Retention = Retention(), notifier: SystemdNotifier = SystemdNotifier(), readiness: Readiness? = nil,
        services: [any Service] = []
    ) -> ServiceGroup {
        serviceGroup(
            emitter: emitter, deliverer: deliverer, clock: clock, logger: logger, notifier: notifier, readiness: readiness,
            services: maintenance(database: database, retention: retention, clock: clock, logger: logger) + services)
    }

    /// The scheduler (on whichever store `emitter` and `deliverer` use) and the watchdog, with `services` beside them
    /// (the store's maintenance, the HTTP API).
    public static func serviceGroup(
        emitter: any EmissionWork, deliverer: Deliverer, clock: @escaping @Sendable () -> Date, logger: Logger,
        notifier: SystemdNotifier = SystemdNotifier(), readiness: Readiness? = nil, heartbeat: Heartbeat = Heartbeat(),
        services: [any Service] = []
    ) -> ServiceGroup {
        let scheduler = SchedulerService(
            emitter: emitter, deliverer: deliverer, clock: clock, logger: logger, notifier: notifier, heartbeat: heartbeat,
            readiness: readiness ?? Readiness(notifier: notifier, waitsForAPI: false))
        let watchdog = WatchdogService(notifier: notifier, heartbeat: heartbeat, logger: logger)
        SignalNotes.ignore()
        return ServiceGroup(
            services: [scheduler, watchdog, SignalNotes(logger: logger)] + services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    }

    /// The hourly housekeeping's work on one store: each removes what is past its retention and says how much.
    public struct Housekeeping: Sendable {
        let purgeGuests: @Sendable (_ inactiveBefore: Date) async throws -> Int
        let pruneOutbox: @Sendable (_ settledBefore: Date) async throws -> Int
        let pruneEvents: @Sendable (_ before: Date) async throws -> Int
        let expireSessions: @Sendable (_ now: Date, _ policy: SessionPolicy) async throws -> Int
        /// Attempt counts past the longest throttle window: PostgreSQL's (SQLite's are in memory).
        var pruneThrottles: (@Sendable (_ now: Date) async throws -> Int)?
        /// Processes not seen for a day: PostgreSQL's list (SQLite has one process).
        var pruneProcesses: (@Sendable (_ now: Date) async throws -> Int)?

        /// SQLite's: one process per database does it.
        public static func sqlite(_ database: AppDatabase) -> Housekeeping {
            Housekeeping(
                purgeGuests: { try database.purgeGuests(inactiveBefore: $0) }, pruneOutbox: { try database.pruneOutbox(settledBefore: $0) },
                pruneEvents: { try database.pruneEvents(before: $0) }, expireSessions: { try database.purgeExpiredSessions(now: $0, policy: $1) })
        }

        /// PostgreSQL's: every process runs it, each job done by the first to take its advisory lock (the others find
        /// it taken and count nothing).
        public static func postgres(_ store: PostgresStore) -> Housekeeping {
            Housekeeping(
                purgeGuests: { try await store.purgeGuests(inactiveBefore: $0) ?? 0 },
                pruneOutbox: { try await store.pruneOutbox(settledBefore: $0) ?? 0 }, pruneEvents: { try await store.pruneEvents(before: $0) ?? 0 },
                expireSessions: { try await store.purgeExpiredSessions(now: $0, policy: $1) ?? 0 },
                pruneThrottles: { try await store.pruneThrottleEvents(now: $0) ?? 0 },
                pruneProcesses: { try await store.pruneProcesses(now: $0) ?? 0 })
        }
    }

    /// What runs hourly beside the scheduler: on SQLite also the log's checkpoint.
    static func maintenance(database: AppDatabase, retention: Retention, clock: @escaping @Sendable () -> Date, logger: Logger) -> [any Service] {
        maintenance(.sqlite(database), retention: retention, clock: clock, logger: logger) + [
            // The log is checkpointed at 256 MiB: a quiet database's is copied back hourly all the same.
            MaintenanceService(name: "log checkpoint", interval: 3600, clock: clock, logger: logger) { _ in
                database.requestCheckpoint()
                return nil
            }
        ]
    }

    /// The hourly housekeeping of a store.
    public static func maintenance(
        _ work: Housekeeping, retention: Retention, clock: @escaping @Sendable () -> Date, logger: Logger
    )
        -> [any Service]
    {
        var services: [any Service] = [
            MaintenanceService(name: "guest purge", interval: 3600, clock: clock, logger: logger) { now in
                let purged = try await work.purgeGuests(now.addingTimeInterval(-retention.guests))
                return purged > 0 ? "\(purged) inactive guests purged" : nil
            },
            MaintenanceService(name: "outbox prune", interval: 3600, clock: clock, logger: logger) { now in
                let pruned = try await work.pruneOutbox(now.addingTimeInterval(-retention.outbox))
                return pruned > 0 ? "\(pruned) settled outbox rows removed" : nil
            },
            MaintenanceService(name: "event prune", interval: 3600, clock: clock, logger: logger) { now in
                let pruned = try await work.pruneEvents(now.addingTimeInterval(-retention.events))
                return pruned > 0 ? "\(pruned) analytics events past their retention removed" : nil
            },
            MaintenanceService(name: "session expiry", interval: 3600, clock: clock, logger: logger) { now in
                let expired = try await work.expireSessions(now, retention.sessions)
                return expired > 0 ? "\(expired) expired sessions removed" : nil
            },
        ]
        if let prune = work.pruneThrottles {
            services.append(
                MaintenanceService(name: "throttle expiry", interval: 3600, clock: clock, logger: logger) { now in
                    let pruned = try await prune(now)
                    return pruned > 0 ? "\(pruned) attempts past the longest throttle window removed" : nil
                })
        }
        if let prune = work.pruneProcesses {
            services.append(
                MaintenanceService(name: "process expiry", interval: 3600, clock: clock, logger: logger) { now in
                    let pruned = try await prune(now)
                    return pruned > 0 ? "\(pruned) processes not seen for a day removed from the list" : nil
                })
        }
        return services
    }
}
