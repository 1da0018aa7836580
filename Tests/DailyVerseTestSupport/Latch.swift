import Dispatch
import Synchronization

/// Work that holds its place until the test lets it go: no sleeping, no timing. The work blocks a Dispatch thread;
/// the test awaits without blocking one of the (few) threads that async code runs on.
public final class Latch: Sendable {
    private let started = Mutex(false)
    private let release = DispatchSemaphore(value: 0)

    public init() {}

    /// Called by the work: marks it started, then waits for `letGo`.
    public func hold() {
        started.withLock { $0 = true }
        release.wait()
    }

    public func waitUntilStarted() async {
        while !started.withLock({ $0 }) { await Task.yield() }
    }

    public func letGo() { release.signal() }
}
