import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage
import VerseCalendar
import VerseOfTheDay

/// How a pass emits.
public struct EmitConfiguration: Sendable {
    /// A fire found later than this is recorded as missed and not sent.
    public var grace: TimeInterval
    public var push: PushConfiguration
    /// Devices handled per transaction.
    public var batchSize: Int
    /// How far ahead of their time fires are written to the outbox (0: only those due). Their rows wait, pending,
    /// until their instant (`next_attempt_at`), and a change to the device withdraws them. A pass with `ahead` runs
    /// only once the queue's first fire is within `refill` of now, so that a daemon woken every minute writes the
    /// outbox in batches of `ahead`: each batch dirties the pages of the outbox's unique index once, not each minute.
    public var ahead: TimeInterval

    /// How soon the queue's first fire must be for a pass with `ahead` to emit: the rows are in the outbox this long
    /// before they are due.
    public static let refill: TimeInterval = 60

    /// How long before the queue's first fire a pass emits: `refill` when writing ahead (at most `ahead`), else 0.
    public var lead: TimeInterval { ahead > 0 ? min(ahead, Self.refill) : 0 }

    /// A pass of a million devices a day writes about 10,000 each quarter of an hour: one transaction for them all
    /// touches each page of the outbox's unique index once, rather than once per smaller batch.
    public static let defaultBatchSize = 20_000

    public init(grace: TimeInterval = 7200, push: PushConfiguration, batchSize: Int = defaultBatchSize, ahead: TimeInterval = 0) {
        self.grace = grace
        self.push = push
        self.batchSize = batchSize
        self.ahead = max(0, ahead)
    }
}

public struct EmitSummary: Equatable, Sendable {
    public var devices = 0
    public var queued = 0
    public var missed = 0
    /// Local dates that fell before the look-back window (the daemon was down longer): neither sent nor recorded.
    public var skippedDays = 0
    /// Found this pass: entries ahead of the clock (rescheduled) and zones no longer known (each said once a device).
    public var problems: [ScheduleProblem] = []
    public init() {}
}

/// One pass of the scheduler: every enabled device whose next fire has come gets its payload in the outbox.
///
/// Exactly once: the outbox row (unique per device and local date) and the device's next queue entry are written
/// in the same transaction as the removal of the entry that fired, so a pass killed at any moment leaves all or
/// none of them, and the next pass picks up where it stopped.
public struct Emitter: Sendable {
    public let database: AppDatabase
    public let configuration: EmitConfiguration

    public init(database: AppDatabase, configuration: EmitConfiguration) {
        self.database = database
        self.configuration = configuration
    }

    /// Room reserved for one device's headers and payload: well above the average the README's `emit` table records.
    static let expectedBytesPerPayload = 1_536

    /// A queue entry and, when it is live, its device.
    struct Entry {
        let fireAt: Double
        let deviceSeq: Int64
        let device: Device?
        let version: Int
        let lastFired: CivilDate?
    }

    /// What one entry's fires will write, worked out before the write transaction.
    struct Plan {
        let entry: Entry
        /// Each fire and, when it is sent, where its headers and payload are in the batch's buffer.
        let rows: [(fire: Scheduler.Fire, payload: EncodedPayload?)]
        let lastFired: CivilDate?
        let nextFire: Double?
        /// Dates between the last fire and the look-back window, skipped (for the log).
        var skippedDays = 0
        /// The device's stored zone, which this system's time zone data does not know.
        var unknownZone: String? = nil
    }

    /// The instant until which a pass at `now` writes fires, or nil when, emitting ahead, the queue's first fire is
    /// not yet within `refill` of now (the rows written last time still cover the time until then).
    func horizon(now: Date) throws -> Date? {
        let ahead = configuration.ahead
        guard ahead > 0 else { return now }
        let first = try database.read { db in
            try Double.fetchOne(db, sql: "SELECT next_fire_at FROM schedule ORDER BY next_fire_at, device_seq LIMIT 1")
        }
        guard let first, first <= now.timeIntervalSince1970 + configuration.lead else { return nil }
        return now.addingTimeInterval(ahead)
    }

    /// `shouldStop` is asked between transactions; a pass that stops early leaves the rest to the next one.
    ///
    /// Batch by batch: read the due entries with their devices, plan their fires and payloads outside any
    /// transaction, then write the plans in one.
    public func run(now: Date, shouldStop: () -> Bool = { false }) throws -> EmitSummary {
        var summary = EmitSummary()
        summary.problems = try rescheduleAheadOfClock(now: now)
        guard let through = try horizon(now: now) else { return summary }
        var planner = Planner(emitter: self, now: now, through: through)
        // Keyset pagination over the queue's key: each due entry is visited once per pass, even one left in place.
        var cursor: (fireAt: Double, deviceSeq: Int64) = (-Double.greatestFiniteMagnitude, 0)
        while true {
            let batch = try dueBatch(through: through, after: cursor)
            guard let last = batch.entries.last else { break }
            cursor = (last.fireAt, last.deviceSeq)
            let plans = try planner.plan(batch.entries)
            try write(plans, payloads: planner.payloads, readAtEpoch: batch.epoch, now: now, into: &summary)
            if batch.entries.count < configuration.batchSize || shouldStop() { break }
        }
        return summary
    }

    /// The due query's columns: the queue entry's, the device's schedule version, then `AppDatabase.deviceColumns`.
    enum DueColumn: Int32 {
        case fireAt, deviceSeq, version, lastLocalDay, scheduleVersion, device
    }

    /// Up to a batch of queue entries due by `through`, after `cursor` in the queue's order, with their devices; and
    /// the device epoch they were read at.
    func dueBatch(through: Date, after cursor: (fireAt: Double, deviceSeq: Int64)) throws -> (entries: [Entry], epoch: Int) {
        try database.read { db in
            let epoch = try Int.fetchOne(db, sql: "SELECT value FROM device_epoch") ?? 0
            var entries: [Entry] = []
            entries.reserveCapacity(configuration.batchSize)
            // Through the C API: a million rows a day come through here.
            let due = try DirectStatement(
                db,
                sql: """
                    SELECT s.next_fire_at, s.device_seq, s.version, s.last_local_day, d.schedule_version, \(AppDatabase.deviceColumns)
                    FROM schedule s LEFT JOIN device d ON d.seq = s.device_seq
                    WHERE s.next_fire_at <= ? AND (s.next_fire_at, s.device_seq) > (?, ?)
                    ORDER BY s.next_fire_at, s.device_seq LIMIT ?
                    """)
            try due.forEachRow(
                db, .real(through.timeIntervalSince1970), .real(cursor.fireAt), .integer(cursor.deviceSeq), .integer(Int64(configuration.batchSize))
            ) { row in
                let version = row.integer(DueColumn.version.rawValue)
                // Left behind by a change, by a disabled or by a removed device: dropped.
                let live =
                    row.optionalInteger(DueColumn.scheduleVersion.rawValue) == version
                    && row.optionalInteger(DueColumn.device.rawValue + DeviceColumn.enabled.rawValue) == 1
                entries.append(
                    Entry(
                        fireAt: row.real(DueColumn.fireAt.rawValue), deviceSeq: Int64(row.integer(DueColumn.deviceSeq.rawValue)),
                        device: live ? try AppDatabase.device(row, from: DueColumn.device.rawValue) : nil, version: version,
                        lastFired: row.optionalInteger(DueColumn.lastLocalDay.rawValue).map(CivilDate.init(dayNumber:))))
            }
            return (entries, epoch)
        }
    }

    /// Works out each entry's fires and payloads (pure but for the day's content, read through the store), keeping
    /// what a pass renders once: the zones' offsets, the days' content, the payload templates.
    struct Planner {
        let emitter: Emitter
        let now: Date
        let through: Date
        var contents: ContentCache
        var zones: [String: ZoneWindow?] = [:]
        var templates: [TemplateKey: PayloadTemplate] = [:]
        /// A batch's headers and payloads, one after another: one buffer rather than two strings a device.
        var payloads = JSONBytes()

        init(emitter: Emitter, now: Date, through: Date) {
            (self.emitter, self.now, self.through) = (emitter, now, through)
            contents = ContentCache(reports: DailyVerseReports(database: emitter.database))
        }

        mutating func plan(_ entries: [Entry]) throws -> [Plan] {
            // Room for the batch at once: grown by doubling, the buffer was copied a dozen times per batch, and each
            // new block of memory had to be faulted in again.
            payloads.bytes.removeAll(keepingCapacity: true)
            payloads.bytes.reserveCapacity(entries.count * Emitter.expectedBytesPerPayload)
            var plans: [Plan] = []
            plans.reserveCapacity(entries.count)
            for entry in entries { plans.append(try plan(entry)) }
            return plans
        }

        mutating func plan(_ entry: Entry) throws -> Plan {
            guard let device = entry.device else { return Plan(entry: entry, rows: [], lastFired: nil, nextFire: nil) }
            guard let zone = zone(device.timeZone) else {
                // A zone this system's time zone data no longer knows (devices are checked when added, and a legacy
                // name resolves through its link): said once, and tried again daily.
                return Plan(
                    entry: entry, rows: [], lastFired: entry.lastFired, nextFire: now.timeIntervalSince1970 + 86_400,
                    unknownZone: device.timeZone)
            }
            let fires = Scheduler.due(
                lastFired: entry.lastFired, time: device.reminderTime, zone: zone, now: now, through: through,
                grace: emitter.configuration.grace, eligibleFrom: device.createdAt)
            var rows: [(fire: Scheduler.Fire, payload: EncodedPayload?)] = []
            for fire in fires {
                guard fire.action == .send else {
                    rows.append((fire, nil))
                    continue
                }
                let template = try template(for: fire.localDate, device: device)
                rows.append((fire, template.write(for: device, fireAt: fire.fireAt, zone: zone, into: &payloads)))
            }
            let lastFired = fires.last?.localDate ?? entry.lastFired
            let next = Scheduler.next(lastFired: lastFired, time: device.reminderTime, zone: zone, now: now, eligibleFrom: device.createdAt)
            // Dates older than the look-back leave no row: counted, so that the log says how many. (Worked out only
            // when the first fire is not the day after the last, which it is for every device fired daily.)
            var skipped = 0
            if let last = entry.lastFired, fires.first?.localDate.dayNumber != last.dayNumber + 1 {
                skipped = max(0, Scheduler.localDate(through, zone).adding(days: -Scheduler.lookbackDays).dayNumber - last.dayNumber - 1)
            }
            // A next fire not after the horizon belongs to the next pass; never leave it behind this pass's cursor.
            return Plan(
                entry: entry, rows: rows, lastFired: lastFired, nextFire: max(next.fireAt.timeIntervalSince1970, through.timeIntervalSince1970 + 1),
                skippedDays: skipped)
        }

        /// A zone's offsets around now, worked out once per pass; nil for a name the system no longer knows.
        mutating func zone(_ name: String) -> ZoneWindow? {
            if let known = zones[name] { return known }
            let zone = TimeZone.iana(name).map { ZoneWindow($0, around: now) }
            zones[name] = .some(zone)  // an unknown name too: asked of the system once a pass
            return zone
        }

        /// The payload template of a day's content in the device's locale, rendered once per pass.
        mutating func template(for date: CivilDate, device: Device) throws -> PayloadTemplate {
            let key = TemplateKey(content: ContentKey(date, device), locale: device.locale)
            if let cached = templates[key] { return cached }
            let template = PayloadTemplate(
                content: try contents.content(for: date, device: device), locale: device.locale, configuration: emitter.configuration.push)
            templates[key] = template
            return template
        }
    }

    /// Writes a batch's plans in one transaction: each entry taken from the queue, its rows into the outbox, its next
    /// entry queued. Devices changed since the batch was read (`readAtEpoch`) are left to the next pass.
    func write(_ plans: [Plan], payloads: JSONBytes, readAtEpoch epoch: Int, now: Date, into summary: inout EmitSummary) throws {
        try database.write { db in
            // Devices changed since they were read are checked one by one; usually none did.
            let devicesChanged = try Int.fetchOne(db, sql: "SELECT value FROM device_epoch") != epoch
            let current = try db.cachedStatement(sql: "SELECT schedule_version, enabled FROM device WHERE seq = ?")
            let dequeue = try db.cachedStatement(sql: "DELETE FROM schedule WHERE next_fire_at = ? AND device_seq = ?")
            // The two statements run for every device, through the C API.
            let enqueue = try DirectStatement(
                db, sql: "INSERT OR REPLACE INTO schedule (next_fire_at, device_seq, version, last_local_day) VALUES (?, ?, ?, ?)")
            let insert = try DirectStatement(
                db,
                sql: """
                    INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at,
                        next_attempt_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """)
            // No device changed: the batch's entries, and nothing else, are the queue's keys from its first to its
            // last (no entry can have come in between: a change to a device queues its entry and counts in the
            // epoch), so one statement takes them all out. Otherwise entry by entry, skipping devices that changed.
            if !devicesChanged, let first = plans.first?.entry, let last = plans.last?.entry {
                try db.execute(
                    sql: "DELETE FROM schedule WHERE (next_fire_at, device_seq) >= (?, ?) AND (next_fire_at, device_seq) <= (?, ?)",
                    arguments: [first.fireAt, first.deviceSeq, last.fireAt, last.deviceSeq])
                guard db.changesCount == plans.count else { throw EmitError.queueChanged(expected: plans.count, found: db.changesCount) }
            }
            let createdAt = DirectValue.real(now.timeIntervalSince1970)
            try payloads.bytes.withUnsafeBytes { buffer in
                for plan in plans {
                    let entry = plan.entry
                    if devicesChanged {
                        if entry.device != nil {
                            let row = try Row.fetchOne(current, arguments: [entry.deviceSeq])
                            // Changed meanwhile: its new entry (or its removal) is the next pass's business.
                            guard let row, row[0] as Int == entry.version, row[1] as Bool == true else { continue }
                        }
                        try dequeue.execute(arguments: [entry.fireAt, entry.deviceSeq])
                        guard db.changesCount == 1 else { continue }
                    }
                    guard let device = entry.device else { continue }
                    if let zone = plan.unknownZone {
                        let problem = ScheduleProblem(deviceID: device.id, kind: .unknownZone, detail: zone)
                        if try Self.record(db, problem, seq: entry.deviceSeq, now: now, replacing: false) { summary.problems.append(problem) }
                    }
                    summary.devices += 1
                    summary.skippedDays += plan.skippedDays
                    for (fire, payload) in plan.rows {
                        // Headers and payload are read in place from the batch's buffer, which stays as it is meanwhile.
                        let inserted = try insert.execute(
                            db, .integer(entry.deviceSeq), .text(device.id), .text(device.platform.rawValue),
                            .text(fire.localDate.description), .real(fire.fireAt.timeIntervalSince1970),
                            payload.map { .borrowedText(UnsafeRawBufferPointer(rebasing: buffer[$0.headers])) } ?? .text("{}"),
                            payload.map { .borrowedText(UnsafeRawBufferPointer(rebasing: buffer[$0.payload])) } ?? .text("{}"),
                            .text(payload == nil ? "missed" : "pending"), createdAt,
                            // A row written ahead waits for its instant.
                            fire.fireAt > now ? .real(fire.fireAt.timeIntervalSince1970) : .null)
                        if inserted > 0 { if payload == nil { summary.missed += 1 } else { summary.queued += 1 } }
                    }
                    if let nextFire = plan.nextFire {
                        try enqueue.execute(
                            db, .real(nextFire), .integer(entry.deviceSeq), .integer(Int64(entry.version)), .optional(plan.lastFired?.dayNumber))
                    }
                }
            }
        }
    }
}

enum EmitError: Error, CustomStringConvertible, Equatable {
    /// Another writer took entries from the queue during the pass: the transaction is rolled back, nothing is lost.
    case queueChanged(expected: Int, found: Int)
    /// This machine's clock and the database server's disagree by more than the processes sharing it can bear.
    case clockSkew(seconds: Double, maximum: Double)

    var description: String {
        switch self {
        case .queueChanged(let expected, let found):
            "the schedule queue changed during the pass (\(found) entries where \(expected) were read); is another scheduler running on this database?"
        case .clockSkew(let seconds, let maximum):
            "this machine's clock is \(String(format: "%.1f", abs(seconds))) s \(seconds > 0 ? "ahead of" : "behind") the database server's (at most \(Int(maximum)) s "
                + "is borne): no pass runs here until they agree, as it would take other processes' leases or fire early; check the time "
                + "synchronisation (timedatectl timesync-status)"
        }
    }
}

/// A day's content differs by local date, calendar and adjustment.
struct ContentKey: Hashable {
    let day: Int
    let calendar: CalendarKind
    let adjustment: Int

    init(_ date: CivilDate, _ device: Device) {
        (day, calendar, adjustment) = (date.dayNumber, device.calendar, device.adjustment.days)
    }
}

/// A payload template differs by the day's content and the locale; the rest is per device.
struct TemplateKey: Hashable {
    let content: ContentKey
    let locale: DeviceLocale
}

extension Emitter {
    /// What `device` would be sent for its local date at `now`, rendered as a pass renders it and not stored: the
    /// message `push test` sends.
    public func preview(deviceID: String, now: Date) throws -> OutboxRecord {
        guard let state = try database.deviceState(id: deviceID, now: now) else { throw DeviceError.notFound(deviceID) }
        return try preview(state.device, now: now)
    }

    /// `preview(deviceID:now:)` for a device read elsewhere (PostgreSQL), its content from this emitter's database.
    public func preview(_ device: Device, now: Date) throws -> OutboxRecord {
        let zone = try Device.validateTimeZone(device.timeZone)
        let date = CivilDate(instant: now, timeZone: zone)
        var contents = ContentCache(reports: DailyVerseReports(database: database))
        let content = try contents.content(for: date, device: device)
        let message = PayloadTemplate(content: content, locale: device.locale, configuration: configuration.push).message(
            for: device, fireAt: now, zone: zone)
        return OutboxRecord(
            id: 0, deviceID: device.id, platform: device.platform.rawValue, localDate: date.description, fireAt: now, headers: message.headersJSON,
            payload: message.payload)
    }
}

/// The day's content per (local date, calendar, adjustment): the same for every device that shares them.
struct ContentCache {
    static func occasion(_ observed: ObservedOccasion) -> DailyContent.Occasion {
        .init(
            id: observed.occasion.id, name: observed.occasion.name, nameArabic: observed.occasion.nameArabic ?? observed.occasion.name,
            tonight: observed.tonight)
    }

    let reports: DailyVerseReports
    private var entries: [ContentKey: DailyContent] = [:]

    init(reports: DailyVerseReports) { self.reports = reports }

    mutating func content(for date: CivilDate, device: Device) throws -> DailyContent {
        let key = ContentKey(date, device)
        if let content = entries[key] { return content }
        let report = try reports.today(
            TodayRequest(date: date, timeZone: device.timeZone, calendar: device.calendar, adjustment: device.adjustment))
        let content = DailyContent(
            localDate: date, hijri: report.hijriDate, verseKey: report.verse.key, surahName: report.verse.surahName,
            surahNameArabic: report.content.surah.arabic, arabic: report.verse.arabic, translation: report.verse.translation.text,
            themeID: report.theme.id, themeName: report.theme.name,
            occasion: report.selection.occasions.first.map(Self.occasion), otherOccasions: report.selection.others.map(Self.occasion))
        entries[key] = content
        return content
    }
}
