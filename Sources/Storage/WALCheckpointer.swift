import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Copies the write-ahead log back into the database file on a thread of its own, so that the writer does not.
///
/// By default SQLite checkpoints in the connection that commits, each time the log has passed 1,000 pages: at a
/// million devices a day, much of the scheduler's writer time went to copying pages back (the README's benchmarks
/// say how much). Here the writer's
/// WAL hook only asks, at a larger log (see `Limits`), and a serial queue with a connection of its own runs passive
/// checkpoints, which wait for no reader and no writer. Should the log still grow past `Limits.inlinePages` (the
/// thread cannot keep up, or a long read holds the log), the writer checkpoints at commit itself, as SQLite's default
/// would.
///
/// A checkpoint copies committed pages only: who runs it changes nothing about durability or what readers see.
final class WALCheckpointer: Sendable {
    struct Limits {
        /// The log size, in pages, at which a commit asks for a checkpoint: 256 MiB of 4 KiB pages.
        ///
        /// Not SQLite's 1,000 pages (4 MiB): every scheduler pass writes most pages of the outbox's unique index
        /// again, and a checkpoint copies each page in the log once however many commits wrote it, so a log that
        /// spans a dozen passes copies those pages once instead of once a pass (the README's `emit` benchmark has the
        /// bytes written either way).
        var requestPages: Int32 = 65_536
        /// The log size, in pages, at which the writer stops waiting and checkpoints itself: 512 MiB.
        var inlinePages: Int32 = 131_072
    }

    private let connection: DatabaseQueue
    private let queue = DispatchQueue(label: "dailyverse.wal-checkpoint", qos: .utility)
    private struct Counts {
        /// A checkpoint is waiting on the queue: further requests are that one.
        var scheduled = false
        var completed = 0
        var inline = 0
    }
    private let counts = Mutex(Counts())

    /// Opens the checkpointing connection and installs the hook on `pool`'s writer connection.
    init(path: String, pool: DatabasePool, limits: Limits) throws {
        connection = try DatabaseQueue(path: path)
        let target = Unmanaged.passRetained(HookTarget(self, limits)).toOpaque()
        pool.writeWithoutTransaction { db in
            // Replaces SQLite's own hook (the one `wal_autocheckpoint` installs) on this connection only.
            _ = sqlite3_wal_hook(db.sqliteConnection, walHook, target)
        }
    }

    /// Asks for a checkpoint; requests made while one is waiting to run are one request.
    func request() {
        let schedule = counts.withLock { counts in
            guard !counts.scheduled else { return false }
            counts.scheduled = true
            return true
        }
        guard schedule else { return }
        queue.async { [self] in
            counts.withLock { $0.scheduled = false }
            // Passive: copies what no reader still needs and returns. Busy (another checkpoint running) or an I/O
            // error leaves the log as it is; the next commit asks again and the writer's inline limit bounds it.
            if (try? connection.writeWithoutTransaction({ try $0.checkpoint(.passive) })) != nil {
                counts.withLock { $0.completed += 1 }
            }
        }
    }

    /// Returns once every checkpoint asked for so far has run.
    func waitUntilIdle() { queue.sync {} }

    /// Checkpoints completed on the thread so far.
    var completedCount: Int { counts.withLock { $0.completed } }

    /// Checkpoints the writer ran itself so far, past the inline limit.
    var inlineCount: Int { counts.withLock { $0.inline } }

    fileprivate func countInline() { counts.withLock { $0.inline += 1 } }
}

/// What the hook's context points at. It holds the checkpointer weakly and is itself never released (one small
/// object per pool opened): the writer connection may outlive the `AppDatabase`, and then a commit must find nil
/// here, not freed memory.
private final class HookTarget {
    weak var checkpointer: WALCheckpointer?
    let limits: WALCheckpointer.Limits
    init(_ checkpointer: WALCheckpointer, _ limits: WALCheckpointer.Limits) { (self.checkpointer, self.limits) = (checkpointer, limits) }
}

/// Called by SQLite after each commit on the writer connection, with the number of pages now in the log.
private func walHook(_ context: UnsafeMutableRawPointer?, _ db: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ pages: Int32) -> Int32 {
    guard let context else { return SQLITE_OK }
    let target = Unmanaged<HookTarget>.fromOpaque(context).takeUnretainedValue()
    if pages >= target.limits.inlinePages {
        _ = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        target.checkpointer?.countInline()
    } else if pages >= target.limits.requestPages {
        target.checkpointer?.request()
    }
    return SQLITE_OK
}
