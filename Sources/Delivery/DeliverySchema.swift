import GRDB
import Storage

/// Delivery's tables: devices, the schedule queue, the outbox, push credentials and pauses. Shipped steps are never
/// edited; `Schema.dailyVerse` lists every domain's steps in the order they run.
public enum DeliverySchema {
    /// v2: devices and the outbox.
    public static let v2DevicesAndOutbox = MigrationStep(
        sql: """
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

    /// v3: a device may belong to a user (with the accounts' tables).
    public static let v3DeviceOwner = MigrationStep(
        sql: """
            ALTER TABLE device ADD COLUMN user_id TEXT REFERENCES user(id) ON DELETE CASCADE;
            """)

    /// v4: the schedule leaves the device row for a queue ordered by fire time. A pass used to rewrite each device it
    /// fired, at random places in a wide table and in its next-fire index; now it deletes entries from the queue's
    /// front and adds the next day's near its back, and device rows are only read.
    ///
    /// An entry is live while its `version` is the device's `schedule_version`: changing a device's schedule bumps the
    /// version and queues a new entry, and a pass drops the entries left behind. `device_epoch` counts every change to
    /// the device table (by triggers, so that no writer can forget), so that a pass knows whether the devices it
    /// planned with changed before it wrote.
    ///
    /// Devices get an integer key, `seq`, never reused (AUTOINCREMENT). The queue and the outbox's unique key use it:
    /// an index of small integers is a quarter of the size of one of UUID strings, and every pass writes into it at
    /// random places.
    public static let v4ScheduleQueue = MigrationStep(
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

    /// v6: the outbox's unique key (device, local date) keeps its meaning, with the date as a day number in the index:
    /// an entry of three small integers instead of an integer, ten characters of text and the rowid. Every pass inserts
    /// into this index at random places (devices fire in no order of their keys), so each pass writes most of its pages
    /// again, and smaller entries cut what a day of emission writes (the README's `emit` history has the figures). A
    /// table rebuild, since an inline UNIQUE cannot be dropped.
    public static let v6OutboxKey = MigrationStep(
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

    /// v7: SQLite codes `status IN (four values)` in a CHECK as a temporary table built for the list, afresh for every
    /// row inserted and every status updated: a large part of an outbox insert's cost, a million times a day. The same
    /// rule as comparisons costs four of them. Every row already satisfies it, so the table's definition is edited in
    /// place, by SQLite's documented procedure for changing a CHECK constraint (no row is rewritten: a month of
    /// retained outbox is tens of gigabytes at a million devices).
    public static let v7OutboxStatusCheck = MigrationStep { db in
        try editTableDefinition(
            db, table: "outbox", replacing: "CHECK (status IN ('pending', 'delivered', 'failed', 'missed'))",
            with: "CHECK (status = 'pending' OR status = 'delivered' OR status = 'failed' OR status = 'missed')",
            otherwise: "migration v7: the outbox table is not as v6 created it")
    }

    /// Replaces `before` by `after` in the text of `table`'s definition, in place: for a change SQLite documents as safe
    /// that way (one that changes nothing stored, such as a CHECK that allows more), where rebuilding the table would
    /// mean rebuilding its triggers and indexes too. Throws `otherwise` (and the migration's transaction is rolled back,
    /// nothing changed) unless the table's text holds `before` once.
    static func editTableDefinition(_ db: Database, table: String, replacing before: String, with after: String, otherwise: String) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
        try db.execute(sql: "PRAGMA writable_schema = ON")
        try db.execute(
            sql: "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = ? AND instr(sql, ?) > 0",
            arguments: [before, after, table, before])
        guard db.changesCount == 1 else { throw DatabaseError(resultCode: .SQLITE_ERROR, message: otherwise) }
        try db.execute(sql: "PRAGMA schema_version = \(version + 1)")
        try db.execute(sql: "PRAGMA writable_schema = OFF")
        db.clearSchemaCache()
    }

    /// v15: a device may keep the predicted calendar. Widening a CHECK changes nothing stored, so the table's text is
    /// edited in place, as v7 did for the outbox.
    public static let v15PredictedCalendar = MigrationStep { db in
        try editTableDefinition(
            db, table: "device", replacing: "CHECK (calendar IN ('umm-al-qura', 'tabular', 'sighted'))",
            with: "CHECK (calendar IN ('umm-al-qura', 'tabular', 'sighted', 'predicted'))",
            otherwise: "migration v15: the device table is not as v4 created it")
    }

    /// v8: the outbox's unique key keeps its meaning, (device, local date), with the day first. Device first, each
    /// day's rows went into every part of an index holding all the days the retention keeps, and a pass dirtied a page
    /// per row: a day's emission wrote far more after a week of rows than on the first day (the README's `--history`
    /// table). Day first, a day's rows share the pages of that day's part. A device's rows are found by day: `outboxDay IN (the days that matter) AND
    /// device_seq = ?`.
    ///
    /// A removed device is sent nothing more: its rows not yet delivered (pending, some written ahead of their time) go
    /// with it, whoever removes it (the CLI, the API, a user's removal through its cascade). They are on the outbox's
    /// newest days (a row pending longer than the grace period is never sent).
    public static let v8OutboxByDay = MigrationStep(
        sql: """
            DROP INDEX outbox_once;
            CREATE UNIQUE INDEX outbox_once ON outbox (CAST(julianday(local_date) AS INTEGER), device_seq);
            CREATE TRIGGER outbox_withdraw_on_device_delete AFTER DELETE ON device
            BEGIN
                DELETE FROM outbox WHERE status = 'pending' AND device_seq = OLD.seq AND CAST(julianday(local_date) AS INTEGER) IN (
                    SELECT newest - back FROM
                        (SELECT CAST(julianday(local_date) AS INTEGER) AS newest FROM outbox ORDER BY CAST(julianday(local_date) AS INTEGER) DESC LIMIT 1),
                        (SELECT 0 AS back UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4));
            END;
            """)

    /// v9: the push senders: the service's id for each message delivered and when a row was last tried (for `status`'s
    /// last hour), why and when a service disabled a device (a token it no longer knows), the provider tokens every
    /// process of an installation shares (APNs allows a new one every 20 minutes at most), and a service paused by a
    /// configuration error. Columns added at the end: no row is rewritten.
    public static let v9PushServices = MigrationStep(
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

    /// v11: what the scheduler found wrong with a device's schedule, once per device and kind, for the log (said once,
    /// not every pass) and for `status`: `clock_ahead`, a queue entry more than two days ahead of the clock (left by a
    /// clock that ran ahead, or by a pass with `--now` in the future), rescheduled from the clock's now; and
    /// `unknown_zone`, a stored zone this system's time zone data no longer knows. Removed with the device.
    public static let v11ScheduleProblems = MigrationStep(
        sql: """
            CREATE TABLE schedule_problem (
                device_seq INTEGER NOT NULL REFERENCES device(seq) ON DELETE CASCADE,
                kind TEXT NOT NULL CHECK (kind = 'clock_ahead' OR kind = 'unknown_zone'),
                detail TEXT NOT NULL,
                found_at REAL NOT NULL,
                PRIMARY KEY (device_seq, kind)) WITHOUT ROWID;
            """)

    /// v20: an outbox row can be leased: taken by one of the processes sharing a PostgreSQL database until
    /// `lease_until`, so that another takes it only if that one died before recording it. SQLite has one deliverer
    /// per database and leaves them empty; the columns are here too so that both dialects keep the same tables (and
    /// `migrate-store` copies them as they are).
    public static let v20OutboxLeases = MigrationStep(
        sql: """
            ALTER TABLE outbox ADD COLUMN lease_owner TEXT;
            ALTER TABLE outbox ADD COLUMN lease_until REAL;
            """)

    /// v13: how far each spool file is known to the outbox: its size after the last append whose rows are recorded,
    /// written in the same transaction as their outcomes. After a power loss that takes the database back further than
    /// the spool, a restart reads the file from there, and finds every line the outbox no longer knows of.
    public static let v13SpoolMarks = MigrationStep(
        sql: """
            CREATE TABLE spool_mark (path TEXT PRIMARY KEY NOT NULL, size INTEGER NOT NULL, at REAL NOT NULL) WITHOUT ROWID;
            """)
}

extension AppDatabase {
    /// The size the outbox recorded for a spool file, if it recorded one.
    public func spoolMark(path: String) throws -> Int64? {
        try read { db in try Int64.fetchOne(db, sql: "SELECT size FROM spool_mark WHERE path = ?", arguments: [path]) }
    }

    /// Of these devices, those whose row for `localDate` is not settled: pending, or none while the device exists (a
    /// power loss can take the database back to before the row, which is then written again). The spool keeps the
    /// keys of their lines, which may come back; a settled row's, or a removed device's, do not.
    public func unsettledOutboxDevices(localDate: String, deviceIDs: [String]) throws -> Set<String> {
        try read { db in
            var unsettled = Set<String>()
            for chunk in stride(from: 0, to: deviceIDs.count, by: 500).map({ deviceIDs[$0..<min($0 + 500, deviceIDs.count)] }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                unsettled.formUnion(
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT d.id FROM device d WHERE d.id IN (\(marks)) AND NOT EXISTS (
                                SELECT 1 FROM outbox o WHERE CAST(julianday(o.local_date) AS INTEGER) = CAST(julianday(?) AS INTEGER)
                                    AND o.device_seq = d.seq AND o.status <> 'pending')
                            """, arguments: StatementArguments(Array(chunk) + [localDate])))
            }
            return unsettled
        }
    }
}

extension DeliverySchema {
    /// PostgreSQL, first migration: the delivery tables as SQLite's v1–v19 left them, column for column (times as
    /// seconds since 1970 in double precision, flags as integers), so that `migrate-store` copies rows as they are. Two
    /// differences of kind, not of content: the outbox's local date is a `date` (SQLite keeps ISO text and indexes its
    /// day number), and the triggers are PL/pgSQL functions; the device epoch moves once per statement, not per row.
    public static let postgresV1 = PostgresStep(
        """
        CREATE TABLE device (
            seq bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            platform text NOT NULL CHECK (platform IN ('apns', 'fcm', 'webpush')),
            token text NOT NULL, p256dh text, auth text,
            timezone text NOT NULL, reminder_time text NOT NULL,
            locale text NOT NULL CHECK (locale IN ('en', 'ar')),
            calendar text NOT NULL CHECK (calendar IN ('umm-al-qura', 'tabular', 'sighted', 'predicted')),
            adjustment integer NOT NULL CHECK (adjustment BETWEEN -2 AND 2),
            display_theme text NOT NULL, enabled integer NOT NULL,
            created_at double precision NOT NULL, updated_at double precision NOT NULL,
            user_id text REFERENCES "user"(id) ON DELETE CASCADE,
            schedule_version bigint NOT NULL DEFAULT 1, disabled_reason text, disabled_at double precision,
            UNIQUE (platform, token))
        """,
        "CREATE INDEX device_by_user ON device (user_id)",
        "CREATE INDEX device_disabled ON device (disabled_at) WHERE disabled_at IS NOT NULL",
        """
        CREATE TABLE schedule (
            next_fire_at double precision NOT NULL, device_seq bigint NOT NULL, version bigint NOT NULL, last_local_day integer,
            PRIMARY KEY (next_fire_at, device_seq))
        """,
        "CREATE TABLE device_epoch (id integer PRIMARY KEY CHECK (id = 1), value bigint NOT NULL)",
        "INSERT INTO device_epoch (id, value) VALUES (1, 0)",
        """
        CREATE FUNCTION device_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE device_epoch SET value = value + 1;
            RETURN NULL;
        END $$
        """,
        "CREATE TRIGGER device_epoch_on_change AFTER INSERT OR UPDATE OR DELETE ON device FOR EACH STATEMENT EXECUTE FUNCTION device_epoch_bump()",
        """
        CREATE TABLE outbox (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            device_seq bigint NOT NULL,
            device_id text NOT NULL, platform text NOT NULL,
            local_date date NOT NULL, fire_at double precision NOT NULL,
            headers text NOT NULL, payload text NOT NULL,
            status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'missed')),
            attempts integer NOT NULL DEFAULT 0, last_error text, delivered_at double precision, next_attempt_at double precision,
            created_at double precision NOT NULL, service_id text, last_attempt_at double precision)
        """,
        "CREATE INDEX outbox_pending ON outbox (id) WHERE status = 'pending'",
        "CREATE UNIQUE INDEX outbox_once ON outbox (local_date, device_seq)",
        """
        CREATE FUNCTION outbox_withdraw_on_device_delete() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM outbox WHERE status = 'pending' AND device_seq = OLD.seq
                AND local_date > (SELECT max(local_date) FROM outbox) - 5;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER outbox_withdraw_on_device_delete AFTER DELETE ON device
            FOR EACH ROW EXECUTE FUNCTION outbox_withdraw_on_device_delete()
        """,
        """
        CREATE TABLE push_credential (
            name text PRIMARY KEY, value text NOT NULL, issued_at double precision NOT NULL, expires_at double precision NOT NULL)
        """,
        """
        CREATE TABLE push_pause (
            platform text PRIMARY KEY, reason text NOT NULL, since double precision NOT NULL, until double precision NOT NULL)
        """,
        """
        CREATE TABLE schedule_problem (
            device_seq bigint NOT NULL REFERENCES device(seq) ON DELETE CASCADE,
            kind text NOT NULL CHECK (kind IN ('clock_ahead', 'unknown_zone')),
            detail text NOT NULL, found_at double precision NOT NULL,
            PRIMARY KEY (device_seq, kind))
        """,
        "CREATE TABLE spool_mark (path text PRIMARY KEY, size bigint NOT NULL, at double precision NOT NULL)"
    )

    /// PostgreSQL's v20: the outbox's leases (see `v20OutboxLeases`).
    public static let postgresV2OutboxLeases = PostgresStep(
        "ALTER TABLE outbox ADD COLUMN lease_owner text", "ALTER TABLE outbox ADD COLUMN lease_until double precision")

    /// PostgreSQL: the device epoch no longer moves. Its one row, updated by every statement on `device`, made every
    /// device change of every process wait for the one before, and two of them could deadlock (a settings change
    /// across a user's devices against a token changing hands); only SQLite's emitter reads it. The table stays, with
    /// the value `migrate-store` copied, for the schemas to stay alike.
    public static let postgresV5StillEpoch = PostgresStep(
        "DROP TRIGGER device_epoch_on_change ON device", "DROP FUNCTION device_epoch_bump()")
}
