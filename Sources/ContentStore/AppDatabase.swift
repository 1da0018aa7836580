import Foundation
import GRDB
import HijriCalendar
import VerseCalendar

/// The one database type: it owns the writer and runs the migrator when it opens.
///
/// Production opens a `DatabasePool` (WAL) on a file; tests pass an in-memory `DatabaseQueue()`.
public final class AppDatabase: Sendable {
    public let writer: any DatabaseWriter
    /// A pool on a file checkpoints its log on a thread of its own.
    let checkpointer: WALCheckpointer?

    /// Migrates `writer`, after refusing a database that a newer version wrote (`refuseNewer`).
    public convenience init(_ writer: any DatabaseWriter) throws {
        try Self.refuseNewer(writer, path: writer.path)
        try self.init(checked: writer)
    }

    /// Migrates a writer whose database `open` has already checked with `refuseNewer`: the check runs once.
    private init(checked writer: any DatabaseWriter) throws {
        self.writer = writer
        try Self.migrator.migrate(writer)
        checkpointer = nil
    }

    private init(pool: DatabasePool, path: String, checkpointLimits: WALCheckpointer.Limits) throws {
        writer = pool
        try Self.migrator.migrate(pool)
        checkpointer = try WALCheckpointer(path: path, pool: pool, limits: checkpointLimits)
    }

    /// Throws naming the migrations this binary does not know, if any: a database a newer version wrote, which
    /// using could lose what the newer schema keeps. Run before anything is written to it.
    static func refuseNewer(_ reader: any DatabaseReader, path: String) throws {
        let known = migrator.migrations
        let unknown = try reader.read { db -> [String] in
            guard try db.tableExists("grdb_migrations") else { return [] }
            let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            return Set(applied).subtracting(known).sorted()
        }
        guard unknown.isEmpty else {
            throw StoreError.cannotOpen(
                path: path, reason: "it was written by a newer version of dailyverse (unknown migrations: \(unknown.joined(separator: ", "))); upgrade dailyverse")
        }
    }

    /// An error met on this database, as one line that names the file and the cause: SQLite's message and code
    /// ("database or disk is full", SQLITE_FULL) rather than GRDB's description with its SQL.
    public func describe(_ error: Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        return "database '\(writer.path)': \(error.message ?? "error") (SQLite code \(error.resultCode.rawValue))"
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
    public static func open(path: String, pool: Bool = false, createFolder: Bool = false) throws(StoreError) -> AppDatabase {
        try open(path: path, pool: pool, createFolder: createFolder, checkpointLimits: WALCheckpointer.Limits())
    }

    /// `open(path:pool:createFolder:)` with the pool's log checkpointed at other sizes than the defaults (for tests).
    static func open(path: String, pool: Bool, createFolder: Bool = false, checkpointLimits: WALCheckpointer.Limits) throws(StoreError)
        -> AppDatabase
    {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        if createFolder {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw .cannotOpen(path: path, reason: "cannot create folder '\(folder.path)'")
            }
        } else if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) || !isDirectory.boolValue {
            throw .cannotOpen(path: path, reason: "the folder '\(folder.path)' does not exist (create it first)")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw .cannotOpen(path: path, reason: "it is a folder") }
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
                try Self.refuseNewer(queue, path: path)
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
                return try AppDatabase(pool: DatabasePool(path: path, configuration: configuration), path: path, checkpointLimits: checkpointLimits)
            }
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try Self.refuseNewer(queue, path: path)
            try queue.writeWithoutTransaction { db in
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                }
            }
            return try AppDatabase(checked: queue)
        }
    }

    /// Runs a step of opening the database at `path`; any failure becomes `cannotOpen` naming the file and SQLite's
    /// message (a `StoreError`, already naming it, passes through).
    private static func opening<T>(_ path: String, _ body: () throws -> T) throws(StoreError) -> T {
        do { return try body() } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw .cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        } catch {
            throw .cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// An empty in-memory database with the schema, for tests.
    public static func inMemory() throws -> AppDatabase { try AppDatabase(DatabaseQueue()) }

    /// The default location: `$XDG_DATA_HOME/dailyverse/dailyverse.sqlite`, or `~/.local/share/…`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return xdg + "/dailyverse/dailyverse.sqlite"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/dailyverse/dailyverse.sqlite"
    }

    // MARK: - Schema

    /// An outbox row's local date as a day number (the Julian day's integer part), the first column of its unique key.
    public static let outboxDay = "CAST(julianday(local_date) AS INTEGER)"

    /// The `outboxDay` of a civil day number (days since 1970-01-01).
    public static func outboxDay(dayNumber: Int) -> Int { dayNumber + 2_440_587 }

    /// The outbox's status rule as v2–v6 wrote it, and as v7 writes it.
    static let outboxStatusCheckBefore = "CHECK (status IN ('pending', 'delivered', 'failed', 'missed'))"
    static let outboxStatusCheck = "CHECK (status = 'pending' OR status = 'delivered' OR status = 'failed' OR status = 'missed')"

    /// Migrations are never edited once shipped: change the schema with a new one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-content") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    CREATE TABLE surah (
                        number INTEGER PRIMARY KEY NOT NULL CHECK (number BETWEEN 1 AND 114),
                        transliteration TEXT NOT NULL, arabic TEXT NOT NULL, english TEXT NOT NULL,
                        revelation TEXT NOT NULL CHECK (revelation IN ('meccan', 'medinan')),
                        ayah_count INTEGER NOT NULL CHECK (ayah_count > 0));
                    CREATE TABLE edition (
                        id TEXT PRIMARY KEY NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('quran', 'translation')),
                        language TEXT NOT NULL, name TEXT NOT NULL, credit TEXT NOT NULL, notice TEXT NOT NULL);
                    CREATE TABLE ayah_text (
                        edition_id TEXT NOT NULL REFERENCES edition(id) ON DELETE CASCADE,
                        surah INTEGER NOT NULL, ayah INTEGER NOT NULL, text TEXT NOT NULL,
                        PRIMARY KEY (edition_id, surah, ayah)) WITHOUT ROWID;
                    CREATE TABLE layer (
                        id TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE, icon TEXT NOT NULL,
                        title TEXT NOT NULL, description TEXT NOT NULL);
                    CREATE TABLE commentary (
                        id INTEGER PRIMARY KEY,
                        surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                        layer_id TEXT NOT NULL REFERENCES layer(id),
                        body TEXT NOT NULL, work TEXT, author TEXT, reference TEXT, provenance TEXT NOT NULL,
                        origin TEXT NOT NULL CHECK (origin IN ('bundled', 'import')),
                        UNIQUE (surah, ayah_start, ayah_end, layer_id));
                    CREATE INDEX commentary_by_surah ON commentary (surah, ayah_start);
                    CREATE TABLE verse_theme (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, relevance TEXT NOT NULL);
                    CREATE TABLE month_theme (
                        month INTEGER PRIMARY KEY NOT NULL CHECK (month BETWEEN 1 AND 12),
                        theme_id TEXT NOT NULL REFERENCES verse_theme(id));
                    CREATE TABLE month_pool (
                        month INTEGER NOT NULL REFERENCES month_theme(month), position INTEGER NOT NULL,
                        surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                        PRIMARY KEY (month, position)) WITHOUT ROWID;
                    CREATE TABLE occasion (
                        id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, description TEXT,
                        month INTEGER NOT NULL, day INTEGER NOT NULL,
                        surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                        theme_id TEXT NOT NULL REFERENCES verse_theme(id), UNIQUE (month, day));
                    CREATE TABLE display_theme (
                        id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, background TEXT NOT NULL,
                        surface TEXT NOT NULL, text TEXT NOT NULL, accent TEXT NOT NULL);
                    CREATE TABLE published_month_start (
                        year INTEGER NOT NULL, month INTEGER NOT NULL CHECK (month BETWEEN 1 AND 12),
                        first_day TEXT NOT NULL, created_at TEXT NOT NULL,
                        PRIMARY KEY (year, month));
                    """)
        }
        migrator.registerMigration("v2-devices-outbox") { db in
            try db.execute(
                sql: """
                    ALTER TABLE occasion ADD COLUMN name_arabic TEXT;
                    CREATE TABLE device (
                        id TEXT PRIMARY KEY NOT NULL,
                        platform TEXT NOT NULL CHECK (platform IN ('apns', 'fcm', 'webpush')),
                        token TEXT NOT NULL, p256dh TEXT, auth TEXT,
                        timezone TEXT NOT NULL, reminder_time TEXT NOT NULL,
                        locale TEXT NOT NULL CHECK (locale IN ('en', 'ar')),
                        calendar TEXT NOT NULL CHECK (calendar IN ('umm-al-qura', 'tabular', 'sighted')),
                        adjustment INTEGER NOT NULL CHECK (adjustment BETWEEN -2 AND 2),
                        display_theme TEXT NOT NULL, enabled INTEGER NOT NULL,
                        created_at REAL NOT NULL, updated_at REAL NOT NULL,
                        last_local_date TEXT, next_fire_at REAL,
                        UNIQUE (platform, token));
                    CREATE INDEX device_due ON device (next_fire_at) WHERE enabled;
                    CREATE TABLE outbox (
                        id INTEGER PRIMARY KEY,
                        device_id TEXT NOT NULL, platform TEXT NOT NULL, local_date TEXT NOT NULL, fire_at REAL NOT NULL,
                        headers TEXT NOT NULL, payload TEXT NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'missed')),
                        attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, delivered_at REAL, next_attempt_at REAL,
                        created_at REAL NOT NULL,
                        UNIQUE (device_id, local_date));
                    -- Rows waiting for delivery, in order: new rows append to it.
                    CREATE INDEX outbox_pending ON outbox (id) WHERE status = 'pending';
                    """)
        }
        migrator.registerMigration("v3-accounts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE user (
                        id TEXT PRIMARY KEY NOT NULL,
                        mode TEXT NOT NULL CHECK (mode IN ('guest', 'account')),
                        email TEXT UNIQUE, password_hash TEXT, display_name TEXT,
                        created_at REAL NOT NULL, last_active_at REAL NOT NULL);
                    CREATE TABLE session (
                        token_hash TEXT PRIMARY KEY NOT NULL,
                        user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                        created_at REAL NOT NULL, last_used_at REAL NOT NULL);
                    CREATE INDEX session_by_user ON session (user_id);
                    CREATE TABLE onboarding (
                        user_id TEXT PRIMARY KEY NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                        state TEXT NOT NULL, updated_at REAL NOT NULL);
                    CREATE TABLE analytics_event (
                        id INTEGER PRIMARY KEY,
                        user_id TEXT, name TEXT NOT NULL, screen TEXT, properties TEXT NOT NULL, at REAL NOT NULL);
                    CREATE INDEX analytics_by_time ON analytics_event (at);
                    ALTER TABLE device ADD COLUMN user_id TEXT REFERENCES user(id) ON DELETE CASCADE;
                    CREATE TABLE bookmark (
                        user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE, verse_key TEXT NOT NULL, created_at REAL NOT NULL,
                        PRIMARY KEY (user_id, verse_key)) WITHOUT ROWID;
                    CREATE TABLE settings (
                        user_id TEXT PRIMARY KEY NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                        reminder_time TEXT NOT NULL, timezone TEXT NOT NULL, calendar TEXT NOT NULL, adjustment INTEGER NOT NULL,
                        display_theme TEXT NOT NULL, notifications INTEGER NOT NULL, locale TEXT NOT NULL, updated_at REAL NOT NULL);
                    """)
        }
        migrator.registerMigration("v4-schedule-queue") { db in
            // The schedule leaves the device row for a queue ordered by fire time. A pass used to rewrite each device
            // it fired, at random places in a wide table and in its next-fire index; now it deletes entries from the
            // queue's front and adds the next day's near its back, and device rows are only read.
            //
            // An entry is live while its `version` is the device's `schedule_version`: changing a device's schedule
            // bumps the version and queues a new entry, and a pass drops the entries left behind. `device_epoch`
            // counts every change to the device table (by triggers, so that no writer can forget), so that a pass
            // knows whether the devices it planned with changed before it wrote.
            //
            // Devices get an integer key, `seq`, never reused (AUTOINCREMENT). The queue and the outbox's unique key
            // use it: an index of small integers is a quarter of the size of one of UUID strings, and every pass
            // writes into it at random places.
            try db.execute(
                sql: """
                    CREATE TABLE device_v4 (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL UNIQUE,
                        platform TEXT NOT NULL CHECK (platform IN ('apns', 'fcm', 'webpush')),
                        token TEXT NOT NULL, p256dh TEXT, auth TEXT,
                        timezone TEXT NOT NULL, reminder_time TEXT NOT NULL,
                        locale TEXT NOT NULL CHECK (locale IN ('en', 'ar')),
                        calendar TEXT NOT NULL CHECK (calendar IN ('umm-al-qura', 'tabular', 'sighted')),
                        adjustment INTEGER NOT NULL CHECK (adjustment BETWEEN -2 AND 2),
                        display_theme TEXT NOT NULL, enabled INTEGER NOT NULL,
                        created_at REAL NOT NULL, updated_at REAL NOT NULL,
                        user_id TEXT REFERENCES user(id) ON DELETE CASCADE,
                        schedule_version INTEGER NOT NULL DEFAULT 1,
                        UNIQUE (platform, token));
                    INSERT INTO device_v4 (id, platform, token, p256dh, auth, timezone, reminder_time, locale, calendar, adjustment,
                            display_theme, enabled, created_at, updated_at, user_id)
                        SELECT id, platform, token, p256dh, auth, timezone, reminder_time, locale, calendar, adjustment,
                            display_theme, enabled, created_at, updated_at, user_id
                        FROM device ORDER BY created_at, id;
                    CREATE TABLE schedule (
                        next_fire_at REAL NOT NULL,
                        device_seq INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        last_local_day INTEGER,
                        PRIMARY KEY (next_fire_at, device_seq)) WITHOUT ROWID;
                    INSERT INTO schedule (next_fire_at, device_seq, version, last_local_day)
                        SELECT d.next_fire_at, n.seq, 1, CAST(julianday(d.last_local_date) - 2440587.5 AS INTEGER)
                        FROM device d JOIN device_v4 n ON n.id = d.id WHERE d.enabled AND d.next_fire_at IS NOT NULL;
                    CREATE TABLE outbox_v4 (
                        id INTEGER PRIMARY KEY,
                        device_seq INTEGER NOT NULL,
                        device_id TEXT NOT NULL, platform TEXT NOT NULL, local_date TEXT NOT NULL, fire_at REAL NOT NULL,
                        headers TEXT NOT NULL, payload TEXT NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'missed')),
                        attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, delivered_at REAL, next_attempt_at REAL,
                        created_at REAL NOT NULL,
                        UNIQUE (device_seq, local_date));
                    -- Rows of devices already removed keep a key of their own (negative: never a device's).
                    INSERT INTO outbox_v4 (id, device_seq, device_id, platform, local_date, fire_at, headers, payload, status, attempts,
                            last_error, delivered_at, next_attempt_at, created_at)
                        SELECT o.id, coalesce(n.seq, -o.id), o.device_id, o.platform, o.local_date, o.fire_at, o.headers, o.payload,
                            o.status, o.attempts, o.last_error, o.delivered_at, o.next_attempt_at, o.created_at
                        FROM outbox o LEFT JOIN device_v4 n ON n.id = o.device_id;
                    DROP TABLE outbox;
                    ALTER TABLE outbox_v4 RENAME TO outbox;
                    CREATE INDEX outbox_pending ON outbox (id) WHERE status = 'pending';
                    DROP TABLE device;
                    ALTER TABLE device_v4 RENAME TO device;
                    CREATE INDEX device_by_user ON device (user_id);
                    CREATE TABLE device_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
                    INSERT INTO device_epoch (id, value) VALUES (1, 0);
                    CREATE TRIGGER device_epoch_on_insert AFTER INSERT ON device BEGIN UPDATE device_epoch SET value = value + 1; END;
                    CREATE TRIGGER device_epoch_on_update AFTER UPDATE ON device BEGIN UPDATE device_epoch SET value = value + 1; END;
                    CREATE TRIGGER device_epoch_on_delete AFTER DELETE ON device BEGIN UPDATE device_epoch SET value = value + 1; END;
                    """)
        }
        migrator.registerMigration("v5-hints") { db in
            // Contextual hints: each user's history with each hint, the app events their rules count, and tutorial
            // mode, which belongs to one session (one signed-in app), not to the user.
            try db.execute(
                sql: """
                    CREATE TABLE hint_state (
                        user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE, hint_id TEXT NOT NULL,
                        shown_at REAL, dismissed_at REAL, shown_in_tutorial INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (user_id, hint_id)) WITHOUT ROWID;
                    CREATE TABLE app_event_count (
                        user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE, name TEXT NOT NULL,
                        count INTEGER NOT NULL, last_at REAL NOT NULL,
                        PRIMARY KEY (user_id, name)) WITHOUT ROWID;
                    ALTER TABLE session ADD COLUMN tutorial INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("v6-outbox-key") { db in
            // The outbox's unique key (device, local date) keeps its meaning, with the date as a day number in the
            // index: an entry of three small integers instead of an integer, ten characters of text and the rowid.
            // Every pass inserts into this index at random places (devices fire in no order of their keys), so each
            // pass writes most of its pages again; at a million devices the smaller entries save about a third of
            // everything a day of emission writes. A table rebuild, since an inline UNIQUE cannot be dropped.
            try db.execute(
                sql: """
                    CREATE TABLE outbox_v6 (
                        id INTEGER PRIMARY KEY,
                        device_seq INTEGER NOT NULL,
                        device_id TEXT NOT NULL, platform TEXT NOT NULL,
                        local_date TEXT NOT NULL CHECK (julianday(local_date) IS NOT NULL), fire_at REAL NOT NULL,
                        headers TEXT NOT NULL, payload TEXT NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'missed')),
                        attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, delivered_at REAL, next_attempt_at REAL,
                        created_at REAL NOT NULL);
                    INSERT INTO outbox_v6 (id, device_seq, device_id, platform, local_date, fire_at, headers, payload, status, attempts,
                            last_error, delivered_at, next_attempt_at, created_at)
                        SELECT id, device_seq, device_id, platform, local_date, fire_at, headers, payload, status, attempts,
                            last_error, delivered_at, next_attempt_at, created_at
                        FROM outbox;
                    DROP TABLE outbox;
                    ALTER TABLE outbox_v6 RENAME TO outbox;
                    CREATE INDEX outbox_pending ON outbox (id) WHERE status = 'pending';
                    CREATE UNIQUE INDEX outbox_once ON outbox (device_seq, CAST(julianday(local_date) AS INTEGER));
                    """)
        }
        migrator.registerMigration("v7-outbox-status-check") { db in
            // SQLite codes `status IN (four values)` in a CHECK as a temporary table built for the list, afresh for
            // every row inserted and every status updated: a fifth of the cost of an outbox insert, a million times a
            // day. The same rule as comparisons costs four of them. Every row already satisfies it, so the table's
            // definition is edited in place, by SQLite's documented procedure for changing a CHECK constraint (no row
            // is rewritten: a month of retained outbox is tens of gigabytes at a million devices).
            let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(
                sql: "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'outbox' AND instr(sql, ?) > 0",
                arguments: [outboxStatusCheckBefore, outboxStatusCheck, outboxStatusCheckBefore])
            guard db.changesCount == 1 else {
                // The migration's transaction is rolled back: nothing was changed.
                throw DatabaseError(resultCode: .SQLITE_ERROR, message: "migration v7: the outbox table is not as v6 created it")
            }
            try db.execute(sql: "PRAGMA schema_version = \(version + 1)")
            try db.execute(sql: "PRAGMA writable_schema = OFF")
            db.clearSchemaCache()
        }
        migrator.registerMigration("v8-outbox-by-day") { db in
            // The outbox's unique key keeps its meaning, (device, local date), with the day first. Device first, each
            // day's rows went into every part of an index holding all the days the retention keeps, and a pass
            // dirtied a page per row: a day's emission after seven days wrote twice what the first day's did. Day
            // first, a day's rows share the pages of that day's part. A device's rows are found by day:
            // `outboxDay IN (the days that matter) AND device_seq = ?`.
            //
            // A removed device is sent nothing more: its rows not yet delivered (pending, some written ahead of their
            // time) go with it, whoever removes it (the CLI, the API, a user's removal through its cascade). They
            // are on the outbox's newest days (a row pending longer than the grace period is never sent).
            try db.execute(
                sql: """
                    DROP INDEX outbox_once;
                    CREATE UNIQUE INDEX outbox_once ON outbox (\(outboxDay), device_seq);
                    CREATE TRIGGER outbox_withdraw_on_device_delete AFTER DELETE ON device
                    BEGIN
                        DELETE FROM outbox WHERE status = 'pending' AND device_seq = OLD.seq AND \(outboxDay) IN (
                            SELECT newest - back FROM
                                (SELECT \(outboxDay) AS newest FROM outbox ORDER BY \(outboxDay) DESC LIMIT 1),
                                (SELECT 0 AS back UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4));
                    END;
                    """)
        }
        migrator.registerMigration("v9-push-services") { db in
            // The push senders: the service's id for each message delivered and when a row was last tried (for
            // `status`'s last hour), why and when a service disabled a device (a token it no longer knows), the
            // provider tokens every process of an installation shares (APNs allows a new one every 20 minutes at
            // most), and a service paused by a configuration error. Columns added at the end: no row is rewritten.
            try db.execute(
                sql: """
                    ALTER TABLE outbox ADD COLUMN service_id TEXT;
                    ALTER TABLE outbox ADD COLUMN last_attempt_at REAL;
                    ALTER TABLE device ADD COLUMN disabled_reason TEXT;
                    ALTER TABLE device ADD COLUMN disabled_at REAL;
                    CREATE INDEX device_disabled ON device (disabled_at) WHERE disabled_at IS NOT NULL;
                    CREATE TABLE push_credential (
                        name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, issued_at REAL NOT NULL, expires_at REAL NOT NULL);
                    CREATE TABLE push_pause (
                        platform TEXT PRIMARY KEY NOT NULL, reason TEXT NOT NULL, since REAL NOT NULL, until REAL NOT NULL);
                    """)
        }
        migrator.registerMigration("v10-occasions-and-nights") { db in
            // Occasions: several on one day (a rank decides which leads), nights kept from the evening before, a day
            // that is the month's last (day 0), a note for another tradition's date. Commentary may name the occasion it
            // was written for, and is then shown on that occasion only; an entry's key includes it. Both tables are
            // rebuilt (SQLite cannot drop a UNIQUE constraint); occasions are reseeded, commentary is copied.
            try db.execute(
                sql: """
                    CREATE TABLE occasion_v10 (
                        id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, name_arabic TEXT, description TEXT, note TEXT,
                        month INTEGER NOT NULL CHECK (month BETWEEN 1 AND 12), day INTEGER NOT NULL CHECK (day BETWEEN 0 AND 30),
                        observed TEXT NOT NULL DEFAULT 'day' CHECK (observed IN ('day', 'night')),
                        rank INTEGER NOT NULL DEFAULT 2 CHECK (rank BETWEEN 1 AND 3),
                        surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                        theme_id TEXT NOT NULL REFERENCES verse_theme(id), UNIQUE (month, day, observed, rank));
                    INSERT INTO occasion_v10 (id, name, name_arabic, description, month, day, surah, ayah_start, ayah_end, theme_id)
                        SELECT id, name, name_arabic, description, month, day, surah, ayah_start, ayah_end, theme_id FROM occasion;
                    DROP TABLE occasion;
                    ALTER TABLE occasion_v10 RENAME TO occasion;
                    CREATE TABLE commentary_v10 (
                        id INTEGER PRIMARY KEY,
                        surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                        layer_id TEXT NOT NULL REFERENCES layer(id), occasion_id TEXT,
                        body TEXT NOT NULL, work TEXT, author TEXT, reference TEXT, provenance TEXT NOT NULL,
                        origin TEXT NOT NULL CHECK (origin IN ('bundled', 'import')));
                    INSERT INTO commentary_v10 (id, surah, ayah_start, ayah_end, layer_id, body, work, author, reference, provenance, origin)
                        SELECT id, surah, ayah_start, ayah_end, layer_id, body, work, author, reference, provenance, origin FROM commentary;
                    DROP TABLE commentary;
                    ALTER TABLE commentary_v10 RENAME TO commentary;
                    CREATE UNIQUE INDEX commentary_key ON commentary (surah, ayah_start, ayah_end, layer_id, ifnull(occasion_id, ''));
                    CREATE INDEX commentary_by_surah ON commentary (surah, ayah_start);
                    """)
        }
        return migrator
    }
}
