import Foundation
import Synchronization

/// Counts events per key in a sliding window and says when a key has had enough. In memory, bounded, with the clock
/// passed in: a restart forgets it, which only ever makes the service more lenient for a moment.
public final class Throttle: Sendable {
    public let limit: Int
    public let window: TimeInterval
    private let maximumKeys: Int
    /// Each key's attempts in the window, oldest first.
    private let events = Mutex<[String: [Date]]>([:])

    public init(limit: Int, window: TimeInterval, maximumKeys: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.maximumKeys = maximumKeys
    }

    /// Counts an attempt at `now` if `key` is within its limit (returning nil), else returns the seconds to wait and
    /// counts nothing: the check and the count under one lock, so concurrent requests cannot all slip through.
    public func admit(_ key: String, now: Date) -> Int? { admit([key], now: now) }

    /// Reserves an attempt for every key at once, before the work it limits (a password hash): nil when all are within
    /// their limit (each is then counted), else the longest wait, with nothing counted. However many requests arrive at
    /// once, no more than `limit` per key get past this in a window.
    public func admit(_ keys: [String], now: Date) -> Int? {
        events.withLock { events in
            if let wait = keys.compactMap({ retryAfter($0, now: now, in: &events) }).max() { return wait }
            for key in keys { record(key, now: now, in: &events) }
            return nil
        }
    }

    /// Gives back an attempt reserved at `now` for `key` (the attempt succeeded and should not count against it).
    public func release(_ key: String, reservedAt now: Date) {
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
            // Forget the keys with nothing in the window; if all are busy, the oldest one.
            events = events.filter { $0.value.contains { now.timeIntervalSince($0) < window } }
            if events.count >= maximumKeys, let victim = events.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) })?.key {
                events[victim] = nil
            }
        }
        events[key, default: []].append(now)
    }

    public func reset(_ key: String) { events.withLock { $0[key] = nil } }
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
}

extension APIError {
    static func tooManyRequests(_ seconds: Int, _ message: String) -> APIError {
        var error = APIError(.tooManyRequests, code: "too_many_requests", message)
        error.headers[.retryAfter] = String(seconds)
        return error
    }
}
