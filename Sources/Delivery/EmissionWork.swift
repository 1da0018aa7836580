import Foundation
import Storage

/// What the scheduler's pass emits through, on either store: the SQLite `Emitter` (one process per database) or the
/// PostgreSQL `SharedEmitter` (any number of processes).
public protocol EmissionWork: Sendable {
    var configuration: EmitConfiguration { get }

    /// One emission pass at `now`; `shouldStop` is asked between transactions.
    func emit(now: Date, shouldStop: @escaping @Sendable () -> Bool) async throws -> EmitSummary

    /// When there is next something to do, in seconds since 1970: the first queued fire less the emitter's lead, or
    /// the first pending row's next attempt among `platforms`, those the sink takes (nil: all); nil when nothing is
    /// queued or pending. (A row of a platform the sink does not take stays pending and is never due for it: counted,
    /// it woke the loop every 50 ms.)
    func nextWork(platforms: Set<String>?) async throws -> Double?

    /// Throws when nothing more can be written where the store was opened (a SQLite file removed or replaced).
    func checkStore() throws

    /// An error met on the store, as one line naming it and the cause.
    func describe(_ error: any Error) -> String

    /// Throws when this process must not work now, neither emit nor deliver: on a shared store, a clock too far from
    /// the server's (it would take rows other processes are sending, and fire early).
    func checkClock() async throws
}

extension EmissionWork {
    public func checkClock() async throws {}
}

extension Emitter: EmissionWork {
    /// Runs the pass off the concurrency pool: it is a long run of blocking transactions.
    public func emit(now: Date, shouldStop: @escaping @Sendable () -> Bool) async throws -> EmitSummary {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try run(now: now, shouldStop: shouldStop) }) }
        }
    }

    public func nextWork(platforms: Set<String>?) async throws -> Double? {
        try database.nextWork(lead: configuration.lead, platforms: platforms)
    }

    public func checkStore() throws { try database.checkFile() }

    public func describe(_ error: any Error) -> String { database.describe(error) }
}

extension SharedEmitter: EmissionWork {
    public func emit(now: Date, shouldStop: @escaping @Sendable () -> Bool) async throws -> EmitSummary {
        try await run(now: now, shouldStop: shouldStop)
    }

    public func nextWork(platforms: Set<String>?) async throws -> Double? {
        // No platform list: every platform (an array parameter cannot be NULL here, so an empty one stands for "all");
        // a sink that takes none has no row to wait for. A row another process has leased is work when its lease ends,
        // even if it was due before (written ahead, or retried): `greatest` (NULLs aside), not the first of the two,
        // or every other process would wake 20 times a second for as long as the lease lasts.
        let (only, none) = (platforms?.sorted() ?? [], platforms?.isEmpty == true)
        return try await store.rows(
            """
            SELECT min(t) FROM (
                SELECT min(next_fire_at) - \(configuration.lead) AS t FROM schedule
                UNION ALL SELECT min(greatest(next_attempt_at, lease_until)) FROM outbox WHERE status = 'pending' AND NOT \(none)
                    AND (cardinality(\(only)::text[]) = 0 OR platform = ANY(\(only)::text[]))) AS work
            """
        ).first?.decode(Double?.self)
    }

    /// Nothing to check: the server keeps the database, and a lost connection is an error of the next statement (which
    /// `PostgresTransaction` makes sure of).
    public func checkStore() throws {}

    public func describe(_ error: any Error) -> String { store.describe(error) }
}
