import Foundation
import HijriCalendar
import Logging
import Notifications
import PostgresNIO
import Storage

/// The emission pass on PostgreSQL, which any number of processes run at once on one database.
///
/// Each batch is one transaction that takes due queue entries with `FOR UPDATE SKIP LOCKED` (entries another process
/// has taken are passed over, never waited for), reads their devices `FOR SHARE SKIP LOCKED` (a device being changed
/// right now keeps its entry for the next pass, so a change never waits on emission nor emission on a change, and no
/// two transactions wait on each other), plans the fires exactly as `Emitter` does, and in the same transaction
/// removes the entries, writes the outbox rows and queues each device's next fire. A process killed mid-batch leaves
/// all or nothing of it, and its locks go with its connection.
///
/// The outbox rows are sent by `COPY`, PostgreSQL's fastest way in. The outbox's unique key (one row per device and
/// local date, whoever writes it) refuses a row already there, which ends the batch's transaction; the batch is then
/// taken again, its rows copied into a table of the transaction's own and moved into the outbox by `INSERT … ON
/// CONFLICT DO NOTHING`, which leaves the row there as it is.
///
/// The day's content comes from `content`, the process's own SQLite database (the bundled content is the same for
/// every process); devices, queue and outbox are in PostgreSQL.
public struct SharedEmitter: Sendable {
    public let store: PostgresStore
    public let content: AppDatabase
    public let configuration: EmitConfiguration
    let logger: Logger
    /// With the wall clock (not a pinned one): how far this machine's clock may be from the database server's before a
    /// pass refuses to run. The processes compare their own clocks with what the others wrote (leases, the queue's
    /// instants, who is live): one a minute ahead would take rows another is sending, and fire early. Nil: not checked.
    public var maximumClockSkew: TimeInterval?
    /// This machine's clock, as the check reads it.
    public var localClock: @Sendable () -> Date = { Date() }

    /// What `maximumClockSkew` is set to under `serve` with the wall clock: a few seconds apart still send once.
    public static let defaultMaximumClockSkew: TimeInterval = 10

    public init(store: PostgresStore, content: AppDatabase, configuration: EmitConfiguration, logger: Logger) {
        (self.store, self.content, self.configuration, self.logger) = (store, content, configuration, logger)
    }

    /// One pass at `now`, batch by batch until the due entries run out (or `shouldStop`, asked between batches).
    public func run(now: Date, shouldStop: @Sendable () -> Bool = { false }) async throws -> EmitSummary {
        var summary = EmitSummary()
        // One question a pass: the queue's first fire (for the horizon) and its last (an entry ahead of the clock).
        var span = try await queueSpan()
        if let last = span.last, Scheduler.isAheadOfClock(Date(timeIntervalSince1970: last), now: now) {
            summary.problems = try await rescheduleAheadOfClock(now: now, shouldStop: shouldStop)
            span = try await queueSpan()
        }
        guard let through = horizon(now: now, first: span.first) else { return summary }
        var planner = Emitter.Planner(emitter: Emitter(database: content, configuration: configuration), now: now, through: through)
        var cursor: (fireAt: Double, deviceSeq: Int64) = (-Double.greatestFiniteMagnitude, 0)
        while true {
            let (read, last): (Int, (fireAt: Double, deviceSeq: Int64)?)
            do {
                (read, last) = try await batch(through: through, after: cursor, now: now, copying: true, planner: &planner, into: &summary)
            } catch  where PostgresStore.isUniqueViolation(error) {
                logger.debug("an outbox row of the batch was already there: the batch again, past it")
                (read, last) = try await batch(through: through, after: cursor, now: now, copying: false, planner: &planner, into: &summary)
            }
            guard let last else { break }
            cursor = last
            if read < configuration.batchSize || shouldStop() { break }
        }
        return summary
    }

    /// Throws when `maximumClockSkew` is set and this machine's clock is further than that from the server's: asked
    /// before each pass, which then neither emits nor delivers.
    public func checkClock() async throws {
        guard let maximum = maximumClockSkew else { return }
        let skew = try await clockSkew()
        guard abs(skew) <= maximum else { throw EmitError.clockSkew(seconds: skew, maximum: maximum) }
    }

    /// How far this machine's clock is ahead of the database server's (negative: behind), read against the middle of
    /// the round trip.
    func clockSkew() async throws -> TimeInterval {
        let sent = localClock()
        let server = try await store.rows("SELECT extract(epoch FROM clock_timestamp())::float8").first?.decode(Double.self)
        let received = localClock()
        guard let server else { return 0 }
        return sent.timeIntervalSince1970 + received.timeIntervalSince(sent) / 2 - server
    }

    /// The queue's first and last fire instants (nil when it is empty): both ends of its key, in one round trip.
    func queueSpan() async throws -> (first: Double?, last: Double?) {
        try await store.rows("SELECT min(next_fire_at), max(next_fire_at) FROM schedule").first?
            .decode((Double?, Double?).self) ?? (nil, nil)
    }

    /// As `Emitter.horizon`, given the queue's `first` fire: the instant until which this pass writes fires, or nil
    /// when, writing ahead, that fire is not yet within `refill` of now.
    func horizon(now: Date, first: Double?) -> Date? {
        let ahead = configuration.ahead
        guard ahead > 0 else { return now }
        guard let first, first <= now.timeIntervalSince1970 + configuration.lead else { return nil }
        return now.addingTimeInterval(ahead)
    }

    /// As `Emitter.rescheduleAheadOfClock`: every queue entry further ahead of the clock than a pass at `now` could
    /// have written (a clock that ran days ahead, on this machine or another, or a command run with `--now` in the
    /// future) is queued again at `now` for a live device, with its rows for dates still more than a day ahead gone
    /// (and those that clock wrote and did not send) and a creation time ahead of the clock made now; entries left
    /// behind by a change are dropped. Entries another process holds are passed over, for its pass or the next one.
    /// A clock that ran ahead moved every device: they are moved `chunk` at a time, a transaction each (statements for
    /// the chunk, not one per device), asking `shouldStop` (which keeps the watchdog fed) between them; a stop leaves
    /// the rest for the next pass.
    public func rescheduleAheadOfClock(
        now: Date, chunk: Int = 10_000, shouldStop: @Sendable () -> Bool = { false }
    ) async throws
        -> [ScheduleProblem]
    {
        var problems: [ScheduleProblem] = []
        while true {
            let (read, found) = try await rescheduleAheadOfClock(now: now, limit: chunk)
            problems += found
            if read < chunk || shouldStop() { return problems }
        }
    }

    /// One chunk of `rescheduleAheadOfClock`: how many entries it read, and the problems of the live devices among them.
    func rescheduleAheadOfClock(now: Date, limit chunk: Int) async throws -> (read: Int, problems: [ScheduleProblem]) {
        let (at, limit) = (now.timeIntervalSince1970, now.addingTimeInterval(Scheduler.aheadOfClock).timeIntervalSince1970)
        // The last local date a legitimate row can have: a day after the UTC date of now.
        let lastDate = CivilDate(instant: now, timeZone: TimeZone(identifier: "UTC")!).adding(days: 1).description
        return try await store.transaction { transaction in
            var (fireAts, seqs) = ([Double](), [Int64]())
            var live: (seqs: [Int64], versions: [Int64], problems: [ScheduleProblem]) = ([], [], [])
            for row in try await transaction.rows(
                """
                SELECT s.next_fire_at, s.device_seq, s.version, s.last_local_day, d.id, d.schedule_version = s.version AND d.enabled = 1
                FROM schedule s LEFT JOIN device d ON d.seq = s.device_seq WHERE s.next_fire_at > \(limit)
                ORDER BY s.next_fire_at, s.device_seq LIMIT \(chunk) FOR UPDATE OF s SKIP LOCKED
                """)
            {
                let (fireAt, seq, version, lastDay, id, isLive) = try row.decode((Double, Int64, Int64, Int?, String?, Bool?).self)
                fireAts.append(fireAt)
                seqs.append(seq)
                guard let id, isLive == true else { continue }
                live.seqs.append(seq)
                live.versions.append(version)
                live.problems.append(.clockAhead(deviceID: id, nextFire: fireAt, lastFired: lastDay))
            }
            guard !fireAts.isEmpty else { return (0, []) }
            try await transaction.rows(
                "DELETE FROM schedule WHERE (next_fire_at, device_seq) IN (SELECT * FROM unnest(\(fireAts)::float8[], \(seqs)::int8[]))")
            guard !live.seqs.isEmpty else { return (fireAts.count, []) }
            try await transaction.rows(
                """
                INSERT INTO schedule (next_fire_at, device_seq, version, last_local_day)
                SELECT \(at), s, v, NULL FROM unnest(\(live.seqs)::int8[], \(live.versions)::int8[]) AS t(s, v)
                ON CONFLICT (next_fire_at, device_seq) DO UPDATE SET version = excluded.version, last_local_day = NULL
                """)
            try await transaction.rows(
                """
                DELETE FROM outbox WHERE device_seq = ANY(\(live.seqs)::int8[])
                    AND (local_date > \(lastDate)::date OR (created_at > \(limit) AND status <> 'delivered'))
                """)
            try await transaction.rows("UPDATE device SET created_at = \(at) WHERE seq = ANY(\(live.seqs)::int8[]) AND created_at > \(limit)")
            try await transaction.rows(
                """
                INSERT INTO schedule_problem (device_seq, kind, detail, found_at)
                SELECT s, \(ScheduleProblem.Kind.clockAhead.rawValue), d, \(at) FROM unnest(\(live.seqs)::int8[], \(live.problems.map(\.detail))::text[]) AS t(s, d)
                ON CONFLICT (device_seq, kind) DO UPDATE SET detail = excluded.detail, found_at = excluded.found_at
                """)
            return (fireAts.count, live.problems)
        }
    }

    /// One batch in one transaction, its outbox rows copied into the outbox (`copying`) or, past rows already there,
    /// by `INSERT … ON CONFLICT DO NOTHING`; returns how many entries it read and the last one's key (nil when none
    /// was due). `summary` has the batch's counts only once it is committed.
    func batch(
        through: Date, after cursor: (fireAt: Double, deviceSeq: Int64), now: Date, copying: Bool, planner: inout Emitter.Planner,
        into summary: inout EmitSummary
    ) async throws -> (read: Int, last: (fireAt: Double, deviceSeq: Int64)?) {
        var written = summary
        let result: (read: Int, last: (fireAt: Double, deviceSeq: Int64)?) = try await store.transaction { transaction in
            var queued: [(fireAt: Double, seq: Int64, version: Int, lastDay: Int?)] = []
            let due = try await transaction.query(
                """
                SELECT next_fire_at, device_seq, version, last_local_day FROM schedule
                WHERE next_fire_at <= \(through.timeIntervalSince1970) AND (next_fire_at, device_seq) > (\(cursor.fireAt), \(cursor.deviceSeq))
                ORDER BY next_fire_at, device_seq LIMIT \(configuration.batchSize) FOR UPDATE SKIP LOCKED
                """)
            for try await (fireAt, seq, version, lastDay) in due.decode((Double, Int64, Int, Int?).self) {
                queued.append((fireAt, seq, version, lastDay))
            }
            guard let last = queued.last else { return (0, nil) }
            let seqs = Array(Set(queued.map(\.seq)))
            var devices: [Int64: (version: Int, enabled: Bool, device: Device)] = [:]
            let rows = try await transaction.query(
                "SELECT d.seq, d.schedule_version, \(unescaped: AppDatabase.deviceColumns) FROM device d WHERE d.seq = ANY(\(seqs)) FOR SHARE SKIP LOCKED"
            )
            for try await row in rows {
                let cells = PostgresColumns(row)
                let device = try AppDatabase.device(cells, from: 2)
                devices[Int64(cells.integer(0))] = (cells.integer(1), device.enabled, device)
            }
            // A device not read is either removed (its entry is dropped) or being changed right now (its entry stays,
            // for the next pass).
            var busy: Set<Int64> = []
            let unread = seqs.filter { devices[$0] == nil }
            if !unread.isEmpty {
                for try await seq in try await transaction.query("SELECT seq FROM device WHERE seq = ANY(\(unread))").decode(
                    Int64.self)
                {
                    busy.insert(seq)
                }
            }
            let entries = queued.filter { !busy.contains($0.seq) }.map { entry in
                let stored = devices[entry.seq]
                let live = stored.map { $0.version == entry.version && $0.enabled } ?? false
                return Emitter.Entry(
                    fireAt: entry.fireAt, deviceSeq: entry.seq, device: live ? stored?.device : nil, version: entry.version,
                    lastFired: entry.lastDay.map(CivilDate.init(dayNumber:)))
            }
            let plans = try planner.plan(entries)
            try await write(plans, payloads: planner.payloads, now: now, copying: copying, on: transaction, into: &written)
            return (queued.count, (last.fireAt, last.seq))
        }
        summary = written
        return result
    }

    /// Writes a batch's plans in `transaction`: the entries out of the queue, their rows into the
    /// outbox, each live device's next entry in.
    func write(
        _ plans: [Emitter.Plan], payloads: JSONBytes, now: Date, copying: Bool, on transaction: PostgresTransaction, into summary: inout EmitSummary
    ) async throws {
        guard !plans.isEmpty else { return }
        let removed = try await transaction.query(
            """
            DELETE FROM schedule WHERE (next_fire_at, device_seq) IN (
                SELECT * FROM unnest(\(plans.map(\.entry.fireAt))::float8[], \(plans.map(\.entry.deviceSeq))::int8[]))
            RETURNING 1
            """
        ).collect().count
        guard removed == plans.count else { throw EmitError.queueChanged(expected: plans.count, found: removed) }
        var rows = CopyTextRows(capacity: plans.count * (Emitter.expectedBytesPerPayload + 160))
        var (queued, missed) = (0, 0)
        var next = QueueColumns()
        for plan in plans {
            guard let device = plan.entry.device else { continue }
            if let zone = plan.unknownZone {
                let problem = ScheduleProblem(deviceID: device.id, kind: .unknownZone, detail: zone)
                let recorded = try await transaction.query(
                    """
                    INSERT INTO schedule_problem (device_seq, kind, detail, found_at)
                    VALUES (\(plan.entry.deviceSeq), \(problem.kind.rawValue), \(zone), \(now.timeIntervalSince1970))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """
                ).collect().count
                if recorded > 0 { summary.problems.append(problem) }
            }
            summary.devices += 1
            summary.skippedDays += plan.skippedDays
            for (fire, payload) in plan.rows {
                Self.copy(device, seq: plan.entry.deviceSeq, fire: fire, payload: payload, in: payloads, now: now, into: &rows)
                if payload == nil { missed += 1 } else { queued += 1 }
            }
            if let nextFire = plan.nextFire {
                next.append(fireAt: nextFire, seq: plan.entry.deviceSeq, version: plan.entry.version, lastDay: plan.lastFired?.dayNumber)
            }
        }
        if queued + missed > 0, copying {
            try await Self.copy(rows, into: "outbox", in: transaction)
            summary.queued += queued
            summary.missed += missed
        } else if queued + missed > 0 {
            let columns = Self.outboxColumns.joined(separator: ", ")
            _ = try await transaction.query(
                PostgresQuery(unsafeSQL: "CREATE TEMP TABLE outbox_batch ON COMMIT DROP AS SELECT \(columns) FROM outbox WITH NO DATA"))
            try await Self.copy(rows, into: "outbox_batch", in: transaction)
            let statuses = try await transaction.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO outbox (\(columns)) SELECT \(columns) FROM outbox_batch ON CONFLICT DO NOTHING RETURNING status")
            ).decode(String.self)
            for try await status in statuses { if status == "missed" { summary.missed += 1 } else { summary.queued += 1 } }
        }
        if !next.seq.isEmpty {
            _ = try await transaction.query(
                """
                INSERT INTO schedule (next_fire_at, device_seq, version, last_local_day)
                SELECT f, s, v, NULLIF(l, \(QueueColumns.noDay)) FROM unnest(\(next.fireAt)::float8[], \(next.seq)::int8[], \(next.version)::int8[],
                    \(next.lastDay)::int4[]) AS t(f, s, v, l)
                ON CONFLICT (next_fire_at, device_seq) DO UPDATE SET version = excluded.version, last_local_day = excluded.last_local_day
                """)
        }
    }

    /// The outbox's columns an emitted row fills, in the order of `copy`'s values.
    static let outboxColumns = [
        "device_seq", "device_id", "platform", "local_date", "fire_at", "headers", "payload", "status", "created_at", "next_attempt_at",
    ]

    /// `rows` into `table`'s `outboxColumns` by `COPY`, a megabyte a message.
    static func copy(_ rows: CopyTextRows, into table: String, in transaction: PostgresTransaction) async throws {
        let buffer = rows.buffer
        try await transaction.copy(into: table, columns: outboxColumns) { writer in
            var unsent = buffer
            while unsent.readableBytes > 0, let part = unsent.readSlice(length: min(1 << 20, unsent.readableBytes)) {
                try await writer.write(part)
            }
        }
    }

    /// One outbox row as a line of `COPY`, its columns `outboxColumns`.
    static func copy(
        _ device: Device, seq: Int64, fire: Scheduler.Fire, payload encoded: EncodedPayload?, in payloads: JSONBytes, now: Date,
        into rows: inout CopyTextRows
    ) {
        rows.integer(seq)
        rows.text(device.id)
        rows.text(device.platform.rawValue)
        rows.text(fire.localDate.description)
        rows.real(fire.fireAt.timeIntervalSince1970)
        if let encoded {
            rows.text(payloads.bytes[encoded.headers])
            rows.text(payloads.bytes[encoded.payload])
            rows.text("pending")
        } else {
            rows.text("{}")
            rows.text("{}")
            rows.text("missed")
        }
        rows.real(now.timeIntervalSince1970)
        // A row written ahead waits for its instant.
        if fire.fireAt > now { rows.real(fire.fireAt.timeIntervalSince1970) } else { rows.null() }
        rows.endRow()
    }

    /// A batch's next queue entries, column by column.
    struct QueueColumns {
        /// No last fired day (an array parameter holds no NULL here).
        static let noDay = Int32.min

        var fireAt: [Double] = []
        var seq: [Int64] = []
        var version: [Int64] = []
        var lastDay: [Int32] = []

        mutating func append(fireAt: Double, seq: Int64, version: Int, lastDay: Int?) {
            self.fireAt.append(fireAt)
            self.seq.append(seq)
            self.version.append(Int64(version))
            self.lastDay.append(lastDay.map(Int32.init) ?? Self.noDay)
        }
    }
}

/// A PostgreSQL row read by position, as `AppDatabase.device(_:from:)` reads SQLite's.
struct PostgresColumns: ColumnReader {
    let cells: [PostgresCell]

    init(_ row: PostgresRow) { cells = Array(row) }

    func text(_ column: Int32) -> String { optionalText(column) ?? "" }
    func optionalText(_ column: Int32) -> String? { (try? cells[Int(column)].decode(String?.self)) ?? nil }
    func integer(_ column: Int32) -> Int { ((try? cells[Int(column)].decode(Int?.self)) ?? nil) ?? 0 }
    func real(_ column: Int32) -> Double { optionalReal(column) ?? 0 }
    func optionalReal(_ column: Int32) -> Double? { (try? cells[Int(column)].decode(Double?.self)) ?? nil }
}
