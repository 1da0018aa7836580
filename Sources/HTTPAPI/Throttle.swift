import Accounts
import Foundation
import Synchronization

/// Counts events per key in a sliding window and says when a key has had enough, with the clock passed in. In memory
/// and bounded (one process, on SQLite: a restart forgets it, which only ever makes the service more lenient for a
/// moment), or in a `ThrottleCounter` every process shares (PostgreSQL), its keys under the throttle's name.
public final class Throttle: Sendable {
    public let limit: Int
    public let window: TimeInterval
    private let maximumKeys: Int
    /// Each key's attempts in the window, oldest first.
    private let events = Mutex<[String: [Date]]>([:])
    /// The shared counts, and the name this throttle's keys are kept under there.
    private let shared: (counter: any ThrottleCounter, name: String)?

    public init(limit: Int, window: TimeInterval, maximumKeys: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.maximumKeys = maximumKeys
        shared = nil
    }

    /// A throttle of the same limit whose counts are in `counter`, under `name`.
    public init(_ throttle: Throttle, sharedIn counter: any ThrottleCounter, as name: String) {
        limit = throttle.limit
        window = throttle.window
        maximumKeys = throttle.maximumKeys
        shared = (counter, name)
    }

    /// Counts an attempt at `now` if `key` is within its limit (returning nil), else returns the seconds to wait and
    /// counts nothing: the check and the count under one lock, so concurrent requests cannot all slip through.
    public func admit(_ key: String, now: Date) async throws -> Int? { try await admit([key], now: now) }

    /// Reserves an attempt for every key at once, before the work it limits (a password hash): nil when all are within
    /// their limit (each is then counted), else the longest wait, with nothing counted. However many requests arrive at
    /// once, no more than `limit` per key get past this in a window.
    public func admit(_ keys: [String], now: Date) async throws -> Int? {
        if let shared { return try await shared.counter.admit(keys.map { shared.name + " " + $0 }, limit: limit, window: window, now: now) }
        return events.withLock { events in
            if let wait = keys.compactMap({ retryAfter($0, now: now, in: &events) }).max() { return wait }
            for key in keys { record(key, now: now, in: &events) }
            return nil
        }
    }

    /// Gives back an attempt reserved at `now` for `key` (the attempt succeeded and should not count against it).
    public func release(_ key: String, reservedAt now: Date) async throws {
        if let shared { return try await shared.counter.release(shared.name + " " + key, reservedAt: now) }
        events.withLock { events in
            guard var recent = events[key], let index = recent.lastIndex(of: now) else { return }
            recent.remove(at: index)
            events[key] = recent.isEmpty ? nil : recent
        }
    }

    private func retryAfter(_ key: String, now: Date, in events: inout [String: [Date]]) -> Int? {
        let recent = (events[key] ?? []).filter { now.timeIntervalSince($0) < window }
        events[key] = recent.isEmpty ? nil : recent
        guard recent.count >= limit, let oldest = recent.first else { return nil }
        return max(1, Int((window - now.timeIntervalSince(oldest)).rounded(.up)))
    }

    private func record(_ key: String, now: Date, in events: inout [String: [Date]]) {
        if events.count >= maximumKeys, events[key] == nil {
            // Forget the keys with nothing in the window; if all are busy, the one with the fewest attempts (the
            // longest idle of those). The fewest, not the oldest: a flood of new keys, one attempt each, must not push
            // out a key that has been refused its guesses (an email's failures) and give it a fresh count.
            events = events.filter { $0.value.contains { now.timeIntervalSince($0) < window } }
            if events.count >= maximumKeys,
                let victim = events.min(by: { ($0.value.count, $0.value.last ?? now) < ($1.value.count, $1.value.last ?? now) })?.key
            {
                events[victim] = nil
            }
        }
        events[key, default: []].append(now)
    }

    public func reset(_ key: String) async throws {
        if let shared { return try await shared.counter.reset(shared.name + " " + key) }
        events.withLock { $0[key] = nil }
    }
}

/// The limits the API applies.
public struct Throttles: Sendable {
    /// Sign-in attempts, reserved before the password is verified: every attempt per client address (a success too:
    /// each costs a password hash), and failures per email from that address (a success clears them). Counted per
    /// email and address together, a flood of guesses at one email from one address cannot lock its owner out
    /// from another.
    public let signIn: Throttle
    /// Failed sign-ins per email from every address together, at ten times `signIn`'s limit: a bound on guesses
    /// spread over many addresses.
    public let signInPerEmail: Throttle
    /// New guests, per client address.
    public let guests: Throttle
    /// New accounts (and attempts at one), per client address.
    public let accounts: Throttle
    /// Requests that change something (any method but GET and HEAD), per session.
    public let writes: Throttle

    public init(
        signIn: Throttle = Throttle(limit: 5, window: 900), guests: Throttle = Throttle(limit: 10, window: 3600),
        accounts: Throttle = Throttle(limit: 5, window: 3600), writes: Throttle = Throttle(limit: 120, window: 60)
    ) {
        self.writes = writes
        self.signIn = signIn
        self.signInPerEmail = Throttle(limit: min(signIn.limit, 100_000) * 10, window: signIn.window)
        self.guests = guests
        self.accounts = accounts
    }

    private init(signIn: Throttle, signInPerEmail: Throttle, guests: Throttle, accounts: Throttle, writes: Throttle) {
        self.signIn = signIn
        self.signInPerEmail = signInPerEmail
        self.guests = guests
        self.accounts = accounts
        self.writes = writes
    }

    /// The same limits, counted in `counter` (PostgreSQL's: one limit for every process).
    public func shared(in counter: any ThrottleCounter) -> Throttles {
        Throttles(
            signIn: Throttle(signIn, sharedIn: counter, as: "sign-in"),
            signInPerEmail: Throttle(signInPerEmail, sharedIn: counter, as: "sign-in email"),
            guests: Throttle(guests, sharedIn: counter, as: "guests"), accounts: Throttle(accounts, sharedIn: counter, as: "accounts"),
            writes: Throttle(writes, sharedIn: counter, as: "writes"))
    }
}

extension APIError {
    static func tooManyRequests(_ seconds: Int, _ message: String) -> APIError {
        var error = APIError(.tooManyRequests, code: "too_many_requests", message)
        error.headers[.retryAfter] = String(seconds)
        return error
    }
}
