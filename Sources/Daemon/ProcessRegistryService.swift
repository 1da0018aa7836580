import Delivery
import Foundation
import Logging
import ServiceLifecycle
import Storage

/// On PostgreSQL, keeps this process in the list `status` shows: registered at start, said alive every `interval`
/// with the time its scheduler last finished a pass, and removed when it stops cleanly. A process killed is dropped
/// from the list once it has not been seen for `PostgresStore.processStaleAfter`. A database that cannot be reached is
/// logged and tried again at the next tick; it stops nothing.
public struct ProcessRegistryService: Service {
    public static let interval: TimeInterval = 30

    let store: PostgresStore
    let owner: String
    /// The fingerprint of the key the process's API counts attempts under ('' for none; nil: no API).
    let throttleKey: String?
    let heartbeat: Heartbeat
    /// The revision of the database's imports the process's content copy holds, asked at each tick.
    let contentImports: @Sendable () -> String?
    let clock: @Sendable () -> Date
    let logger: Logger

    public init(
        store: PostgresStore, owner: String, throttleKey: String?, heartbeat: Heartbeat, contentImports: @escaping @Sendable () -> String? = { nil },
        clock: @escaping @Sendable () -> Date, logger: Logger
    ) {
        self.store = store
        self.owner = owner
        self.throttleKey = throttleKey
        self.contentImports = contentImports
        self.heartbeat = heartbeat
        self.clock = clock
        self.logger = logger
    }

    public func run() async throws {
        var registered = false
        let (host, pid) = (ProcessInfo.processInfo.hostName, Int(getpid()))
        while !Task.isCancelledOrShuttingDown {
            do {
                try await store.recordProcess(
                    owner: owner, host: host, pid: pid, throttleKey: throttleKey, contentImports: contentImports(), now: clock(),
                    lastPass: heartbeat.lastPass)
                registered = true
            } catch {
                logger.warning("process list: not updated", metadata: ["error": "\(store.describe(error))"])
            }
            do { try await SchedulerService.sleep(seconds: Self.interval) } catch { break }
        }
        if registered { try? await store.unregisterProcess(owner: owner) }
    }
}
