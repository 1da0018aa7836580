import Dispatch
import Foundation
import Logging
import ServiceLifecycle

/// The signals an operator (or a log rotator) may send a daemon that is not told to stop: SIGHUP (which systemd's
/// `reload`, logrotate and a closed terminal send), SIGUSR1 and SIGUSR2. Left to their default, each would end the
/// process at once, with no log line and no graceful stop (and systemd counts SIGHUP as a clean exit, so
/// `Restart=on-failure` would not restart it). `serve` has nothing to reopen — its log is standard error, and its
/// settings are read at start — so each is said at notice and otherwise ignored.
public struct SignalNotes: Service {
    public static let signals: [(number: Int32, name: String)] = [(SIGHUP, "SIGHUP"), (SIGUSR1, "SIGUSR1"), (SIGUSR2, "SIGUSR2")]

    let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    /// Ignores the signals from now on (called before the group runs, so that none sent at start ends the process).
    public static func ignore() {
        for (number, _) in signals { signal(number, SIG_IGN) }
    }

    public func run() async throws {
        Self.ignore()
        let logger = logger
        let sources = Self.signals.map { number, name in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                logger.notice(
                    "\(name) received and ignored: nothing to reload (the log is standard error; settings are read at start, so restart to change them)"
                )
            }
            source.resume()
            return source
        }
        defer { for source in sources { source.cancel() } }
        try? await gracefulShutdown()
    }
}
