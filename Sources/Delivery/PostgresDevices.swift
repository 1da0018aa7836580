import Foundation
import HijriCalendar
import Notifications
import PostgresNIO
import Storage

/// A user's devices on PostgreSQL: the queries of `DeviceStore.swift` in PostgreSQL's words, inside the caller's
/// transaction; what a device becomes (`newDevice`, `changed`), when it fires (`nextFire`) and how a row is read
/// (`deviceState`) are the same functions SQLite's use. The caller holds the user's lock (`lockUser`), so a user's
/// registrations are counted one at a time; a token is locked by name while it changes hands.
///
/// The display themes a device may have are passed in: on PostgreSQL the content is each process's copy.
extension PostgresTransaction {
    /// A device's state with its last fire: the newest outbox row whose time has come, looked up day by day over
    /// `lastFiredDays` as SQLite's query does (the outbox's key is (local date, device)).
    /// The device `id`, or the devices of `userID` oldest first. (Each statement is planned with its values, so
    /// the condition not given costs nothing.)
    func deviceStates(id: String? = nil, userID: String? = nil, now: Date) async throws -> [DeviceState] {
        try await rows(Self.deviceStates(id: id, userID: userID, after: nil, limit: nil, now: now)).map {
            try AppDatabase.deviceState(PostgresColumns($0), now: now)
        }
    }

    /// Device states in the order `devices list` prints them (creation, then id): the device `id`, the devices of
    /// `userID`, or all of them; `after`: only those after the device with this id; at most `limit`.
    static func deviceStates(id: String?, userID: String?, after: String?, limit: Int?, now: Date) -> PostgresQuery {
        let days = outboxDates(around: now, back: AppDatabase.lastFiredDays, ahead: 2)
        return """
            SELECT \(unescaped: AppDatabase.deviceColumns), (SELECT o.local_date::text FROM outbox o
                WHERE o.local_date = ANY(\(days)::date[]) AND o.device_seq = d.seq AND o.fire_at <= \(now.timeIntervalSince1970)
                ORDER BY o.local_date DESC LIMIT 1), d.disabled_reason, d.disabled_at FROM device d
            WHERE (\(id)::text IS NULL OR d.id = \(id)) AND (\(userID)::text IS NULL OR d.user_id = \(userID))
                AND (\(after)::text IS NULL OR (d.created_at, d.id) > (SELECT created_at, id FROM device WHERE id = \(after)))
            ORDER BY d.created_at, d.id LIMIT \(limit.map(Int64.init))
            """
    }

    /// The local dates from `back` days before the UTC date of `now` to `ahead` after it, as ISO text.
    static func outboxDates(around now: Date, back: Int, ahead: Int) -> [String] {
        let today = CivilDate(instant: now, timeZone: TimeZone(identifier: "UTC")!).dayNumber
        return (-back...ahead).map { CivilDate(dayNumber: today + $0).description }
    }

    public func devices(userID: String, now: Date) async throws -> [DeviceState] {
        try await deviceStates(userID: userID, now: now)
    }

    public func deviceState(id: String, now: Date) async throws -> DeviceState? {
        try await deviceStates(id: id, now: now).first
    }

    /// As `AppDatabase.registerDevice`, with the user's settings as `defaults`.
    public func registerDevice(
        _ settings: DeviceSettings, userID: String, now: Date, maximum: Int, defaults: DeviceSettings, themes: Set<String>
    ) async throws -> (device: Device, created: Bool) {
        guard let token = settings.token else { throw DeviceError.missing("token") }
        let (endpoint, _, _) = AppDatabase.columns(token)
        try await lockToken(token)
        if let row = try await rows("SELECT id, user_id FROM device WHERE platform = \(token.platform.rawValue) AND token = \(endpoint)").first {
            let (id, owner) = try row.decode((String, String?).self)
            if owner == userID { return (try await updateDevice(id: id, settings, now: now, themes: themes), false) }
            // Taken over only as it was found: a device whose owner moved it to another token meanwhile (holding that
            // token's lock, not this one's) stays theirs.
            try await rows("DELETE FROM device WHERE id = \(id) AND platform = \(token.platform.rawValue) AND token = \(endpoint)")
        }
        if try await value("SELECT count(*) FROM device WHERE user_id = \(userID)", as: Int.self) ?? 0 >= maximum {
            throw DeviceError.tooMany(maximum)
        }
        return (try await insertDevice(settings.filling(from: defaults), userID: userID, now: now, themes: themes), true)
    }

    /// As `AppDatabase.insertDevice`: a new device (of `userID`, or of none: the command line's), queued; its token
    /// must be new for its platform, which the device's unique key checks (a token another transaction adds at the
    /// same time included): a duplicate ends the transaction. A caller that would rather decide what to do with a
    /// token already there (a registration, which takes it over) holds the token's lock and looks first.
    public func insertDevice(_ settings: DeviceSettings, userID: String?, now: Date, themes: Set<String>) async throws -> Device {
        let device = try AppDatabase.newDevice(settings, id: UUID().uuidString.lowercased(), now: now)
        try AppDatabase.validate(device, zone: true, themeKnown: themes.contains(device.displayTheme))
        let (endpoint, p256dh, auth) = AppDatabase.columns(device.token)
        let at = now.timeIntervalSince1970
        let inserted: Int64?
        do {
            inserted = try await value(
                """
                INSERT INTO device (id, platform, token, p256dh, auth, timezone, reminder_time, locale, calendar, adjustment,
                    display_theme, enabled, created_at, updated_at, schedule_version, user_id)
                VALUES (\(device.id), \(device.platform.rawValue), \(endpoint), \(p256dh), \(auth), \(device.timeZone),
                    \(device.reminderTime.description), \(device.locale.rawValue), \(device.calendar.rawValue), \(device.adjustment.days),
                    \(device.displayTheme), \(device.enabled ? 1 : 0), \(at), \(at), 1, \(userID))
                RETURNING seq
                """, as: Int64.self)
        } catch  where PostgresStore.isUniqueViolation(error) {
            throw DeviceError.duplicateToken(endpoint)
        }
        guard let seq = inserted else { throw DeviceError.notFound(device.id) }
        try await enqueue(device, seq: seq, version: 1, lastFired: nil, now: now)
        return device
    }

    /// As `AppDatabase.addDevices`: many devices of no user, in the caller's transaction; a refusal names its line.
    /// No token is locked by name: a million would pass the server's lock table (`max_locks_per_transaction`), and the
    /// device's unique key refuses a token added meanwhile.
    public func addDevices(
        _ all: [(line: Int, settings: DeviceSettings)], now: Date, themes: Set<String>, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> [Device] {
        var added: [Device] = []
        for (index, item) in all.enumerated() {
            do {
                added.append(try await insertDevice(item.settings, userID: nil, now: now, themes: themes))
            } catch let error as DeviceError { throw DeviceImportError(line: item.line, reason: error.description) }
            progress?(index + 1, all.count)
        }
        return added
    }

    /// A device's token locked by name until the transaction ends: two changes of one token, by any processes, one
    /// after the other.
    func lockToken(_ token: PushToken) async throws {
        try await lock("device token \(token.platform.rawValue) \(AppDatabase.columns(token).0)")
    }

    /// As `AppDatabase.updateDevice(_:id:userID:now:settings:)`.
    public func updateDevice(
        id: String, userID: String, now: Date, themes: Set<String>, settings: (Platform) throws -> DeviceSettings
    ) async throws -> Device {
        guard let name = try await value("SELECT platform FROM device WHERE id = \(id) AND user_id = \(userID)", as: String.self),
            let platform = Platform(rawValue: name)
        else { throw DeviceError.notFound(id) }
        let changes = try settings(platform)
        if let token = changes.token {
            let (endpoint, _, _) = AppDatabase.columns(token)
            try await lockToken(token)
            try await rows("DELETE FROM device WHERE platform = \(token.platform.rawValue) AND token = \(endpoint) AND id != \(id)")
        }
        return try await updateDevice(id: id, changes, now: now, themes: themes)
    }

    /// As `AppDatabase.updateDevice(_:id:_:now:)` (and the command line's `updateDevice(id:_:now:)`: any device, a
    /// new token refused if another device has it): rows written ahead withdrawn, the change applied, the device
    /// queued again under its next schedule version.
    ///
    /// The device's row is locked before anything is withdrawn. An emission batch reads its devices `FOR SHARE`, so
    /// the lock waits for a batch that has this device to commit its rows, and the withdrawal then sees them; a batch
    /// that starts after passes the device over. Withdrawn first and locked after, a row written with the old
    /// settings could be committed between the two and fire that day.
    public func updateDevice(id: String, _ settings: DeviceSettings, now: Date, themes: Set<String>) async throws -> Device {
        let at = now.timeIntervalSince1970
        guard let locked = try await value("SELECT seq FROM device WHERE id = \(id) FOR UPDATE", as: Int64.self) else {
            throw DeviceError.notFound(id)
        }
        try await rows(
            """
            DELETE FROM outbox WHERE local_date = ANY(\(Self.outboxDates(around: now, back: 1, ahead: 2))::date[])
            AND device_seq = \(locked) AND status = 'pending' AND fire_at > \(at + AppDatabase.withdrawalMargin)
                AND (lease_until IS NULL OR lease_until <= \(at))
            """)
        guard let state = try await deviceState(id: id, now: now) else { throw DeviceError.notFound(id) }
        let device = try AppDatabase.changed(state, settings, now: now)
        let (endpoint, p256dh, auth) = AppDatabase.columns(device.token)
        if settings.token != nil,
            try await value(
                "SELECT 1 FROM device WHERE platform = \(device.platform.rawValue) AND token = \(endpoint) AND id != \(id)", as: Int32.self)
                != nil
        {
            throw DeviceError.duplicateToken(endpoint)
        }
        try AppDatabase.validate(device, zone: settings.timeZone != nil, themeKnown: themes.contains(device.displayTheme))
        let enabled = device.enabled ? 1 : 0
        let updated: [PostgresRow]
        do {
            updated = try await rows(
                """
                UPDATE device SET token = \(endpoint), p256dh = \(p256dh), auth = \(auth), timezone = \(device.timeZone),
                    reminder_time = \(device.reminderTime.description), locale = \(device.locale.rawValue), calendar = \(device.calendar.rawValue),
                    adjustment = \(device.adjustment.days), display_theme = \(device.displayTheme), enabled = \(enabled), updated_at = \(at),
                    schedule_version = schedule_version + 1,
                    disabled_reason = CASE WHEN \(enabled) = 1 THEN NULL ELSE disabled_reason END,
                    disabled_at = CASE WHEN \(enabled) = 1 THEN NULL ELSE disabled_at END
                WHERE id = \(id) RETURNING seq, schedule_version
                """)
        } catch  where PostgresStore.isUniqueViolation(error) {
            // A token an import (which locks none by name) added meanwhile.
            throw DeviceError.duplicateToken(endpoint)
        }
        guard let row = updated.first else { throw DeviceError.notFound(id) }
        let (seq, version) = try row.decode((Int64, Int).self)
        // A zone set anew is said again if it, too, is unknown one day.
        if settings.timeZone != nil { try await rows("DELETE FROM schedule_problem WHERE device_seq = \(seq) AND kind = 'unknown_zone'") }
        try await enqueue(device, seq: seq, version: version, lastFired: state.lastLocalDate, now: now)
        return device
    }

    /// As `AppDatabase.enqueue`.
    func enqueue(_ device: Device, seq: Int64, version: Int, lastFired: CivilDate?, now: Date) async throws {
        guard device.enabled else { return }
        let next = AppDatabase.nextFire(device, in: TimeZone.iana(device.timeZone), lastFired: lastFired, now: now) ?? now
        try await rows(
            """
            INSERT INTO schedule (next_fire_at, device_seq, version, last_local_day)
            VALUES (\(next.timeIntervalSince1970), \(seq), \(version), \(lastFired?.dayNumber))
            ON CONFLICT (next_fire_at, device_seq) DO UPDATE SET version = excluded.version, last_local_day = excluded.last_local_day
            """)
    }

    /// As `AppDatabase.removeDevice`: the device `id`, if it is `userID`'s (nil: whoever's).
    public func removeDevice(id: String, userID: String?) async throws -> Bool {
        try await changes("DELETE FROM device WHERE id = \(id) AND (\(userID)::text IS NULL OR user_id = \(userID)) RETURNING 1") > 0
    }

    /// As `AppDatabase.applyToUserDevices`.
    public func applyToUserDevices(userID: String, _ settings: DeviceSettings, now: Date, themes: Set<String>) async throws {
        // Locked as they are listed: a token taken over by another user waits for this change rather than removing a
        // device from under it.
        for id in try await rows("SELECT id FROM device WHERE user_id = \(userID) ORDER BY seq FOR UPDATE").map({ try $0.decode(String.self) }) {
            _ = try await updateDevice(id: id, settings, now: now, themes: themes)
        }
    }

    /// As `AppDatabase.moveDevices`; the caller holds both users' locks, so no device of theirs is added meanwhile.
    public func moveDevices(from guestID: String, to accountID: String, maximum: Int, now: Date) async throws {
        let guest = try await value("SELECT count(*) FROM device WHERE user_id = \(guestID)", as: Int.self) ?? 0
        let own = try await value("SELECT count(*) FROM device WHERE user_id = \(accountID)", as: Int.self) ?? 0
        if guest > 0, own + guest > maximum { throw DeviceError.tooManyToMerge(own: own, guest: guest, maximum: maximum) }
        try await rows("UPDATE device SET user_id = \(accountID), updated_at = \(now.timeIntervalSince1970) WHERE user_id = \(guestID)")
    }
}

extension PostgresStore {
    /// `PostgresTransaction.forEachDeviceState` on a pooled connection, streamed: a listing of a million devices
    /// starts at once and holds one at a time.
    public func forEachDeviceState(after: String? = nil, limit: Int? = nil, now: Date, _ body: (DeviceState) throws -> Void) async throws {
        if let after, try await rows("SELECT 1 FROM device WHERE id = \(after)").isEmpty {
            throw DeviceError.notFound(after)
        }
        let query = PostgresTransaction.deviceStates(id: nil, userID: nil, after: after, limit: limit, now: now)
        try await withoutTransaction { session in
            for try await row in try await session.query(query) {
                try body(try AppDatabase.deviceState(PostgresColumns(row), now: now))
            }
        }
    }
}
