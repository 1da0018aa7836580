import ArgumentParser
import ContentStore
import Crypto
import Delivery
import Foundation
import PushServices
import Storage

/// The push services' settings: each from its flag, `DAILYVERSE_<KEY>` or the configuration file's `<key>`, checked
/// when a command starts (a missing or unreadable file, a malformed key, an unknown environment is one line naming
/// the setting, and exit 1 before anything runs). Keys are read from files only, never logged.
struct PushOptions: ParsableArguments {
    @Option(name: .customLong("apns-key-file"), help: ArgumentHelp("APNs auth key (.p8) from Apple's developer account. Also apns_key_file.", valueName: "path"))
    var apnsKeyFile: String?
    @Option(name: .customLong("apns-key-id"), help: ArgumentHelp("The .p8 key's 10-character id.", valueName: "id"))
    var apnsKeyID: String?
    @Option(name: .customLong("apns-team-id"), help: ArgumentHelp("The Apple developer team's 10-character id.", valueName: "id"))
    var apnsTeamID: String?
    @Option(name: .customLong("apns-environment"), help: ArgumentHelp("production (App Store, TestFlight) or sandbox (Xcode builds). Default production.", valueName: "env"))
    var apnsEnvironment: String?
    @Option(
        name: .customLong("fcm-service-account-file"),
        help: ArgumentHelp("The Firebase project's service-account JSON file. Also fcm_service_account_file.", valueName: "path"))
    var fcmServiceAccountFile: String?
    @Option(name: .customLong("vapid-key-file"), help: ArgumentHelp("The Web Push VAPID private key (see `vapid generate`).", valueName: "path"))
    var vapidKeyFile: String?
    @Option(name: .customLong("vapid-subject"), help: ArgumentHelp("mailto: or https: contact for the push services.", valueName: "uri"))
    var vapidSubject: String?
    @Option(name: .customLong("push-ca-file"), help: ArgumentHelp("PEM certificates trusted beside the system's (a proxy's).", valueName: "path"))
    var caFile: String?

    /// Keys without a flag of their own (base URLs for tests and proxies, extra Web Push hosts, the timeout).
    static let fileKeys = [
        "apns_key_file", "apns_key_id", "apns_team_id", "apns_environment", "apns_url", "fcm_service_account_file", "fcm_url", "fcm_token_url",
        "vapid_key_file", "vapid_subject", "web_push_hosts", "push_ca_file", "push_timeout", "apns_sound",
    ]

    /// The senders for the services that are configured, and the names of those that are not.
    struct Senders {
        let client: PushClient
        let apns: APNsSender?
        let fcm: FCMSender?
        let webPush: WebPushSender?
        var missing: [String] {
            [apns == nil ? "APNs" : nil, fcm == nil ? "FCM" : nil, webPush == nil ? "Web Push" : nil].compactMap { $0 }
        }
    }

    func value(_ global: GlobalOptions, _ flag: String?, _ key: String) throws -> String? {
        try global.setting(flag: flag, environment: "DAILYVERSE_" + key.uppercased(), key: key).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Reads a key file (at most 64 KiB), naming the setting when it cannot.
    static func read(_ path: String, setting: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (check its owner and mode)" : "does not exist"
            throw CLIError("invalid \(setting) '\(path)': the file \(reason)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: 64 * 1024 + 1)) ?? Data()
        guard data.count <= 64 * 1024, let text = String(data: data, encoding: .utf8) else {
            throw CLIError("invalid \(setting) '\(path)': not a key file of at most 64 KiB of text")
        }
        return text
    }

    func makeSenders(_ global: GlobalOptions, database: AppDatabase) throws -> Senders {
        let timeout = try value(global, nil, "push_timeout").map { try EmitOptions.duration($0, setting: "push_timeout", range: 1...300) } ?? 30
        let client: PushClient
        do { client = try PushClient(caFile: try value(global, caFile, "push_ca_file"), timeout: timeout) } catch let error as PushConfigurationError {
            throw CLIError(error.description)
        }
        do {
            return Senders(
                client: client, apns: try makeAPNs(global, client: client, database: database), fcm: try makeFCM(global, client: client),
                webPush: try makeWebPush(global, client: client))
        } catch {
            try? client.http.syncShutdown()
            throw error
        }
    }

    func makeAPNs(_ global: GlobalOptions, client: PushClient, database: AppDatabase) throws -> APNsSender? {
        let file = try value(global, apnsKeyFile, "apns_key_file")
        let keyID = try value(global, apnsKeyID, "apns_key_id")
        let teamID = try value(global, apnsTeamID, "apns_team_id")
        guard file != nil || keyID != nil || teamID != nil else { return nil }
        guard let file else { throw CLIError("APNs: apns_key_file is not set (apns_key_id and apns_team_id are)") }
        guard let keyID else { throw CLIError("APNs: apns_key_id is not set") }
        guard let teamID else { throw CLIError("APNs: apns_team_id is not set") }
        for (setting, id) in [("apns_key_id", keyID), ("apns_team_id", teamID)] {
            guard id.count == 10, id.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
                throw CLIError("invalid \(setting) '\(id)': expected 10 capital letters and digits, as Apple shows it")
            }
        }
        let environmentName = try value(global, apnsEnvironment, "apns_environment") ?? "production"
        guard let environment = APNsSender.Environment(rawValue: environmentName) else {
            throw CLIError("invalid apns_environment '\(environmentName)': expected production or sandbox")
        }
        let key: P256.Signing.PrivateKey
        do { key = try APNsSender.key(fromP8: try Self.read(file, setting: "apns_key_file")) } catch let error as PushConfigurationError {
            throw CLIError("invalid apns_key_file '\(file)': \(error.description)")
        }
        let url = try value(global, nil, "apns_url").map { try Self.checkURL($0, setting: "apns_url") }
        return APNsSender(
            client: client, keyID: keyID, teamID: teamID, key: key, environment: environment, baseURL: url, store: DatabaseCredentialStore(database: database))
    }

    func makeFCM(_ global: GlobalOptions, client: PushClient) throws -> FCMSender? {
        guard let file = try value(global, fcmServiceAccountFile, "fcm_service_account_file") else { return nil }
        let account: ServiceAccount
        do { account = try ServiceAccount.parse(Data(try Self.read(file, setting: "fcm_service_account_file").utf8)) } catch let error as PushConfigurationError {
            throw CLIError("invalid fcm_service_account_file '\(file)': \(error.description)")
        }
        let url = try value(global, nil, "fcm_url").map { try Self.checkURL($0, setting: "fcm_url") }
        let tokenURL = try value(global, nil, "fcm_token_url").map { try Self.checkURL($0, setting: "fcm_token_url") }
        return FCMSender(client: client, account: account, baseURL: url, tokenURI: tokenURL)
    }

    func makeWebPush(_ global: GlobalOptions, client: PushClient) throws -> WebPushSender? {
        let file = try value(global, vapidKeyFile, "vapid_key_file")
        let subject = try value(global, vapidSubject, "vapid_subject")
        guard file != nil || subject != nil else { return nil }
        guard let file else { throw CLIError("Web Push: vapid_key_file is not set (vapid_subject is)") }
        guard let subject else { throw CLIError("Web Push: vapid_subject is not set (a mailto: or https: contact)") }
        let vapid: VAPIDKey
        do { vapid = try VAPIDKey(privateKey: try VAPIDKey.privateKey(fromFile: try Self.read(file, setting: "vapid_key_file")), subject: subject) } catch let error
            as VAPIDKey.Failure
        {
            if case .badSubject(let why) = error { throw CLIError("invalid vapid_subject: \(why)") }
            throw CLIError("invalid vapid_key_file '\(file)': \(error.description)")
        }
        var hosts = WebPushSender.knownServices
        if let extra = try value(global, nil, "web_push_hosts") {
            let added = extra.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            if let bad = added.first(where: { !$0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") } }) {
                throw CLIError("invalid web_push_hosts entry '\(bad)': expected host names separated by commas")
            }
            hosts += added
        }
        return WebPushSender(client: client, vapid: vapid, allowedHosts: hosts)
    }

    static func checkURL(_ text: String, setting: String) throws -> String {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "https", components.host?.isEmpty == false,
            components.query == nil, components.user == nil
        else { throw CLIError("invalid \(setting) '\(WebhookSink.redacted(text))': expected an https:// URL") }
        return text
    }

    /// The public key the web app's `applicationServerKey` takes, when Web Push is configured.
    func vapidPublicKey(_ global: GlobalOptions) throws -> String? {
        guard let file = try value(global, vapidKeyFile, "vapid_key_file") else { return nil }
        do { return Base64URL.encode(try VAPIDKey.privateKey(fromFile: try Self.read(file, setting: "vapid_key_file")).publicKey.x963Representation) } catch let error
            as VAPIDKey.Failure
        {
            throw CLIError("invalid vapid_key_file '\(file)': \(error.description)")
        }
    }
}

struct Push: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Talk to the push services directly.", subcommands: [PushTest.self])
}

struct PushTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test", abstract: "Send one device a notification now, through its service, and print the service's answer.",
        discussion: """
            The device gets today's verse as the scheduler would render it (same collapse id, so it replaces today's \
            notification). Nothing is written to the outbox. Exit status 1 unless the service accepted it.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var emit: EmitOptions
    @OptionGroup var push: PushOptions
    @Argument(help: ArgumentHelp("The device's id (from devices list).", valueName: "device-id")) var deviceID: String

    func run() async throws {
        let (sink, record) = try reportingErrors { () -> (PushSink, OutboxRecord) in
            let database = try global.openDatabase()
            let now = try global.clock()
            let record = try Emitter(database: database, configuration: try emit.configuration(global)).preview(deviceID: deviceID, now: now)
            let senders = try push.makeSenders(global, database: database)
            let sink = PushSink(database: database, client: senders.client, apns: senders.apns, fcm: senders.fcm, webPush: senders.webPush, clock: { now })
            guard sink.platforms?.contains(record.platform) == true else {
                try? senders.client.http.syncShutdown()
                throw CLIError("device '\(deviceID)' is \(record.platform), and \(Self.serviceName(record.platform)) is not configured")
            }
            return (sink, record)
        }
        let outcome = await sink.sendNow(record)
        await sink.shutdown()
        let (accepted, line) = Self.describe(outcome)
        if global.json {
            try printJSON(["device_id": deviceID, "platform": record.platform, "accepted": accepted ? "true" : "false", "answer": line])
        } else {
            print("\(deviceID) (\(record.platform)): \(line)")
        }
        if !accepted { throw ExitCode(1) }
    }

    static func serviceName(_ platform: String) -> String { ["apns": "APNs", "fcm": "FCM", "webpush": "Web Push"][platform] ?? platform }

    static func describe(_ outcome: DeliveryOutcome) -> (Bool, String) {
        switch outcome {
        case .delivered(let id): return (true, "accepted" + (id.map { " (\($0))" } ?? ""))
        case .retry(let error, let after): return (false, "not accepted, try later: \(error)" + (after.map { " (retry after \(Int($0)) s)" } ?? ""))
        case .failed(let error): return (false, "refused: \(error)")
        case .disabled(let error, _): return (false, "the service no longer knows this device: \(error)")
        case .paused(let error, _): return (false, "configuration error: \(error)")
        case .missed(let error): return (false, "not sent: \(error)")
        }
    }
}

struct Vapid: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Web Push VAPID keys.", subcommands: [VapidGenerate.self, VapidPublicKey.self])
}

struct VapidGenerate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Make a new VAPID key pair.",
        discussion: """
            Prints the private key (PEM) and the public key in the URL-safe base64 form a browser's \
            applicationServerKey takes. With --key-file the private key goes into that file (mode 0600, never over an \
            existing file) and only the public key is printed. Subscriptions are bound to the key: changing it means \
            every browser subscribes again.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("key-file"), help: ArgumentHelp("Write the private key here instead of printing it.", valueName: "path"))
    var keyFile: String?

    func run() throws {
        try reportingErrors {
            let pair = VAPIDKey.generate()
            if let keyFile {
                let descriptor = open(keyFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { throw CLIError("cannot create '\(keyFile)': \(String(cString: strerror(errno)))") }
                let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                do { try handle.write(contentsOf: Data((pair.privateKeyPEM + "\n").utf8)); try handle.synchronize() } catch {
                    unlink(keyFile)
                    throw CLIError("cannot write '\(keyFile)': \(error.localizedDescription)")
                }
            }
            if global.json {
                var object = ["public_key": pair.publicKey]
                if keyFile == nil { object["private_key_pem"] = pair.privateKeyPEM } else { object["key_file"] = keyFile }
                return try printJSON(object)
            }
            if keyFile == nil { print(pair.privateKeyPEM) }
            print("public key (applicationServerKey): \(pair.publicKey)")
        }
    }
}

struct VapidPublicKey: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "public-key", abstract: "Print the configured VAPID key's public key.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var push: PushOptions

    func run() throws {
        try reportingErrors {
            guard let key = try push.vapidPublicKey(global) else { throw CLIError("vapid_key_file is not set") }
            if global.json { return try printJSON(["public_key": key]) }
            print(key)
        }
    }
}
