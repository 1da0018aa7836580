import Foundation

/// Sends systemd READY=1 once, when every part the daemon waits for is up: the scheduler's first pass, and the API
/// listening when there is one. Until then systemd (and `systemctl start`) waits, so a daemon whose API cannot listen
/// never reports itself ready.
public final class Readiness: @unchecked Sendable {
    let notifier: SystemdNotifier
    private let lock = NSLock()
    private var schedulerDone = false
    private var apiListening: Bool
    private var sent = false

    /// `waitsForAPI`: whether an API service will report `apiReady()`.
    public init(notifier: SystemdNotifier, waitsForAPI: Bool) {
        self.notifier = notifier
        self.apiListening = !waitsForAPI
    }

    /// The scheduler finished its first pass.
    public func schedulerReady() { update { $0.schedulerDone = true } }

    /// The API listens on its address.
    public func apiReady() { update { $0.apiListening = true } }

    /// Whether READY=1 has been sent.
    public var isReady: Bool { lock.withLock { sent } }

    private func update(_ change: (Readiness) -> Void) {
        let send: Bool = lock.withLock {
            change(self)
            guard !sent, schedulerDone, apiListening else { return false }
            sent = true
            return true
        }
        if send { notifier.ready(status: "scheduling") }
    }
}
