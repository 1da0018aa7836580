import Diagnostics
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage

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

extension DeviceSettings {
    /// These settings, with each field left out taken from `defaults`.
    public func filling(from defaults: DeviceSettings) -> DeviceSettings {
        DeviceSettings(
            token: token ?? defaults.token, timeZone: timeZone ?? defaults.timeZone, reminderTime: reminderTime ?? defaults.reminderTime,
            locale: locale ?? defaults.locale, calendar: calendar ?? defaults.calendar, adjustment: adjustment ?? defaults.adjustment,
            displayTheme: displayTheme ?? defaults.displayTheme, enabled: enabled ?? defaults.enabled)
    }
}

/// A device with its place in the schedule.
public struct DeviceState: Sendable {
    public let device: Device
    /// The last local date fired or missed.
    public let lastLocalDate: CivilDate?
    /// When it next fires; nil when disabled.
    public let nextFireAt: Date?
    /// Why and when its push service made it disabled (its token unknown there); cleared when it registers again.
    public let disabledReason: String?
    public let disabledAt: Date?
    /// Whether this system's time zone data knows the stored zone (a device whose zone it dropped does not fire).
    public let zoneKnown: Bool

    public init(
        device: Device, lastLocalDate: CivilDate?, nextFireAt: Date?, disabledReason: String? = nil, disabledAt: Date? = nil,
        zoneKnown: Bool = true
    ) {
        self.device = device
        self.lastLocalDate = lastLocalDate
        self.nextFireAt = nextFireAt
        self.disabledReason = disabledReason
        self.disabledAt = disabledAt
        self.zoneKnown = zoneKnown
    }
}

extension AppDatabase {
    /// Adds a device; its token must be new for its platform.
    public func addDevice(_ settings: DeviceSettings, id: String = UUID().uuidString.lowercased(), now: Date) throws -> Device {
        try write { db in try Self.insertDevice(db, settings, id: id, now: now) }
    }

    /// A user's device. A token this user registered before updates that device with the settings given (the app
    /// registers at every launch): `created` false. Any other token is a fresh registration for this user, with the
    /// fields the request leaves out taken from `defaults` (the user's settings): `created` true. That includes a
    /// token another user (or the command line) registered: a push token is the app install's own secret, so its
    /// previous device goes, with its settings, keys and undelivered rows, and nothing of it is shown or kept — the
    /// caller cannot tell it from a new token.
    /// A new device beyond `maximum` of the user's is refused (`DeviceError.tooMany`).
    public func registerDevice(
        _ settings: DeviceSettings, userID: String, now: Date, maximum: Int = .max,
        defaults: @escaping (Database) throws -> DeviceSettings = { _ in DeviceSettings() }
    ) throws -> (device: Device, created: Bool) {
        try write { db in try Self.registerDevice(db, settings, userID: userID, now: now, maximum: maximum, defaults: defaults) }
    }

    /// `registerDevice`, inside the caller's transaction.
    public static func registerDevice(
        _ db: Database, _ settings: DeviceSettings, userID: String, now: Date, maximum: Int = .max,
        defaults: (Database) throws -> DeviceSettings = { _ in DeviceSettings() }
    ) throws -> (device: Device, created: Bool) {
        guard let token = settings.token else { throw DeviceError.missing("token") }
        let (endpoint, _, _) = Self.columns(token)
        if let row = try Row.fetchOne(
            db, sql: "SELECT id, user_id FROM device WHERE platform = ? AND token = ?", arguments: [token.platform.rawValue, endpoint])
        {
            let id: String = row["id"]
            if row["user_id"] as String? == userID { return (try Self.updateDevice(db, id: id, settings, now: now), false) }
            try db.execute(sql: "DELETE FROM device WHERE id = ? AND platform = ? AND token = ?", arguments: [id, token.platform.rawValue, endpoint])
        }
        if try Int.fetchOne(db, sql: "SELECT count(*) FROM device WHERE user_id = ?", arguments: [userID]) ?? 0 >= maximum {
            throw DeviceError.tooMany(maximum)
        }
        let merged = settings.filling(from: try defaults(db))
        return (try Self.insertDevice(db, merged, id: UUID().uuidString.lowercased(), userID: userID, now: now), true)
    }

    /// A user's devices, oldest first.
    public func devices(userID: String, now: Date) throws -> [DeviceState] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.stateColumns(now)) WHERE d.user_id = ? ORDER BY d.created_at, d.id",
                arguments: [now.timeIntervalSince1970, userID]
            ).map { try Self.deviceState($0, now: now) }
        }
    }

    /// Adds many devices in one transaction: all or none.
    public func addDevices(_ all: [(line: Int, settings: DeviceSettings)], now: Date, progress: ((Int, Int) -> Void)? = nil) throws -> [Device] {
        try write { db in
            var added: [Device] = []
            for (index, item) in all.enumerated() {
                do { added.append(try Self.insertDevice(db, item.settings, id: UUID().uuidString.lowercased(), now: now)) } catch let error
                    as DeviceError
                {
                    throw DeviceImportError(line: item.line, reason: error.description)
                }
                progress?(index + 1, all.count)
            }
            return added
        }
    }

    static func insertDevice(_ db: Database, _ settings: DeviceSettings, id: String, userID: String? = nil, now: Date) throws -> Device {
        let device = try newDevice(settings, id: id, now: now)
        try validate(db, device)
        let (endpoint, p256dh, auth) = columns(device.token)
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM device WHERE platform = ? AND token = ?", arguments: [device.platform.rawValue, endpoint])
            == true
        {
            throw DeviceError.duplicateToken(endpoint)
        }
        try db.execute(
            sql: """
                INSERT INTO device (id, platform, token, p256dh, auth, timezone, reminder_time, locale, calendar, adjustment,
                    display_theme, enabled, created_at, updated_at, schedule_version, user_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
                """,
            arguments: [
                device.id, device.platform.rawValue, endpoint, p256dh, auth, device.timeZone, device.reminderTime.description,
                device.locale.rawValue, device.calendar.rawValue, device.adjustment.days, device.displayTheme, device.enabled,
                now.timeIntervalSince1970, now.timeIntervalSince1970, userID,
            ])
        try enqueue(db, device, seq: db.lastInsertedRowID, version: 1, lastFired: nil, now: now)
        return device
    }

    /// Changes a device. A new zone or time moves its next fire, never to a local date already fired.
    public func updateDevice(id: String, _ settings: DeviceSettings, now: Date) throws -> Device {
        try write { db in try Self.updateDevice(db, id: id, settings, now: now) }
    }

    /// Changes a user's device, with settings worked out from its platform; another user's device is not found.
    public func updateDevice(
        id: String, userID: String, now: Date, settings: (Platform) throws -> DeviceSettings
    ) throws -> Device {
        try write { db in try Self.updateDevice(db, id: id, userID: userID, now: now, settings: settings) }
    }

    /// `updateDevice(id:userID:now:settings:)`, inside the caller's transaction.
    public static func updateDevice(
        _ db: Database, id: String, userID: String, now: Date, settings: (Platform) throws -> DeviceSettings
    ) throws -> Device {
        guard let name = try String.fetchOne(db, sql: "SELECT platform FROM device WHERE id = ? AND user_id = ?", arguments: [id, userID]),
            let platform = Platform(rawValue: name)
        else { throw DeviceError.notFound(id) }
        let changes = try settings(platform)
        // A token another device holds is given to this one, by the rule of `registerDevice`: the other device
        // goes, and the answer is the same as for a new token (it tells nobody the token was known).
        if let token = changes.token {
            let (endpoint, _, _) = Self.columns(token)
            try db.execute(
                sql: "DELETE FROM device WHERE platform = ? AND token = ? AND id != ?", arguments: [token.platform.rawValue, endpoint, id])
        }
        return try Self.updateDevice(db, id: id, changes, now: now)
    }

    /// A new device from its settings, the fields left out at their defaults; the token and the zone are required.
    static func newDevice(_ settings: DeviceSettings, id: String, now: Date) throws -> Device {
        guard let token = settings.token else { throw DeviceError.missing("token") }
        guard let timeZone = settings.timeZone else { throw DeviceError.missing("timezone") }
        return Device(
            id: id, token: token, timeZone: timeZone, reminderTime: settings.reminderTime ?? .default, locale: settings.locale ?? .en,
            calendar: settings.calendar ?? .installationDefault, adjustment: settings.adjustment ?? .zero,
            displayTheme: settings.displayTheme ?? "parchment", enabled: settings.enabled ?? true, createdAt: now, updatedAt: now)
    }

    /// A stored device with a change applied: the fields the change sets, a new token of the same platform only. A
    /// device its service disabled is enabled again when the app registers its token again (the service may have
    /// refused it for a while: an app restored from a backup, a reinstall), unless the change says otherwise.
    static func changed(_ state: DeviceState, _ settings: DeviceSettings, now: Date) throws -> Device {
        var device = state.device
        if settings.token != nil, state.disabledReason != nil, !device.enabled { device.enabled = true }
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
        return device
    }

    static func updateDevice(_ db: Database, id: String, _ settings: DeviceSettings, now: Date) throws -> Device {
        // Rows written ahead of their time carry the old settings: withdrawn, so that their dates fire again with the
        // new ones (and count as not yet fired below). A row whose time has come, or comes within
        // `withdrawalMargin`, stays, to be delivered. (Not yet due, written at most an hour ahead: on the UTC dates of
        // now and the day after.)
        try db.execute(
            sql: """
                DELETE FROM outbox WHERE \(AppDatabase.outboxDay) IN (\(outboxDays(around: now, back: 1, ahead: 2)))
                AND device_seq = (SELECT seq FROM device WHERE id = ?) AND \(writtenAhead)
                """,
            arguments: [id, now.timeIntervalSince1970 + AppDatabase.withdrawalMargin])
        guard let state = try Self.deviceState(db, id: id, now: now) else { throw DeviceError.notFound(id) }
        let device = try Self.changed(state, settings, now: now)
        if let token = settings.token {
            let (endpoint, _, _) = Self.columns(token)
            if try Bool.fetchOne(
                db, sql: "SELECT 1 FROM device WHERE platform = ? AND token = ? AND id != ?", arguments: [token.platform.rawValue, endpoint, id])
                == true
            {
                throw DeviceError.duplicateToken(endpoint)
            }
        }
        try Self.validate(db, device, zone: settings.timeZone != nil)
        let (endpoint, p256dh, auth) = Self.columns(device.token)
        try db.execute(
            sql: """
                UPDATE device SET token = ?, p256dh = ?, auth = ?, timezone = ?, reminder_time = ?, locale = ?, calendar = ?,
                    adjustment = ?, display_theme = ?, enabled = ?, updated_at = ?, schedule_version = schedule_version + 1,
                    disabled_reason = CASE WHEN ? THEN NULL ELSE disabled_reason END,
                    disabled_at = CASE WHEN ? THEN NULL ELSE disabled_at END
                WHERE id = ?
                """,
            arguments: [
                endpoint, p256dh, auth, device.timeZone, device.reminderTime.description, device.locale.rawValue, device.calendar.rawValue,
                device.adjustment.days, device.displayTheme, device.enabled, now.timeIntervalSince1970, device.enabled, device.enabled, id,
            ])
        if let row = try Row.fetchOne(db, sql: "SELECT seq, schedule_version FROM device WHERE id = ?", arguments: [id]) {
            // A zone set anew is said again if it, too, is unknown one day.
            if settings.timeZone != nil {
                try db.execute(sql: "DELETE FROM schedule_problem WHERE device_seq = ? AND kind = 'unknown_zone'", arguments: [row[0] as Int64])
            }
            try Self.enqueue(db, device, seq: row[0], version: row[1], lastFired: state.lastLocalDate, now: now)
        }
        return device
    }

    /// Removes a device (only if it is `userID`'s, when given). Its queue entry is left for the next pass to drop; its
    /// rows not yet delivered go with it (a trigger, so that a user's removal, which takes their devices, does too).
    @discardableResult
    public func removeDevice(id: String, userID: String? = nil) throws -> Bool {
        try write { db in
            if let userID {
                try db.execute(sql: "DELETE FROM device WHERE id = ? AND user_id = ?", arguments: [id, userID])
            } else {
                try db.execute(sql: "DELETE FROM device WHERE id = ?", arguments: [id])
            }
            return db.changesCount > 0
        }
    }

    /// Disables a device its push service no longer knows (410 Unregistered, 404 UNREGISTERED, a subscription gone),
    /// keeping the reason and the time; only while it still has the token that was refused (a device that has
    /// registered a new one since stays as it is). Its queue entry is left for the next pass to drop. Whether it was.
    static func disableDevice(_ db: Database, id: String, token: String, reason: String, now: Date) throws -> Bool {
        try db.execute(
            sql: """
                UPDATE device SET enabled = 0, disabled_reason = ?, disabled_at = ?, schedule_version = schedule_version + 1
                WHERE id = ? AND token = ? AND enabled
                """,
            arguments: [reason, now.timeIntervalSince1970, id, token])
        return db.changesCount > 0
    }

    public func deviceState(id: String, now: Date) throws -> DeviceState? {
        try read { db in try Self.deviceState(db, id: id, now: now) }
    }

    /// Counts and the soonest fires after `now`, without decoding every device.
    public func deviceSummary(upcoming: Int = 5, now: Date) throws -> (total: Int, enabled: Int, next: [(id: String, at: Date)]) {
        try read { db in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM device") ?? 0
            let enabled = try Int.fetchOne(db, sql: "SELECT count(*) FROM device WHERE enabled") ?? 0
            // The queue in order, skipping entries left behind by a change (CROSS JOIN keeps the queue outermost), and
            // the rows written ahead of their time, waiting in the outbox.
            let next = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, at FROM (
                        SELECT * FROM (
                            SELECT d.id AS id, s.next_fire_at AS at, s.device_seq AS seq FROM schedule s CROSS JOIN device d
                            ON d.seq = s.device_seq AND d.schedule_version = s.version AND d.enabled
                            ORDER BY s.next_fire_at, s.device_seq LIMIT ?)
                        UNION ALL
                        SELECT * FROM (
                            SELECT device_id, fire_at, device_seq FROM outbox WHERE \(Self.writtenAhead)
                            ORDER BY fire_at, device_seq LIMIT ?))
                    ORDER BY at, seq LIMIT ?
                    """,
                arguments: [upcoming, now.timeIntervalSince1970, upcoming, upcoming]
            ).map { (id: $0[0] as String, at: Date(timeIntervalSince1970: $0[1])) }
            return (total, enabled, next)
        }
    }

    /// Visits devices in the order `devices list` prints them (creation, then id), as they are read: a listing of a
    /// million starts at once and holds one at a time. `after`: only devices after the one with this id.
    public func forEachDeviceState(after: String? = nil, limit: Int? = nil, now: Date, _ body: (DeviceState) throws -> Void) throws {
        try read { db in
            var arguments: StatementArguments = [now.timeIntervalSince1970]
            var filter = ""
            if let after {
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM device WHERE id = ?", arguments: [after]) == true else {
                    throw DeviceError.notFound(after)
                }
                filter = "WHERE (d.created_at, d.id) > (SELECT created_at, id FROM device WHERE id = ?)"
                arguments += [after]
            }
            arguments += [limit ?? -1]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT \(Self.stateColumns(now)) \(filter) ORDER BY d.created_at, d.id LIMIT ?", arguments: arguments)
            while let row = try rows.next() { try body(try Self.deviceState(row, now: now)) }
        }
    }

    public static func deviceState(_ db: Database, id: String, now: Date) throws -> DeviceState? {
        try Row.fetchOne(db, sql: "SELECT \(stateColumns(now)) WHERE d.id = ?", arguments: [now.timeIntervalSince1970, id])
            .map { try deviceState($0, now: now) }
    }

    /// A device and its last fired date: the newest of its outbox rows (every fire, sent or missed, leaves one) whose
    /// time has come by the first argument, now (a row written ahead is the next fire, not the last). Looked up day by
    /// day, newest first, over `lastFiredDays` (the outbox's key is (day, device)); the scheduler needs only the last
    /// few.
    static func stateColumns(_ now: Date) -> String {
        """
        \(deviceColumns), (SELECT o.local_date FROM outbox o
            WHERE \(AppDatabase.outboxDay) IN (\(outboxDays(around: now, back: lastFiredDays, ahead: 2))) AND o.device_seq = d.seq AND o.fire_at <= ?
            ORDER BY \(AppDatabase.outboxDay) DESC LIMIT 1), d.disabled_reason, d.disabled_at FROM device d
        """
    }

    /// How far back a device's last fire is looked for: past the default outbox retention (30 days), whose older rows
    /// are gone anyway.
    static let lastFiredDays = 40

    /// The outbox days from `back` before the UTC date of `now` to `ahead` after it, as an SQL list of integers: the
    /// local dates of instants on those UTC dates are at most a day either side.
    static func outboxDays(around now: Date, back: Int, ahead: Int) -> String {
        let today = CivilDate(instant: now, timeZone: TimeZone(identifier: "UTC")!).dayNumber
        return (-back...ahead).map { String(AppDatabase.outboxDay(dayNumber: today + $0)) }.joined(separator: ",")
    }

    /// The columns `device(_:from:)` decodes, in the order of `DeviceColumn`.
    static let deviceColumns = DeviceColumn.allCases.map { "d." + $0.name }.joined(separator: ", ")

    /// Decodes `deviceColumns` from `offset` on, by position: a pass decodes a million rows a day, and lookups by
    /// name cost more than the rest of the decoding.
    static func device(_ row: some ColumnReader, from offset: Int32 = 0) throws -> Device {
        func at(_ column: DeviceColumn) -> Int32 { offset + column.rawValue }
        let platform = Platform(rawValue: row.text(at(.platform))) ?? .apns
        let tokenValue = row.text(at(.token))
        let token: PushToken =
            switch platform {
            case .apns: .apns(tokenValue)
            case .fcm: .fcm(tokenValue)
            case .webpush: .webpush(endpoint: tokenValue, p256dh: row.optionalText(at(.p256dh)) ?? "", auth: row.optionalText(at(.auth)) ?? "")
            }
        return Device(
            id: row.text(at(.id)), token: token, timeZone: row.text(at(.timezone)),
            reminderTime: try ReminderTime(parsing: row.text(at(.reminderTime))),
            locale: DeviceLocale(rawValue: row.text(at(.locale))) ?? .en, calendar: CalendarKind(rawValue: row.text(at(.calendar))) ?? .ummAlQura,
            adjustment: try Adjustment(row.integer(at(.adjustment))), displayTheme: row.text(at(.displayTheme)),
            enabled: row.integer(at(.enabled)) != 0,
            createdAt: Date(timeIntervalSince1970: row.real(at(.createdAt))), updatedAt: Date(timeIntervalSince1970: row.real(at(.updatedAt))))
    }

    static func deviceState(_ row: some ColumnReader, now: Date) throws -> DeviceState {
        let device = try device(row)
        // After the device's columns: its last fire, then why and when its service disabled it.
        let after = Int32(DeviceColumn.count)
        let last = try row.optionalText(after).map { try CivilDate(parsing: $0) }
        // When it would fire next; the queue holds the same instant (computed when it last fired or changed). None
        // for a zone this system no longer knows: the device is shown as it is stored. The zone is looked up once.
        let zone = TimeZone.iana(device.timeZone)
        let next = device.enabled ? Self.nextFire(device, in: zone, lastFired: last, now: now) : nil
        return DeviceState(
            device: device, lastLocalDate: last, nextFireAt: next, disabledReason: row.optionalText(after + 1),
            disabledAt: row.optionalReal(after + 2).map(Date.init(timeIntervalSince1970:)), zoneKnown: zone != nil)
    }

    /// Checks a device's settings; its zone only when `zone` (a new device, or a change that sets it): a stored zone
    /// that this system's time zone data has since dropped must not stop its owner from changing anything else.
    static func validate(_ db: Database, _ device: Device, zone: Bool = true) throws {
        try validate(
            device, zone: zone,
            themeKnown: try Bool.fetchOne(db, sql: "SELECT 1 FROM display_theme WHERE id = ?", arguments: [device.displayTheme]) == true)
    }

    static func validate(_ device: Device, zone: Bool, themeKnown: Bool) throws {
        if zone { _ = try Device.validateTimeZone(device.timeZone) }
        guard themeKnown else { throw DeviceError.invalidDisplayTheme(device.displayTheme) }
    }

    static func columns(_ token: PushToken) -> (String, String?, String?) {
        switch token {
        case .apns(let value), .fcm(let value): (value, nil, nil)
        case .webpush(let endpoint, let p256dh, let auth): (endpoint, p256dh, auth)
        }
    }

    /// When a device fires next; nil when its stored zone is one this system does not know.
    static func nextFire(_ device: Device, in zone: TimeZone?, lastFired: CivilDate?, now: Date) -> Date? {
        guard let zone else { return nil }
        return Scheduler.next(lastFired: lastFired, time: device.reminderTime, zone: zone, now: now, eligibleFrom: device.createdAt).fireAt
    }

    /// Queues a device's next fire under `version`; a disabled device is not queued. A device whose zone this system
    /// does not know is queued now, for the next pass to say so (once) and look at it again daily.
    static func enqueue(_ db: Database, _ device: Device, seq: Int64, version: Int, lastFired: CivilDate?, now: Date) throws {
        guard device.enabled else { return }
        let next = nextFire(device, in: TimeZone.iana(device.timeZone), lastFired: lastFired, now: now) ?? now
        try db.execute(
            sql: "INSERT OR REPLACE INTO schedule (next_fire_at, device_seq, version, last_local_day) VALUES (?, ?, ?, ?)",
            arguments: [next.timeIntervalSince1970, seq, version, lastFired?.dayNumber])
    }
}

/// A bad line in a devices import: the line number and what is wrong with it.
public struct DeviceImportError: UserFacingError, Equatable {
    public let line: Int
    public let reason: String
    public var description: String { "line \(line): \(reason)" }
}

extension AppDatabase {
    /// A user's changed settings, carried into each of their devices as a change (so each is rescheduled, never firing
    /// a local date twice). Runs inside the caller's transaction, with the change to the settings themselves.
    public static func applyToUserDevices(_ db: Database, userID: String, _ settings: DeviceSettings, now: Date) throws {
        for id in try String.fetchAll(db, sql: "SELECT id FROM device WHERE user_id = ? ORDER BY seq", arguments: [userID]) {
            _ = try updateDevice(db, id: id, settings, now: now)
        }
    }

    /// A guest signing into an account: its devices become the account's, unless the account would then have more
    /// than `maximum` (`DeviceError.tooManyToMerge`). Runs inside the caller's transaction.
    public static func moveDevices(_ db: Database, from guestID: String, to accountID: String, maximum: Int = .max, now: Date) throws {
        let guest = try Int.fetchOne(db, sql: "SELECT count(*) FROM device WHERE user_id = ?", arguments: [guestID]) ?? 0
        let own = try Int.fetchOne(db, sql: "SELECT count(*) FROM device WHERE user_id = ?", arguments: [accountID]) ?? 0
        if guest > 0, own + guest > maximum { throw DeviceError.tooManyToMerge(own: own, guest: guest, maximum: maximum) }
        try db.execute(
            sql: "UPDATE device SET user_id = ?, updated_at = ? WHERE user_id = ?", arguments: [accountID, now.timeIntervalSince1970, guestID])
    }
}

/// The device columns a query selects for `AppDatabase.device(_:from:)`, in order; a column's position in a result is
/// the offset of the first plus its raw value.
enum DeviceColumn: Int32, CaseIterable {
    case id, platform, token, p256dh, auth, timezone, reminderTime, locale, calendar, adjustment, displayTheme, enabled, createdAt, updatedAt

    /// How many there are: the position of the first column after them.
    static let count = allCases.count

    /// Its name in the device table.
    var name: String {
        switch self {
        case .reminderTime: "reminder_time"
        case .displayTheme: "display_theme"
        case .createdAt: "created_at"
        case .updatedAt: "updated_at"
        default: "\(self)"
        }
    }
}

/// Reading a result row's columns by position, through GRDB's `Row` or the C API's `DirectRow`.
protocol ColumnReader {
    func text(_ column: Int32) -> String
    func optionalText(_ column: Int32) -> String?
    func integer(_ column: Int32) -> Int
    func real(_ column: Int32) -> Double
    func optionalReal(_ column: Int32) -> Double?
}

extension Row: ColumnReader {
    func text(_ column: Int32) -> String { self[Int(column)] }
    func optionalText(_ column: Int32) -> String? { self[Int(column)] }
    func integer(_ column: Int32) -> Int { self[Int(column)] }
    func real(_ column: Int32) -> Double { self[Int(column)] }
    func optionalReal(_ column: Int32) -> Double? { self[Int(column)] }
}

extension DirectRow: ColumnReader {}
