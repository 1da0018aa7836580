import Diagnostics
import Foundation

/// One scheduler per database: an exclusive `flock` on a file beside it, held for the life of the process and
/// released by the kernel when the process ends, however it ends (so a killed scheduler never leaves it behind).
/// The file holds the holder's process id, for the message another scheduler prints.
public final class SchedulerLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// The lock file of a database.
    public static func path(forDatabase database: String) -> String { database + ".scheduler-lock" }

    /// The file `migrate-store` leaves beside a database it copied into PostgreSQL: no scheduler runs on it while it
    /// is there (it would send again what PostgreSQL's processes send).
    public static func movedMark(database: String) -> String { database + ".moved" }

    /// Takes the lock of `database`, or throws naming the database and what holds it.
    public static func acquire(database: String) throws(SchedulerLockError) -> SchedulerLock {
        let path = path(forDatabase: database)
        // Non-blocking, and a regular file only: a FIFO there would have the lock's holder read from it for ever.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else { throw .cannotCreate(database: database, path: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, FileKind(mode: info.st_mode) == .regular else {
            let kind = FileKind(mode: info.st_mode)
            close(descriptor)
            throw .cannotCreate(database: database, path: path, reason: kind.refusal(wanted: .regular))
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = read(descriptor, &buffer, buffer.count)
            close(descriptor)
            guard code == EWOULDBLOCK else { throw .cannotCreate(database: database, path: path, reason: String(cString: strerror(code))) }
            let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw .held(database: database, holder: holder.isEmpty ? nil : holder)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return SchedulerLock(descriptor: descriptor)
    }
}

public enum SchedulerLockError: UserFacingError, Equatable, Sendable {
    case held(database: String, holder: String?)
    case cannotCreate(database: String, path: String, reason: String)

    public var description: String {
        switch self {
        case .held(let database, let holder):
            "database '\(database)' already has a scheduler (\(holder.map { "process \($0)" } ?? "another process")): "
                + "one serve per database; stop it or use another --db"
        case .cannotCreate(let database, let path, let reason):
            "cannot take the scheduler lock of database '\(database)' (\(path)): \(reason)"
        }
    }
}
