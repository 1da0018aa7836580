import Diagnostics
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage

/// The most bookmarks a user may have: every verse of the Quran once and as many passages beside them. Without a
/// bound, one user could store every passage key (a third of a million) and have each sign-in's merge copy them all.
public let maximumBookmarks = 10_000

/// A bookmark refused: the user has the most allowed.
public enum BookmarkError: UserFacingError, Equatable, Sendable {
    case tooMany(Int)
    case tooManyToMerge(own: Int, guest: Int, maximum: Int)

    public var description: String {
        switch self {
        case .tooMany(let maximum): "this user already has \(maximum) bookmarks, the most allowed: remove one first"
        case .tooManyToMerge(let own, let guest, let maximum):
            "the account has \(own) bookmarks and the guest \(guest) more: together past the \(maximum) allowed; remove some first"
        }
    }
}

/// A user's settings: what the onboarding fills and `PATCH /v1/me/settings` changes.
public struct UserSettings: Hashable, Sendable, Codable {
    public var reminderTime = ReminderTime.default
    /// An IANA name (checked when it is set; a device takes it only while the system still knows it).
    public var timezone = "UTC"
    public var calendar = CalendarKind.installationDefault
    public var adjustment = Adjustment.zero
    public var displayTheme = "parchment"
    /// Off until the user grants permission.
    public var notifications = false
    public var locale = DeviceLocale.en

    public init() {}

    /// The settings as a row keeps them. A value no longer valid (stored before a rule changed) is the default's: the
    /// columns are text, and a row read must not fail a request.
    public init(
        storedTime: String, timezone: String, calendar: String, adjustment: Int, displayTheme: String, notifications: Bool, locale: String
    ) {
        if let time = try? ReminderTime(parsing: storedTime) { reminderTime = time }
        self.timezone = timezone
        if let kind = CalendarKind(rawValue: calendar) { self.calendar = kind }
        if let days = try? Adjustment(adjustment) { self.adjustment = days }
        self.displayTheme = displayTheme
        self.notifications = notifications
        if let value = DeviceLocale(rawValue: locale) { self.locale = value }
    }

    /// The columns as stored: the time, calendar, adjustment and locale as the text and number the API shows.
    public var storedColumns: (time: String, calendar: String, adjustment: Int, locale: String) {
        (reminderTime.description, calendar.rawValue, adjustment.days, locale.rawValue)
    }

    enum CodingKeys: String, CodingKey {
        case reminderTime = "reminder_time", timezone, calendar, adjustment, displayTheme = "display_theme", notifications, locale
    }
}

public struct Bookmark: Hashable, Sendable, Codable {
    public let verseKey: String
    public let createdAt: String
    enum CodingKeys: String, CodingKey { case verseKey = "verse_key", createdAt = "created_at" }

    init(verseKey: String, createdAt seconds: Double) {
        self.verseKey = verseKey
        createdAt = Date(timeIntervalSince1970: seconds).iso8601UTC
    }
}

extension AppDatabase {
    // MARK: - Settings

    public func settings(userID: String) throws -> UserSettings {
        try read { db in try Self.settings(db, userID: userID) }
    }

    public static func settings(_ db: Database, userID: String) throws -> UserSettings {
        try storedSettings(db, userID: userID) ?? UserSettings()
    }

    /// The user's settings if they were ever stored (by the onboarding or `PATCH /v1/me/settings`), else nil.
    public static func storedSettings(_ db: Database, userID: String) throws -> UserSettings? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM settings WHERE user_id = ?", arguments: [userID]) else { return nil }
        return UserSettings(
            storedTime: row["reminder_time"], timezone: row["timezone"], calendar: row["calendar"], adjustment: row["adjustment"],
            displayTheme: row["display_theme"], notifications: row["notifications"], locale: row["locale"])
    }

    /// Reads, changes and stores a user's settings in one transaction.
    public func updateSettings(userID: String, now: Date, _ change: (inout UserSettings) throws -> Void) throws -> UserSettings {
        try write { db in try Self.updateSettings(db, userID: userID, now: now, change) }
    }

    public static func updateSettings(_ db: Database, userID: String, now: Date, _ change: (inout UserSettings) throws -> Void) throws -> UserSettings
    {
        var settings = try settings(db, userID: userID)
        try change(&settings)
        let stored = settings.storedColumns
        try db.execute(
            sql: """
                INSERT INTO settings (user_id, reminder_time, timezone, calendar, adjustment, display_theme, notifications, locale, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_id) DO UPDATE SET reminder_time = excluded.reminder_time, timezone = excluded.timezone,
                    calendar = excluded.calendar, adjustment = excluded.adjustment, display_theme = excluded.display_theme,
                    notifications = excluded.notifications, locale = excluded.locale, updated_at = excluded.updated_at
                """,
            arguments: [
                userID, stored.time, settings.timezone, stored.calendar, stored.adjustment, settings.displayTheme, settings.notifications,
                stored.locale, now.timeIntervalSince1970,
            ])
        return settings
    }

    // MARK: - Bookmarks

    /// The user's bookmark count, and how many of the guest's bookmarks the account does not have yet.
    static let bookmarkCountsSQL = """
        SELECT (SELECT count(*) FROM bookmark WHERE user_id = ?),
            (SELECT count(*) FROM bookmark g WHERE g.user_id = ?
                AND NOT EXISTS (SELECT 1 FROM bookmark a WHERE a.user_id = ? AND a.verse_key = g.verse_key))
        """

    public func bookmarks(userID: String) throws -> [Bookmark] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT verse_key, created_at FROM bookmark WHERE user_id = ? ORDER BY created_at, verse_key", arguments: [userID]
            )
            .map { Bookmark(verseKey: $0["verse_key"], createdAt: $0["created_at"] as Double) }
        }
    }

    /// True if the bookmark is new; a new one past `maximumBookmarks` is refused (`BookmarkError.tooMany`).
    public func addBookmark(userID: String, verseKey: String, now: Date) throws -> Bool {
        try write { db in
            try db.execute(
                sql: "INSERT INTO bookmark (user_id, verse_key, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [userID, verseKey, now.timeIntervalSince1970])
            guard db.changesCount > 0 else { return false }
            // Counted after the insert, in its transaction: a refusal takes the insert back with it.
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM bookmark WHERE user_id = ?", arguments: [userID]) ?? 0
            if count > maximumBookmarks { throw BookmarkError.tooMany(maximumBookmarks) }
            return true
        }
    }

    /// True if there was one.
    public func removeBookmark(userID: String, verseKey: String) throws -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM bookmark WHERE user_id = ? AND verse_key = ?", arguments: [userID, verseKey])
            return db.changesCount > 0
        }
    }
}

extension AppDatabase {
    /// Whether `userID` is a guest (false for an account, or no such user).
    public static func isGuest(_ db: Database, userID: String) throws -> Bool {
        try String.fetchOne(db, sql: "SELECT mode FROM user WHERE id = ?", arguments: [userID]) == "guest"
    }

    /// A guest signing into an account: the guest's bookmarks join the account's, or, when together they would be more
    /// than `maximumBookmarks`, the sign-in is refused (`BookmarkError.tooManyToMerge`). Runs inside the caller's
    /// transaction.
    public static func mergeGuestBookmarks(_ db: Database, from guestID: String, into accountID: String) throws {
        if let row = try Row.fetchOne(db, sql: bookmarkCountsSQL, arguments: [accountID, guestID, accountID]) {
            let (own, guest): (Int, Int) = (row[0], row[1])
            if guest > 0, own + guest > maximumBookmarks { throw BookmarkError.tooManyToMerge(own: own, guest: guest, maximum: maximumBookmarks) }
        }
        try db.execute(
            sql: """
                INSERT INTO bookmark (user_id, verse_key, created_at)
                SELECT ?, verse_key, created_at FROM bookmark WHERE user_id = ? ON CONFLICT DO NOTHING
                """, arguments: [accountID, guestID])
    }

    /// A guest signing into an account: the account's settings win where it has them, else the guest's are kept.
    public static func mergeGuestSettings(_ db: Database, from guestID: String, into accountID: String, now: Date) throws {
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM settings WHERE user_id = ?", arguments: [accountID]) != true {
            try db.execute(
                sql: """
                    INSERT INTO settings (user_id, reminder_time, timezone, calendar, adjustment, display_theme, notifications, locale, updated_at)
                    SELECT ?, reminder_time, timezone, calendar, adjustment, display_theme, notifications, locale, ? FROM settings WHERE user_id = ?
                    """, arguments: [accountID, now.timeIntervalSince1970, guestID])
        }
    }

    /// Removes a user; everything of theirs goes with them (sessions, settings, bookmarks, devices: by cascade).
    public static func removeUser(_ db: Database, id: String) throws {
        try db.execute(sql: "DELETE FROM user WHERE id = ?", arguments: [id])
    }
}
