import Dispatch
import Foundation

/// Work that holds its place until the test lets it go: no sleeping, no timing. The work blocks a Dispatch thread;
/// the test awaits without blocking one of the (few) threads that async code runs on.
public final class Latch: @unchecked Sendable {
    private let lock = NSLock()
    private var started = false
    private let release = DispatchSemaphore(value: 0)

    public init() {}

    /// Called by the work: marks it started, then waits for `letGo`.
    public func hold() {
        lock.withLock { started = true }
        release.wait()
    }

    public func waitUntilStarted() async {
        while !lock.withLock({ started }) { await Task.yield() }
    }

    public func letGo() { release.signal() }
}
