import Dispatch
import Synchronization

/// Work that holds its place until the test lets it go: no sleeping, no timing. The work blocks a Dispatch thread;
/// the test awaits without blocking one of the (few) threads that async code runs on, and without spinning on one:
/// it is resumed when the work starts.
public final class Latch: Sendable {
    private let state = Mutex<(started: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    private let release = DispatchSemaphore(value: 0)

    public init() {}

    /// Called by the work: marks it started (resuming whoever waits for that), then waits for `letGo`.
    public func hold() {
        let waiting = state.withLock { state in
            state.started = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
        release.wait()
    }

    public func waitUntilStarted() async {
        await withCheckedContinuation { continuation in
            let started = state.withLock { state in
                if !state.started { state.waiting.append(continuation) }
                return state.started
            }
            if started { continuation.resume() }
        }
    }

    public func letGo() { release.signal() }
}
