import Foundation
import Logging
import ServiceLifecycle
import Storage

/// Housekeeping at a fixed interval beside the scheduler (the guest purge, the outbox prune): its first run comes
/// one interval after start, and a graceful shutdown ends the wait.
public struct MaintenanceService: Service {
    let name: String
    let interval: TimeInterval
    let clock: @Sendable () -> Date
    let logger: Logger
    /// Does the work at the given instant; what it did, to log, or nil for nothing worth a line.
    let task: @Sendable (Date) async throws -> String?

    public init(
        name: String, interval: TimeInterval, clock: @escaping @Sendable () -> Date, logger: Logger,
        task: @escaping @Sendable (Date) async throws -> String?
    ) {
        self.name = name
        self.interval = interval
        self.clock = clock
        self.logger = logger
        self.task = task
    }

    public func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do { try await SchedulerService.sleep(seconds: interval) } catch { return }
            do {
                if let done = try await task(clock()) { logger.info("\(name): \(done)") }
            } catch {
                // In the server's words where it said (postgres-nio's own description names nothing), without its
                // DETAIL, which can quote a row's values.
                logger.error("\(name) failed", metadata: ["error": "\(PostgresStore.reason(error, detail: false))"])
            }
        }
    }
}

extension Task where Success == Never, Failure == Never {
    static var isCancelledOrShuttingDown: Bool { Task.isCancelled || Task.isShuttingDownGracefully }
}
