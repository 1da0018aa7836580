import ArgumentParser
import ContentStore
import Crypto
import Daemon
import Delivery
import Diagnostics
import Encodings
import Foundation
import Logging
import Notifications
import PushServices
import Storage
import Synchronization

/// The push services' settings: each from its flag, `DAILYVERSE_<KEY>` or the configuration file's `<key>`, checked
/// when a command starts (a missing or unreadable file, a malformed key, an unknown environment is one line naming
/// the setting, and exit 1 before anything runs). Keys are read from files only, never logged.
struct PushOptions: ParsableArguments {
    @Option(
        name: .customLong("apns-key-file"),
        parsing: .unconditional,
        help: ArgumentHelp("APNs auth key (.p8) from Apple's developer account. Also apns_key_file.", valueName: "path"))
    var apnsKeyFile: String?
    @Option(name: .customLong("apns-key-id"), parsing: .unconditional, help: ArgumentHelp("The .p8 key's 10-character id.", valueName: "id"))
    var apnsKeyID: String?
    @Option(
        name: .customLong("apns-team-id"), parsing: .unconditional, help: ArgumentHelp("The Apple developer team's 10-character id.", valueName: "id")
    )
    var apnsTeamID: String?
    @Option(
        name: .customLong("apns-environment"),
        parsing: .unconditional,
        help: ArgumentHelp("production (App Store, TestFlight) or sandbox (Xcode builds). Default production.", valueName: "env"))
    var apnsEnvironment: String?
    @Option(
        name: .customLong("fcm-service-account-file"),
        parsing: .unconditional,
        help: ArgumentHelp("The Firebase project's service-account JSON file. Also fcm_service_account_file.", valueName: "path"))
    var fcmServiceAccountFile: String?
    @Option(
        name: .customLong("vapid-key-file"), parsing: .unconditional,
        help: ArgumentHelp("The Web Push VAPID private key (see `vapid generate`).", valueName: "path"))
    var vapidKeyFile: String?
    @Option(
        name: .customLong("vapid-subject"), parsing: .unconditional,
        help: ArgumentHelp("mailto: or https: contact for the push services.", valueName: "uri"))
    var vapidSubject: String?
    @Option(
        name: .customLong("push-ca-file"), parsing: .unconditional,
        help: ArgumentHelp("PEM certificates trusted beside the system's (a proxy's).", valueName: "path"))
    var caFile: String?

    /// The push settings' keys in the configuration file, with a flag or without one (base URLs for tests and proxies,
    /// extra Web Push hosts, the timeout, `apns_sound`).
    static let fileKeys = [
        "apns_key_file", "apns_key_id", "apns_team_id", "apns_environment", "apns_url", "fcm_service_account_file", "fcm_url", "fcm_token_url",
        "vapid_key_file", "vapid_subject", "web_push_hosts", "push_ca_file", "push_timeout", "apns_sound",
    ]

    /// The senders for the services that are configured, over one client.
    struct Senders {
        let client: PushClient
        let list: [any PushSender]
    }

    /// A push setting, from its flag (spelt as its key: `--apns-key-file` for `apns_key_file`), `DAILYVERSE_<KEY>` or
    /// the configuration file's `<key>`, with where it came from; an empty one is none.
    func value(_ global: GlobalOptions, _ flag: String?, _ key: String) throws -> SettingValue? {
        let flagName = "--" + key.replacingOccurrences(of: "_", with: "-")
        return try global.setting(flag: (flagName, flag), environment: "DAILYVERSE_" + key.uppercased(), key: key).flatMap {
            $0.text.isEmpty ? nil : $0
        }
    }

    /// The key files read by this process that others may open, each said once (`KeyFileModes`).
    static let keyFiles = KeyFileModes()

    /// Reads a key file (at most 64 KiB of text); a `SettingRefusal` when it cannot, which the setting's value names.
    static func read(_ path: String) throws -> String {
        guard let data = try readBytes(path, limit: 64 * 1024), let text = String(data: data, encoding: .utf8) else {
            throw SettingRefusal("not a key file of at most 64 KiB of text")
        }
        return text
    }

    /// A file's bytes, nil when it has more than `limit`; a `SettingRefusal` saying why when it cannot be read (a FIFO,
    /// a device or a folder named as a key file is refused, not waited on or read without end).
    static func readBytes(_ path: String, limit: Int) throws -> Data? {
        do {
            let file = try InputFile(path: path)
            guard file.size <= limit else { return nil }
            return Data(try file.readAll(maximumBytes: limit, text: false))
        } catch {
            throw SettingRefusal(InputFile.settingReason(error))
        }
    }

    /// How long a push service may take to answer one request (`push_timeout`).
    func timeout(_ global: GlobalOptions) throws -> TimeInterval {
        guard let given = try value(global, nil, "push_timeout") else { return 30 }
        return try given.checked { try TimeSpan.interval($0, within: DurationSetting.pushTimeout) }
    }

    /// A client for the push services (or gorush), trusting `push_ca_file` beside the system's certificates.
    func client(_ global: GlobalOptions, timeout: TimeInterval = 30) throws -> PushClient {
        let ca = try value(global, caFile, "push_ca_file")
        do { return try PushClient(caFile: ca?.text, timeout: timeout) } catch let error as PushConfigurationError {
            guard let ca else { throw CLIError(error.description) }
            throw ca.refused(error.reason)
        }
    }

    /// Every push setting read and checked as `serve` reads them (key files, ids, URLs, hosts), whatever the sink: a
    /// test run (`--once`) with another sink finds a typo in them too.
    func check(_ global: GlobalOptions) async throws {
        let senders = try makeSenders(global, credentials: MemoryCredentialStore())
        try? await senders.client.shutdown()
    }

    /// The senders, their provider tokens kept in `credentials` (shared by every process of the installation).
    func makeSenders(_ global: GlobalOptions, credentials: any CredentialStore) throws -> Senders {
        let client = try self.client(global, timeout: try self.timeout(global))
        do {
            let senders: [(any PushSender)?] = [
                try makeAPNs(global, client: client, credentials: credentials), try makeFCM(global, client: client, credentials: credentials),
                try makeWebPush(global, client: client, credentials: credentials),
            ]
            return Senders(client: client, list: senders.compactMap { $0 })
        } catch {
            try? client.http.syncShutdown()
            throw error
        }
    }

    func makeAPNs(_ global: GlobalOptions, client: PushClient, credentials: any CredentialStore) throws -> APNsSender? {
        // The settings of their own, checked whether or not APNs is configured: a typo is found the day it is made.
        let environment =
            try value(global, apnsEnvironment, "apns_environment")?.checked { name in
                guard let named = APNsSender.Environment(rawValue: name) else { throw SettingRefusal("expected production or sandbox") }
                return named
            } ?? APNsSender.Environment.production
        let url = try value(global, nil, "apns_url")?.checked(Self.checkURL)
        let file = try value(global, apnsKeyFile, "apns_key_file")
        let keyID = try value(global, apnsKeyID, "apns_key_id")
        let teamID = try value(global, apnsTeamID, "apns_team_id")
        guard file != nil || keyID != nil || teamID != nil else { return nil }
        guard let file else { throw CLIError("APNs: apns_key_file is not set (apns_key_id and apns_team_id are)") }
        guard let keyID else { throw CLIError("APNs: apns_key_id is not set") }
        guard let teamID else { throw CLIError("APNs: apns_team_id is not set") }
        for id in [keyID, teamID] {
            try id.checked { text in
                guard text.count == 10, text.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
                    throw SettingRefusal("expected 10 capital letters and digits, as Apple shows it")
                }
            }
        }
        let key = try file.checked { path in
            do { return try APNsSender.key(fromP8: try Self.read(path)) } catch let error as PushConfigurationError {
                throw SettingRefusal(error.reason)
            }
        }
        Self.keyFiles.check(file.text, setting: "apns_key_file")
        return APNsSender(
            client: client, keyID: keyID.text, teamID: teamID.text, key: key, environment: environment, baseURL: url,
            store: credentials)
    }

    func makeFCM(_ global: GlobalOptions, client: PushClient, credentials: any CredentialStore) throws -> FCMSender? {
        let url = try value(global, nil, "fcm_url")?.checked(Self.checkURL)
        let tokenURL = try value(global, nil, "fcm_token_url")?.checked(Self.checkURL)
        guard let file = try value(global, fcmServiceAccountFile, "fcm_service_account_file") else { return nil }
        let account = try file.checked { path in
            do { return try ServiceAccount.parse(Data(try Self.read(path).utf8)) } catch let error as PushConfigurationError {
                throw SettingRefusal(error.reason)
            }
        }
        Self.keyFiles.check(file.text, setting: "fcm_service_account_file")
        return FCMSender(client: client, account: account, baseURL: url, tokenURI: tokenURL, store: credentials)
    }

    /// The push services a Web Push endpoint may be on: the known ones and `web_push_hosts` (environment or file).
    /// Read whether or not Web Push is configured: the devices' commands and the API refuse an endpoint elsewhere when
    /// it is registered, as the sender would at every send.
    static func webPushHosts(_ global: GlobalOptions) throws -> WebPushHosts {
        let key = "web_push_hosts"
        guard let extra = try global.setting(environment: "DAILYVERSE_" + key.uppercased(), key: key), !extra.text.isEmpty else {
            return WebPushHosts()
        }
        return try extra.checked { text in
            do { return try WebPushHosts(setting: text) } catch let error as WebPushHosts.Refusal { throw SettingRefusal(error.reason) }
        }
    }

    func makeWebPush(_ global: GlobalOptions, client: PushClient, credentials: any CredentialStore) throws -> WebPushSender? {
        let hosts = try Self.webPushHosts(global)
        let file = try value(global, vapidKeyFile, "vapid_key_file")
        let subject = try value(global, vapidSubject, "vapid_subject")
        guard file != nil || subject != nil else { return nil }
        guard let file else { throw CLIError("Web Push: vapid_key_file is not set (vapid_subject is)") }
        guard let subject else { throw CLIError("Web Push: vapid_subject is not set (a mailto: or https: contact)") }
        let privateKey = try Self.vapidPrivateKey(file)
        let vapid = try subject.checked { text in
            do { return try VAPIDKey(privateKey: privateKey, subject: text) } catch let error as VAPIDKey.Failure {
                if case .badSubject(let why) = error { throw SettingRefusal(why) }
                throw error
            }
        }
        Self.keyFiles.check(file.text, setting: "vapid_key_file")
        return WebPushSender(client: client, vapid: vapid, hosts: hosts, store: credentials)
    }

    /// The VAPID private key in the file `vapid_key_file` names, refused naming where that setting came from.
    static func vapidPrivateKey(_ file: SettingValue) throws -> P256.Signing.PrivateKey {
        try file.checked { path in
            do { return try VAPIDKey.privateKey(fromFile: try Self.read(path)) } catch let error as VAPIDKey.Failure {
                throw SettingRefusal(error.description)
            }
        }
    }

    /// A service's URL, for tests and proxies: https only, without credentials or a query (shown without them).
    static func checkURL(_ text: String) throws -> String {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "https", components.host?.isEmpty == false,
            components.query == nil, components.user == nil
        else { throw SettingRefusal("expected an https:// URL", shown: WebhookSink.redacted(text)) }
        return text
    }

    /// The public key the web app's `applicationServerKey` takes, when Web Push is configured.
    func vapidPublicKey(_ global: GlobalOptions) throws -> String? {
        guard let file = try value(global, vapidKeyFile, "vapid_key_file") else { return nil }
        let key = try Self.vapidPrivateKey(file)
        Self.keyFiles.check(file.text, setting: "vapid_key_file")
        return Base64URL.encode(key.publicKey.x963Representation)
    }
}

/// Key files that users other than their owner may open (any of the mode's 0o077 bits): said once a process, as ssh
/// says it of a private key, but as a warning rather than a refusal (operators hand keys over as systemd credentials
/// or root-owned files the process may read either way). The line names the setting, the file and its mode, never
/// what the file holds.
final class KeyFileModes: Sendable {
    private let said = Mutex<Set<String>>([])
    private let say: @Sendable (String) -> Void

    /// `say` writes one warning line; by default through the daemon's log lines (`LineLogHandler`: `warning: …` on
    /// standard error, with its priority under the journal), as `serve` writes its other warnings.
    init(say: @escaping @Sendable (String) -> Void = KeyFileModes.log) {
        self.say = say
    }

    /// The level `serve` logs at (`log_level`, set as it reads its settings; `info` for the other commands): with
    /// `error`, the warning is not written, as no other warning is.
    static let level = Mutex<Logger.Level>(.info)

    static let log: @Sendable (String) -> Void = { line in
        let level = KeyFileModes.level.withLock { $0 }
        Logger(label: "dailyverse") { LineLogHandler(label: $0, level: level) }.warning("\(line)")
    }

    /// The warning for a key file of `mode`, nil when only its owner may open it.
    static func warning(_ path: String, setting: String, mode: Int) -> String? {
        let open = mode & 0o077
        guard open != 0 else { return nil }
        let ways = [(0o044, "readable"), (0o022, "writable"), (0o011, "executable")].filter { open & $0.0 != 0 }.map { $0.1 }
        let how = ways.count > 1 ? ways.dropLast().joined(separator: ", ") + " and " + (ways.last ?? "") : ways.joined()
        let digits = String(mode & 0o777, radix: 8)
        let shown = String(repeating: "0", count: max(1, 4 - digits.count)) + digits
        return "\(setting) '\(path)' is \(how) by others (mode \(shown)); chmod 600 it"
    }

    /// Says, the first time this process reads `path` for `setting`, that others may open it, if they may.
    func check(_ path: String, setting: String) {
        var info = stat()
        guard stat(path, &info) == 0, let line = Self.warning(path, setting: setting, mode: Int(info.st_mode)) else { return }
        guard said.withLock({ $0.insert(path).inserted }) else { return }
        say(line)
    }
}
