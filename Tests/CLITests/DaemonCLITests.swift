import Foundation
import GRDB
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The devices, outbox and serve commands, run as an operator runs them.
@Suite struct DaemonCLITests {
    static let apns = String(repeating: "ab", count: 32)

    func device(_ n: Int, zone: String = "UTC") -> String {
        #"{"platform": "apns", "token": "\#(String(format: "%064x", n))", "timezone": "\#(zone)", "reminder_time": "08:00"}"#
    }

    func writeFile(_ lines: [String], beside db: String, name: String) throws -> String {
        let folder = URL(fileURLWithPath: db).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func devicesAddListShowUpdateRemove() throws {
        let db = CLI.freshDatabase()
        let added = CLI.run(
            [
                "devices", "add", "--platform", "apns", "--token", Self.apns, "--tz", "Asia/Baghdad", "--time", "07:30", "--locale", "ar",
                "--calendar", "sighted", "--adjust", "1",
            ], database: db)
        #expect(added.status == 0, "\(added.stderr)")
        let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: id) != nil)
        let list = CLI.run(["devices", "list", "--json"], database: db)
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(devices.count == 1)
        #expect(
            Set(devices[0].keys).isSuperset(of: [
                "platform", "token", "timezone", "reminder_time", "locale", "calendar", "adjustment", "display_theme", "enabled",
            ]))
        #expect(devices[0]["reminder_time"] as? String == "07:30")
        #expect(devices[0]["calendar"] as? String == "sighted")
        let updated = CLI.run(["devices", "update", id, "--time", "06:45", "--tz", "Europe/London", "--json"], database: db).json
        #expect(updated["reminder_time"] as? String == "06:45")
        #expect(updated["timezone"] as? String == "Europe/London")
        #expect(CLI.run(["devices", "show", id], database: db).stdout.contains("Europe/London"))
        // The same token twice is refused.
        let again = CLI.run(["devices", "add", "--platform", "apns", "--token", Self.apns, "--tz", "UTC"], database: db)
        #expect(again.status != 0 && again.stderr.contains("already registered"))
        #expect(CLI.run(["devices", "remove", id], database: db).status == 0)
        #expect(CLI.run(["devices", "show", id], database: db).status != 0)
    }

    @Test(arguments: [
        (["devices", "add", "--platform", "apns", "--token", "xyz", "--tz", "UTC"], "xyz"),
        (["devices", "add", "--platform", "apns", "--token", String(repeating: "ab", count: 32), "--tz", "Mars/Olympus"], "Mars/Olympus"),
        (["devices", "add", "--platform", "apns", "--token", String(repeating: "ab", count: 32), "--tz", "UTC", "--time", "25:00"], "25:00"),
        (["devices", "add", "--platform", "pigeon", "--token", "x", "--tz", "UTC"], "pigeon"),
        (["devices", "add", "--platform", "fcm", "--token", "bad token!", "--tz", "UTC"], "bad token!"),
        (["outbox", "list", "--status", "lost"], "lost"),
        (["outbox", "prune", "--retention", "2h"], "2h"),
        (["serve", "--once", "--sink", "carrier-pigeon"], "carrier-pigeon"),
        (["serve", "--once", "--grace", "soon"], "soon"),
        (["serve", "--once", "--emit-ahead", "2h"], "2h"),
    ])
    func badDeviceInput(arguments: [String], value: String) {
        let result = CLI.run(arguments, database: CLI.freshDatabase())
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(value))
    }

    /// Each platform's token comes from its own options, and an option that does not apply is refused, naming it, by
    /// `add` and `update` alike: `--platform fcm --token … --endpoint …` was taken, the endpoint passed over, and
    /// `--platform webpush --token …` said "invalid Web Push subscription value ''" without naming what it needs.
    @Test func tokenOptionsApplyToTheirPlatformOnly() throws {
        let db = CLI.freshDatabase()
        let fcm = String(repeating: "f", count: 40)
        let added = CLI.run(["devices", "add", "--platform", "fcm", "--token", fcm, "--tz", "UTC"], database: db)
        try #require(added.status == 0, "\(added.stderr)")
        let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let webPush = ["--endpoint", "https://fcm.googleapis.com/fcm/send/x", "--p256dh", "BKey", "--auth", "secret"]
        let cases: [([String], [String])] = [
            (["--platform", "fcm", "--token", fcm, "--endpoint", "https://x"], ["--endpoint", "--platform fcm", "--token"]),
            (["--platform", "apns", "--token", Self.apns] + webPush, ["--endpoint", "--platform apns"]),
            (["--platform", "apns", "--token", Self.apns, "--auth", "secret"], ["--auth", "--platform apns"]),
            (["--platform", "webpush", "--token", "xyz"], ["--token", "--platform webpush", "--endpoint, --p256dh, --auth"]),
            (["--platform", "webpush"] + webPush + ["--token", "xyz"], ["--token", "--platform webpush"]),
            (
                ["--platform", "webpush", "--endpoint", "https://x"],
                ["--platform webpush needs --endpoint, --p256dh, --auth", "--p256dh, --auth are missing"]
            ),
            (["--platform", "webpush"], ["--platform webpush needs --endpoint, --p256dh, --auth"]),
            (["--platform", "apns"], ["--platform apns needs --token", "--token is missing"]),
        ]
        for (options, values) in cases {
            for command in [["devices", "add", "--tz", "UTC"], ["devices", "update", id]] {
                let result = CLI.run(command + options, database: db)
                #expect(result.status == 1 && result.stdout.isEmpty, "\(command + options): \(result.stderr)")
                #expect(result.stderr.hasPrefix("dailyverse: ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                for value in values { #expect(result.stderr.contains(value), "\(command + options) does not name \(value): \(result.stderr)") }
            }
        }
        let devices = try DatabaseQueue(path: db).read { try String.fetchAll($0, sql: "SELECT token FROM device") }
        #expect(devices == [fcm], "nothing added or changed: \(devices)")
    }

    /// A Web Push endpoint off the push services `serve` sends to (the browsers' own and `web_push_hosts`) is refused
    /// by `devices add`, `update` and `import`, naming its host and never the endpoint (the subscription's secret):
    /// it was taken, and then failed at every send.
    @Test func aWebPushEndpointOffThePushServicesIsRefusedWhenRegistered() throws {
        let db = CLI.freshDatabase()
        let keys = ["--p256dh", "B" + String(repeating: "A", count: 86), "--auth", "AAAAAAAAAAAAAAAAAAAAAA"]
        let added = CLI.run(
            ["devices", "add", "--platform", "webpush", "--endpoint", "https://fcm.googleapis.com/fcm/send/1"] + keys + ["--tz", "UTC"], database: db)
        try #require(added.status == 0, "\(added.stderr)")
        let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = [
            ("https://169.254.169.254/latest/capability-secret", "169.254.169.254"), ("https://localhost/capability-secret", "localhost"),
            ("https://push.example.org/capability-secret", "push.example.org"),
        ]
        for (endpoint, host) in refused {
            for command in [["devices", "add", "--tz", "UTC"], ["devices", "update", id]] {
                let result = CLI.run(command + ["--platform", "webpush", "--endpoint", endpoint] + keys, database: db)
                #expect(result.status == 1 && result.stdout.isEmpty, "\(command) \(endpoint): \(result.stderr)")
                #expect(result.stderr.hasPrefix("dailyverse: Web Push endpoint refused: its host '\(host)' "), "\(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1 && !result.stderr.contains("capability-secret"), "\(result.stderr)")
            }
        }
        let line = { (endpoint: String) in
            #"{"platform": "webpush", "token": {"endpoint": "\#(endpoint)", "p256dh": "\#(keys[1])", "auth": "\#(keys[3])"}, "timezone": "UTC"}"#
        }
        let file = try writeFile(
            [device(1), line("https://fcm.googleapis.com/fcm/send/2"), line(refused[0].0)], beside: db, name: "web.jsonl")
        let imported = CLI.run(["devices", "import", file], database: db)
        #expect(imported.status == 1, "\(imported.stdout)")
        #expect(imported.stderr.hasPrefix("dailyverse: web.jsonl:3: Web Push endpoint refused: its host '169.254.169.254' "), "\(imported.stderr)")
        #expect(!imported.stderr.contains("capability-secret"))
        let tokens = try DatabaseQueue(path: db).read { try String.fetchAll($0, sql: "SELECT token FROM device") }
        #expect(tokens == ["https://fcm.googleapis.com/fcm/send/1"], "nothing added or changed: \(tokens)")
        // A host web_push_hosts adds is one the sender takes, so it is taken here too.
        let hosts = ["DAILYVERSE_WEB_PUSH_HOSTS": "push.example.org"]
        let extra = CLI.run(
            ["devices", "update", id, "--platform", "webpush", "--endpoint", "https://push.example.org/send/1"] + keys, database: db,
            environment: hosts)
        #expect(extra.status == 0, "\(extra.stderr)")
        #expect(CLI.run(["devices", "import", file], database: db, environment: ["DAILYVERSE_WEB_PUSH_HOSTS": "169.254.169.254"]).status == 0)
    }

    @Test func importIsAllOrNothingAndNamesTheBadLine() throws {
        let db = CLI.freshDatabase()
        let good = (1...5).map { device($0) }
        let bad = try writeFile(good + [device(6, zone: "Mars/Olympus")] + [device(7)], beside: db, name: "devices.jsonl")
        let refused = CLI.run(["devices", "import", bad], database: db)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("devices.jsonl:6:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Mars/Olympus"))
        let none = try JSONSerialization.jsonObject(with: Data(CLI.run(["devices", "list", "--json"], database: db).stdout.utf8)) as? [Any]
        #expect(none?.isEmpty == true)
        let duplicate = try writeFile(good + [device(1)], beside: db, name: "dup.jsonl")
        let dupResult = CLI.run(["devices", "import", duplicate], database: db)
        #expect(dupResult.stderr.contains("dup.jsonl:6:"), "\(dupResult.stderr)")
        let fine = try writeFile(good, beside: db, name: "fine.jsonl")
        #expect(CLI.run(["devices", "import", fine], database: db).status == 0)
        let listed = try JSONSerialization.jsonObject(with: Data(CLI.run(["devices", "list", "--json"], database: db).stdout.utf8)) as? [Any]
        #expect(listed?.count == 5)
    }

    @Test func serveOnceEmitsEachDeviceOncePerDate() throws {
        let db = CLI.freshDatabase()
        let file = try writeFile((1...3).map { device($0) }, beside: db, name: "d.jsonl")
        #expect(CLI.run(["devices", "import", file, "--now", "2025-02-01T00:00:00Z"], database: db).status == 0)
        let first = CLI.run(["serve", "--once", "--now", "2025-03-01T08:30:00Z", "--sink", "stdout"], database: db)
        #expect(first.status == 0, "\(first.stderr)")
        let lines = first.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["id", "idempotency_key", "device_id", "platform", "local_date", "fire_at", "headers", "payload"])
            #expect(object["local_date"] as? String == "2025-03-01")
        }
        #expect(first.stderr.contains("3 queued"))
        let again = CLI.run(["serve", "--once", "--now", "2025-03-01T09:00:00Z", "--sink", "stdout"], database: db)
        #expect(again.stdout.isEmpty)
        let outbox =
            try JSONSerialization.jsonObject(with: Data(CLI.run(["outbox", "list", "--json", "--date", "2025-03-01"], database: db).stdout.utf8))
            as? [[String: Any]]
        #expect(outbox?.count == 3)
        #expect(outbox?.allSatisfy { $0["status"] as? String == "delivered" } == true)
        let status = CLI.run(["status", "--json"], database: db).json
        #expect((status["outbox"] as? [String: Int])?["delivered"] == 3)
        #expect(status["devices"] as? Int == 3)
        // Settled rows go once older than the retention, not before.
        let early = CLI.run(["outbox", "prune", "--now", "2025-03-20T00:00:00Z", "--json"], database: db)
        #expect(early.status == 0 && early.json["pruned"] as? Int == 0, "\(early.stderr)")
        // (Besides the three delivered rows, the earlier dates the devices missed since they were added.)
        let settled = try #require(
            try JSONSerialization.jsonObject(with: Data(CLI.run(["outbox", "list", "--json"], database: db).stdout.utf8)) as? [[String: Any]])
        #expect(settled.count > 3 && settled.allSatisfy { $0["status"] as? String != "pending" })
        let late = CLI.run(["outbox", "prune", "--now", "2025-04-15T00:00:00Z", "--retention", "30d", "--json"], database: db)
        #expect(late.json["pruned"] as? Int == settled.count)
        #expect(CLI.run(["outbox", "list", "--json"], database: db).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    /// The spool folder is made, the folders above it are not: a mistyped path is one line, and nothing is created.
    @Test func aSpoolWhoseParentIsMissingIsRefused() throws {
        let db = CLI.freshDatabase()
        let missing = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("no-such-folder")
        let spool = missing.appendingPathComponent("spool").path
        let refused = CLI.run(["serve", "--once", "--sink", "jsonl:\(spool)", "--now", "2025-03-01T08:30:00Z"], database: db)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("cannot create spool directory '\(spool)': its parent folder does not exist"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        let file = try writeFile(["x"], beside: db, name: "a-file")
        let notFolder = CLI.run(["serve", "--once", "--sink", "jsonl:\(file)", "--now", "2025-03-01T08:30:00Z"], database: db)
        #expect(notFolder.status == 1 && notFolder.stderr.contains("': not a folder (a regular file)"), "\(notFolder.stderr)")
    }

    /// A database path that names a pipe or a folder is one line saying what it is; SQLite wrote a journal beside a
    /// device or pipe before it said "disk I/O error".
    @Test func aDatabaseThatIsNoFileIsRefused() throws {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        let pipe = folder.appendingPathComponent("pipe").path
        #expect(mkfifo(pipe, 0o600) == 0)
        for (path, reason) in [(pipe, "not a regular file (a FIFO)"), (folder.path, "not a regular file (a folder)")] {
            let refused = CLI.run(["today", "--date", "2025-03-01"], database: path)
            #expect(refused.status == 1 && refused.stderr.contains("'\(path)': \(reason)"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
        }
        #expect(!FileManager.default.fileExists(atPath: pipe + "-journal"))
    }

    /// A data folder named that is not one is refused, whether or not the database was seeded before (it was passed
    /// over), and a database still to be made is not made (it was left migrated and empty).
    @Test func aDataFolderNamedThatIsNoneIsRefused() throws {
        let db = CLI.freshDatabase()
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: db).status == 0)
        let elsewhere = URL(fileURLWithPath: db).deletingLastPathComponent().path
        for (arguments, environment, named) in [
            (["--data", "/nonexistent"], [String: String](), "--data '/nonexistent'"), (["--data", elsewhere], [:], "--data '\(elsewhere)'"),
            ([], ["DAILYVERSE_DATA": "/nonexistent"], "DAILYVERSE_DATA '/nonexistent' (environment)"),
        ] {
            let refused = CLI.run(["today", "--date", "2025-03-01"] + arguments, database: db, environment: environment)
            #expect(
                refused.status == 1 && refused.stderr.hasPrefix("dailyverse: invalid \(named): not a data folder: it has no calendar/months.json"),
                "\(refused.stderr)")
        }
        let unmade = URL(fileURLWithPath: elsewhere).appendingPathComponent("unmade.sqlite").path
        let refused = CLI.run(["today", "--date", "2025-03-01", "--data", "/nonexistent"], database: unmade)
        #expect(refused.status == 1)
        #expect(!FileManager.default.fileExists(atPath: unmade))
    }

    @Test func configurationComesFromFlagsThenEnvironmentThenFile() throws {
        let db = CLI.freshDatabase()
        let file = try writeFile((1...2).map { device($0) }, beside: db, name: "d.jsonl")
        #expect(CLI.run(["devices", "import", file, "--now", "2025-02-01T00:00:00Z"], database: db).status == 0)
        let spool = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("from-file").path
        let config = try writeFile(["sink = \"jsonl:\(spool)\"", "grace = \"2h\""], beside: db, name: "config.toml")
        // The file's sink is used …
        let fromFile = CLI.run(["serve", "--once", "--config", config, "--now", "2025-03-01T08:30:00Z"], database: db)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.stdout.contains("jsonl:\(spool)"))
        // … the environment overrides the file, and a flag overrides both.
        let fromEnvironment = CLI.run(
            ["serve", "--once", "--config", config, "--now", "2025-03-02T08:30:00Z"], database: db, environment: ["DAILYVERSE_SINK": "stdout"])
        #expect(fromEnvironment.stderr.contains("(stdout)"))
        let fromFlag = CLI.run(
            ["serve", "--once", "--config", config, "--sink", "jsonl:\(spool)", "--now", "2025-03-03T08:30:00Z"], database: db,
            environment: ["DAILYVERSE_SINK": "stdout"])
        #expect(fromFlag.stdout.contains("jsonl:\(spool)"))
        // An unknown key is refused, naming it.
        let bad = try writeFile(["sinq = \"stdout\""], beside: db, name: "bad.toml")
        let refused = CLI.run(["status", "--config", bad], database: db)
        #expect(refused.status != 0 && refused.stderr.contains("sinq"))
    }

    /// The configuration file the installer puts in /etc is one `serve` starts with: its numbers are numbers
    /// (`max_devices_per_user = 20` stopped it: every value was read as a string).
    @Test func theShippedConfigurationStartsServe() throws {
        let db = CLI.freshDatabase()
        let example = CLI.repository.appendingPathComponent("systemd/config.toml.example").path
        let once = CLI.run(["serve", "--once", "--sink", "stdout", "--config", example, "--now", "2025-03-01T08:30:00Z"], database: db)
        #expect(once.status == 0, "\(once.stderr)")
        // Numbers where the README shows numbers, and a bad one still named.
        let numbers = try writeFile(["max_devices_per_user = 5", "max_connections = 100"], beside: db, name: "numbers.toml")
        #expect(CLI.run(["serve", "--once", "--sink", "stdout", "--config", numbers, "--now", "2025-03-01T08:30:00Z"], database: db).status == 0)
        let zero = try writeFile(["max_devices_per_user = 0"], beside: db, name: "zero.toml")
        let refused = CLI.run(["serve", "--once", "--sink", "stdout", "--config", zero, "--now", "2025-03-01T08:30:00Z"], database: db)
        #expect(
            refused.status == 1
                && refused.stderr == "dailyverse: \(zero):1: invalid max_devices_per_user '0': expected a whole number from 1 to 10000\n",
            "\(refused.stderr)")
    }

    /// Every key the README's configuration table documents is one the file accepts: `content_database` and
    /// `delivery_lease` were documented and refused as unknown.
    @Test func everyDocumentedKeyIsAcceptedByTheFile() throws {
        let readme = try String(contentsOf: CLI.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let table = try #require(readme.components(separatedBy: "| key | environment | flag | default |\n").dropFirst().first)
        let rows = table.split(separator: "\n").prefix { $0.hasPrefix("|") }.dropFirst()
        let keys = rows.flatMap { row in
            row.split(separator: "|").first.map { cell in
                cell.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
            } ?? []
        }
        #expect(keys.count > 30 && keys.contains("content_database") && keys.contains("throttle_key_file"), "\(keys)")
        let db = CLI.freshDatabase()
        // Each key with the value "x": the file's keys are checked as it loads, before any value is read, so the first
        // value `status` reads (the layers', whose form is checked before the database is opened) is what it stops at,
        // named with the file's line.
        let written = keys.filter { $0 != "database" }
        let config = try writeFile(written.map { "\($0) = \"x\"" }, beside: db, name: "all.toml")
        let status = CLI.run(["status", "--config", config, "--db", db])
        let line = try #require(written.firstIndex(of: "layers")) + 1
        #expect(status.stderr.hasPrefix("dailyverse: \(config):\(line): invalid layers 'x': 'x' is not LAYER=EDITION"), "\(status.stderr)")
    }

    /// The example the installer puts in /etc names every key the README's table documents, and no other: `layers` and
    /// the services' addresses were documented and missing from it.
    @Test func theShippedExampleNamesEveryDocumentedKey() throws {
        let readme = try String(contentsOf: CLI.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let table = try #require(readme.components(separatedBy: "| key | environment | flag | default |\n").dropFirst().first)
        let documented = Set(
            table.split(separator: "\n").prefix { $0.hasPrefix("|") }.dropFirst().flatMap { row in
                row.split(separator: "|").first.map { cell in
                    cell.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
                } ?? []
            })
        let example = try String(contentsOf: CLI.repository.appendingPathComponent("systemd/config.toml.example"), encoding: .utf8)
        // Set (`key = value`) or shown commented out (`# key = value`).
        let named = Set(
            example.split(separator: "\n").compactMap { line -> String? in
                let text = line.hasPrefix("# ") ? line.dropFirst(2) : line[...]
                guard let equals = text.range(of: " = ") else { return nil }
                let key = text[..<equals.lowerBound]
                return key.allSatisfy { $0.isLowercase || $0 == "_" } ? String(key) : nil
            })
        #expect(documented.count > 30)
        #expect(documented.subtracting(named).isEmpty, "documented, not in the example: \(documented.subtracting(named).sorted())")
        #expect(named.subtracting(documented).isEmpty, "in the example, not documented: \(named.subtracting(documented).sorted())")
    }

    /// A throttle key file that cannot be one is a line naming it, whatever the store (checked by every `serve`).
    @Test func aThrottleKeyFileThatCannotBeOneIsRefused() throws {
        let db = CLI.freshDatabase()
        let short = try writeFile(["short"], beside: db, name: "throttle-key")
        for (path, says) in [
            (short, "6 bytes: expected 32 to 4096 (make one with: head -c 32 /dev/urandom > FILE)"), (db + ".none", "the file does not exist"),
        ] {
            let refused = CLI.run(["serve", "--once", "--sink", "stdout"], database: db, environment: ["DAILYVERSE_THROTTLE_KEY_FILE": path])
            #expect(
                refused.status == 1 && refused.stderr == "dailyverse: invalid DAILYVERSE_THROTTLE_KEY_FILE '\(path)' (environment): \(says)\n",
                "\(refused.stderr)")
        }
    }

    /// On PostgreSQL, a lease shorter than four push timeouts is refused at start, naming both: a batch could still be
    /// being sent when its lease ended, and another process would send it too. (Checked before the database is asked.)
    @Test func aLeaseThatCouldEndMidBatchIsRefused() throws {
        let environment = ["DAILYVERSE_DELIVERY_LEASE": "1m", "DAILYVERSE_PUSH_TIMEOUT": "30s"]
        let refused = CLI.run(
            ["serve", "--once", "--sink", "stdout"], database: "postgresql://dailyverse@127.0.0.1:1/none", environment: environment)
        #expect(
            refused.status == 1
                && refused.stderr
                    == "dailyverse: delivery_lease 1m is shorter than 4 × push_timeout (2m): a batch could still be being sent when its lease ends, and another process would send it too; lengthen delivery_lease or shorten push_timeout\n",
            "\(refused.stderr)")
    }

    @Test func serveStopsCleanlyOnSIGTERM() throws {
        let db = CLI.freshDatabase()
        #expect(
            CLI.run(["devices", "add", "--platform", "apns", "--token", Self.apns, "--tz", "UTC", "--now", "2025-02-01T00:00:00Z"], database: db)
                .status == 0)
        let later = ["devices", "add", "--platform", "apns", "--token", String(repeating: "cd", count: 32), "--tz", "UTC", "--time", "08:20"]
        #expect(CLI.run(later + ["--now", "2025-02-01T00:00:00Z"], database: db).status == 0)
        let (child, port, _) = try CLI.startListening(["serve", "--now", "2025-03-01T08:10:00Z", "--sink", "stdout"], database: db)
        try waitUntil { try delivered(db) > 0 }
        // The HTTP API runs in the same process.
        try waitUntil { health(port) == "{\"status\":\"ok\"}" }
        // A reload, a log rotator's signal or a closed terminal does not end it: the API still answers afterwards.
        for signal in [SIGHUP, SIGUSR1, SIGUSR2] { kill(child.processIdentifier, signal) }
        #expect(health(port) == "{\"status\":\"ok\"}")
        #expect(child.isRunning)
        kill(child.processIdentifier, SIGTERM)
        let clock = ContinuousClock()
        let start = clock.now
        child.waitUntilExit()
        #expect(clock.now - start < .seconds(10))
        #expect(child.terminationReason == .exit && child.terminationStatus == 0)
        // The daemon wrote the 08:20 fire ahead of its time, to be delivered then.
        let status = CLI.run(["status", "--now", "2025-03-01T08:11:00Z"], database: db)
        #expect(status.stdout.contains("pending 1 (1 written ahead)"), "\(status.stdout)")
        #expect(CLI.run(["status", "--json", "--now", "2025-03-01T08:11:00Z"], database: db).json["written_ahead"] as? Int == 1)
    }

    /// `--listen 127.0.0.1:0` asks the kernel for a port: the log names the port bound (it said `127.0.0.1:0`), and the
    /// API answers there.
    @Test func aListenPortOfZeroIsLoggedAsThePortBound() throws {
        let db = CLI.freshDatabase()
        let (child, port, line) = try CLI.startListening(["serve", "--now", "2025-03-01T08:10:00Z", "--sink", "stdout"], database: db)
        defer {
            if child.isRunning {
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
            }
        }
        // The line names the port bound, not the 0 asked for, and the API answers there.
        #expect(line.hasSuffix("API listening address=127.0.0.1:\(port)") && port != 0, "\(line)")
        #expect(health(port) == "{\"status\":\"ok\"}", "\(line)")
        kill(child.processIdentifier, SIGTERM)
        child.waitUntilExit()
        #expect(child.terminationReason == .exit && child.terminationStatus == 0)
    }

    /// A flood of connections, each sending a byte, past what the open-file limit allows, while devices are due: the
    /// connections over the limit are refused, the scheduler keeps the descriptors it needs and delivers every due row
    /// on time, and the API answers once the flood ends.
    @Test func aFloodOfConnectionsCannotStarveTheScheduler() throws {
        let db = CLI.freshDatabase()
        let count = 50
        let file = try writeFile((1...count).map { device($0) }, beside: db, name: "devices.jsonl")
        #expect(CLI.run(["devices", "import", file, "--now", "2025-02-01T00:00:00Z"], database: db).status == 0)
        let spool = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("spool").path
        // 256 descriptors: 128 for connections, 128 kept for the rest. The devices fire at 08:00, 3 s after the start.
        let (child, port, _) = try CLI.startListening(
            ["serve", "--now", "2025-03-01T07:59:57Z", "--sink", "jsonl:" + spool], database: db,
            wrapper: ["/usr/bin/prlimit", "--nofile=256:256", "--"])
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        try waitUntil { health(port) == "{\"status\":\"ok\"}" }
        // 400 connections, each with one byte of a request, held open.
        var flood: [Int32] = []
        defer { for fd in flood { close(fd) } }
        for _ in 0..<400 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if connected == 0 { _ = send(fd, "G", 1, Int32(MSG_NOSIGNAL)) }
            flood.append(fd)
        }
        // Every due row is delivered, each within seconds of its time.
        try waitUntil { try delivered(db) == count }
        let late = try DatabaseQueue(path: db).read { db in
            try Double.fetchOne(db, sql: "SELECT max(delivered_at - fire_at) FROM outbox WHERE status = 'delivered'") ?? .infinity
        }
        #expect(late < 10, "delivered \(late) s after its time")
        for fd in flood { close(fd) }
        flood = []
        try waitUntil { health(port) == "{\"status\":\"ok\"}" }
        kill(child.processIdentifier, SIGTERM)
        child.waitUntilExit()
        #expect(child.terminationReason == .exit && child.terminationStatus == 0)
    }

    /// A backup moved over the database while `serve` runs: `/health` says so at once, and the next pass stops the
    /// process with status 1 instead of laying the old log over the new file.
    @Test func aDatabaseReplacedUnderServeStopsIt() throws {
        let db = CLI.freshDatabase()
        #expect(
            CLI.run(["devices", "add", "--platform", "apns", "--token", Self.apns, "--tz", "UTC", "--now", "2025-02-01T00:00:00Z"], database: db)
                .status == 0)
        // The device fires at 08:00, a few seconds after the start: the pass then finds the file replaced.
        let (child, port, _) = try CLI.startListening(["serve", "--now", "2025-03-01T07:59:54Z", "--sink", "stdout"], database: db)
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        try waitUntil { health(port) == "{\"status\":\"ok\"}" }
        let backup = db + ".backup"
        try FileManager.default.copyItem(atPath: db, toPath: backup)
        #expect(rename(backup, db) == 0)
        let gone = health(port)
        #expect(gone?.contains("database_gone") == true)
        #expect(gone?.contains(db) == false, "the answer names no path of the server: \(gone ?? "")")
        try waitUntil { !child.isRunning }
        child.waitUntilExit()
        #expect(child.terminationReason == .exit && child.terminationStatus == 1)
    }

    /// kill -9 at any moment, restart: one outbox row per device and date, each spooled once.
    @Test(arguments: ["emission", "delivery"])
    func killedMidwayAndRestartedNothingIsLostOrDoubled(phase: String) throws {
        let db = CLI.freshDatabase()
        let count = 6000
        let file = try writeFile(
            (1...count).map { device($0, zone: ["UTC", "Asia/Baghdad", "America/New_York"][$0 % 3]) }, beside: db, name: "many.jsonl")
        #expect(CLI.run(["devices", "import", file, "--now", "2025-02-01T00:00:00Z"], database: db).status == 0)
        let spool = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("spool")
        // 13:30 UTC: past 08:00 on 1 March in all three zones (Baghdad 05:00Z, UTC 08:00Z, New York 13:00Z), all
        // within a 12 h grace; the two days before are recorded as missed.
        let arguments = ["serve", "--once", "--now", "2025-03-01T13:30:00Z", "--grace", "12h", "--sink", "jsonl:" + spool.path]
        let child = try CLI.start(arguments, database: db)
        if phase == "emission" {
            try waitUntil { try rows(db, date: "2025-03-01") > 0 }
        } else {
            try waitUntil {
                (try? FileManager.default.attributesOfItem(atPath: spool.appendingPathComponent("2025-03-01.jsonl").path)[.size] as? Int) ?? 0 > 0
            }
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        // It was killed mid-way, not after finishing.
        #expect(child.terminationReason == .uncaughtSignal)
        #expect(try delivered(db) < count)
        let restarted = CLI.run(arguments, database: db)
        #expect(restarted.status == 0, "\(restarted.stderr)")
        let keys = try DatabaseQueue(path: db).read { db in
            try String.fetchAll(db, sql: "SELECT device_id || '/' || local_date FROM outbox WHERE local_date = '2025-03-01' AND status = 'delivered'")
        }
        #expect(keys.count == count)
        #expect(try rows(db, date: "2025-03-01") == count)
        let lines = try String(contentsOf: spool.appendingPathComponent("2025-03-01.jsonl"), encoding: .utf8).split(separator: "\n")
        let spooled = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["idempotency_key"] as? String }
        #expect(spooled.count == count)
        #expect(Set(spooled) == Set(keys))
    }

    /// What `GET /health` on the loopback port answers, if anything.
    func health(_ port: UInt16) -> String? {
        let semaphore = DispatchSemaphore(value: 0)
        let box = Box()
        URLSession.shared.dataTask(with: URL(string: "http://127.0.0.1:\(port)/health")!) { data, _, _ in
            box.text = data.map { String(decoding: $0, as: UTF8.self) }
            semaphore.signal()
        }.resume()
        semaphore.wait()
        return box.text
    }

    final class Box: @unchecked Sendable { var text: String? }

    func rows(_ path: String, date: String) throws -> Int {
        try DatabaseQueue(path: path).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE local_date = ?", arguments: [date]) ?? 0
        }
    }

    func delivered(_ path: String) throws -> Int {
        try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE status = 'delivered'") ?? 0 }
    }

    /// Polls a condition on what a child process has written, for at most 60 s.
    func waitUntil(_ condition: () throws -> Bool) throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline {
            if (try? condition()) == true { return }
            usleep(2_000)
        }
        Issue.record("condition not met within 60 s")
    }
}
