import Foundation
import Testing

/// Where the CLI tests' databases and files go: one folder for the whole test process.
private let cliScratch = FileManager.default.temporaryDirectory.appendingPathComponent("dv-cli-\(getpid())-\(UUID().uuidString.prefix(8))")
private let removeScratchAtExit: Void = { atexit { try? FileManager.default.removeItem(at: cliScratch) } }()

/// Runs the built `dailyverse` binary as a user does and checks what it prints.
struct CLI {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let binary: URL = {
        let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
            .map { $0.appendingPathComponent("dailyverse") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    /// One seeded database for the read-only tests, made by the first run of the binary.
    static let sharedDatabase: String = {
        let path = freshDatabase(named: "shared.sqlite")
        _ = run(["hijri", "2025-03-01", "--calendar", "sighted"], database: path)
        return path
    }()

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] ?? [:] }
    }

    /// This process's environment without the settings a developer's shell may hold (`DAILYVERSE_*` but the tests'
    /// own, `CREDENTIALS_DIRECTORY`): a command run by a test sees only what the test gives it.
    static var inheritedEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { key, _ in
            !(key.hasPrefix("DAILYVERSE_") && !key.hasPrefix("DAILYVERSE_TEST_")) && key != "CREDENTIALS_DIRECTORY"
        }
    }

    static func run(_ arguments: [String], database: String? = nil, environment: [String: String] = [:]) -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = CLI.inheritedEnvironment
        env["DAILYVERSE_DB"] = database ?? sharedDatabase
        env["DAILYVERSE_DATA"] = repository.appendingPathComponent("data").path
        env["TZ"] = "UTC"
        env.removeValue(forKey: "DAILYVERSE_NOW")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return Result(status: -1, stdout: "", stderr: "cannot run \(binary.path): \(error)") }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Starts the binary without waiting for it; its output goes nowhere (or its standard error to `log`).
    /// `wrapper`: a command the binary runs under (`prlimit --nofile=256:256 --`).
    static func start(
        _ arguments: [String], database: String, environment: [String: String] = [:], wrapper: [String] = [], log: URL? = nil
    ) throws -> Process {
        let process = Process()
        if let first = wrapper.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(wrapper.dropFirst()) + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        var env = CLI.inheritedEnvironment
        env["DAILYVERSE_DB"] = database
        env["DAILYVERSE_DATA"] = repository.appendingPathComponent("data").path
        env.removeValue(forKey: "DAILYVERSE_NOW")
        env.removeValue(forKey: "NOTIFY_SOCKET")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        let handle = try log.map { log in
            guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
            return try FileHandle(forWritingTo: log)
        }
        defer { try? handle?.close() }  // the child keeps its own copy
        process.standardError = handle ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// A `serve` started with `arguments` and `--listen 127.0.0.1:0`, once its API listens: the process, the port the
    /// kernel gave it (read from its log line `API listening address=127.0.0.1:PORT`) and that line. A port picked
    /// beforehand and freed for the child could be taken meanwhile by any connection the tests make (the kernel hands
    /// out the same range), and the child would stop at start; port 0 cannot be. Throws, with the log, if the child
    /// ends or does not listen within 60 s.
    static func startListening(
        _ arguments: [String], database: String, environment: [String: String] = [:], wrapper: [String] = []
    ) throws -> (process: Process, port: UInt16, line: String) {
        let log = URL(fileURLWithPath: freshDatabase(named: "serve.log"))
        let process = try start(arguments + ["--listen", "127.0.0.1:0"], database: database, environment: environment, wrapper: wrapper, log: log)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("API listening") }).map(String.init),
                let port = line.components(separatedBy: "address=127.0.0.1:").last.flatMap({ UInt16($0.prefix { $0.isNumber }) })
            {
                return (process, port, line)
            }
            if !process.isRunning { break }
            usleep(2_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        throw NotListening(log: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    struct NotListening: Error, CustomStringConvertible {
        let log: String
        var description: String { "serve did not listen; its log:\n\(log)" }
    }

    /// A database path in a new folder (created: an explicit --db into a missing folder is refused). The folders
    /// are made under one scratch folder per test process, removed when the process exits.
    static func freshDatabase(named name: String = "db.sqlite") -> String {
        _ = removeScratchAtExit
        let folder = cliScratch.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }
}

@Suite struct CLITests {
    /// A newcomer's `today`: the predicted calendar for the default region (Iran), which began Ramadan 1446 on
    /// 2 March 2025 (Umm al-Qura: the 1st).
    @Test func todayJSONHasExactlyTheDocumentedKeys() throws {
        let result = CLI.run(["today", "--date", "2025-03-02", "--tz", "Asia/Baghdad", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = result.json
        #expect(Set(json.keys) == ["date", "timezone", "hijri", "occasion", "other_occasions", "theme", "verse", "layers", "attribution"])
        #expect((json["other_occasions"] as? [Any])?.isEmpty == true)
        #expect(json["date"] as? String == "2025-03-02")
        #expect(json["timezone"] as? String == "Asia/Baghdad")
        #expect(json["occasion"] is NSNull)
        let hijri = try #require(json["hijri"] as? [String: Any])
        #expect(Set(hijri.keys) == ["year", "month", "day", "month_name", "calendar", "adjustment"])
        #expect(hijri["month_name"] as? String == "Ramadan")
        #expect(hijri["day"] as? Int == 1)
        #expect(hijri["calendar"] as? String == "predicted")
        let theme = try #require(json["theme"] as? [String: Any])
        #expect(Set(theme.keys) == ["id", "name", "relevance"])
        let verse = try #require(json["verse"] as? [String: Any])
        #expect(Set(verse.keys) == ["key", "surah", "ayah", "ayah_end", "surah_name", "arabic", "basmala", "translation"])
        #expect(verse["key"] as? String == "17:82")
        #expect(verse["basmala"] is NSNull, "17:82 does not open its sura")
        #expect(Set((verse["translation"] as? [String: Any] ?? [:]).keys) == ["id", "text"])
        let layers = try #require(json["layers"] as? [[String: Any]])
        #expect(layers.map { $0["id"] as? String } == ["foundation", "classical_shia", "contemporary", "ahlul_bayt", "comparative"])
        #expect(layers.allSatisfy { Set($0.keys) == ["id", "title", "body", "source", "more", "direction"] })
        for layer in layers {
            let source = try #require(layer["source"] as? [String: Any], "every layer is shown on 17:82")
            #expect(
                Set(source.keys) == ["work", "author", "reference", "provenance", "edition", "language", "machine_translation", "licence"])
        }
        #expect((json["attribution"] as? String)?.contains("Tanzil") == true)
    }

    /// One instant, four zones: the eve of 23 Ramadan 1446 (2025-03-23 by the predicted calendar) shows "Tonight: the
    /// Third Night of Qadr" where it is still the 23rd, and not where the 24th has begun, unless an adjustment makes it
    /// the 23rd there too.
    @Test func tonightFollowsEachZonesCivilDay() throws {
        let instant = "2025-03-23T12:00:00Z"
        for (zone, adjust, tonight) in [
            ("America/Los_Angeles", "0", true), ("Asia/Tehran", "0", true), ("Pacific/Auckland", "0", false), ("Pacific/Auckland", "-1", true),
            ("Asia/Tehran", "+1", false),
        ] {
            let json = CLI.run(["today", "--at", instant, "--tz", zone, "--adjust", adjust, "--json"]).json
            let occasion = json["occasion"] as? [String: Any]
            #expect((occasion?["id"] as? String == "qadr-23") == tonight, "\(zone) \(adjust): \(json["occasion"] ?? "none")")
            if tonight {
                #expect(occasion?["tonight"] as? Bool == true && occasion?["observed"] as? String == "night")
                let text = CLI.run(["today", "--at", instant, "--tz", zone, "--adjust", adjust])
                #expect(text.stdout.contains("Tonight: the Third Night of Qadr (the night of 23 Ramadan, from sunset)"), "\(text.stdout)")
            }
        }
    }

    @Test func todayAtAnInstantUsesTheZonesDate() {
        let tokyo = CLI.run(["today", "--at", "2025-03-01T20:00:00Z", "--tz", "Asia/Tokyo", "--json"]).json
        let la = CLI.run(["today", "--at", "2025-03-01T20:00:00Z", "--tz", "America/Los_Angeles", "--json"]).json
        #expect(tokyo["date"] as? String == "2025-03-02")
        #expect(la["date"] as? String == "2025-03-01")
        #expect((tokyo["hijri"] as? [String: Any])?["month"] as? Int == 9)
        #expect((la["hijri"] as? [String: Any])?["month"] as? Int == 8)
        // --now and DAILYVERSE_NOW pin the clock.
        let pinned = CLI.run(["today", "--now", "2024-07-16T12:00:00Z", "--tz", "UTC", "--json"]).json
        #expect((pinned["occasion"] as? [String: Any])?["id"] as? String == "ashura")
        let env = CLI.run(["today", "--tz", "UTC", "--json"], environment: ["DAILYVERSE_NOW": "2025-06-15T09:00:00Z"]).json
        #expect((env["occasion"] as? [String: Any])?["id"] as? String == "ghadir")
    }

    @Test func textOutputIsReadable() {
        let result = CLI.run(["today", "--date", "2024-07-16", "--tz", "UTC"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("10 Muharram 1446"))
        #expect(result.stdout.contains("Ashura"))
        #expect(result.stdout.contains("Al-Fajr"))
        #expect(result.stdout.contains("Foundation"))
        #expect(result.stderr.isEmpty)
    }

    @Test func conversions() {
        let hijri = CLI.run(["hijri", "2025-03-02", "--json"]).json
        #expect(Set(hijri.keys) == ["gregorian", "hijri", "calendar"])
        #expect(hijri["gregorian"] as? String == "2025-03-02")
        let h = hijri["hijri"] as? [String: Any] ?? [:]
        #expect(Set(h.keys) == ["year", "month", "day", "month_name", "month_length"])
        #expect(h["year"] as? Int == 1446 && h["month"] as? Int == 9 && h["day"] as? Int == 1 && h["month_length"] as? Int == 29)
        let gregorian = CLI.run(["gregorian", "1446-09-01", "--json"]).json
        #expect(gregorian["gregorian"] as? String == "2025-03-02")
        #expect(CLI.run(["gregorian", "1446-09-01", "--calendar", "umm-al-qura", "--json"]).json["gregorian"] as? String == "2025-03-01")
        #expect(CLI.run(["gregorian", "1446-09-01", "--calendar", "tabular", "--json"]).json["calendar"] as? String == "tabular")
        #expect(CLI.run(["hijri", "2025-03-01", "--adjust", "1"]).stdout.contains("1 Ramadan 1446"))
        // Another region's prediction, named on the command line or in the environment.
        #expect(CLI.run(["hijri", "2025-06-26", "--region", "north-america"]).stdout.contains("1 Muharram 1447"))
        #expect(CLI.run(["hijri", "2025-06-26"], environment: ["DAILYVERSE_REGION": "north-america"]).stdout.contains("1 Muharram 1447"))
        #expect(CLI.run(["hijri", "2025-06-26"]).stdout.contains("Dhu al-Hijjah 1446"))
        let unknown = CLI.run(["hijri", "2025-06-26", "--region", "atlantis"])
        #expect(unknown.status == 1 && unknown.stderr.contains("'atlantis'") && unknown.stderr.contains("iran, iraq"), "\(unknown.stderr)")
    }

    @Test func verseWithLayers() {
        let json = CLI.run(["verse", "96:1-5", "--json"]).json
        #expect(Set(json.keys) == ["verse", "layers", "attribution"])
        #expect((json["verse"] as? [String: Any])?["ayah_end"] as? Int == 5)
        #expect((json["layers"] as? [Any])?.count == 5)
        let text = CLI.run(["verse", "2:255"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Allah! There is no deity save Him"))
    }

    /// An occasion that shares its day with one that leads is named under "Also" with how to read it, and reads with
    /// its own passage and layers.
    @Test func anOccasionThatDoesNotLeadIsReadWithItsOwnLayers() {
        let day = CLI.run(["today", "--date", "2024-09-20", "--tz", "UTC", "--calendar", "umm-al-qura"])
        #expect(day.stdout.contains("Also:") && day.stdout.contains("dailyverse verse --occasion birth-of-imam-al-sadiq"), "\(day.stdout)")
        let json = CLI.run(["verse", "--occasion", "birth-of-imam-al-sadiq", "--json"]).json
        #expect(Set(json.keys) == ["occasion", "verse", "layers", "attribution"])
        let occasion = json["occasion"] as? [String: Any] ?? [:]
        #expect(occasion["id"] as? String == "birth-of-imam-al-sadiq" && occasion["month"] as? Int == 3)
        #expect((json["verse"] as? [String: Any])?["key"] as? String == occasion["verses"] as? String)
        let text = CLI.run(["verse", "--occasion", "birth-of-imam-al-sadiq"])
        #expect(text.status == 0 && text.stdout.contains("Imam"), "\(text.stdout)")
    }

    @Test func calendarListsTheYear() {
        let json = CLI.run(["calendar", "--hijri-year", "1446", "--json"]).json
        let months = json["months"] as? [[String: Any]] ?? []
        #expect(months.count == 12)
        #expect(months[8]["start"] as? String == "2025-03-02")
        let occasions = json["occasions"] as? [[String: Any]] ?? []
        #expect(occasions.contains { $0["id"] as? String == "ghadir" && $0["gregorian"] as? String == "2025-06-15" })
        #expect(CLI.run(["calendar", "--hijri-year", "1446"]).stdout.contains("Ramadan"))
    }

    /// Every bad input: one line on stderr naming the value, nothing on stdout, a non-zero exit.
    @Test(arguments: [
        (["today", "--date", "2025-02-30"], "2025-02-30"),
        (["today", "--date", "2025-03-01", "--tz", "Mars/Olympus"], "Mars/Olympus"),
        (["verse", "2:300"], "2:300"),
        (["verse", "115:1"], "115:1"),
        (["today", "--date", "2025-03-01", "--adjust", "7"], "7"),
        (["today", "--date", "2200-01-01"], "2200-01-01"),
        (["hijri", "1800-01-01"], "1800-01-01"),
        (["gregorian", "1601-01-01"], "1601"),
        (["today", "--calendar", "lunar"], "lunar"),
        (["today", "--at", "yesterday"], "yesterday"),
        (["today", "--now", "soon"], "soon"),
        (["sighting", "set", "1446", "9", "2025-03-09"], "2025-03-09"),
        (["verse", "--occasion", "no-such-day"], "no-such-day"),
        (["verse", "2:255", "--occasion", "ghadir"], "--occasion"),
        (["verse"], "--occasion"),
    ])
    func badInput(arguments: [String], value: String) {
        let result = CLI.run(arguments)
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(value))
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test func unwritableDatabasePath() {
        let result = CLI.run(["today", "--date", "2025-03-01"], database: "/proc/dailyverse/x.sqlite")
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("/proc/dailyverse/x.sqlite"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    /// `sighting set` on a month published before replaces its start, and says so (it did silently), in its line and
    /// in `--json`; the same day again replaces nothing.
    @Test func sightingSetSaysWhatItReplaced() throws {
        let db = CLI.freshDatabase()
        let first = CLI.run(["sighting", "set", "1446", "9", "2025-03-02", "--json"], database: db)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Set(first.json.keys) == ["year", "month", "first_day", "replaced_first_day"] && first.json["replaced_first_day"] is NSNull)
        let second = CLI.run(["sighting", "set", "1446", "9", "2025-03-01"], database: db)
        #expect(second.status == 0 && second.stdout == "published: Ramadan 1446 begins on 2025-03-01 (replacing 2025-03-02, published before)\n")
        let third = CLI.run(["sighting", "set", "1446", "9", "2025-03-02", "--json"], database: db)
        #expect(third.json["first_day"] as? String == "2025-03-02" && third.json["replaced_first_day"] as? String == "2025-03-01", "\(third.stdout)")
        let again = CLI.run(["sighting", "set", "1446", "9", "2025-03-02"], database: db)
        #expect(again.status == 0 && again.stdout == "published: Ramadan 1446 begins on 2025-03-02\n", "\(again.stdout)")
        let list = CLI.run(["sighting", "list", "--json"], database: db)
        let starts = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(starts.count == 1 && starts[0]["first_day"] as? String == "2025-03-02")
    }

    @Test func sightingsChangeTheSightedCalendar() {
        let db = CLI.freshDatabase()
        #expect(CLI.run(["sighting", "set", "1446", "9", "2025-03-02"], database: db).status == 0)
        let list = CLI.run(["sighting", "list", "--json"], database: db)
        #expect(list.stdout.contains(#""first_day" : "2025-03-02""#), "snake_case like every other key: \(list.stdout)")
        let day = CLI.run(["hijri", "2025-03-01", "--calendar", "sighted", "--json"], database: db).json
        #expect((day["hijri"] as? [String: Any])?["day"] as? Int == 30)
        #expect(CLI.run(["sighting", "remove", "1446", "9"], database: db).status == 0)
        #expect(CLI.run(["sighting", "remove", "1446", "9"], database: db).status != 0)
    }

    @Test func importAbortsOnAMalformedLineAndImportsNothing() throws {
        let db = CLI.freshDatabase()
        let folder = URL(fileURLWithPath: db).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("notes.jsonl")
        let good =
            #"{"verses": "1:2", "layer": "contemporary", "body": "Imported.", "source": {"work": null, "author": null, "reference": null, "provenance": "editorial"}}"#
        try (good + "\n{\"verses\": \"1:2\"\n").write(to: file, atomically: true, encoding: .utf8)
        let bad = CLI.run(["import", "commentary", file.path], database: db)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("notes.jsonl:2:"))
        #expect(!CLI.run(["verse", "1:2", "--json"], database: db).stdout.contains("Imported."))
        try (good + "\n").write(to: file, atomically: true, encoding: .utf8)
        let ok = CLI.run(["import", "commentary", file.path], database: db)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(CLI.run(["verse", "1:2", "--json"], database: db).stdout.contains("Imported."))
    }

    @Test func helpExplains() {
        let help = CLI.run(["today", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--calendar"))
        #expect(help.stdout.contains("--json"))
        #expect(CLI.run(["--help"]).stdout.contains("sighting"))
    }
}

/// systemd's notification socket, played by the test: a datagram socket the daemon sends READY=1 and the rest to.
final class NotifySocket {
    let path: String
    private let descriptor: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("dv-sd-\(UUID().uuidString.prefix(8))").path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (i, b) in path.utf8.enumerated() { buffer[i] = b } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(.EIO) }
        var wait = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The messages received until one contains `text`, or until `seconds` pass; whether it came.
    func wait(for text: String, seconds: TimeInterval, while running: () -> Bool = { true }) -> (found: Bool, messages: [String]) {
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            // Messages already sent are read even after the sender has gone; nothing for a second and it has gone: done.
            guard count > 0 else {
                if !running() { break }
                continue
            }
            let message = String(decoding: buffer[0..<count], as: UTF8.self)
            messages.append(message)
            if message.contains(text) { return (true, messages) }
        }
        return (false, messages)
    }
}

/// The command tree is part of the CLI's contract: every command keeps its name and its place, whatever the Swift
/// types behind them are called.
@Suite struct CommandTreeTests {
    static let commands: [[String]] = [
        ["today"], ["hijri"], ["gregorian"], ["verse"], ["calendar"],
        ["import", "quran"], ["import", "translation"], ["import", "commentary"], ["import", "tafsir"],
        ["import", "hadith"], ["sighting", "set"], ["sighting", "import"], ["sighting", "list"], ["sighting", "remove"], ["crescent", "evening"],
        ["crescent", "table"],
        ["devices", "add"], ["devices", "list"], ["devices", "show"], ["devices", "update"], ["devices", "remove"], ["devices", "import"],
        ["serve"], ["outbox", "requeue"], ["outbox", "prune"], ["outbox", "list"], ["status"], ["push", "test"],
        ["vapid", "generate"], ["vapid", "public-key"], ["content", "coverage"], ["content", "check"], ["onboarding", "funnel"],
        ["guests", "purge"], ["migrate-store"],
    ]

    @Test func everyCommandAnswersToItsName() {
        for path in Self.commands {
            let result = CLI.run(path + ["--help"])
            #expect(result.status == 0, "\(path)")
            #expect(result.stdout.contains("USAGE: dailyverse \(path.joined(separator: " "))"), "\(path): \(result.stdout.prefix(300))")
        }
    }

    @Test func theRootListsTheCommandsInTheirOrder() {
        let help = CLI.run(["--help"]).stdout
        let listed =
            help.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n")
            .compactMap { line -> String? in
                guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first, name != "See" else { return nil }
                return String(name)
            } ?? []
        let tops = Self.commands.map(\.[0]).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
        #expect(listed == tops)
    }
}

/// Options with a closed set of values are read as their types by the parser: a bad one stops the command before it
/// opens anything, on one line that names it and what the option takes.
@Suite struct TypedOptionTests {
    @Test(arguments: [
        (["today", "--calendar", "lunar"], "'lunar'", "'umm-al-qura', 'tabular', 'sighted' or 'predicted'"),
        (["hijri", "2025-03-01", "--adjust", "3"], "'3'", "'-2', '-1', '0', '1' or '2'"),
        (["outbox", "list", "--status", "lost"], "'lost'", "'pending', 'delivered', 'failed' or 'missed'"),
        (["devices", "add", "--platform", "pigeon", "--token", "x", "--tz", "UTC"], "'pigeon'", "'apns', 'fcm' or 'webpush'"),
        (["devices", "add", "--token", "x", "--tz", "UTC"], "--platform", "give --platform with a new token"),
        (["outbox", "list", "--limit", "0"], "--limit 0", "expected 1 to 100000000"),
    ])
    func refusedByTheParser(arguments: [String], value: String, expected: String) {
        // A database path that cannot be opened: the parser must refuse before anything tries.
        let result = CLI.run(arguments, database: "/proc/dailyverse/never.sqlite")
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(value) && result.stderr.contains(expected), "\(result.stderr)")
        #expect(!result.stderr.contains("cannot open database"))
    }
}

/// Each duration setting is read one way from its flag, its environment variable and the configuration file, and its
/// range is checked whichever gave it; the error names where the value came from (the flag as the command spells it,
/// the variable, or the file's line and key) and the value as written.
@Suite struct DurationSettingTests {
    static let settings: [(command: [String], flag: String, environment: String, key: String, inRange: String, outOfRange: String)] = [
        (["serve", "--once", "--sink", "stdout"], "--grace", "DAILYVERSE_GRACE", "grace", "1h", "25h"),
        (["serve", "--once", "--sink", "stdout"], "--emit-ahead", "DAILYVERSE_EMIT_AHEAD", "emit_ahead", "5m", "2h"),
        (["serve", "--once", "--sink", "stdout"], "--idle-timeout", "DAILYVERSE_IDLE_TIMEOUT", "idle_timeout", "10s", "0s"),
        (["serve", "--once", "--sink", "stdout"], "--outbox-retention", "DAILYVERSE_OUTBOX_RETENTION", "outbox_retention", "7d", "3651d"),
        (["guests", "purge"], "--retention", "DAILYVERSE_GUEST_RETENTION", "guest_retention", "7d", "12h"),
        (["outbox", "prune"], "--retention", "DAILYVERSE_OUTBOX_RETENTION", "outbox_retention", "7d", "3651d"),
    ]

    @Test(arguments: 0..<settings.count)
    func everySourceIsCheckedAlike(index: Int) throws {
        let setting = Self.settings[index]
        let db = CLI.freshDatabase()
        func expectRefused(_ result: CLI.Result, _ prefix: String) {
            #expect(result.status == 1, "\(setting.key): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("dailyverse: \(prefix): expected "), "\(result.stderr)")
        }
        // The flag: text that is no duration is the parser's to refuse; a duration out of range is the setting's.
        let parsed = CLI.run(setting.command + [setting.flag, "soon"], database: db)
        #expect(parsed.status == 1 && parsed.stderr.contains("'soon'") && parsed.stderr.contains(setting.flag), "\(parsed.stderr)")
        expectRefused(
            CLI.run(setting.command + [setting.flag, setting.outOfRange], database: db), "invalid \(setting.flag) '\(setting.outOfRange)'")
        // The environment and the file, by the same rules.
        expectRefused(
            CLI.run(setting.command, database: db, environment: [setting.environment: "soon"]), "invalid \(setting.environment) 'soon' (environment)")
        expectRefused(
            CLI.run(setting.command, database: db, environment: [setting.environment: setting.outOfRange]),
            "invalid \(setting.environment) '\(setting.outOfRange)' (environment)")
        let config = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("config.toml").path
        try "# retention and the rest\n\n\(setting.key) = \"\(setting.outOfRange)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        expectRefused(CLI.run(setting.command + ["--config", config], database: db), "\(config):3: invalid \(setting.key) '\(setting.outOfRange)'")
        // A flag in range wins over the file's value.
        let taken = CLI.run(setting.command + ["--config", config, setting.flag, setting.inRange], database: db)
        #expect(taken.status == 0, "\(setting.key): \(taken.stderr)")
    }
}
