import ContentStore
import Foundation
import GRDB
import HijriCalendar
import Notifications
import VerseOfTheDay

/// How a pass emits.
public struct EmitConfiguration: Sendable {
    /// A fire found later than this is recorded as missed and not sent.
    public var grace: TimeInterval
    public var push: PushConfiguration
    /// Devices handled per transaction.
    public var batchSize: Int

    public init(grace: TimeInterval = 7200, push: PushConfiguration, batchSize: Int = 5000) {
        self.grace = grace
        self.push = push
        self.batchSize = batchSize
    }
}

public struct EmitSummary: Equatable, Sendable {
    public var devices = 0
    public var queued = 0
    public var missed = 0
    public init() {}
}

/// One pass of the scheduler: every enabled device whose next fire has come gets its payload in the outbox.
///
/// Exactly once: the outbox row (unique per device and local date) and the device's new schedule are written in
/// the same transaction, so a pass killed at any moment leaves either both or neither, and the next pass picks up
/// where it stopped.
public struct Emitter: Sendable {
    public let database: AppDatabase
    public let configuration: EmitConfiguration

    public init(database: AppDatabase, configuration: EmitConfiguration) {
        self.database = database
        self.configuration = configuration
    }

    /// What one device's fires will write, worked out before the write transaction.
    struct Plan {
        let id: String
        let expectedNextFire: Double
        let expectedUpdatedAt: Double
        let platform: String
        let rows: [(fire: Scheduler.Fire, message: PushMessage?)]
        let lastLocalDate: CivilDate?
        let nextFire: Double
    }

    /// `shouldStop` is asked between transactions; a pass that stops early leaves the rest to the next one.
    public func run(now: Date, shouldStop: () -> Bool = { false }) throws -> EmitSummary {
        var summary = EmitSummary()
        var cache = ContentCache(service: DailyVerseService(database: database))
        var zones: [String: TimeZone] = [:]
        var templates: [String: PayloadTemplate] = [:]
        // Keyset pagination over (next_fire_at, id): each due device is visited once per pass.
        var cursor: (Double, String) = (-1e300, "")
        while true {
            let peeked = try database.writer.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM device WHERE enabled AND next_fire_at <= ? AND (next_fire_at, id) > (?, ?)
                        ORDER BY next_fire_at, id LIMIT ?
                        """, arguments: [now.timeIntervalSince1970, cursor.0, cursor.1, configuration.batchSize])
            }
            guard let last = peeked.last else { break }
            cursor = (last[15], last[0])  // next_fire_at, id
            // Everything but the writes happens outside the transaction: the schedule, the day's content (read
            // through the store) and the payloads (pure).
            var plans: [Plan] = []
            plans.reserveCapacity(peeked.count)
            for row in peeked {
                let state = try AppDatabase.deviceState(row)
                let device = state.device
                guard let zone = zones[device.timeZone] ?? TimeZone(identifier: device.timeZone) else { continue }
                zones[device.timeZone] = zone
                let fires = Scheduler.due(
                    lastFired: state.lastLocalDate, time: device.reminderTime, zone: zone, now: now, grace: configuration.grace,
                    eligibleFrom: device.createdAt)
                var rows: [(fire: Scheduler.Fire, message: PushMessage?)] = []
                for fire in fires {
                    guard fire.action == .send else {
                        rows.append((fire, nil))
                        continue
                    }
                    let key = ContentCache.key(fire.localDate, device) + " " + device.locale.rawValue
                    let template: PayloadTemplate
                    if let cached = templates[key] {
                        template = cached
                    } else {
                        template = PayloadTemplate(
                            content: try cache.content(for: fire.localDate, device: device), locale: device.locale, configuration: configuration.push)
                        templates[key] = template
                    }
                    rows.append((fire, template.message(for: device, fireAt: fire.fireAt, zone: zone)))
                }
                let lastDate = fires.last?.localDate ?? state.lastLocalDate
                let next = Scheduler.next(lastFired: lastDate, time: device.reminderTime, zone: zone, now: now, eligibleFrom: device.createdAt)
                plans.append(
                    Plan(
                        id: device.id, expectedNextFire: row[15], expectedUpdatedAt: row[13], platform: device.platform.rawValue,
                        rows: rows, lastLocalDate: lastDate,
                        // A next fire not after now belongs to the next pass; never leave it behind this pass's cursor.
                        nextFire: max(next.fireAt.timeIntervalSince1970, now.timeIntervalSince1970 + 1)))
            }
            try database.writer.write { db in
                let insert = try db.cachedStatement(
                    sql: """
                        INSERT INTO outbox (device_id, platform, local_date, fire_at, headers, payload, status, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                        """)
                // Only if the device is as it was read: a device changed meanwhile is left to the next pass.
                let update = try db.cachedStatement(
                    sql: "UPDATE device SET last_local_date = ?, next_fire_at = ? WHERE id = ? AND enabled AND next_fire_at = ? AND updated_at = ?")
                for plan in plans {
                    try update.execute(arguments: [plan.lastLocalDate?.description, plan.nextFire, plan.id, plan.expectedNextFire, plan.expectedUpdatedAt])
                    guard db.changesCount == 1 else { continue }
                    summary.devices += 1
                    for (fire, message) in plan.rows {
                        try insert.execute(arguments: [
                            plan.id, plan.platform,
                            fire.localDate.description, fire.fireAt.timeIntervalSince1970,
                            message.map { OutboxRecord.encodeHeaders($0.headers) } ?? "{}", message?.payload ?? "{}",
                            message == nil ? "missed" : "pending", now.timeIntervalSince1970,
                        ])
                        if db.changesCount > 0 { if message == nil { summary.missed += 1 } else { summary.queued += 1 } }
                    }
                }
            }
            if peeked.count < configuration.batchSize || shouldStop() { break }
        }
        return summary
    }
}

/// The day's content per (local date, calendar, adjustment): the same for every device that shares them.
struct ContentCache {
    let service: DailyVerseService
    private var entries: [String: DailyContent] = [:]

    init(service: DailyVerseService) { self.service = service }

    static func key(_ date: CivilDate, _ device: Device) -> String { "\(date) \(device.calendar.rawValue) \(device.adjustment.days)" }

    func cached(for date: CivilDate, device: Device) -> DailyContent? { entries[Self.key(date, device)] }

    mutating func content(for date: CivilDate, device: Device) throws -> DailyContent {
        let key = Self.key(date, device)
        if let content = entries[key] { return content }
        let report = try service.today(
            TodayRequest(date: date, timeZone: device.timeZone, calendar: device.calendar, adjustment: device.adjustment))
        let content = DailyContent(
            localDate: date, hijri: report.hijriDate, verseKey: report.verse.key, surahName: report.verse.surahName,
            surahNameArabic: report.content.surah.arabic, arabic: report.verse.arabic, translation: report.verse.translation.text,
            themeID: report.theme.id, themeName: report.theme.name,
            occasion: report.selectedOccasion.map { .init(id: $0.id, name: $0.name, nameArabic: $0.nameArabic ?? $0.name) })
        entries[key] = content
        return content
    }
}

