import Foundation
import HijriCalendar
import NIOCore
import Synchronization

/// Encoded bodies of public reads, kept for a short while: today's verse is the same for everyone in a zone until
/// that zone's midnight, so it is worked out, encoded and hashed once rather than for every request. An entry lives
/// at most `lifetime` (a sighting published meanwhile is served within that long) and never past the zone's next
/// midnight (`midnight`). Bounded: when full, it starts afresh.
public final class ResponseCache: Sendable {
    public struct Entry: Sendable {
        public let body: ByteBuffer
        public let tag: String
        /// The zone's next midnight when the body was made (for Cache-Control).
        public let midnight: Date
        let expires: Date
    }

    public let lifetime: TimeInterval
    public let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])
    private let zones = Mutex<[String: TimeZone]>([:])

    public init(lifetime: TimeInterval = 60, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The entry for `key`, made by `make` (the body and the zone's next midnight) when missing or stale.
    func entry(_ key: String, now: Date, make: () throws -> (Data, Date)) throws -> Entry {
        if let entry = entries.withLock({ $0[key] }), entry.expires > now { return entry }
        let (body, midnight) = try make()
        let entry = Entry(
            body: ByteBuffer(bytes: body), tag: entityTag(body), midnight: midnight, expires: min(now.addingTimeInterval(lifetime), midnight))
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
        return entry
    }

    /// An IANA zone by its exact name, looked up once.
    func zone(_ name: String) -> TimeZone? {
        if let zone = zones.withLock({ $0[name] }) { return zone }
        guard let zone = TimeZone.iana(name) else { return nil }
        zones.withLock { if $0.count < 2_000 { $0[name] = zone } }
        return zone
    }
}
