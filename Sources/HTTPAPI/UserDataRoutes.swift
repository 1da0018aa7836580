import Accounts
import Delivery
import Engagement
import Foundation
import HTTPTypes
import HijriCalendar
import Hummingbird
import Notifications
import Storage
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

    /// The patch checked once, by the rules (and with the error codes) of the device routes, since the fields a
    /// device also has go to the user's devices too; `notifications` turns them on or off.
    func checked(themes: Set<String>) throws -> DeviceSettings {
        if let displayTheme, !themes.contains(displayTheme) {
            throw APIError.badRequest("bad_theme", "unknown display theme '\(displayTheme)'")
        }
        var settings = DeviceSettings()
        try answering(.body) {
            try settings.setChecked(
                timeZone: timezone, time: reminderTime, locale: locale, calendar: calendar, adjust: adjustment, displayTheme: displayTheme,
                enabled: notifications)
        }
        return settings
    }
}

func addUserDataRoutes(_ router: Router<APIContext>, _ environment: APIEnvironment) {
    let database = environment.database
    let users = environment.users

    router.patch("/v1/me/settings") { request, context -> Response in
        let user = try context.requireIdentity()
        let patch = try await request.decode(as: SettingsPatch.self, context: context)
        let checked = try patch.checked(themes: Set(try database.displayThemes().map(\.id)))
        let now = environment.clock()
        // The settings and the user's devices change together.
        let settings = try await answering(.body) { try await users.changeSettings(userID: user.id, checked, now: now) }
        return json(["settings": settings])
    }

    router.get("/v1/bookmarks") { _, context -> Response in
        let user = try context.requireIdentity()
        return json(["bookmarks": try await users.bookmarks(userID: user.id)])
    }

    router.put("/v1/bookmarks/:key") { _, context -> Response in
        let user = try context.requireIdentity()
        let key = try verseKey(context, environment)
        let added = try await answering(.body) { try await users.addBookmark(userID: user.id, verseKey: key, now: environment.clock()) }
        return json(["verse_key": key], status: added ? .created : .ok)
    }

    router.delete("/v1/bookmarks/:key") { _, context -> Response in
        let user = try context.requireIdentity()
        let key = try verseKey(context, environment)
        guard try await users.removeBookmark(userID: user.id, verseKey: key) else {
            throw APIError.notFound("bookmark_not_found", "no bookmark for \(key)")
        }
        return Response(status: .noContent)
    }
}

/// A verse key from the path, checked against the Quran; in its canonical form.
func verseKey(_ context: APIContext, _ environment: APIEnvironment) throws -> String {
    let text = try context.pathParameter("key")
    let range = try answering(.url) { try VerseRange(parsing: text) }
    try answering(.answer) { try environment.database.validate(range) }
    return range.key
}
