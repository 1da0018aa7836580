import Foundation
import Synchronization

/// Password hashing, a few at a time, off the request threads. Each scrypt hash takes 128 MiB and a core for a good
/// fraction of a second, so parallel sign-ups must not each get one: at most `limit` run at once, at most `waiting`
/// more wait their turn, and anything beyond is refused at once (the API answers 503 with Retry-After).
public final class HashingGate: Sendable {
    public let limit: Int
    public let waiting: Int
    private struct State {
        var running = 0
        var queue: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    public init(limit: Int = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4)), waiting: Int = 32) {
        self.limit = max(1, limit)
        self.waiting = max(0, waiting)
    }

    public struct Busy: Error {}

    /// Runs `work` on a thread of its own once a place is free; throws `Busy` when too many are queued already.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Hashes running and waiting now.
    public var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.queue.count) } }

    private func acquire() async throws {
        enum Decision { case go, wait, refuse }
        let decision: Decision = state.withLock { state in
            if state.running < limit {
                state.running += 1
                return .go
            }
            return state.queue.count < waiting ? .wait : .refuse
        }
        switch decision {
        case .go: return
        case .refuse: throw Busy()
        case .wait:
            await withCheckedContinuation { continuation in
                let startNow: Bool = state.withLock { state in
                    // A place may have come free between the decision and now.
                    if state.running < limit {
                        state.running += 1
                        return true
                    }
                    state.queue.append(continuation)
                    return false
                }
                if startNow { continuation.resume() }
            }
        }
    }

    private func release() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            // The place passes straight to the first waiter, if any.
            guard !state.queue.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.queue.removeFirst()
        }
        next?.resume()
    }
}
