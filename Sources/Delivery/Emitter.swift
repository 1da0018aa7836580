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

    public init(grace: TimeInterval = 7200, push: PushConfiguration, batchSize: Int = 1000) {
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

    /// `shouldStop` is asked between transactions; a pass that stops early leaves the rest to the next one.
    public func run(now: Date, shouldStop: () -> Bool = { false }) throws -> EmitSummary {
        var summary = EmitSummary()
        var cache = ContentCache(service: DailyVerseService(database: database))
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
            cursor = (last["next_fire_at"], last["id"])
            // The day's content is read before the write transaction, which must not read through the store again.
            for row in peeked {
                let state = try AppDatabase.deviceState(row)
                for fire in fires(state, now: now) where fire.action == .send {
                    _ = try cache.content(for: fire.localDate, device: state.device)
                }
            }
            let ids = peeked.map { $0["id"] as String }
            try database.writer.write { db in
                let insert = try db.cachedStatement(
                    sql: """
                        INSERT INTO outbox (idempotency_key, device_id, platform, local_date, fire_at, headers, payload, status, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                        """)
                let update = try db.cachedStatement(sql: "UPDATE device SET last_local_date = ?, next_fire_at = ? WHERE id = ?")
                let select = try db.cachedStatement(sql: "SELECT * FROM device WHERE id = ? AND enabled AND next_fire_at <= ?")
                for id in ids {
                    // Read again inside the transaction: what is written must follow from the state it replaces.
                    guard let row = try Row.fetchOne(select, arguments: [id, now.timeIntervalSince1970]) else { continue }
                    let state = try AppDatabase.deviceState(row)
                    let device = state.device
                    guard let zone = TimeZone(identifier: device.timeZone) else { continue }
                    let due = fires(state, now: now)
                    var messages: [CivilDate: PushMessage] = [:]
                    for fire in due where fire.action == .send {
                        // Settings changed since the content was read: leave the device to the next pass.
                        guard let content = cache.cached(for: fire.localDate, device: device) else { continue }
                        messages[fire.localDate] = PayloadBuilder.build(device: device, content: content, fireAt: fire.fireAt, configuration: configuration.push)
                    }
                    guard messages.count == due.filter({ $0.action == .send }).count else { continue }
                    var lastDate = state.lastLocalDate
                    for fire in due {
                        let message = messages[fire.localDate]
                        try insert.execute(arguments: [
                            OutboxRecord.idempotencyKey(deviceID: device.id, localDate: fire.localDate), device.id, device.platform.rawValue,
                            fire.localDate.description, fire.fireAt.timeIntervalSince1970,
                            message.map { OutboxRecord.encodeHeaders($0.headers) } ?? "{}", message?.payloadString ?? "{}",
                            message == nil ? "missed" : "pending", now.timeIntervalSince1970,
                        ])
                        if db.changesCount > 0 { if message == nil { summary.missed += 1 } else { summary.queued += 1 } }
                        lastDate = fire.localDate
                    }
                    let next = Scheduler.next(lastFired: lastDate, time: device.reminderTime, zone: zone, now: now, eligibleFrom: device.createdAt)
                    // A next fire not after now belongs to the next pass; never leave it behind this pass's cursor.
                    try update.execute(arguments: [lastDate?.description, max(next.fireAt.timeIntervalSince1970, now.timeIntervalSince1970 + 1), device.id])
                    summary.devices += 1
                }
            }
            if peeked.count < configuration.batchSize || shouldStop() { break }
        }
        return summary
    }

    func fires(_ state: DeviceState, now: Date) -> [Scheduler.Fire] {
        guard let zone = TimeZone(identifier: state.device.timeZone) else { return [] }
        return Scheduler.due(
            lastFired: state.lastLocalDate, time: state.device.reminderTime, zone: zone, now: now, grace: configuration.grace,
            eligibleFrom: state.device.createdAt)
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
