import Accounts
import ContentStore
import Delivery
import Notifications
import Foundation
import HTTPTypes
import HijriCalendar
import Hummingbird
import VerseCalendar

/// `PATCH /v1/me/settings`: any of the fields, each checked; unknown keys are refused.
struct SettingsPatch: Decodable {
    let reminderTime: String?
    let timezone: String?
    let calendar: String?
    let adjustment: Int?
    let displayTheme: String?
    let notifications: Bool?
    let locale: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case reminderTime = "reminder_time", timezone, calendar, adjustment, displayTheme = "display_theme", notifications, locale
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = container.allKeys.map(\.stringValue).first(where: { CodingKeys(rawValue: $0) == nil }) {
            throw APIError.badRequest("unknown_field", "unknown field '\(unknown)'")
        }
        let known = try decoder.container(keyedBy: CodingKeys.self)
        reminderTime = try known.decodeIfPresent(String.self, forKey: .reminderTime)
        timezone = try known.decodeIfPresent(String.self, forKey: .timezone)
        calendar = try known.decodeIfPresent(String.self, forKey: .calendar)
        adjustment = try known.decodeIfPresent(Int.self, forKey: .adjustment)
        displayTheme = try known.decodeIfPresent(String.self, forKey: .displayTheme)
        notifications = try known.decodeIfPresent(Bool.self, forKey: .notifications)
        locale = try known.decodeIfPresent(String.self, forKey: .locale)
    }

    struct AnyKey: CodingKey {
        let stringValue: String
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    func apply(to settings: inout UserSettings, themes: Set<String>) throws {
        if let value = reminderTime {
            guard (try? ReminderTime(parsing: value)) != nil else {
                throw APIError.badRequest("bad_time", "invalid reminder_time '\(value)': expected HH:MM")
            }
            settings.reminderTime = value
        }
        if let value = timezone {
            guard TimeZone.iana(value) != nil else {
                throw APIError.badRequest("bad_zone", "unknown time zone '\(value)'")
            }
            settings.timezone = value
        }
        if let value = calendar {
            guard CalendarKind(rawValue: value) != nil else { throw APIError.badRequest("bad_calendar", "unknown calendar '\(value)'") }
            settings.calendar = value
        }
        if let value = adjustment {
            guard Adjustment.range.contains(value) else { throw APIError.badRequest("bad_adjustment", "invalid adjustment \(value): expected -2 to 2") }
            settings.adjustment = value
        }
        if let value = displayTheme {
            guard themes.contains(value) else { throw APIError.badRequest("bad_theme", "unknown display theme '\(value)'") }
            settings.displayTheme = value
        }
        if let value = notifications { settings.notifications = value }
        if let value = locale {
            guard ["en", "ar"].contains(value) else { throw APIError.badRequest("bad_locale", "unknown locale '\(value)': expected en or ar") }
            settings.locale = value
        }
    }
}

extension SettingsPatch {
    /// The fields a device also has (`notifications` turns them on or off); checked already by `apply`.
    func deviceSettings() throws -> DeviceSettings {
        DeviceSettings(
            timeZone: timezone, reminderTime: try reminderTime.map { try ReminderTime(parsing: $0) }, locale: locale.flatMap(DeviceLocale.init),
            calendar: calendar.flatMap(CalendarKind.init(rawValue:)), adjustment: try adjustment.map { try Adjustment($0) },
            displayTheme: displayTheme, enabled: notifications)
    }
}

func addUserDataRoutes(_ router: Router<APIContext>, _ environment: APIEnvironment) {
    let database = environment.accounts

    router.patch("/v1/me/settings") { request, context -> Response in
        let user = try context.requireIdentity()
        let patch = try await request.decode(as: SettingsPatch.self, context: context)
        let themes = Set(try database.displayThemes().map(\.id))
        let now = environment.clock()
        // The settings and the user's devices change together.
        let settings = try deviceInput {
            try database.writer.write { db in
                let settings = try AppDatabase.updateSettings(db, userID: user.id, now: now) { try patch.apply(to: &$0, themes: themes) }
                try AppDatabase.applyToUserDevices(db, userID: user.id, try patch.deviceSettings(), now: now)
                return settings
            }
        }
        return json(["settings": settings])
    }

    router.get("/v1/bookmarks") { _, context -> Response in
        let user = try context.requireIdentity()
        return json(["bookmarks": try database.bookmarks(userID: user.id)])
    }

    router.put("/v1/bookmarks/:key") { _, context -> Response in
        let user = try context.requireIdentity()
        let key = try verseKey(context, environment)
        let added = try database.addBookmark(userID: user.id, verseKey: key, now: environment.clock())
        return json(["verse_key": key], status: added ? .created : .ok)
    }

    router.delete("/v1/bookmarks/:key") { _, context -> Response in
        let user = try context.requireIdentity()
        let key = try verseKey(context, environment)
        guard try database.removeBookmark(userID: user.id, verseKey: key) else {
            throw APIError.notFound("bookmark_not_found", "no bookmark for \(key)")
        }
        return Response(status: .noContent)
    }
}

/// A verse key from the path, checked against the Quran; in its canonical form.
func verseKey(_ context: APIContext, _ environment: APIEnvironment) throws -> String {
    let text = context.parameters.get("key") ?? ""
    let range: VerseRange
    do { range = try VerseRange(parsing: text) } catch { throw APIError.badRequest("bad_verse", "\(error)") }
    try run { try environment.accounts.validate(range) }
    return range.key
}
