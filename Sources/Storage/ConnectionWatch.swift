import NIOCore
import PostgresNIO
import Synchronization

/// The connection a statement was written on closed before the statement was answered: the server ended the session
/// (its `idle_in_transaction_session_timeout` or `idle_session_timeout`, `pg_terminate_backend`, a restart or a
/// failover) or the network dropped it. What was not committed was rolled back by the server; the work may be tried
/// again on another connection.
public struct PostgresConnectionLost: Error, CustomStringConvertible, Sendable {
    public var description: String { "the connection was lost (the server ended it, or the network did)" }
}

/// Ends a statement's wait when its connection closes.
///
/// postgres-nio (1.33) writes each statement to its connection without a promise of its own: a statement written just
/// after the server closed the connection is dropped with the connection's handlers, and its caller waits for ever
/// (vapor/postgres-nio#487, merged and reverted in #501). A transaction's ROLLBACK after a statement the server ended
/// is such a statement, and so is the first of a connection the pool leased as it closed. Every statement of this
/// package therefore runs through `PostgresTransaction`, whose calls run the statement in a task of its own and return
/// as soon as it is answered, or with `PostgresConnectionLost` once the connection has been closed for `grace` (time
/// for the statement's own error, the server's words, to arrive first). A statement abandoned so stays suspended, a
/// task and its buffers, until the process ends; that is one per statement the library dropped.
final class ConnectionWatch: Sendable {
    static let shared = ConnectionWatch()

    /// How long after the connection closes a statement still waiting is told so.
    static let grace: TimeAmount = .milliseconds(500)

    /// Per connection watched, the statements waiting on it, each by a number: what to call if the connection closes.
    /// A connection is watched from its first statement until it closes (one callback on its close future, however
    /// many statements it runs).
    private let watched = Mutex<(next: Int, waiting: [ObjectIdentifier: [Int: @Sendable () -> Void]])>((0, [:]))

    /// Runs `work` (statements on `connection`) to its answer, or until `connection` closes.
    func run<T: Sendable>(on connection: PostgresConnection, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        if connection.isClosed { throw PostgresConnectionLost() }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let resumed = Mutex(false)
            let resume: @Sendable (Result<T, any Error>) -> Void = { result in
                let first = resumed.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(with: result) }
            }
            let number = watch(connection) { resume(.failure(PostgresConnectionLost())) }
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await work()) } catch { result = .failure(error) }
                self.unwatch(connection, number)
                resume(result)
            }
        }
    }

    /// Keeps `lost` to be called `grace` after `connection` closes; its number, to forget it by. A connection seen for
    /// the first time gets its one callback.
    private func watch(_ connection: PostgresConnection, lost: @escaping @Sendable () -> Void) -> Int {
        let key = ObjectIdentifier(connection)
        let (number, first) = watched.withLock { state in
            state.next &+= 1
            let first = state.waiting[key] == nil
            state.waiting[key, default: [:]][state.next] = lost
            return (state.next, first)
        }
        if first {
            // The connection is held by its callback until it closes; then the entry goes, and with it every waiter.
            connection.closeFuture.whenComplete { _ in
                let waiters = self.watched.withLock { $0.waiting.removeValue(forKey: key) } ?? [:]
                guard !waiters.isEmpty else { return }
                connection.eventLoop.scheduleTask(in: Self.grace) { for lost in waiters.values { lost() } }
            }
        }
        return number
    }

    private func unwatch(_ connection: PostgresConnection, _ number: Int) {
        watched.withLock { state in _ = state.waiting[ObjectIdentifier(connection)]?.removeValue(forKey: number) }
    }
}
