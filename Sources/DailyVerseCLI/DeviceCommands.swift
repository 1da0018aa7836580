import ArgumentParser
import ContentStore
import Delivery
import Foundation
import HijriCalendar
import Notifications

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the devices that receive the daily verse.",
        subcommands: [DevicesAdd.self, DevicesList.self, DevicesShow.self, DevicesUpdate.self, DevicesRemove.self, DevicesImport.self])
}

/// The settings options `add` and `update` share.
struct DeviceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("apns, fcm or webpush.", valueName: "name")) var platform: String?
    @Option(help: ArgumentHelp("APNs device token (hex) or FCM registration token.", valueName: "token")) var token: String?
    @Option(help: ArgumentHelp("Web Push endpoint (https).", valueName: "url")) var endpoint: String?
    @Option(help: ArgumentHelp("Web Push p256dh key (base64url).", valueName: "key")) var p256dh: String?
    @Option(help: ArgumentHelp("Web Push auth secret (base64url).", valueName: "key")) var auth: String?
    @Option(help: ArgumentHelp("IANA time zone.", valueName: "zone")) var tz: String?
    @Option(help: ArgumentHelp("Local reminder time, HH:MM (default 08:00).", valueName: "time")) var time: String?
    @Option(help: ArgumentHelp("en or ar: which text the notification carries.", valueName: "code")) var locale: String?
    @Option(help: ArgumentHelp("umm-al-qura, tabular or sighted.", valueName: "name")) var calendar: String?
    @Option(help: ArgumentHelp("Hijri date adjustment, -2…+2.", valueName: "days")) var adjust: Int?
    @Option(name: .customLong("display-theme"), help: ArgumentHelp("Display theme id.", valueName: "id")) var displayTheme: String?
    @Option(help: ArgumentHelp("true or false.", valueName: "bool")) var enabled: Bool?

    func settings() throws -> DeviceSettings {
        var settings = DeviceSettings()
        if let platform {
            guard let kind = Platform(rawValue: platform) else { throw DeviceError.invalidPlatform(platform) }
            settings.token = try DeviceRecordJSON.token(platform: kind, token: token, endpoint: endpoint, p256dh: p256dh, auth: auth)
        } else if token != nil || endpoint != nil {
            throw CLIError("give --platform with a new token")
        }
        try settings.check(timeZone: tz, time: time, locale: locale, calendar: calendar, adjust: adjust, displayTheme: displayTheme, enabled: enabled)
        return settings
    }
}

struct DevicesAdd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a device and print its id.",
        discussion: "Example: dailyverse devices add --platform apns --token HEX --tz Asia/Baghdad --time 07:30 --locale ar")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: DeviceOptions

    func run() throws {
        try reportingErrors {
            let settings = try options.settings()
            guard settings.token != nil else { throw CLIError("--platform and its token are required") }
            guard settings.timeZone != nil else { throw CLIError("--tz is required") }
            let database = try global.openDatabase()
            let now = try global.clock()
            let device = try database.addDevice(settings, now: now)
            if global.json { return try printJSON(DeviceRecordJSON(try database.deviceState(id: device.id, now: now)!)) }
            print(device.id)
        }
    }
}

struct DevicesList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the devices.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try reportingErrors {
            let states = try global.openDatabase().deviceStates(now: try global.clock())
            if global.json { return try printJSON(states.map(DeviceRecordJSON.init)) }
            if states.isEmpty { print("no devices") }
            for state in states {
                let device = state.device
                let next = state.nextFireAt?.iso8601UTC ?? "disabled"
                print("\(device.id)  \(device.platform.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(device.timeZone) \(device.reminderTime) \(device.locale.rawValue)  next \(next)")
            }
        }
    }
}

struct DevicesShow: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one device.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id.") var id: String

    func run() throws {
        try reportingErrors {
            guard let state = try global.openDatabase().deviceState(id: id, now: try global.clock()) else { throw DeviceError.notFound(id) }
            let record = DeviceRecordJSON(state)
            if global.json { return try printJSON(record) }
            print(try record.text())
        }
    }
}

struct DevicesUpdate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update", abstract: "Change a device's settings. A new zone or time never fires a local date twice.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id.") var id: String
    @OptionGroup var options: DeviceOptions

    func run() throws {
        try reportingErrors {
            let database = try global.openDatabase()
            let now = try global.clock()
            let device = try database.updateDevice(id: id, try options.settings(), now: now)
            let record = DeviceRecordJSON(try database.deviceState(id: device.id, now: now)!)
            if global.json { return try printJSON(record) }
            print(try record.text())
        }
    }
}

struct DevicesRemove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a device.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id.") var id: String

    func run() throws {
        try reportingErrors {
            guard try global.openDatabase().removeDevice(id: id) else { throw DeviceError.notFound(id) }
            if global.json { return try printJSON(["removed": id]) }
            print("removed \(id)")
        }
    }
}

struct DevicesImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Add many devices from JSON Lines in one transaction: all or none.",
        discussion: """
            One object per line with the keys that `devices list --json` prints: platform, token, timezone (required), \
            reminder_time, locale, calendar, adjustment, display_theme, enabled. A Web Push token is an object \
            {"endpoint", "p256dh", "auth"}.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("JSON Lines file.", valueName: "file")) var file: String

    func run() throws {
        try reportingErrors {
            guard let data = FileManager.default.contents(atPath: file) else { throw CLIError("cannot read '\(file)'") }
            let name = URL(fileURLWithPath: file).lastPathComponent
            var items: [(line: Int, settings: DeviceSettings)] = []
            for (index, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                do { items.append((index + 1, try DeviceRecordJSON.settings(fromJSONLine: trimmed))) } catch {
                    throw CLIError("\(name):\(index + 1): \(error)")
                }
            }
            let database = try global.openDatabase()
            let bar = ProgressBar("devices")
            let added: [Device]
            do { added = try database.addDevices(items, now: global.clock(), progress: bar.update) } catch let error as DeviceImportError {
                throw CLIError("\(name):\(error.line): \(error.reason)")
            }
            if global.json { return try printJSON(["imported": added.count]) }
            print("imported \(added.count) devices from \(file)")
        }
    }
}

extension DeviceSettings {
    /// Sets the fields given, each checked; an error names the value. Shared by the flags and the import lines.
    mutating func check(
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

/// A device as `devices list --json` prints it, and as `devices import` reads it.
struct DeviceRecordJSON: Encodable {
    let id: String
    let platform: String
    let token: Token
    let timezone: String
    let reminderTime: String
    let locale: String
    let calendar: String
    let adjustment: Int
    let displayTheme: String
    let enabled: Bool
    let createdAt: String
    let updatedAt: String
    let lastLocalDate: String?
    let nextFireAt: String?

    enum Token: Encodable {
        case plain(String)
        case subscription(endpoint: String, p256dh: String, auth: String)
        func encode(to encoder: Encoder) throws {
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
    }

    init(_ state: DeviceState) {
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
    }

    func encode(to encoder: Encoder) throws {
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
    }

    func text() throws -> String {
        """
        id            \(id)
        platform      \(platform)
        time zone     \(timezone)
        reminder      \(reminderTime) (\(locale))
        calendar      \(calendar)\(adjustment == 0 ? "" : String(format: " %+d", adjustment))
        display theme \(displayTheme)
        enabled       \(enabled)
        last fired    \(lastLocalDate ?? "never")
        next fire     \(nextFireAt ?? "none")
        """
    }

    static func token(platform: Platform, token: String?, endpoint: String?, p256dh: String?, auth: String?) throws -> PushToken {
        switch platform {
        case .apns: return try .apns(validating: token ?? "")
        case .fcm: return try .fcm(validating: token ?? "")
        case .webpush: return try .webpush(validatingEndpoint: endpoint ?? "", p256dh: p256dh ?? "", auth: auth ?? "")
        }
    }

    static let importKeys: Set<String> = [
        "platform", "token", "timezone", "reminder_time", "locale", "calendar", "adjustment", "display_theme", "enabled",
        "id", "created_at", "updated_at", "last_local_date", "next_fire_at",
    ]

    /// One import line: the first problem is an error naming the key and the value.
    static func settings(fromJSONLine line: String) throws -> DeviceSettings {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw CLIError("not a JSON object")
        }
        if let unknown = Set(object.keys).subtracting(importKeys).sorted().first { throw CLIError("unknown key '\(unknown)'") }
        func string(_ key: String) throws -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw CLIError("'\(key)' must be a string") }
            return text
        }
        guard let platformName = try string("platform") else { throw CLIError("missing key 'platform'") }
        guard let platform = Platform(rawValue: platformName) else { throw DeviceError.invalidPlatform(platformName) }
        var settings = DeviceSettings()
        switch (platform, object["token"]) {
        case (.webpush, let subscription as [String: Any]):
            settings.token = try .webpush(
                validatingEndpoint: subscription["endpoint"] as? String ?? "", p256dh: subscription["p256dh"] as? String ?? "",
                auth: subscription["auth"] as? String ?? "")
        case (.webpush, _): throw CLIError("a webpush 'token' must be an object with endpoint, p256dh and auth")
        case (_, let value as String): settings.token = try token(platform: platform, token: value, endpoint: nil, p256dh: nil, auth: nil)
        default: throw CLIError("missing key 'token'")
        }
        guard let zone = try string("timezone") else { throw CLIError("missing key 'timezone'") }
        var adjust: Int? = nil
        if let value = object["adjustment"], !(value is NSNull) {
            guard let days = value as? Int else { throw CLIError("'adjustment' must be a whole number") }
            adjust = days
        }
        var enabled: Bool? = nil
        if let value = object["enabled"], !(value is NSNull) {
            guard let flag = value as? Bool else { throw CLIError("'enabled' must be true or false") }
            enabled = flag
        }
        try settings.check(
            timeZone: zone, time: string("reminder_time"), locale: string("locale"), calendar: string("calendar"), adjust: adjust,
            displayTheme: string("display_theme"), enabled: enabled)
        return settings
    }
}

