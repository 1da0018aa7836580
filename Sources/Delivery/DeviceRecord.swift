import Diagnostics
import Encodings
import Foundation
import HijriCalendar
import Notifications

extension DeviceSettings {
    /// Sets the fields given, each checked; an error names the value. Shared by the flags and the import lines.
    public mutating func setChecked(
        timeZone: String?, time: String?, locale: String?, calendar: String?, adjust: Int?, displayTheme: String?, enabled: Bool?
    ) throws {
        if let timeZone {
            _ = try Device.validateTimeZone(timeZone)
            self.timeZone = timeZone
        }
        reminderTime = try time.map { try ReminderTime(parsing: $0) }
        if let locale {
            guard let value = DeviceLocale(rawValue: locale) else { throw DeviceError.invalidLocale(locale) }
            self.locale = value
        }
        self.calendar = try calendar.map { try CalendarKind(parsing: $0) }
        adjustment = try adjust.map { try Adjustment($0) }
        self.displayTheme = displayTheme
        self.enabled = enabled
    }
}

/// A device as `devices list --json` and `GET /v1/devices` print it, and as `devices import` and
/// `POST /v1/devices` read it.
public struct DeviceRecord: Encodable, Sendable {
    public let id: String
    public let platform: String
    public let token: Token
    public let timezone: String
    public let reminderTime: String
    public let locale: String
    public let calendar: String
    public let adjustment: Int
    public let displayTheme: String
    public let enabled: Bool
    public let createdAt: String
    public let updatedAt: String
    public let lastLocalDate: String?
    public let nextFireAt: String?
    /// Why and when the push service made this device disabled (its token unknown there).
    public let disabledReason: String?
    public let disabledAt: String?
    /// Whether this system knows the zone (shown by `text()`; the JSON has the zone as stored).
    let zoneKnown: Bool

    public enum Token: Encodable, Sendable {
        case plain(String)
        case subscription(endpoint: String, p256dh: String, auth: String)
        public func encode(to encoder: Encoder) throws {
            switch self {
            case .plain(let value):
                var container = encoder.singleValueContainer()
                try container.encode(value)
            case .subscription(let endpoint, let p256dh, let auth):
                try ["endpoint": endpoint, "p256dh": p256dh, "auth": auth].encode(to: encoder)
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, platform, token, timezone, reminderTime = "reminder_time", locale, calendar, adjustment
        case displayTheme = "display_theme", enabled, createdAt = "created_at", updatedAt = "updated_at"
        case lastLocalDate = "last_local_date", nextFireAt = "next_fire_at"
        case disabledReason = "disabled_reason", disabledAt = "disabled_at"
    }

    public init(_ state: DeviceState) {
        let device = state.device
        id = device.id
        platform = device.platform.rawValue
        switch device.token {
        case .apns(let value), .fcm(let value): token = .plain(value)
        case .webpush(let endpoint, let p256dh, let auth): token = .subscription(endpoint: endpoint, p256dh: p256dh, auth: auth)
        }
        timezone = device.timeZone
        reminderTime = device.reminderTime.description
        locale = device.locale.rawValue
        calendar = device.calendar.rawValue
        adjustment = device.adjustment.days
        displayTheme = device.displayTheme
        enabled = device.enabled
        createdAt = device.createdAt.iso8601UTC
        updatedAt = device.updatedAt.iso8601UTC
        lastLocalDate = state.lastLocalDate?.description
        nextFireAt = state.nextFireAt?.iso8601UTC
        disabledReason = state.disabledReason
        disabledAt = state.disabledAt?.iso8601UTC
        zoneKnown = state.zoneKnown
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(platform, forKey: .platform)
        try container.encode(token, forKey: .token)
        try container.encode(timezone, forKey: .timezone)
        try container.encode(reminderTime, forKey: .reminderTime)
        try container.encode(locale, forKey: .locale)
        try container.encode(calendar, forKey: .calendar)
        try container.encode(adjustment, forKey: .adjustment)
        try container.encode(displayTheme, forKey: .displayTheme)
        try container.encode(enabled, forKey: .enabled)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(lastLocalDate, forKey: .lastLocalDate)
        try container.encode(nextFireAt, forKey: .nextFireAt)
        try container.encode(disabledReason, forKey: .disabledReason)
        try container.encode(disabledAt, forKey: .disabledAt)
    }

    public func text() -> String {
        """
        id            \(id)
        platform      \(platform)
        time zone     \(timezone)\(zoneKnown ? "" : " (unknown to this system's time zone data: not firing until it is changed)")
        reminder      \(reminderTime) (\(locale))
        calendar      \(calendar)\(adjustment == 0 ? "" : String(format: " %+d", adjustment))
        display theme \(displayTheme)
        enabled       \(enabled)\(disabledReason.map { " (disabled by its push service \(disabledAt ?? ""): \($0))" } ?? "")
        last fired    \(lastLocalDate ?? "never")
        next fire     \(nextFireAt ?? "none")
        """
    }

    public static func token(platform: Platform, token: String?, endpoint: String?, p256dh: String?, auth: String?) throws -> PushToken {
        switch platform {
        case .apns: return try .apns(validating: token ?? "")
        case .fcm: return try .fcm(validating: token ?? "")
        case .webpush: return try .webpush(validatingEndpoint: endpoint ?? "", p256dh: p256dh ?? "", auth: auth ?? "")
        }
    }

    /// The longest line of a devices import: a device's keys with the longest token a platform takes (a Web Push
    /// endpoint and its keys, an FCM token of 2,048 characters) fit many times over.
    public static let maximumLineBytes = 64 << 10

    /// The keys a device object may have: those it is printed with.
    public static let keys: Set<String> = [
        "platform", "token", "timezone", "reminder_time", "locale", "calendar", "adjustment", "display_theme", "enabled",
        "id", "created_at", "updated_at", "last_local_date", "next_fire_at", "disabled_reason", "disabled_at",
    ]

    /// A device's settings from a JSON object with the keys it is printed with; the first problem is an error naming
    /// the key and the value. For a new device (`existing` nil) `platform`, `token` and `timezone` are required; for a
    /// change to an existing device every key is optional and the platform cannot change. A Web Push endpoint must be
    /// on a push service `webPushHosts` allows, as the sender's are.
    public static func settings(from object: [String: Any], existing: Platform? = nil, webPushHosts: WebPushHosts) throws -> DeviceSettings {
        if let unknown = Set(object.keys).subtracting(keys).sorted().first { throw DeviceInputError("unknown key '\(unknown)'") }
        func string(_ key: String) throws -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw DeviceInputError("'\(key)' must be a string") }
            return text
        }
        let platform: Platform
        switch (try string("platform"), existing) {
        case (let name?, _):
            guard let value = Platform(rawValue: name) else { throw DeviceError.invalidPlatform(name) }
            if let existing, existing != value { throw DeviceInputError("a device's platform cannot change (it is \(existing.rawValue))") }
            platform = value
        case (nil, let existing?): platform = existing
        case (nil, nil): throw DeviceInputError("missing key 'platform'")
        }
        var settings = DeviceSettings()
        switch (platform, object["token"]) {
        case (_, nil) where existing != nil: break
        case (.webpush, let subscription as [String: Any]):
            settings.token = try PushToken.webpush(
                validatingEndpoint: subscription["endpoint"] as? String ?? "", p256dh: subscription["p256dh"] as? String ?? "",
                auth: subscription["auth"] as? String ?? ""
            ).checked(against: webPushHosts)
        case (.webpush, _): throw DeviceInputError("a webpush 'token' must be an object with endpoint, p256dh and auth")
        case (_, let value as String): settings.token = try token(platform: platform, token: value, endpoint: nil, p256dh: nil, auth: nil)
        case (_, nil): throw DeviceInputError("missing key 'token'")
        default: throw DeviceInputError("'token' must be a string")
        }
        let zone = try string("timezone")
        if zone == nil, existing == nil { throw DeviceInputError("missing key 'timezone'") }
        var adjust: Int? = nil
        if let value = object["adjustment"], !(value is NSNull) {
            // JSONSerialization gives true/false as numbers too: only a number that is not a flag is taken.
            guard let number = value as? NSNumber, JSONFlag.bool(value) == nil, let days = Int(exactly: number.doubleValue) else {
                throw DeviceInputError("'adjustment' must be a whole number")
            }
            adjust = days
        }
        var enabled: Bool? = nil
        if let value = object["enabled"], !(value is NSNull) {
            guard let flag = JSONFlag.bool(value) else { throw DeviceInputError("'enabled' must be true or false") }
            enabled = flag
        }
        try settings.setChecked(
            timeZone: zone, time: string("reminder_time"), locale: string("locale"), calendar: string("calendar"), adjust: adjust,
            displayTheme: string("display_theme"), enabled: enabled)
        return settings
    }

    /// One line of a JSON Lines file.
    public static func settings(fromJSONLine line: String, webPushHosts: WebPushHosts) throws -> DeviceSettings {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw DeviceInputError("not a JSON object")
        }
        // Every text a device carries, the Web Push token's parts included, as every import's text (`ImportedText`).
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            var texts: [(String, Any)] = [(key, value)]
            if let nested = value as? [String: Any] { texts = nested.sorted { $0.key < $1.key }.map { ("\(key).\($0.key)", $0.value) } }
            for case (let field, let text as String) in texts {
                if let refusal = ImportedText.refusal(of: field, in: text) { throw DeviceInputError(refusal) }
            }
        }
        return try settings(from: object, webPushHosts: webPushHosts)
    }
}

/// A device object that is not what the keys ask for.
public struct DeviceInputError: UserFacingError, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A JSON boolean as `JSONSerialization` gives it: an `NSNumber` like any number, told apart by its type code ("c").
/// `as? Bool` alone also takes 0 and 1, so `{"enabled": 1}` would pass for `true`.
public enum JSONFlag {
    public static func bool(_ value: Any) -> Bool? {
        guard let number = value as? NSNumber, String(cString: number.objCType) == "c" else { return nil }
        return number.boolValue
    }
}
