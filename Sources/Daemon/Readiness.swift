import Foundation
import Synchronization

/// Sends systemd READY=1 once, when every part the daemon waits for is up: the scheduler's first pass, and the API
/// listening when there is one. Until then systemd (and `systemctl start`) waits, so a daemon whose API cannot listen
/// never reports itself ready.
public final class Readiness: Sendable {
    let notifier: SystemdNotifier
    private struct State {
        var schedulerDone = false
        var apiListening: Bool
        var sent = false
    }
    private let state: Mutex<State>

    /// `waitsForAPI`: whether an API service will report `apiReady()`.
    public init(notifier: SystemdNotifier, waitsForAPI: Bool) {
        self.notifier = notifier
        self.state = Mutex(State(apiListening: !waitsForAPI))
    }

    /// The scheduler finished its first pass.
    public func schedulerReady() { update { $0.schedulerDone = true } }

    /// The API listens on its address.
    public func apiReady() { update { $0.apiListening = true } }

    /// Whether READY=1 has been sent.
    public var isReady: Bool { state.withLock { $0.sent } }

    private func update(_ change: (inout State) -> Void) {
        let send: Bool = state.withLock { state in
            change(&state)
            guard !state.sent, state.schedulerDone, state.apiListening else { return false }
            state.sent = true
            return true
        }
        if send { notifier.ready(status: "scheduling") }
    }
}
