import DailyVerseTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The commands on PostgreSQL: refusals in one line (no file to copy, a running scheduler, a password in the address, a
/// command that writes the content, a server that cannot be reached), the operator's commands there, and, with a test server, `migrate-store`'s copy and its refusal to copy twice,
/// `serve --once`'s pass, and two `serve` processes answering one API.
struct PostgresCLITests {
    @Test func refusalsAreOneLineAndNameWhatIsWrong() throws {
        let db = CLI.freshDatabase()
        _ = CLI.run(["today"], database: db)
        let missing = CLI.run(["migrate-store", "--from", db + ".nothing", "--to", "postgresql://dv@127.0.0.1:1/dv"])
        #expect(missing.status == 1 && missing.stderr == "dailyverse: no SQLite database at '\(db).nothing'\n", "\(missing.stderr)")
        let password = CLI.run(["migrate-store", "--from", db, "--to", "postgresql://dv:hunter2@127.0.0.1/dv"])
        #expect(password.status == 1 && password.stderr.contains("carries a password") && !password.stderr.contains("hunter2"), "\(password.stderr)")
        // A scheduler holds the database (its lock, as serve takes it): the copy waits for no one and writes nothing.
        let lock = open(db + ".scheduler-lock", O_RDWR | O_CREAT, 0o600)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        _ = "4242\n".withCString { write(lock, $0, 5) }
        let held = CLI.run(["migrate-store", "--from", db, "--to", "postgresql://dv@127.0.0.1:1/dv"])
        #expect(held.status == 1 && held.stderr.contains("has a scheduler running (process 4242): stop serve"), "\(held.stderr)")
        // What writes the content refuses PostgreSQL, naming where the content is read from there.
        let content = CLI.run(
            ["content", "bundle-tafsir", "--edition", "x", "--out", db + ".out", "--taken-from", "here"],
            database: "postgresql://dv@db.example.org/dv")
        #expect(content.status == 1 && content.stderr.contains("its own SQLite copy: give --db that copy"), "\(content.stderr)")
        #expect(content.stderr.split(separator: "\n").count == 1)
        // The others go to the server: one that cannot be reached is one line naming the database.
        for command in [["today"], ["devices", "list"], ["outbox", "list"], ["guests", "purge"], ["onboarding", "funnel"]] {
            let unreachable = CLI.run(
                command, database: "postgresql://dv@127.0.0.1:1/dailyverse",
                environment: ["DAILYVERSE_CONTENT_DB": CLI.freshDatabase(named: "c.sqlite")])
            #expect(
                unreachable.status == 1 && unreachable.stderr.hasPrefix("dailyverse: database 'postgresql://dv@127.0.0.1:1/dailyverse"),
                "\(command): \(unreachable.stderr)")
            #expect(unreachable.stderr.split(separator: "\n").count == 1, "\(command): \(unreachable.stderr)")
        }
    }

    /// `serve --once` on PostgreSQL, after the copy: the fires due go out once, through the sink; a second pass finds
    /// nothing; a spool, which is one machine's, is refused, and so is no sink at all.
    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func serveOncePassesOnPostgreSQL() async throws {
        let db = CLI.freshDatabase()
        for n in 1...3 {
            let added = CLI.run(
                [
                    "devices", "add", "--platform", "fcm", "--token", "token-\(n)-" + String(repeating: "f", count: 30), "--tz", "UTC", "--time",
                    "08:0\(n)",
                    "--now", "2025-03-01T00:00:00Z",
                ], database: db)
            try #require(added.status == 0, "\(added.stderr)")
        }
        let content = CLI.freshDatabase(named: "content.sqlite")
        try await PostgresTesting.withDatabase { address in
            try #require(CLI.run(["migrate-store", "--from", db, "--to", "\(address)"]).status == 0)
            let arguments = ["serve", "--once", "--content-db", content, "--now", "2025-03-01T08:05:00Z"]
            let none = CLI.run(arguments, database: "\(address)")
            #expect(none.status == 1 && none.stderr.contains("set the sink"), "\(none.stderr)")
            let spool = CLI.run(arguments + ["--sink", "jsonl:" + content + ".spool"], database: "\(address)")
            #expect(spool.status == 1 && spool.stderr.contains("a spool is one machine's files"), "\(spool.stderr)")
            // A serve refused at start (its sink, a key file) leaves no live process behind: it was listed for 90 s, and
            // held the throttle key.
            for sink in ["jsonl:" + content + ".spool", "push"] {
                let refused = CLI.run(
                    ["serve", "--content-db", content, "--listen", "127.0.0.1:0", "--sink", sink], database: "\(address)",
                    environment: ["DAILYVERSE_VAPID_KEY_FILE": content + ".missing"])
                #expect(refused.status == 1 && refused.stderr.split(separator: "\n").last?.hasPrefix("dailyverse: ") == true, "\(refused.stderr)")
            }
            let listed = CLI.run(["status", "--json"], database: "\(address)").json
            #expect((listed["processes"] as? [Any])?.isEmpty == true, "\(String(describing: listed["processes"]))")
            let first = CLI.run(arguments + ["--sink", "stdout"], database: "\(address)")
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.split(separator: "\n").count == 3, "\(first.stdout.prefix(300))")
            #expect(first.stderr.contains("3 devices due, 3 queued, 0 missed; 3 delivered"), "\(first.stderr)")
            let second = CLI.run(arguments + ["--sink", "stdout"], database: "\(address)")
            #expect(second.stdout.isEmpty && second.stderr.contains("0 devices due, 0 queued, 0 missed; 0 delivered"), "\(second.stderr)")
            // The copied file is marked moved: serve refuses it, naming the mark; without the mark (a rollback) it serves.
            let refused = CLI.run(arguments + ["--sink", "stdout"], database: db)
            #expect(refused.status == 1 && refused.stderr.contains("was moved to PostgreSQL (\(db).moved"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
            try FileManager.default.removeItem(atPath: db + ".moved")
            // status on PostgreSQL says what status on SQLite says after the same pass, and lists no process (none runs).
            #expect(CLI.run(arguments + ["--sink", "stdout"], database: db).status == 0)
            let now = ["--now", "2025-03-01T08:10:00Z"]
            let shared = CLI.run(["status", "--json"] + now, database: "\(address)").json
            let local = CLI.run(["status", "--json"] + now, database: db).json
            for key in ["devices", "enabled", "next_fires", "outbox", "written_ahead", "last_errors", "push", "schedule"] {
                #expect(
                    (shared[key] as? NSObject)?.isEqual(local[key]) == true,
                    "\(key): \(String(describing: shared[key])) / \(String(describing: local[key]))")
            }
            #expect((shared["outbox"] as? [String: Int])?["delivered"] == 3)
            #expect((shared["processes"] as? [Any])?.isEmpty == true && local["processes"] == nil)
        }
    }

    /// `import` given the database imports once for every machine: through one machine's content copy, read by another
    /// machine's; a bundled edition's id is refused in one line, and an import that fails changes nothing.
    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func anImportOnOneMachineIsEveryMachines() async throws {
        let here = ["DAILYVERSE_CONTENT_DB": CLI.freshDatabase(named: "here.sqlite")]
        let there = ["DAILYVERSE_CONTENT_DB": CLI.freshDatabase(named: "there.sqlite")]
        let file = CLI.freshDatabase(named: "notes.jsonl")
        try #"{"verses": "2:255", "layer": "comparative", "body": "A note imported once.", "source": {"provenance": "editorial"}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        try await PostgresTesting.withDatabase { address in
            let database = "\(address)"
            let before = CLI.run(["verse", "2:255"], database: database, environment: there)
            #expect(before.status == 0 && !before.stdout.contains("A note imported once."), "\(before.stderr)")
            let imported = CLI.run(["import", "commentary", file], database: database, environment: here)
            #expect(imported.status == 0 && imported.stdout.contains("imported 1 entries of commentary"), "\(imported.stderr)")
            let after = CLI.run(["verse", "2:255"], database: database, environment: there)
            #expect(after.status == 0 && after.stdout.contains("A note imported once."), "\(after.stdout.suffix(600))")
            let bundled = CLI.run(["import", "quran", file], database: database, environment: here)
            #expect(bundled.status == 1 && bundled.stderr.contains("edition 'quran-simple' is bundled"), "\(bundled.stderr)")
            #expect(bundled.stderr.split(separator: "\n").count == 1)
            let bad = CLI.freshDatabase(named: "bad.jsonl")
            try #"{"verses": "2:300", "layer": "comparative", "body": "x", "source": {"provenance": "editorial"}}"#
                .write(toFile: bad, atomically: true, encoding: .utf8)
            let refused = CLI.run(["import", "commentary", bad], database: database, environment: here)
            #expect(refused.status == 1 && refused.stderr.contains("2:300"), "\(refused.stderr)")
            #expect(CLI.run(["verse", "2:255"], database: database, environment: there).stdout.contains("A note imported once."))
        }
    }

    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func copiesAnInstallationOnceAndRefusesASecondCopy() async throws {
        let db = CLI.freshDatabase()
        let added = CLI.run(
            ["devices", "add", "--platform", "fcm", "--token", String(repeating: "f", count: 40), "--tz", "Asia/Tehran"], database: db)
        try #require(added.status == 0, "\(added.stderr)")
        try await PostgresTesting.withDatabase { address in
            let copied = CLI.run(["migrate-store", "--from", db, "--to", "\(address)", "--json"])
            #expect(copied.status == 0, "\(copied.stderr)")
            let tables = copied.json["tables"] as? [[String: Any]] ?? []
            let device = tables.first { $0["table"] as? String == "device" }
            #expect(device?["rows"] as? Int == 1 && tables.count > 30, "\(copied.stdout.prefix(400))")
            #expect((copied.json["rows"] as? Int ?? 0) > 20_000)
            let again = CLI.run(["migrate-store", "--from", db, "--to", "\(address)"])
            #expect(again.status == 1 && again.stderr.contains("already holds data"), "\(again.stderr)")
        }
    }

    /// Month starts published on PostgreSQL are the installation's: listed and removed there, checked as on SQLite,
    /// and copied by `serve` into its content copy, whose calendars then follow them.
    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func publishedStartsLiveOnTheDatabaseAndServeFollowsThem() async throws {
        let db = CLI.freshDatabase()
        try #require(CLI.run(["today"], database: db).status == 0)
        let content = CLI.freshDatabase(named: "content.sqlite")
        try #require(CLI.run(["today"], database: content).status == 0)
        try await PostgresTesting.withDatabase { address in
            try #require(CLI.run(["migrate-store", "--from", db, "--to", "\(address)"]).status == 0)
            let set = CLI.run(["sighting", "set", "1446", "9", "2025-03-02"], database: "\(address)")
            #expect(set.status == 0 && set.stdout.contains("Ramadan 1446 begins on 2025-03-02"), "\(set.stdout)\(set.stderr)")
            let far = CLI.run(["sighting", "set", "1446", "10", "2025-04-20"], database: "\(address)")
            #expect(far.status == 1 && far.stderr.split(separator: "\n").count == 1 && far.stderr.contains("2025-04-20"), "\(far.stderr)")
            let listed = CLI.run(["sighting", "list", "--json"], database: "\(address)").stdout
            #expect(listed.contains("2025-03-02") && !listed.contains("2025-04-20"), "\(listed)")
            // The content copy has none until serve copies the database's.
            #expect(!CLI.run(["sighting", "list"], database: content).stdout.contains("2025-03-02"))
            let pass = CLI.run(
                ["serve", "--once", "--sink", "stdout", "--content-db", content, "--now", "2025-03-01T08:05:00Z"], database: "\(address)")
            #expect(pass.status == 0, "\(pass.stderr)")
            #expect(CLI.run(["sighting", "list"], database: content).stdout.contains("2025-03-02"))
            #expect(CLI.run(["sighting", "remove", "1446", "9"], database: "\(address)").status == 0)
            let again = CLI.run(["sighting", "remove", "1446", "9"], database: "\(address)")
            #expect(again.status == 1 && again.stderr.contains("no published start for 1446-9"), "\(again.stderr)")
            _ = CLI.run(["serve", "--once", "--sink", "stdout", "--content-db", content, "--now", "2025-03-01T08:06:00Z"], database: "\(address)")
            #expect(CLI.run(["sighting", "list"], database: content).stdout.contains("no published month starts"))
        }
    }

    /// The operator's commands on PostgreSQL: the content's (`today`, `hijri`) read this machine's content copy with the
    /// month starts published on the database; the installation's (`devices`, `outbox`, `guests`, `onboarding`, `push
    /// test`) read and write the database itself, and refuse what they refuse on SQLite, in one line.
    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func theOperatorsCommandsRunOnPostgreSQL() async throws {
        let db = CLI.freshDatabase()
        try #require(CLI.run(["today"], database: db).status == 0)
        let copy = ["DAILYVERSE_CONTENT_DB": CLI.freshDatabase(named: "content.sqlite")]
        try await PostgresTesting.withDatabase { address in
            try #require(CLI.run(["migrate-store", "--from", db, "--to", "\(address)"]).status == 0)
            func run(_ arguments: [String]) -> CLI.Result { CLI.run(arguments, database: "\(address)", environment: copy) }
            // Ramadan 1446 announced for 2 March: the sighted calendar follows it on the database, not in the SQLite file.
            try #require(run(["sighting", "set", "1446", "9", "2025-03-02"]).status == 0)
            let shared = run(["hijri", "2025-03-02", "--calendar", "sighted"])
            #expect(shared.status == 0 && shared.stdout.contains("1 Ramadan 1446"), "\(shared.stdout)\(shared.stderr)")
            #expect(CLI.run(["hijri", "2025-03-02", "--calendar", "sighted"], database: db).stdout.contains("2 Ramadan 1446"))
            let today = run(["today", "--date", "2025-03-02", "--tz", "UTC", "--calendar", "sighted", "--json"])
            #expect(today.status == 0 && (today.json["hijri"] as? [String: Any])?["day"] as? Int == 1, "\(today.stdout.prefix(300))\(today.stderr)")

            // Devices: added, listed a page at a time, shown, changed, imported, removed.
            let now = ["--now", "2025-03-01T06:00:00Z"]
            let added = run(
                ["devices", "add", "--platform", "fcm", "--token", String(repeating: "a", count: 40), "--tz", "Asia/Baghdad", "--time", "07:30"] + now
            )
            #expect(added.status == 0, "\(added.stderr)")
            let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let again = run(["devices", "add", "--platform", "fcm", "--token", String(repeating: "a", count: 40), "--tz", "UTC"] + now)
            #expect(
                again.status == 1 && again.stderr.hasSuffix("is already registered\n") && again.stderr.split(separator: "\n").count == 1,
                "\(again.stderr)")
            let theme = run([
                "devices", "add", "--platform", "fcm", "--token", String(repeating: "b", count: 40), "--tz", "UTC", "--display-theme", "neon",
            ])
            #expect(theme.status == 1 && theme.stderr.contains("neon") && theme.stderr.split(separator: "\n").count == 1, "\(theme.stderr)")
            let lines = (1...2).map { #"{"platform": "fcm", "token": "\#(String(repeating: "c", count: 39))\#($0)", "timezone": "Asia/Tehran"}"# }
            let file = CLI.freshDatabase(named: "devices.jsonl")
            try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            let imported = run(["devices", "import", file] + now)
            #expect(imported.status == 0 && imported.stdout.contains("imported 2 devices"), "\(imported.stdout)\(imported.stderr)")
            let bad = CLI.freshDatabase(named: "bad.jsonl")
            // A token already there on the second line: refused, naming it, and the first line not written either.
            try (lines[0].replacingOccurrences(of: "ccc", with: "ddd") + "\n" + lines[1] + "\n").write(toFile: bad, atomically: true, encoding: .utf8)
            let refused = run(["devices", "import", bad] + now)
            // (Progress, without a terminal, is a line now and then; the error is the last line.)
            #expect(
                refused.status == 1 && refused.stderr.split(separator: "\n").last?.hasPrefix("dailyverse: bad.jsonl:2: ") == true, "\(refused.stderr)"
            )
            let listed = try #require(
                try JSONSerialization.jsonObject(with: Data(run(["devices", "list", "--json"] + now).stdout.utf8)) as? [[String: Any]])
            #expect(listed.count == 3 && listed.contains { $0["id"] as? String == id }, "\(listed)")
            let first = try #require(listed.first?["id"] as? String)
            let page = try #require(
                try JSONSerialization.jsonObject(with: Data(run(["devices", "list", "--json", "--limit", "1", "--after", first] + now).stdout.utf8))
                    as? [[String: Any]])
            #expect(page.count == 1 && page.first?["id"] as? String == listed[1]["id"] as? String, "\(page)")
            let updated = run(["devices", "update", id, "--time", "09:15", "--json"] + now)
            #expect(updated.status == 0 && updated.json["reminder_time"] as? String == "09:15", "\(updated.stdout)\(updated.stderr)")
            #expect(run(["devices", "show", id, "--json"] + now).json["reminder_time"] as? String == "09:15")
            // push test reads the device there, and says in one line that its service is not configured here.
            let push = run(["push", "test", id] + now)
            #expect(push.status == 1 && push.stderr.contains("is not configured") && push.stderr.split(separator: "\n").count == 1, "\(push.stderr)")
            #expect(run(["devices", "remove", id]).stdout.contains("removed \(id)"))
            let gone = run(["devices", "remove", id])
            #expect(gone.status == 1 && gone.stderr == "dailyverse: no device '\(id)'\n", "\(gone.stderr)")
            #expect(run(["devices", "show", id]).stderr == "dailyverse: no device '\(id)'\n")

            // The outbox: a pass delivers to stdout, a failed row is requeued, settled rows are pruned.
            let pass = run(["serve", "--once", "--sink", "stdout", "--now", "2025-03-02T05:00:00Z"])
            #expect(pass.status == 0 && pass.stderr.contains("2 delivered"), "\(pass.stderr)")
            try await PostgresTesting.administer(address, "UPDATE outbox SET status = 'failed' WHERE id = (SELECT min(id) FROM outbox)")
            let failed = run(["outbox", "list", "--status", "failed", "--json"])
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [[String: Any]], "\(failed.stdout)")
            #expect(rows.count == 1, "\(failed.stdout)")
            #expect(run(["outbox", "requeue", "--all"]).stdout.contains("requeued 1 failed outbox rows"))
            #expect(run(["outbox", "list", "--status", "failed"]).stdout == "no outbox rows\n")
            let pruned = run(["outbox", "prune", "--retention", "1d", "--now", "2025-03-04T00:00:00Z", "--json"])
            #expect(pruned.status == 0 && pruned.json["pruned"] as? Int == 1, "\(pruned.stdout)\(pruned.stderr)")
            #expect(run(["guests", "purge", "--json"]).json["purged"] as? Int == 0)
            // While a `serve` process runs the hourly purge (its job's advisory lock held), the command says so and waits
            // for no one.
            let held = try await PostgresTesting.holding(address, "SELECT pg_advisory_xact_lock(hashtext('dailyverse job: guest purge'))") {
                run(["guests", "purge"])
            }
            #expect(
                held.status == 1 && held.stderr == "dailyverse: guests are being purged by another process right now: try again when it is done\n",
                "\(held.stderr)")
            let funnel = run(["onboarding", "funnel", "--json"])
            #expect(funnel.status == 0 && funnel.json["started"] as? Int == 0, "\(funnel.stdout)\(funnel.stderr)")
        }
    }

    /// Two `serve` processes on one database, as behind a load balancer: a guest made on one is signed in on the
    /// other, a device registered on one is listed by the other, and both stop cleanly on SIGTERM.
    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func twoServeProcessesAnswerOneAPI() async throws {
        let db = CLI.freshDatabase()
        try #require(CLI.run(["today"], database: db).status == 0)
        try await PostgresTesting.withDatabase { address in
            try #require(CLI.run(["migrate-store", "--from", db, "--to", "\(address)"]).status == 0)
            // One throttle key file for both, as the README asks.
            let keyFile = CLI.freshDatabase(named: "throttle-key")
            try Data((0..<32).map { UInt8($0 * 7 & 0xff) }).write(to: URL(fileURLWithPath: keyFile))
            var started: [(process: Process, port: UInt16, line: String)] = []
            defer {
                for (process, _, _) in started where process.isRunning {
                    process.terminate()
                    process.waitUntilExit()
                }
            }
            for _ in 0..<2 {
                started.append(
                    try CLI.startListening(
                        ["serve", "--sink", "stdout", "--content-db", CLI.freshDatabase(named: "content.sqlite")], database: "\(address)",
                        environment: ["DAILYVERSE_THROTTLE_KEY_FILE": keyFile]))
            }
            let (processes, ports) = (started.map(\.process), started.map(\.port))
            for (port, process) in zip(ports, processes) {
                try DaemonCLITests().waitUntil { process.isRunning && HTTP.send(port, "GET", "/health").status == 200 }
            }
            let guest = HTTP.send(ports[0], "POST", "/v1/guests", body: [:])
            #expect(guest.status == 201, "\(guest.body)")
            let token = try #require(guest.body["token"] as? String)
            #expect(HTTP.send(ports[1], "GET", "/v1/me", token: token).status == 200)
            let device = HTTP.send(
                ports[1], "POST", "/v1/devices", token: token,
                body: ["platform": "fcm", "token": String(repeating: "e", count: 40), "timezone": "UTC"])
            #expect(device.status == 201, "\(device.body)")
            let listed = HTTP.send(ports[0], "GET", "/v1/devices", token: token).body["devices"] as? [[String: Any]]
            #expect(listed?.count == 1 && listed?.first?["timezone"] as? String == "UTC", "\(String(describing: listed))")
            // status lists both processes (each registers as it starts), by host and pid; none once they have stopped.
            func running() -> [[String: Any]] { CLI.run(["status", "--json"], database: "\(address)").json["processes"] as? [[String: Any]] ?? [] }
            try DaemonCLITests().waitUntil { running().count == 2 }
            #expect(Set(running().compactMap { $0["pid"] as? Int }) == Set(processes.map { Int($0.processIdentifier) }))
            #expect(running().allSatisfy { $0["host"] as? String == ProcessInfo.processInfo.hostName && $0["rows_leased"] as? Int == 0 })
            // Each content copy holds the database's imports (none published yet), and status says they are current.
            #expect(CLI.run(["status", "--json"], database: "\(address)").json["content_imports"] as? String == "")
            #expect(running().allSatisfy { $0["content_imports"] as? String == "" }, "\(running())")
            // A third process whose API would key the attempt counts without the file stops at start, naming a live one.
            let third = CLI.run(
                [
                    "serve", "--listen", "127.0.0.1:0", "--sink", "stdout", "--content-db",
                    CLI.freshDatabase(named: "c.sqlite"),
                ],
                database: "\(address)")
            #expect(
                third.status == 1 && third.stderr.split(separator: "\n").last?.contains("does not key the API's attempts as this one would") == true,
                "\(third.stderr)")
            let text = CLI.run(["status"], database: "\(address)").stdout
            #expect(text.contains("processes (seen in the last 90 s):") && text.contains("pid \(processes[0].processIdentifier)"), "\(text)")
            #expect(text.contains("rows leased; imports current") && text.contains("imports on the database: none published"), "\(text)")
            for process in processes {
                process.terminate()
                process.waitUntilExit()
                #expect(process.terminationReason == .exit && process.terminationStatus == 0)
            }
            #expect(running().isEmpty)
        }
    }
}

/// A blocking HTTP request to a local server, for the tests that run `serve`: the status and the JSON body.
enum HTTP {
    final class Reply: @unchecked Sendable {
        var status = 0
        var body: [String: Any] = [:]
    }

    static func send(_ port: UInt16, _ method: String, _ path: String, token: String? = nil, body: [String: Any]? = nil) -> Reply {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 10
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = try? JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let reply = Reply()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, _ in
            reply.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            reply.body = data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            done.signal()
        }.resume()
        done.wait()
        return reply
    }
}
