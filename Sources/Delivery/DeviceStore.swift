import ContentStore
import Foundation
import GRDB
import HijriCalendar
import Notifications

/// The settings a device is created or changed with; absent fields keep their value (or default).
public struct DeviceSettings: Sendable {
    public var token: PushToken?
    public var timeZone: String?
    public var reminderTime: ReminderTime?
    public var locale: DeviceLocale?
    public var calendar: CalendarKind?
    public var adjustment: Adjustment?
    public var displayTheme: String?
    public var enabled: Bool?

    public init(
        token: PushToken? = nil, timeZone: String? = nil, reminderTime: ReminderTime? = nil, locale: DeviceLocale? = nil,
        calendar: CalendarKind? = nil, adjustment: Adjustment? = nil, displayTheme: String? = nil, enabled: Bool? = nil
    ) {
        self.token = token
        self.timeZone = timeZone
        self.reminderTime = reminderTime
        self.locale = locale
        self.calendar = calendar
        self.adjustment = adjustment
        self.displayTheme = displayTheme
        self.enabled = enabled
    }
}

/// A device with its place in the schedule.
public struct DeviceState: Sendable {
    public let device: Device
    /// The last local date fired or missed.
    public let lastLocalDate: CivilDate?
    /// When it next fires; nil when disabled.
    public let nextFireAt: Date?
}

extension AppDatabase {
    /// Adds a device; its token must be new for its platform.
    public func addDevice(_ settings: DeviceSettings, id: String = UUID().uuidString.lowercased(), now: Date) throws -> Device {
        try writer.write { db in try Self.insertDevice(db, settings, id: id, now: now) }
    }

    /// Adds many devices in one transaction: all or none.
    public func addDevices(_ all: [(line: Int, settings: DeviceSettings)], now: Date, progress: ((Int, Int) -> Void)? = nil) throws -> [Device] {
        try writer.write { db in
            var added: [Device] = []
            for (index, item) in all.enumerated() {
                do { added.append(try Self.insertDevice(db, item.settings, id: UUID().uuidString.lowercased(), now: now)) } catch let error as DeviceError {
                    throw DeviceImportError(line: item.line, reason: error.description)
                }
                progress?(index + 1, all.count)
            }
            return added
        }
    }

    static func insertDevice(_ db: Database, _ settings: DeviceSettings, id: String, now: Date) throws -> Device {
        guard let token = settings.token else { throw DeviceError.missing("token") }
        guard let timeZone = settings.timeZone else { throw DeviceError.missing("timezone") }
        let device = Device(
            id: id, token: token, timeZone: timeZone, reminderTime: settings.reminderTime ?? .default, locale: settings.locale ?? .en,
            calendar: settings.calendar ?? .ummAlQura, adjustment: settings.adjustment ?? .zero,
            displayTheme: settings.displayTheme ?? "parchment", enabled: settings.enabled ?? true, createdAt: now, updatedAt: now)
        try validate(db, device)
        let (endpoint, p256dh, auth) = columns(token)
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM device WHERE platform = ? AND token = ?", arguments: [device.platform.rawValue, endpoint]) == true {
            throw DeviceError.duplicateToken(endpoint)
        }
        let next = try nextFire(device, lastLocalDate: nil, now: now)
        try db.execute(
            sql: """
                INSERT INTO device (id, platform, token, p256dh, auth, timezone, reminder_time, locale, calendar, adjustment,
                    display_theme, enabled, created_at, updated_at, last_local_date, next_fire_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
                """,
            arguments: [
                device.id, device.platform.rawValue, endpoint, p256dh, auth, device.timeZone, device.reminderTime.description,
                device.locale.rawValue, device.calendar.rawValue, device.adjustment.days, device.displayTheme, device.enabled,
                now.timeIntervalSince1970, now.timeIntervalSince1970, next?.timeIntervalSince1970,
            ])
        return device
    }

    /// Changes a device. A new zone or time moves its next fire, never to a local date already fired.
    public func updateDevice(id: String, _ settings: DeviceSettings, now: Date) throws -> Device {
        try writer.write { db in
            guard let state = try Self.deviceState(db, id: id) else { throw DeviceError.notFound(id) }
            var device = state.device
            if let token = settings.token {
                guard token.platform == device.platform else { throw DeviceError.invalidPlatform(token.platform.rawValue) }
                device.token = token
            }
            if let value = settings.timeZone { device.timeZone = value }
            if let value = settings.reminderTime { device.reminderTime = value }
            if let value = settings.locale { device.locale = value }
            if let value = settings.calendar { device.calendar = value }
            if let value = settings.adjustment { device.adjustment = value }
            if let value = settings.displayTheme { device.displayTheme = value }
            if let value = settings.enabled { device.enabled = value }
            device.updatedAt = now
            try Self.validate(db, device)
            let (endpoint, p256dh, auth) = Self.columns(device.token)
            let next = try Self.nextFire(device, lastLocalDate: state.lastLocalDate, now: now)
            try db.execute(
                sql: """
                    UPDATE device SET token = ?, p256dh = ?, auth = ?, timezone = ?, reminder_time = ?, locale = ?, calendar = ?,
                        adjustment = ?, display_theme = ?, enabled = ?, updated_at = ?, next_fire_at = ? WHERE id = ?
                    """,
                arguments: [
                    endpoint, p256dh, auth, device.timeZone, device.reminderTime.description, device.locale.rawValue, device.calendar.rawValue,
                    device.adjustment.days, device.displayTheme, device.enabled, now.timeIntervalSince1970, next?.timeIntervalSince1970, id,
                ])
            return device
        }
    }

    @discardableResult
    public func removeDevice(id: String) throws -> Bool {
        try writer.write { db in
            try db.execute(sql: "DELETE FROM device WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func deviceState(id: String) throws -> DeviceState? {
        try writer.read { db in try Self.deviceState(db, id: id) }
    }

    /// Counts and the soonest fires, without decoding every device.
    public func deviceSummary(upcoming: Int = 5) throws -> (total: Int, enabled: Int, next: [(id: String, at: Date)]) {
        try writer.read { db in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM device") ?? 0
            let enabled = try Int.fetchOne(db, sql: "SELECT count(*) FROM device WHERE enabled") ?? 0
            let next = try Row.fetchAll(
                db, sql: "SELECT id, next_fire_at FROM device WHERE enabled AND next_fire_at IS NOT NULL ORDER BY next_fire_at LIMIT ?",
                arguments: [upcoming]
            ).map { (id: $0[0] as String, at: Date(timeIntervalSince1970: $0[1])) }
            return (total, enabled, next)
        }
    }

    public func deviceStates(limit: Int? = nil) throws -> [DeviceState] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY created_at, id LIMIT ?", arguments: [limit ?? -1]).map(Self.deviceState)
        }
    }

    static func deviceState(_ db: Database, id: String) throws -> DeviceState? {
        try Row.fetchOne(db, sql: "SELECT * FROM device WHERE id = ?", arguments: [id]).map(deviceState)
    }

    /// Decodes a `SELECT * FROM device` row by column position (the table's order; later migrations only append):
    /// a pass decodes a million rows a day, and lookups by name cost more than the rest of the decoding.
    static func deviceState(_ row: Row) throws -> DeviceState {
        let platform = Platform(rawValue: row[1]) ?? .apns
        let tokenValue: String = row[2]
        let token: PushToken =
            switch platform {
            case .apns: .apns(tokenValue)
            case .fcm: .fcm(tokenValue)
            case .webpush: .webpush(endpoint: tokenValue, p256dh: row[3] ?? "", auth: row[4] ?? "")
            }
        let device = Device(
            id: row[0], token: token, timeZone: row[5], reminderTime: try ReminderTime(parsing: row[6]),
            locale: DeviceLocale(rawValue: row[7]) ?? .en, calendar: CalendarKind(rawValue: row[8]) ?? .ummAlQura,
            adjustment: try Adjustment(row[9]), displayTheme: row[10], enabled: row[11],
            createdAt: Date(timeIntervalSince1970: row[12]), updatedAt: Date(timeIntervalSince1970: row[13]))
        let last: String? = row[14]
        let next: Double? = row[15]
        return DeviceState(
            device: device, lastLocalDate: try last.map { try CivilDate(parsing: $0) }, nextFireAt: next.map(Date.init(timeIntervalSince1970:)))
    }

    static func validate(_ db: Database, _ device: Device) throws {
        _ = try Device.validateTimeZone(device.timeZone)
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM display_theme WHERE id = ?", arguments: [device.displayTheme]) != true {
            throw DeviceError.invalidDisplayTheme(device.displayTheme)
        }
    }

    static func columns(_ token: PushToken) -> (String, String?, String?) {
        switch token {
        case .apns(let value), .fcm(let value): (value, nil, nil)
        case .webpush(let endpoint, let p256dh, let auth): (endpoint, p256dh, auth)
        }
    }

    static func nextFire(_ device: Device, lastLocalDate: CivilDate?, now: Date) throws -> Date? {
        guard device.enabled else { return nil }
        let zone = try Device.validateTimeZone(device.timeZone)
        return Scheduler.next(lastFired: lastLocalDate, time: device.reminderTime, zone: zone, now: now, eligibleFrom: device.createdAt).fireAt
    }
}

/// A bad line in a devices import: the line number and what is wrong with it.
public struct DeviceImportError: Error, CustomStringConvertible, Equatable {
    public let line: Int
    public let reason: String
    public var description: String { "line \(line): \(reason)" }
}
