import DailyVerseTestSupport
import Encodings
import Foundation
import PushServices
import PushStandIns
import Testing

/// The push commands and `--sink push` as an operator runs them, against the stand-ins on loopback.
@Suite(.serialized) struct PushCLITests {
    /// The CLI blocks while it runs: off the cooperative pool, which the stand-in's handlers need.
    static func run(_ arguments: [String], database: String, environment: [String: String] = [:]) async -> CLI.Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: CLI.run(arguments, database: database, environment: environment)) }
        }
    }

    static let now = "2025-03-01T08:00:30Z"

    /// A folder with the stand-in's CA, an APNs key, a service-account file and a VAPID key; the environment that
    /// configures all three services against the stand-in at `port`.
    static func configuration(_ standIn: PushStandIn, port: Int) throws -> (folder: URL, environment: [String: String]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-push-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ca = try standIn.certificates.writeAuthority(in: folder)
        let p8 = folder.appendingPathComponent("AuthKey.p8")
        try standIn.p8.write(to: p8, atomically: true, encoding: .utf8)
        let account = folder.appendingPathComponent("service-account.json")
        try standIn.serviceAccountJSON(port: port).write(to: account, atomically: true, encoding: .utf8)
        let vapid = folder.appendingPathComponent("vapid.pem")
        try standIn.vapidKey.pemRepresentation.write(to: vapid, atomically: true, encoding: .utf8)
        // The owner's alone, as key files should be (one others may read is warned of).
        for file in [p8, account, vapid] { try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path) }
        return (
            folder,
            [
                "DAILYVERSE_PUSH_CA_FILE": ca, "DAILYVERSE_APNS_KEY_FILE": p8.path, "DAILYVERSE_APNS_KEY_ID": standIn.apnsKeyID,
                "DAILYVERSE_APNS_TEAM_ID": standIn.teamID, "DAILYVERSE_APNS_ENVIRONMENT": "sandbox",
                "DAILYVERSE_APNS_URL": "https://127.0.0.1:\(port)",
                "DAILYVERSE_APNS_TOPIC": standIn.topic, "DAILYVERSE_FCM_SERVICE_ACCOUNT_FILE": account.path,
                "DAILYVERSE_FCM_URL": "https://127.0.0.1:\(port)", "DAILYVERSE_VAPID_KEY_FILE": vapid.path,
                "DAILYVERSE_VAPID_SUBJECT": "mailto:ops@example.org", "DAILYVERSE_WEB_PUSH_HOSTS": "127.0.0.1", "DAILYVERSE_NOW": now,
            ]
        )
    }

    @Test func pushTestSendsOneDeviceNowAndSaysWhatTheServiceAnswered() async throws {
        let standIn = try PushStandIn(clock: { ISO8601DateFormatter().date(from: Self.now)! })
        try await standIn.run(on: OwnThreadExecutor.servers) { port in
            let (folder, environment) = try Self.configuration(standIn, port: port)
            defer { try? FileManager.default.removeItem(at: folder) }
            let database = CLI.freshDatabase()
            let token = String(repeating: "b2", count: 32)
            let added = await Self.run(
                ["devices", "add", "--platform", "apns", "--token", token, "--tz", "UTC"], database: database, environment: environment)
            #expect(added.status == 0, "\(added.stderr)")
            let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let sent = await Self.run(["push", "test", id], database: database, environment: environment)
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stdout == "\(id) (apns): accepted (apns-b2b2b2b2)\n")
            #expect(await standIn.script.received.count == 1)
            // Nothing was written to the outbox.
            #expect(await Self.run(["outbox", "list", "--json"], database: database, environment: environment).stdout.contains(id) == false)
            // The service's refusal is the error line, with exit status 1 and nothing on stdout; with --json the answer's
            // object is on stdout too, `accepted` false with the service's reason, for a script to read (it was
            // printed only when accepted, so `accepted` was always true).
            await standIn.script.answer(token, with: .apns(410, "Unregistered"), .apns(410, "Unregistered"))
            let answer = "the service no longer knows this device: APNs 410 Unregistered"
            let refused = await Self.run(["push", "test", id], database: database, environment: environment)
            #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stdout)")
            #expect(refused.stderr == "dailyverse: \(id) (apns): \(answer)\n", "\(refused.stderr)")
            let json = await Self.run(["push", "test", id, "--json"], database: database, environment: environment)
            #expect(json.status == 1, "\(json.stderr)")
            #expect(json.stderr == "dailyverse: \(id) (apns): \(answer)\n", "\(json.stderr)")
            #expect(Set(json.json.keys) == ["device_id", "platform", "accepted", "answer"], "\(json.stdout)")
            #expect(json.json["accepted"] as? Bool == false && json.json["answer"] as? String == answer, "\(json.stdout)")
            #expect(json.json["device_id"] as? String == id && json.json["platform"] as? String == "apns")
            // Accepted (the stand-in's answer once the scripted ones are used): the same object, `accepted` true.
            let accepted = await Self.run(["push", "test", id, "--json"], database: database, environment: environment)
            #expect(accepted.status == 0 && accepted.stderr.isEmpty, "\(accepted.stderr)")
            #expect(accepted.json["accepted"] as? Bool == true && (accepted.json["answer"] as? String)?.hasPrefix("accepted") == true)
            // A mistake before any answer is the error line alone, --json or not.
            let unknown = await Self.run(["push", "test", "no-such-device", "--json"], database: database, environment: environment)
            #expect(
                unknown.status == 1 && unknown.stdout.isEmpty && unknown.stderr == "dailyverse: no device 'no-such-device'\n", "\(unknown.stderr)")
            #expect(await standIn.script.problems.isEmpty)
        }
    }

    @Test func serveDeliversThroughThePushSinkAndStatusSaysHowItWent() async throws {
        let standIn = try PushStandIn(clock: { ISO8601DateFormatter().date(from: Self.now)! })
        try await standIn.run(on: OwnThreadExecutor.servers) { port in
            let (folder, environment) = try Self.configuration(standIn, port: port)
            defer { try? FileManager.default.removeItem(at: folder) }
            let database = CLI.freshDatabase()
            // The stand-in's Web Push service is on loopback: a host web_push_hosts adds, for devices add as for serve.
            let setup = ["DAILYVERSE_NOW": "2025-02-28T00:00:00Z", "DAILYVERSE_WEB_PUSH_HOSTS": "127.0.0.1"]
            _ = await Self.run(
                ["devices", "add", "--platform", "apns", "--token", String(repeating: "c3", count: 32), "--tz", "UTC"], database: database,
                environment: setup)
            _ = await Self.run(
                ["devices", "add", "--platform", "fcm", "--token", "fcm-token:APA91bCLIStandIn_01", "--tz", "UTC"], database: database,
                environment: setup)
            let sub = standIn.subscription(1, port: port)
            _ = await Self.run(
                ["devices", "add", "--platform", "webpush", "--endpoint", sub.endpoint, "--p256dh", sub.p256dh, "--auth", sub.auth, "--tz", "UTC"],
                database: database, environment: setup)
            await standIn.script.answer("fcm-token:APA91bCLIStandIn_01", with: .fcm(404, status: "NOT_FOUND", code: "UNREGISTERED"))
            let pass = await Self.run(["serve", "--once", "--sink", "push"], database: database, environment: environment)
            #expect(pass.status == 0, "\(pass.stderr)")
            #expect(pass.stdout.contains("3 queued") && pass.stdout.contains("2 delivered") && pass.stdout.contains("1 failed"), "\(pass.stdout)")
            let status = await Self.run(["status", "--json"], database: database, environment: environment)
            let push = try #require(status.json["push"] as? [[String: Any]])
            let byPlatform = Dictionary(uniqueKeysWithValues: push.map { ($0["platform"] as? String ?? "", $0) })
            #expect(byPlatform["apns"]?["delivered_last_hour"] as? Int == 1 && byPlatform["apns"]?["configured"] as? Bool == true)
            #expect(byPlatform["apns"]?["provider_token_age"] as? Int == 0)
            #expect(byPlatform["fcm"]?["failed_last_hour"] as? Int == 1 && byPlatform["fcm"]?["disabled_last_day"] as? Int == 1)
            #expect(byPlatform["webpush"]?["delivered_last_hour"] as? Int == 1)
            let text = await Self.run(["status"], database: database, environment: environment)
            #expect(text.stdout.contains("fcm      configured; 0 delivered, 1 failed, 0 retrying; 1 disabled"), "\(text.stdout)")
            let devices = await Self.run(["devices", "list", "--json"], database: database, environment: environment)
            #expect(devices.stdout.contains(#""disabled_reason":"FCM 404 UNREGISTERED""#), "\(devices.stdout)")
            #expect(await standIn.script.problems.isEmpty)
        }
    }

    @Test func aMisconfiguredServiceIsOneLineNamingTheSettingBeforeAnythingRuns() async throws {
        let standIn = try PushStandIn(clock: { Date() })
        let (folder, good) = try Self.configuration(standIn, port: 9)
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = folder.appendingPathComponent("garbage.p8")
        try "not a key".write(to: garbage, atomically: true, encoding: .utf8)
        let database = CLI.freshDatabase()
        let cases: [([String: String], String)] = [
            (
                ["DAILYVERSE_APNS_KEY_FILE": "/nonexistent/AuthKey.p8"],
                "invalid DAILYVERSE_APNS_KEY_FILE '/nonexistent/AuthKey.p8' (environment): the file does not exist"
            ),
            (["DAILYVERSE_APNS_KEY_FILE": garbage.path], "invalid DAILYVERSE_APNS_KEY_FILE '\(garbage.path)' (environment): not an APNs .p8 key"),
            (
                ["DAILYVERSE_APNS_ENVIRONMENT": "staging"],
                "invalid DAILYVERSE_APNS_ENVIRONMENT 'staging' (environment): expected production or sandbox"
            ),
            (["DAILYVERSE_APNS_KEY_ID": "short"], "invalid DAILYVERSE_APNS_KEY_ID 'short' (environment): expected 10 capital letters and digits"),
            (
                ["DAILYVERSE_VAPID_SUBJECT": "mailto:me@localhost"],
                "invalid DAILYVERSE_VAPID_SUBJECT 'mailto:me@localhost' (environment): it names 'localhost'"
            ),
            (
                ["DAILYVERSE_FCM_SERVICE_ACCOUNT_FILE": garbage.path],
                "invalid DAILYVERSE_FCM_SERVICE_ACCOUNT_FILE '\(garbage.path)' (environment): not a service-account JSON object"
            ),
            (
                ["DAILYVERSE_PUSH_CA_FILE": garbage.path],
                "invalid DAILYVERSE_PUSH_CA_FILE '\(garbage.path)' (environment): is not a PEM certificate file"
            ),
            (
                ["DAILYVERSE_APNS_URL": "http://127.0.0.1:1"],
                "invalid DAILYVERSE_APNS_URL 'http://127.0.0.1:1' (environment): expected an https:// URL"
            ),
        ]
        for (change, message) in cases {
            let result = await Self.run(["serve", "--once", "--sink", "push"], database: database, environment: good.merging(change) { $1 })
            #expect(result.status == 1, "\(change)")
            #expect(result.stderr.hasPrefix("dailyverse: \(message)"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            // The key's content is never in the message.
            #expect(!result.stderr.contains("PRIVATE KEY"))
        }
        let none = await Self.run(["serve", "--once", "--sink", "push"], database: database)
        #expect(none.status == 1 && none.stderr.contains("sink push: no push service is configured"), "\(none.stderr)")
        // A service's settings of its own are checked when the service is not configured, and whatever the sink: a typo
        // is found the day it is made, not the day the keys come.
        let unconfigured: [([String: String], String)] = [
            (["DAILYVERSE_APNS_ENVIRONMENT": "dev"], "invalid DAILYVERSE_APNS_ENVIRONMENT 'dev' (environment): expected production or sandbox"),
            (["DAILYVERSE_APNS_URL": "http://x"], "invalid DAILYVERSE_APNS_URL 'http://x' (environment): expected an https:// URL"),
            (["DAILYVERSE_FCM_URL": "http://x"], "invalid DAILYVERSE_FCM_URL 'http://x' (environment): expected an https:// URL"),
            (["DAILYVERSE_FCM_TOKEN_URL": "ftp://x"], "invalid DAILYVERSE_FCM_TOKEN_URL 'ftp://x' (environment): expected an https:// URL"),
            (
                ["DAILYVERSE_WEB_PUSH_HOSTS": "push.example.org, bad host"],
                "invalid DAILYVERSE_WEB_PUSH_HOSTS 'push.example.org, bad host' (environment): the entry 'bad host' is not a host name"
            ),
        ]
        for (setting, message) in unconfigured {
            let result = await Self.run(["serve", "--once", "--sink", "stdout"], database: database, environment: setting)
            #expect(result.status == 1 && result.stderr.hasPrefix("dailyverse: \(message)"), "\(setting): \(result.stderr)")
        }
    }

    /// A key file others may open (any of the mode's 0o077 bits) is read, as before, with one warning naming the
    /// setting, the file and its mode, as ssh says of a private key but without refusing it (systemd credentials and
    /// root's files are handed over otherwise); one only its owner may open is read without a word. The key is never
    /// printed.
    @Test func aKeyFileOthersMayReadIsWarnedOfOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-key-modes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("vapid.pem").path
        let database = CLI.freshDatabase()
        #expect(await Self.run(["vapid", "generate", "--key-file", file], database: database).status == 0)
        func publicKey(mode: Int) async throws -> CLI.Result {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
            return await Self.run(["vapid", "public-key", "--vapid-key-file", file], database: database)
        }
        let private600 = try await publicKey(mode: 0o600)
        #expect(private600.status == 0 && private600.stderr.isEmpty, "\(private600.stderr)")
        for (mode, line) in [
            (0o644, "warning: vapid_key_file '\(file)' is readable by others (mode 0644); chmod 600 it\n"),
            (0o640, "warning: vapid_key_file '\(file)' is readable by others (mode 0640); chmod 600 it\n"),
            (0o620, "warning: vapid_key_file '\(file)' is writable by others (mode 0620); chmod 600 it\n"),
        ] {
            let open = try await publicKey(mode: mode)
            #expect(open.status == 0 && open.stdout == private600.stdout, "\(open.stderr)")
            // One line, whatever the journal's priority prefix (JOURNAL_STREAM, when the tests run under systemd).
            #expect(open.stderr.hasSuffix(line) && open.stderr.split(separator: "\n").count == 1, "\(open.stderr)")
            #expect(!open.stderr.contains("PRIVATE KEY"))
        }
        // serve reads every configured key file, and says so of each that others may read, once.
        let standIn = try PushStandIn(clock: { Date() })
        let (keys, environment) = try Self.configuration(standIn, port: 9)
        defer { try? FileManager.default.removeItem(at: keys) }
        let p8 = keys.appendingPathComponent("AuthKey.p8").path
        let account = keys.appendingPathComponent("service-account.json").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: p8)
        try FileManager.default.setAttributes([.posixPermissions: 0o604], ofItemAtPath: account)
        let pass = await Self.run(["serve", "--once", "--sink", "stdout"], database: CLI.freshDatabase(), environment: environment)
        #expect(pass.status == 0, "\(pass.stderr)")
        for line in [
            "warning: apns_key_file '\(p8)' is readable by others (mode 0644); chmod 600 it\n",
            "warning: fcm_service_account_file '\(account)' is readable by others (mode 0604); chmod 600 it\n",
        ] {
            #expect(pass.stderr.components(separatedBy: line).count == 2, "\(pass.stderr)")
        }
        #expect(!pass.stderr.contains("vapid_key_file") && !pass.stderr.contains("PRIVATE KEY"), "\(pass.stderr)")
        // With log_level = error, no warning is written, these neither.
        var quiet = environment
        quiet["DAILYVERSE_LOG_LEVEL"] = "error"
        let silent = await Self.run(["serve", "--once", "--sink", "stdout"], database: CLI.freshDatabase(), environment: quiet)
        #expect(silent.status == 0 && !silent.stderr.contains("chmod 600"), "\(silent.stderr)")
    }

    @Test func vapidKeysAreMadeIntoAPrivateFileAndTheirPublicHalfPrinted() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("vapid.pem").path
        let database = CLI.freshDatabase()
        let made = await Self.run(["vapid", "generate", "--key-file", file, "--json"], database: database)
        #expect(made.status == 0, "\(made.stderr)")
        let publicKey = try #require(made.json["public_key"] as? String)
        #expect(try #require(Base64URL.decode(publicKey)).count == 65)
        #expect(!made.stdout.contains("PRIVATE"))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let shown = await Self.run(["vapid", "public-key", "--vapid-key-file", file], database: database)
        #expect(shown.stdout == publicKey + "\n")
        // Never over an existing key: subscriptions are bound to it.
        let again = await Self.run(["vapid", "generate", "--key-file", file], database: database)
        #expect(again.status == 1 && again.stderr.contains("File exists"), "\(again.stderr)")
        let printed = await Self.run(["vapid", "generate"], database: database)
        #expect(printed.stdout.contains("-----BEGIN PRIVATE KEY-----") && printed.stdout.contains("public key (applicationServerKey): "))
    }
}
