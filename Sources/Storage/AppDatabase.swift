import Diagnostics
import Foundation
import GRDB
import NIOPosix
import Synchronization

/// The database: one connection (or pool), migrated to a schema when it opens, its log checkpointed.
///
/// The domains (content, delivery, accounts, engagement) each own their tables' migrations and queries, written as
/// extensions that read and write through `read` and `write`; the connection itself stays here. A long-running
/// process (`serve`) opens a `DatabasePool` (WAL) on a file, a short command one `DatabaseQueue`; tests pass an
/// in-memory `DatabaseQueue()`.
public final class AppDatabase: Sendable {
    private let writer: any DatabaseWriter
    /// A pool on a file checkpoints its log on a thread of its own.
    let checkpointer: WALCheckpointer?
    /// The file's device and inode when it was opened (nil in memory): a file removed or replaced under the process
    /// is noticed before anything more is written (`checkFile`).
    private let identity: FileIdentity?
    /// What the domains keep beside the connection for as long as it is open (a parsed table, a per-process choice).
    public let kept = Kept()

    /// Migrates `writer` to `schema`, after refusing a database that a newer version wrote (`refuseNewer`).
    public convenience init(_ writer: any DatabaseWriter, schema: Schema) throws {
        try Self.refuseNewer(writer, path: writer.path, schema: schema)
        try self.init(checked: writer, schema: schema)
    }

    /// Migrates a writer whose database `open` has already checked with `refuseNewer`: the check runs once.
    private init(checked writer: any DatabaseWriter, schema: Schema) throws {
        self.writer = writer
        try schema.migrator.migrate(writer)
        checkpointer = nil
        identity = FileIdentity(path: writer.path)
    }

    private init(pool: DatabasePool, path: String, schema: Schema, checkpointLimits: WALCheckpointer.Limits) throws {
        writer = pool
        try schema.migrator.migrate(pool)
        checkpointer = try WALCheckpointer(path: path, pool: pool, limits: checkpointLimits)
        identity = FileIdentity(path: path)
    }

    /// Throws if the database file was removed or replaced since it was opened (a backup moved into its place, a
    /// mistaken `rm`): writing on would go into a file no one opens again, or lay the old log over the new file.
    /// Checked before every write, by each scheduler pass and by `/health`; a stat, a microsecond.
    public func checkFile() throws(StorageError) {
        guard let identity else { return }
        let path = writer.path
        guard let now = FileIdentity(path: path) else {
            throw .fileChanged(path: path, reason: "it was removed while dailyverse was running")
        }
        guard now == identity else {
            throw .fileChanged(path: path, reason: "it was replaced by another file while dailyverse was running")
        }
    }

    /// Values kept by key for the life of an `AppDatabase`: each domain names its keys after itself.
    public final class Kept: Sendable {
        private let values = Mutex<[String: any Sendable]>([:])

        public func value<T: Sendable>(_ key: String, as type: T.Type = T.self) -> T? { values.withLock { $0[key] as? T } }

        public func set(_ key: String, _ value: (any Sendable)?) { values.withLock { $0[key] = value } }
    }

    // MARK: - Reading and writing

    /// The database file's path (":memory:" for an in-memory one).
    public var path: String { writer.path }

    /// Reads in one transaction (a snapshot, on a pool).
    public func read<T>(_ body: (Database) throws -> T) throws -> T { try writer.read(body) }

    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T { try await writer.read(body) }

    /// Writes in one transaction: everything `body` does, or nothing; nothing at all if the file was removed or
    /// replaced (`checkFile`).
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try checkFile()
        return try writer.write(body)
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkFile()
        return try await writer.write(body)
    }

    /// Runs synchronous work on this database (any of the domains' methods) on a thread of NIO's blocking pool, so that
    /// an async caller — a request handler on an event loop — never waits on SQLite's one writer itself.
    public func run<T: Sendable>(_ work: @escaping @Sendable (AppDatabase) throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive { try work(self) }
    }

    /// Runs `sql`, a DELETE whose last argument is a chunk's size (`… LIMIT ?)`), one transaction per chunk until a
    /// chunk removes fewer rows than its size, so that removing much never holds the one writer for long. How many
    /// rows went.
    public func deleteInChunks(sql: String, arguments: StatementArguments, chunk: Int = 10_000) throws -> Int {
        var removed = 0
        while true {
            let count = try write { db in
                try db.execute(sql: sql, arguments: arguments + [chunk])
                return db.changesCount
            }
            removed += count
            if count < chunk { return removed }
        }
    }

    /// Runs `body` outside a transaction: for statements that cannot run inside one (checkpoints, `VACUUM`) and for
    /// callers that open their own.
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try checkFile()
        return try writer.writeWithoutTransaction(body)
    }

    // MARK: - Opening

    /// Throws naming the migrations this binary does not know, if any: a database a newer version wrote, which
    /// using could lose what the newer schema keeps. Run before anything is written to it.
    static func refuseNewer(_ reader: any DatabaseReader, path: String, schema: Schema) throws {
        let known = schema.identifiers
        let unknown = try reader.read { db -> [String] in
            guard try db.tableExists("grdb_migrations") else { return [] }
            let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            return Set(applied).subtracting(known).sorted()
        }
        guard unknown.isEmpty else {
            throw StorageError.cannotOpen(
                path: path,
                reason: "it was written by a newer version of dailyverse (unknown migrations: \(unknown.joined(separator: ", "))); upgrade dailyverse"
            )
        }
    }

    /// An error met on this database, as one line that names the file and the cause: SQLite's message and code
    /// ("database or disk is full", SQLITE_FULL) rather than GRDB's description with its SQL.
    public func describe(_ error: Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        return "database '\(writer.path)': \(error.message ?? "error") (SQLite code \(error.resultCode.rawValue))"
    }

    /// Whether `error` is a write refused because a row it refers to is gone: a user removed (merged into an account,
    /// purged) while a request of theirs was under way.
    public static func isMissingReference(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY
    }

    /// Waits until the log checkpoints asked for so far have run (a benchmark counts them in the work it measures).
    public func waitForCheckpoints() { checkpointer?.waitUntilIdle() }

    /// Asks the checkpoint thread to copy the log back now, whatever its size: a quiet database's log would otherwise
    /// wait for 256 MiB of writes. Returns at once; does nothing on a single connection (SQLite checkpoints it).
    public func requestCheckpoint() { checkpointer?.request() }

    /// Log checkpoints run so far on the checkpoint thread, and by the writer itself because the log had grown
    /// past the limit (the thread did not keep up).
    public var checkpointCounts: (thread: Int, writer: Int) { (checkpointer?.completedCount ?? 0, checkpointer?.inlineCount ?? 0) }

    /// Opens (creating it when needed) the database at `path`, in WAL mode. Its folder is created only when
    /// `createFolder` is set (the default location); an explicit path into a missing folder is a mistyped path.
    /// A database that cannot be written (its file or folder read-only) is refused here, naming the file.
    ///
    /// A short-lived command opens one connection (`DatabaseQueue`); a long-running process that reads
    /// while it writes asks for a `DatabasePool` (`pool: true`), whose log is checkpointed on a thread of its own.
    public static func open(path: String, schema: Schema, pool: Bool = false, createFolder: Bool = false) throws(StorageError) -> AppDatabase {
        try open(path: path, schema: schema, pool: pool, createFolder: createFolder, checkpointLimits: WALCheckpointer.Limits())
    }

    /// `open(path:schema:pool:createFolder:)` with the pool's log checkpointed at other sizes than the defaults (for
    /// tests).
    static func open(
        path: String, schema: Schema, pool: Bool, createFolder: Bool = false, checkpointLimits: WALCheckpointer.Limits
    )
        throws(StorageError) -> AppDatabase
    {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        if createFolder {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw .cannotOpen(path: path, reason: "cannot create folder '\(folder.path)'")
            }
        } else if let kind = FileKind.of(path: folder.path) {
            guard kind == .folder else { throw .cannotOpen(path: path, reason: "'\(folder.path)' is \(kind.refusal(wanted: .folder))") }
        } else {
            throw .cannotOpen(path: path, reason: "the folder '\(folder.path)' does not exist (create it first)")
        }
        if let kind = FileKind.of(path: path) {
            // A folder, a device, a pipe or a socket is no database: SQLite said "disk I/O error", after writing a
            // journal beside it (`/dev/null-journal`).
            guard kind == .regular else { throw .cannotOpen(path: path, reason: kind.refusal(wanted: .regular)) }
            guard access(path, R_OK | W_OK) == 0 else {
                throw .cannotOpen(path: path, reason: "it cannot be read and written: \(String(cString: strerror(errno)))")
            }
        }
        // The log and shared-memory files live beside the database.
        guard access(folder.path, W_OK | X_OK) == 0 else {
            throw .cannotOpen(path: path, reason: "its folder '\(folder.path)' cannot be written: \(String(cString: strerror(errno)))")
        }
        // A newer version's database is refused before a pool is opened on it (opening a pool can write to the file);
        // a single connection is checked once it is open, before it writes.
        if pool, FileManager.default.fileExists(atPath: path) {
            var readOnly = Configuration()
            readOnly.readonly = true
            try opening(path) {
                let queue = try DatabaseQueue(path: path, configuration: readOnly)
                try Self.refuseNewer(queue, path: path, schema: schema)
                try queue.close()
            }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // WAL makes NORMAL durable enough (a crash can lose the last commits, never corrupt); 32 MB of page cache
            // keeps the device and outbox indexes of a large emission in memory.
            try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32768")
        }
        return try opening(path) {
            if pool {
                return try AppDatabase(
                    pool: DatabasePool(path: path, configuration: configuration), path: path, schema: schema, checkpointLimits: checkpointLimits)
            }
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try Self.refuseNewer(queue, path: path, schema: schema)
            try queue.writeWithoutTransaction { db in
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                }
            }
            return try AppDatabase(checked: queue, schema: schema)
        }
    }

    /// A consistent copy of the DailyVerse database at `path`, made at `copy` by SQLite's online backup (one snapshot,
    /// whatever writes the file meanwhile) and opened (migrated, if the file is of an earlier version: the copy, not
    /// the file). The file at `path` is only read; one that is not a DailyVerse database (no migration recorded: an
    /// empty file, another program's) is refused, as is one of a newer version.
    public static func snapshot(of path: String, into copy: String, schema: Schema) throws(StorageError) -> AppDatabase {
        guard let kind = FileKind.of(path: path) else { throw .cannotOpen(path: path, reason: "there is no such file") }
        // A FIFO would have SQLite's open wait for a writer; a folder or a device is no database.
        guard kind == .regular else { throw .cannotOpen(path: path, reason: kind.refusal(wanted: .regular)) }
        let source = try opening(path) {
            var readOnly = Configuration()
            readOnly.readonly = true
            readOnly.busyMode = .timeout(5)
            let source = try DatabaseQueue(path: path, configuration: readOnly)
            let recorded = try source.read { db in
                try db.tableExists("grdb_migrations") ? try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") ?? 0 : 0
            }
            guard recorded > 0 else {
                throw StorageError.cannotOpen(path: path, reason: "it is not a DailyVerse database (no migration recorded in it)")
            }
            try Self.refuseNewer(source, path: path, schema: schema)
            return source
        }
        defer { try? source.close() }
        // A full disk or a folder that cannot be written is the snapshot's failure, named as such, not the file's.
        try opening(copy) {
            let target = try DatabaseQueue(path: copy)
            try source.backup(to: target)
            try target.close()
        }
        return try open(path: copy, schema: schema)
    }

    /// Runs a step of opening the database at `path`; any failure becomes `cannotOpen` naming the file and SQLite's
    /// message (a `StorageError`, already naming it, passes through).
    private static func opening<T>(_ path: String, _ body: () throws -> T) throws(StorageError) -> T {
        do { return try body() } catch let error as StorageError {
            throw error
        } catch let error as DatabaseError {
            throw .cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        } catch {
            throw .cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// An empty in-memory database with the schema, for tests.
    public static func inMemory(schema: Schema) throws -> AppDatabase { try AppDatabase(DatabaseQueue(), schema: schema) }

    /// A copy of this database, page by page, in memory: a test starts from one seeded database instead of seeding
    /// its own.
    public func inMemoryCopy(schema: Schema) throws -> AppDatabase {
        let queue = try DatabaseQueue()
        try writer.backup(to: queue)
        return try AppDatabase(queue, schema: schema)
    }

    /// The default location: `$XDG_DATA_HOME/dailyverse/dailyverse.sqlite`, or `~/.local/share/…`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return xdg + "/dailyverse/dailyverse.sqlite"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/dailyverse/dailyverse.sqlite"
    }
}

/// A database that cannot be opened, as one line naming the file and the cause.
public enum StorageError: UserFacingError, Equatable, Sendable {
    case cannotOpen(path: String, reason: String)
    /// The file open was removed or replaced under the process.
    case fileChanged(path: String, reason: String)
    /// A `postgresql://` address that cannot be used as written (shown with any password in it hidden).
    case badAddress(address: String, reason: String)
    /// The PostgreSQL password's source cannot be used.
    case badPassword(source: String, reason: String)
    /// The PostgreSQL server at `address` refused, could not be reached, or failed a statement.
    case server(address: String, reason: String)

    /// Whether the file open was removed or replaced: nothing more can be written, and the process should stop.
    public var isFileChange: Bool {
        if case .fileChanged = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open database '\(path)': \(reason)"
        case .fileChanged(let path, let reason): "database '\(path)': \(reason); stopping rather than writing where no one will read"
        case .badAddress(let address, let reason): "bad database address '\(address)': \(reason)"
        case .badPassword(let source, let reason): "cannot read the database password from \(source): \(reason)"
        case .server(let address, let reason): "database '\(address)': \(reason)"
        }
    }
}

/// A file's device and inode: the same path naming another file has another identity.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// nil for a path with no file (or an in-memory database).
    init?(path: String) {
        guard !path.isEmpty, path != ":memory:" else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
    }
}
