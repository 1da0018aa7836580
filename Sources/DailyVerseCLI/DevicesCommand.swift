import ArgumentParser
import ContentStore
import Delivery
import Diagnostics
import Foundation
import HijriCalendar
import Notifications
import Storage

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Manage the devices that receive the daily verse.",
        subcommands: [
            DevicesAddCommand.self, DevicesListCommand.self, DevicesShowCommand.self, DevicesUpdateCommand.self, DevicesRemoveCommand.self,
            DevicesImportCommand.self,
        ])
}

/// The settings options `add` and `update` share.
struct DeviceOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("The push service.", valueName: "name")) var platform: Platform?
    @Option(parsing: .unconditional, help: ArgumentHelp("APNs device token (hex) or FCM registration token.", valueName: "token")) var token: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Web Push endpoint (https, on a known push service or web_push_hosts).", valueName: "url"))
    var endpoint: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Web Push p256dh key (base64url).", valueName: "key")) var p256dh: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Web Push auth secret (base64url).", valueName: "key")) var auth: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("IANA time zone.", valueName: "zone")) var tz: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Local reminder time, HH:MM (default 08:00).", valueName: "time")) var time: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Which text the notification carries.", valueName: "code")) var locale: DeviceLocale?
    @Option(parsing: .unconditional, help: ArgumentHelp("The Hijri calendar.", valueName: "name")) var calendar: CalendarKind?
    @Option(parsing: .unconditional, help: ArgumentHelp("Hijri date adjustment, in days.", valueName: "days")) var adjust: Adjustment?
    @Option(name: .customLong("display-theme"), parsing: .unconditional, help: ArgumentHelp("Display theme id.", valueName: "id")) var displayTheme:
        String?
    @Option(parsing: .unconditional, help: ArgumentHelp("true or false.", valueName: "bool")) var enabled: Bool?

    /// The options that make each platform's token: one that does not apply to the platform given is refused, naming
    /// it (`--platform fcm --endpoint …` was taken, the endpoint passed over), and so is a token without its platform.
    static func tokenOptions(_ platform: Platform) -> [String] { platform == .webpush ? ["--endpoint", "--p256dh", "--auth"] : ["--token"] }

    /// A token needs its platform, and a platform its token's options, those alone.
    func validate() throws {
        let given = [("--token", token), ("--endpoint", endpoint), ("--p256dh", p256dh), ("--auth", auth)].filter { $0.1 != nil }.map { $0.0 }
        guard let platform else {
            if !given.isEmpty { throw ValidationError("give --platform with a new token (--token, or --endpoint, --p256dh and --auth)") }
            return
        }
        let needed = Self.tokenOptions(platform)
        if let stray = given.first(where: { !needed.contains($0) }) {
            throw ValidationError("\(stray) does not apply to --platform \(platform.rawValue): its token is \(needed.joined(separator: ", "))")
        }
        let missing = needed.filter { !given.contains($0) }
        if !missing.isEmpty {
            throw ValidationError(
                "--platform \(platform.rawValue) needs \(needed.joined(separator: ", ")): \(missing.joined(separator: ", ")) \(missing.count == 1 ? "is" : "are") missing"
            )
        }
    }

    /// The settings given, each checked; a Web Push endpoint on a push service the sender takes (`web_push_hosts`).
    func settings(_ global: GlobalOptions) throws -> DeviceSettings {
        var settings = DeviceSettings()
        if let platform {
            var made = try DeviceRecord.token(platform: platform, token: token, endpoint: endpoint, p256dh: p256dh, auth: auth)
            if platform == .webpush { made = try made.checked(against: PushOptions.webPushHosts(global)) }
            settings.token = made
        }
        try settings.setChecked(
            timeZone: tz, time: time, locale: locale?.rawValue, calendar: calendar?.rawValue, adjust: adjust?.days, displayTheme: displayTheme,
            enabled: enabled)
        return settings
    }
}

struct DevicesAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a device and print its id.",
        discussion: "Example: dailyverse devices add --platform apns --token HEX --tz Asia/Baghdad --time 07:30 --locale ar")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        let settings = try options.settings(global)
        guard settings.token != nil else { throw CLIError("--platform and its token are required") }
        guard settings.timeZone != nil else { throw CLIError("--tz is required") }
        let now = try global.clock()
        let state = try await global.changingDevices(
            shared: { transaction, themes in
                try await transaction.deviceState(id: transaction.insertDevice(settings, userID: nil, now: now, themes: themes).id, now: now)
            },
            local: { database in try database.deviceState(id: database.addDevice(settings, now: now).id, now: now) })
        guard let state else { throw CLIError("the device added is gone: removed meanwhile") }
        if global.json { return try printJSON(DeviceRecord(state)) }
        print(state.device.id)
    }
}

struct DevicesListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the devices, oldest first, as they are read.",
        discussion: "For many devices, a page at a time: --limit N, then --after the last id printed.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var page: PageOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("Only the devices after this one (the last id of the previous page).", valueName: "id"))
    var after: String?

    func run() async throws {
        let limit = page.limit
        let now = try global.clock()
        let out = BufferedOutput()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var count = 0
        // The list opens with its first element (or closes empty at the end): a command that fails before it has
        // listed anything prints nothing on standard output.
        func write(_ state: DeviceState) throws {
            if global.json {
                out.write((count == 0 ? "[\n" : ",\n") + String(decoding: try encoder.encode(DeviceRecord(state)), as: UTF8.self))
            } else {
                let device = state.device
                let next = state.nextFireAt?.iso8601UTC ?? "disabled"
                out.write(
                    "\(device.id)  \(device.platform.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(device.timeZone) \(device.reminderTime) \(device.locale.rawValue)  next \(next)\n"
                )
            }
            count += 1
        }
        let after = after
        let listed: Void? = try await global.withPostgres { try await $0.forEachDeviceState(after: after, limit: limit, now: now, write) }
        if listed == nil { try global.openDatabase().forEachDeviceState(after: after, limit: limit, now: now, write) }
        if global.json { out.write(count == 0 ? "[]\n" : "\n]\n") } else if count == 0 { out.write("no devices\n") }
        out.flush()
    }
}

struct DevicesShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one device.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id.") var id: String

    func run() async throws {
        let (id, now) = (id, try global.clock())
        let found: DeviceState?? = try await global.withPostgres { store in
            try await store.withoutTransaction { try await $0.deviceState(id: id, now: now) }
        }
        guard let state = try found ?? global.openDatabase().deviceState(id: id, now: now) else { throw DeviceError.notFound(id) }
        let record = DeviceRecord(state)
        if global.json { return try printJSON(record) }
        print(record.text())
    }
}

struct DevicesUpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update", abstract: "Change a device's settings. A new zone or time never fires a local date twice.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id.") var id: String
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        let (id, now, settings) = (id, try global.clock(), try options.settings(global))
        let state = try await global.changingDevices(
            shared: { transaction, themes in
                try await transaction.deviceState(id: transaction.updateDevice(id: id, settings, now: now, themes: themes).id, now: now)
            },
            local: { database in try database.deviceState(id: database.updateDevice(id: id, settings, now: now).id, now: now) })
        guard let state else { throw DeviceError.notFound(id) }
        let record = DeviceRecord(state)
        if global.json { return try printJSON(record) }
        print(record.text())
    }
}

struct DevicesRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a device.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id.") var id: String

    func run() async throws {
        let id = id
        let shared = try await global.withPostgres { store in try await store.transaction { try await $0.removeDevice(id: id, userID: nil) } }
        guard try shared ?? global.openDatabase().removeDevice(id: id) else { throw DeviceError.notFound(id) }
        if global.json { return try printJSON(["removed": id]) }
        print("removed \(id)")
    }
}

struct DevicesImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Add many devices from JSON Lines in one transaction: all or none.",
        discussion: """
            One object per line with the keys that `devices list --json` prints: platform, token, timezone (required), \
            reminder_time, locale, calendar, adjustment, display_theme, enabled. A Web Push token is an object \
            {"endpoint", "p256dh", "auth"}, its endpoint on a known push service or one of web_push_hosts.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("JSON Lines file.", valueName: "file")) var file: String

    func run() async throws {
        let input = try InputFile(path: checkedPath(file, what: "the file's name"))
        let name = URL(fileURLWithPath: file).lastPathComponent
        let hosts = try PushOptions.webPushHosts(global)
        var items: [(line: Int, settings: DeviceSettings)] = []
        // Checking a million lines takes a while: progress by bytes read, before anything is written. Read a line
        // at a time, each at most `maximumLineBytes`, so that a file of one endless line costs no memory.
        let checking = ProgressBar("checking")
        try input.forEachLine(maximumLineBytes: DeviceRecord.maximumLineBytes) { number, bytes, read in
            if number % 1000 == 1 { checking.update(min(read, input.size), input.size) }
            guard let line = String(validating: bytes, as: UTF8.self) else { throw CLIError("\(name):\(number): not valid UTF-8") }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
            do { items.append((number, try DeviceRecord.settings(fromJSONLine: trimmed, webPushHosts: hosts))) } catch {
                throw CLIError("\(name):\(number): \(error)")
            }
        }
        checking.update(input.size, input.size)
        let bar = ProgressBar("devices")
        let now = try global.clock()
        let added: Int
        do {
            let all = items
            added = try await global.changingDevices(
                shared: { transaction, themes in try await transaction.addDevices(all, now: now, themes: themes, progress: bar.update).count },
                local: { database in try database.addDevices(all, now: now, progress: bar.update).count })
        } catch let error as DeviceImportError {
            throw CLIError("\(name):\(error.line): \(error.reason)")
        }
        if global.json { return try printJSON(["imported": added]) }
        print("imported \(added) devices from \(file)")
    }
}
