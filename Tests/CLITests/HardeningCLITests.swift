import Foundation
import GRDB
import Testing

/// The CLI's hardening promises, checked on the built binary as an operator runs it:
/// every error is one line and exit status 1 (the argument parser's too); signed options read as typed; integers and
/// instants from outside never crash it; a database is refused, never damaged or silently created elsewhere; files it
/// creates are owner-only; one scheduler per database; a listen failure ends `serve`.
@Suite struct HardeningCLITests {
    static let apns = String(repeating: "ab", count: 32)

    // MARK: - 1. One line, exit status 1, the parser's errors included

    /// Parser errors (bad values, unknown options, missing arguments) keep the contract: one line, status 1.
    @Test(
        arguments: [
            (["sighting", "remove", "1446", "abc"], "abc"),
            (["devices", "update", "SOMEID", "--enabled", "maybe"], "maybe"),
            (["calendar", "--hijri-year", "12x"], "12x"),
            (["today", "--no-such-flag"], "--no-such-flag"),
            (["frobnicate"], "frobnicate"),
            (["sighting", "set", "1446"], "<month>"),
            // `help` printed the tool's help, exit 0, for a command that does not exist.
            (["help", "nosuch"], "unknown command 'nosuch' after 'help'"),
            (["help", "import", "nosuch"], "unknown command 'nosuch' after 'help import': expected one of quran, translation"),
            (["help", "today", "nosuch"], "that command has no subcommands"),
        ] as [([String], String)])
    func parserErrorsAreOneLine(arguments: [String], value: String) throws {
        // The parser fails before any database is opened: the shared one is never touched.
        Harness.expectOneLineError(try Harness.run(arguments), naming: value)
    }

    /// What an operator meets at the edges: a listing that fails prints nothing (not half a JSON list), `--json` never
    /// prints a picture or a table, an empty `--now` is refused, a file that cannot be written is one line naming it and
    /// the system's reason before any work, and a listen address is checked at start (an IPv6 one in brackets taken).
    @Test func theEdgesAnOperatorMeetsAreOneLineAndNothingElse() throws {
        let db = CLI.freshDatabase()
        _ = CLI.run(["today"], database: db)
        for command in [["devices", "list", "--json", "--after", "nope"], ["outbox", "list", "--json", "--date", "nope"]] {
            let failed = CLI.run(command, database: db)
            #expect(failed.status == 1 && failed.stdout.isEmpty, "\(command): \(failed.stdout)")
        }
        #expect(CLI.run(["devices", "list", "--json"], database: db).stdout == "[]\n")
        for command in [["crescent", "map", "--date", "2025-03-01", "--json"], ["crescent", "table", "--json"]] {
            let refused = CLI.run(command, database: db)
            #expect(refused.status == 1 && refused.stdout.isEmpty && refused.stderr.contains("give --out FILE"), "\(command): \(refused.stderr)")
        }
        let empty = CLI.run(["today", "--now", ""], database: db)
        #expect(empty.status == 1 && empty.stderr.contains("invalid --now ''"), "\(empty.stderr)")
        let missing = "/nonexistent-\(UUID().uuidString)/t.csv"
        let unwritable = CLI.run(["crescent", "table", "--out", missing], database: db)
        #expect(unwritable.status == 1, "\(unwritable.stderr)")
        #expect(unwritable.stderr == "dailyverse: cannot write '\(missing)': No such file or directory\n", "\(unwritable.stderr)")
        // Asked for what cannot be done: said, with a non-zero exit, never passed over; nothing on stdout (requeue printed
        // "requeued 0 failed outbox rows" there beside its error).
        for (command, says) in [
            (["outbox", "requeue", "424242"], "requeued 0 of the 1 rows named"),
            (["devices", "update", "some-id", "--p256dh", "foo"], "give --platform with a new token"),
            (["crescent", "evening", "--date", "0001-01-01"], "outside the years an evening can be judged for"),
            (["today", "--db", "/tmp/a\nb.sqlite"], "holds a control character"),
            (["import", "quran", "/nonexistent", "--id", ""], "invalid edition id ''"),
            (["import", "translation", "/nonexistent", "--id", "en.x", "--language", "x\ny"], "invalid --language"),
            (["onboarding", "funnel", "--to", "0001-01-01"], "invalid date 0001-01-01"),
        ] {
            let refused = CLI.run(command, database: db)
            #expect(refused.status != 0 && refused.stderr.contains(says), "\(command): \(refused.stderr)")
            #expect(refused.stdout.isEmpty && refused.stderr.split(separator: "\n").count == 1, "\(command): \(refused.stdout)\(refused.stderr)")
        }
        #expect(CLI.run(["today", "--tz", "UTC", "--json", "--date", "2025-03-01"], database: db).json["timezone"] as? String == "UTC")
        // A bad setting is refused before a database is made for nothing.
        let never = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("never.sqlite").path
        for bad in [["--grace", "99d"], ["--now", "9999-12-31T00:00:00Z"], ["--sink", "sinq"]] {
            let refused = CLI.run(["serve", "--once"] + (bad.contains("--sink") ? [] : ["--sink", "stdout"]) + bad, database: never)
            #expect(refused.status == 1 && !FileManager.default.fileExists(atPath: never), "\(bad): \(refused.stderr)")
        }
        let once = ["serve", "--once", "--sink", "stdout", "--now", "2025-03-01T08:30:00Z"]
        #expect(CLI.run(once + ["--listen", "[::1]:8080"], database: db).status == 0)
        for bad in ["127.0.0.1:+8080", "999.1.1.1:8080", "[nonsense]:8080", "127.0.0.1:65536", "127.0.0.1:"] {
            let refused = CLI.run(once + ["--listen", bad], database: db)
            #expect(refused.status == 1 && refused.stderr.contains("invalid --listen '\(bad)': expected HOST:PORT"), "\(bad): \(refused.stderr)")
        }
    }

    /// Every command with an output file checks it before its work: a folder (`map.svg` that is one), a missing folder,
    /// a device are one line naming the path and why, never "NSCocoaErrorDomain error 512" after minutes of work.
    @Test func everyOutputFileIsCheckedBeforeTheWork() throws {
        let db = CLI.freshDatabase()
        let folder = URL(fileURLWithPath: db).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = folder.appendingPathComponent("map.svg").path
        let csv = folder.appendingPathComponent("table.csv").path
        for path in [svg, csv] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        let missing = folder.appendingPathComponent("absent/map.png").path
        let cases: [([String], String)] = [
            (["crescent", "map", "--date", "2025-03-01", "--out", svg], "cannot write '\(svg)': not a regular file (a folder); give the name"),
            (["crescent", "table", "--out", csv], "cannot write '\(csv)': not a regular file (a folder); give the name"),
            (["crescent", "map", "--date", "2025-03-01", "--out", missing], "cannot write '\(missing)': No such file or directory"),
            (["crescent", "table", "--out", "/dev/null"], "cannot write '/dev/null': not a regular file (a device)"),
            (["crescent", "table", "--out", "\(svg)/x.csv/y.csv"], "cannot write '\(svg)/x.csv/y.csv': No such file or directory"),
        ]
        for (arguments, says) in cases {
            // Refused before the work: within seconds, not after the map's rows or the table's months.
            Harness.expectOneLineError(try Harness.run(arguments, database: db, limit: .seconds(20)), naming: says)
        }
    }

    /// A value quoted in an error line is cut, however long it is (a 120 KB verse key was echoed whole, as were --tz,
    /// --name and --grace), and a control character in it is written as its code, never to the terminal.
    @Test func aHugeOrHostileValueIsCutAndEscapedInItsErrorLine() throws {
        let huge = String(repeating: "9", count: 120_000)
        for arguments in [
            ["verse", huge], ["today", "--tz", huge], ["import", "translation", "/nonexistent", "--id", "en.x", "--name", huge],
            ["serve", "--once", "--grace", huge],
        ] {
            let outcome = try Harness.run(arguments)
            Harness.expectOneLineError(outcome, naming: String(repeating: "9", count: 200) + "… (120000 bytes)")
            #expect(outcome.stderr.utf8.count < 800, "\(arguments.prefix(3)): \(outcome.stderr.utf8.count) bytes")
        }
        // Quotes that never close, 40,000 of them: each was looked for to the end of the line (minutes); now once.
        let quotes = try Harness.run(["verse", "x' " + String(repeating: "\"a ", count: 40_000)])
        #expect(quotes.status == 1 && quotes.stderr.utf8.count < 2000, "\(quotes.stderr.utf8.count) bytes")
        let escape = try Harness.run(["verse", "1:1\u{1B}[31m\u{202E}"])
        Harness.expectOneLineError(escape, naming: "'1:1\\u{1B}[31m\\u{202E}'")
        #expect(!escape.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, "\(escape.stderr.debugDescription)")
    }

    /// A value that begins with `-` (an FCM token or a base64url key does, one time in 64) is the option's value,
    /// written as `--token -abc…` as well as `--token=-abc…`.
    @Test func aValueThatBeginsWithADashIsTheOptionsValue() throws {
        let db = CLI.freshDatabase()
        let token = "-" + String(repeating: "a1_", count: 50)
        let added = CLI.run(["devices", "add", "--platform", "fcm", "--token", token, "--tz", "UTC", "--json"], database: db)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.json["token"] as? String == token)
        let other = "-" + String(repeating: "b2:", count: 50)
        #expect(CLI.run(["devices", "add", "--platform=fcm", "--token=\(other)", "--tz=UTC"], database: db).status == 0)
    }

    /// Every option of every command reads a value that begins with `-` as its value (`--date -0001-01-01` names the
    /// bad date, not "missing value"): the parser's own description of the commands says so for each.
    @Test func everyOptionTakesAValueThatBeginsWithADash() throws {
        let dump = CLI.run(["--experimental-dump-help"])
        try #require(dump.status == 0, "\(dump.stderr)")
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var options = 0
        var scanning: [String] = []
        func walk(_ command: [String: Any], _ path: String) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["kind"] as? String == "option" {
                options += 1
                let name = (argument["preferredName"] as? [String: Any])?["name"] as? String ?? "?"
                if argument["parsingStrategy"] as? String != "unconditional" { scanning.append("\(path) --\(name)") }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { walk(sub, path + " " + (sub["commandName"] as? String ?? "?")) }
        }
        walk(try #require(tool["command"] as? [String: Any]), "dailyverse")
        #expect(options > 300, "the dump holds the commands' options")
        #expect(scanning.isEmpty, "\(scanning)")
        let dated = CLI.run(["crescent", "evening", "--date", "-2025-03-01", "--json"])
        #expect(dated.status == 1 && dated.stderr.contains("-2025-03-01"), "\(dated.stderr)")
    }

    /// The global flags are checked by every command, including those that never read them: a misspelt `--now` or
    /// `--layers` given to `hijri` is a line naming it, not a flag passed over.
    @Test(arguments: [
        (["--now", "tomorow"], "tomorow"), (["--layers", "classical_shia"], "classical_shia"), (["--db", "mysql://db/x"], "mysql://db/x"),
        (["--data", "a\nb"], "control character"), (["--config", ""], "invalid --config '': the path is empty"), (["--region", ""], "--region"),
        (["--layers", "classical_shia=en.mizan;"], "an empty item"),
    ])
    func globalFlagsAreCheckedByEveryCommand(flag: [String], named: String) throws {
        for command in [["hijri", "2025-03-01"], ["gregorian", "1446-09-01"], ["vapid", "generate", "--key-file", "/nonexistent/x.pem"]] {
            let result = CLI.run(command + flag)
            #expect(result.status == 1 && result.stderr.contains(named), "\(command + flag): \(result.stderr)")
            // The value's mistake, in the command's words, not a usage mistake pointing at --help.
            #expect(result.stderr.split(separator: "\n").count == 1 && !result.stderr.contains("see --help"), "\(result.stderr)")
        }
    }

    /// Files that are not files: each is one line naming it and what it is, never "missing data file", never a hang
    /// on a FIFO with no writer; a file of one endless line is refused at the line's limit, not read whole.
    @Test func importsReadOnlyRegularFilesWithBoundedLines() throws {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        let fifo = folder.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let loop = folder.appendingPathComponent("loop").path
        #expect(symlink(loop, loop) == 0)
        let longLine = folder.appendingPathComponent("one-line.jsonl")
        try Data(repeating: UInt8(ascii: "x"), count: 3 << 20).write(to: longLine)
        let cases: [([String], String)] = [
            (["devices", "import", folder.path], "not a regular file (a folder)"),
            (["devices", "import", fifo], "not a regular file (a FIFO)"),
            (["devices", "import", "/dev/null"], "not a regular file (a device)"),
            (["devices", "import", loop], "too many levels of symbolic links"),
            (["devices", "import", folder.appendingPathComponent("absent").path], "no such file"),
            (["devices", "import", longLine.path], "line 1 is longer than 65536 bytes"),
            (["import", "commentary", folder.path], "not a regular file (a folder)"),
            (["import", "commentary", fifo], "not a regular file (a FIFO)"),
            (["import", "commentary", longLine.path], "line 1 is longer than 1048576 bytes"),
            (["import", "quran", "/dev/zero"], "not a regular file (a device)"),
            (["devices", "list", "--db", "bad-\u{FFFD}.sqlite"], "not valid UTF-8"),
        ]
        for (arguments, reason) in cases {
            Harness.expectOneLineError(try Harness.run(arguments, limit: .seconds(30)), naming: reason)
        }
    }

    /// The configuration file is read as the files above are (it was read whole through Foundation, whatever it was):
    /// a FIFO is one line naming it, at once (every command waited for a writer), a folder and a device too (a device
    /// was read without end), and a file over 1 MiB (README, Limits and rules) is refused naming the limit.
    @Test func theConfigurationFileIsReadOnlyAsARegularFileWithinItsLimit() throws {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("config.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // A setting, then one comment line filling the file to the limit, or to a byte over it.
        let limit = 1 << 20
        let setting = Data("grace = '90m'\n".utf8)
        let atLimit = folder.appendingPathComponent("at-limit.toml")
        try (setting + Data(repeating: UInt8(ascii: "#"), count: limit - setting.count)).write(to: atLimit)
        let overLimit = folder.appendingPathComponent("over-limit.toml")
        try (setting + Data(repeating: UInt8(ascii: "#"), count: limit - setting.count + 1)).write(to: overLimit)
        for file in [atLimit, overLimit] { #expect(chmod(file.path, 0o600) == 0) }
        let cases: [(String, String)] = [
            (fifo, "cannot read configuration file '\(fifo)': not a regular file (a FIFO)"),
            (folder.path, "cannot read configuration file '\(folder.path)': not a regular file (a folder)"),
            ("/dev/zero", "cannot read configuration file '/dev/zero': not a regular file (a device)"),
            (overLimit.path, "cannot read configuration file '\(overLimit.path)': larger than the limit of 1 MiB"),
        ]
        for (path, says) in cases {
            Harness.expectOneLineError(try Harness.run(["today", "--date", "2025-03-01", "--config", path], limit: .seconds(30)), naming: says)
        }
        let taken = try Harness.run(["today", "--date", "2025-03-01", "--config", atLimit.path], limit: .seconds(60))
        #expect(taken.status == 0 && !taken.timedOut, "\(taken.stderr)")
    }

    /// Every other file the program reads whole is read as the configuration file is: a key file, the throttle key,
    /// a CA file (the push services', PostgreSQL's `sslrootcert`), the database password's systemd credential and a
    /// data file, each a FIFO here, is one line naming it, at once. Each was read through Foundation or NIOSSL, which
    /// wait for a FIFO's writer (and read a device without end); `FileReadPathTests` keeps new readers on the one path.
    @Test func everyFileReadWholeRefusesAFIFOAtOnce() throws {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("file.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let credentials = folder.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        #expect(mkfifo(credentials.appendingPathComponent("database-password").path, 0o600) == 0)
        // A data folder as the repository's, its surahs.json a FIFO (read when a new database is seeded).
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: CLI.repository.appendingPathComponent("data").path)
        where name != "surahs.json" {
            try FileManager.default.createSymbolicLink(
                at: data.appendingPathComponent(name), withDestinationURL: CLI.repository.appendingPathComponent("data").appendingPathComponent(name))
        }
        #expect(mkfifo(data.appendingPathComponent("surahs.json").path, 0o600) == 0)
        let refusal = "not a regular file (a FIFO)"
        let unreachable = "postgresql://dv@127.0.0.1:1/dv"
        let cases: [([String], [String: String], String)] = [
            (
                ["serve", "--once"], ["DAILYVERSE_THROTTLE_KEY_FILE": fifo],
                "invalid DAILYVERSE_THROTTLE_KEY_FILE '\(fifo)' (environment): \(refusal)"
            ),
            (["serve", "--once"], ["DAILYVERSE_PUSH_CA_FILE": fifo], "invalid DAILYVERSE_PUSH_CA_FILE '\(fifo)' (environment): \(refusal)"),
            (
                ["serve", "--once"], ["DAILYVERSE_VAPID_KEY_FILE": fifo, "DAILYVERSE_VAPID_SUBJECT": "mailto:ops@example.org"],
                "invalid DAILYVERSE_VAPID_KEY_FILE '\(fifo)' (environment): \(refusal)"
            ),
            (
                ["status", "--db", unreachable], ["CREDENTIALS_DIRECTORY": credentials.path],
                "cannot read the database password from the credential '\(credentials.path)/database-password': \(refusal)"
            ),
            (["status", "--db", unreachable + "?sslmode=verify-full&sslrootcert=" + fifo], [:], "sslrootcert '\(fifo)': \(refusal)"),
            (["today", "--date", "2025-03-01", "--data", data.path], [:], "surahs.json"),
        ]
        for (arguments, environment, says) in cases {
            let database = CLI.freshDatabase()
            let outcome = try Harness.run(arguments, database: database, environment: environment, limit: .seconds(30))
            Harness.expectOneLineError(outcome, naming: says)
            if arguments.contains("--data") { #expect(outcome.stderr.contains(refusal), "\(outcome.stderr)") }
        }
    }

    /// `migrate-store --from` a FIFO or a folder is one line naming what it is: SQLite's open of a FIFO waited for a
    /// writer, and a folder was "no SQLite database" without saying why.
    @Test func migrateStoreCopiesOnlyARegularFile() throws {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("db.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, kind) in [(fifo, "a FIFO"), (folder.path, "a folder")] {
            let outcome = try Harness.run(["migrate-store", "--from", path, "--to", "postgresql://dv@127.0.0.1:1/dv"], limit: .seconds(30))
            Harness.expectOneLineError(outcome, naming: "no SQLite database at '\(path)': not a regular file (\(kind))")
        }
    }

    /// A proxy list that is not addresses and blocks stops `serve` at start, naming the entry.
    @Test(arguments: [["--trusted-proxies", "10.0.0.0/8,proxy.local"], ["--trusted-proxies=::1/200"]])
    func aBadTrustedProxyIsOneLine(arguments: [String]) throws {
        let entry = arguments.joined().contains("proxy.local") ? "proxy.local" : "::1/200"
        Harness.expectOneLineError(try Harness.run(["serve", "--once"] + arguments, database: CLI.freshDatabase()), naming: entry)
    }

    /// Every setting of `serve` is checked whatever the mode: a typo stops a `--once` test run too, naming it.
    @Test(arguments: [
        ("DAILYVERSE_MAX_DEVICES_PER_USER", "0"), ("DAILYVERSE_MAX_CONNECTIONS", "many"), ("DAILYVERSE_SESSION_IDLE", "10s"),
        ("DAILYVERSE_SESSION_LIFETIME", "forever"), ("DAILYVERSE_EVENT_RETENTION", "0d"), ("DAILYVERSE_THROTTLE_WRITES", "5"),
    ])
    func aBadLimitIsOneLineEvenOnce(variable: String, value: String) throws {
        let outcome = try Harness.run(["serve", "--once"], database: CLI.freshDatabase(), environment: [variable: value])
        Harness.expectOneLineError(outcome, naming: value)
    }

    /// `--help` is not an error: usage on stdout, nothing on stderr, exit 0.
    @Test(arguments: [["--help"], ["-h"], ["sighting", "remove", "--help"], ["serve", "--help"], ["help"], ["help", "import", "tafsir"]])
    func helpStillExitsZero(arguments: [String]) throws {
        let outcome = try Harness.run(arguments)
        #expect(outcome.reason == .exit && outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("USAGE:"))
        #expect(outcome.stderr.isEmpty)
    }

    // MARK: - 2. Signed options as users type them

    /// `--adjust -1` and `--adjust=-1` are the same option, and -1 shows the Hijri date of the day before.
    @Test func negativeAdjustmentReadsAsTyped() throws {
        let uq = ["--calendar", "umm-al-qura"]
        let spaced = CLI.run(["hijri", "2025-03-01", "--adjust", "-1", "--json"] + uq)
        let joined = CLI.run(["hijri", "2025-03-01", "--adjust=-1", "--json"] + uq)
        #expect(spaced.status == 0, "\(spaced.stderr)")
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(!spaced.stdout.isEmpty && spaced.stdout == joined.stdout)
        let unadjusted = Harness.ymd(CLI.run(["hijri", "2025-03-01", "--adjust", "0", "--json"] + uq).json)
        let adjusted = Harness.ymd(spaced.json)
        let dayBefore = Harness.ymd(CLI.run(["hijri", "2025-02-28", "--json"] + uq).json)
        // 2025-03-01 is 1 Ramadan 1446 by Umm al-Qura; one day back is 29 Sha'ban (Sha'ban 1446 has 29 days there).
        #expect(unadjusted == [1446, 9, 1])
        #expect(adjusted == [1446, 8, 29])
        #expect(adjusted == dayBefore)
        #expect(CLI.run(["hijri", "2025-03-01", "--adjust", "-1"] + uq).stdout.contains("29 Sha'ban 1446"))
        // `today` takes it too, and reports the adjustment it used.
        let today = CLI.run(["today", "--date", "2025-03-01", "--adjust", "-1", "--json"])
        #expect(today.status == 0, "\(today.stderr)")
        let hijri = today.json["hijri"] as? [String: Any] ?? [:]
        #expect(hijri["adjustment"] as? Int == -1)
        #expect(hijri["day"] as? Int == 29)
    }

    /// A negative value out of range is refused naming it, in both spellings.
    @Test(arguments: [["--adjust", "-3"], ["--adjust=-3"]])
    func negativeAdjustmentOutOfRange(option: [String]) throws {
        let outcome = try Harness.run(["hijri", "2025-03-01"] + option)
        Harness.expectOneLineError(outcome, naming: "-3")
    }

    /// `devices add --adjust -1` stores -1; `devices update --adjust -2` changes it.
    @Test func deviceAdjustmentReadsAsTyped() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let added = CLI.run(["devices", "add", "--platform", "apns", "--token", Self.apns, "--tz", "UTC", "--adjust", "-1"], database: db)
        #expect(added.status == 0, "\(added.stderr)")
        let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: id) != nil)
        let list = CLI.run(["devices", "list", "--json"], database: db)
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(devices.count == 1)
        #expect(devices.first?["adjustment"] as? Int == -1)
        let updated = CLI.run(["devices", "update", id, "--adjust", "-2", "--json"], database: db)
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(updated.json["adjustment"] as? Int == -2)
    }

    // MARK: - 3. Integers and instants from outside never crash

    /// Each is refused with status exactly 1 (a trap would end in a signal) and one line naming the value.
    static let hostileValues: [([String], String)] = [
        // Hijri years at Int's bounds, and past them (the parser's error).
        (["calendar", "--hijri-year", "9223372036854775807"], "9223372036854775807"),
        (["calendar", "--hijri-year=-9223372036854775808"], "-9223372036854775808"),
        (["calendar", "--hijri-year", "9223372036854775807", "--calendar", "tabular"], "9223372036854775807"),
        (["calendar", "--hijri-year=-9223372036854775808", "--calendar", "tabular"], "-9223372036854775808"),
        (["calendar", "--hijri-year", "99999999999999999999"], "99999999999999999999"),
        // Hijri dates past each calendar: Umm al-Qura ends with 1600 AH, the tabular calendar on 2 Rabi al-Thani
        // 9666 AH (9999-12-31).
        (["gregorian", "9999-12-30"], "9999-12"),
        (["gregorian", "9999-12-30", "--calendar", "tabular"], "9999-12"),
        (["gregorian", "9666-04-03", "--calendar", "tabular"], "9666-04-03"),
        (["gregorian", "9666-04-02", "--calendar", "tabular", "--adjust=-1"], "9666-04-02"),
        // Published starts and their removal.
        (["sighting", "set", "9223372036854775807", "1", "2025-03-01"], "9223372036854775807"),
        (["sighting", "set", "1446", "13", "2025-03-01"], "13"),
        (["sighting", "remove", "--", "-9223372036854775808", "1"], "-9223372036854775808"),
        (["sighting", "remove", "1446", "9223372036854775807"], "9223372036854775807"),
        // Gregorian years outside 0001-9999.
        (["today", "--date", "0000-01-01"], "0000-01-01"),
        (["today", "--date", "10000-01-01"], "10000-01-01"),
        // Adjustments at Int's bounds.
        (["hijri", "2025-03-01", "--adjust", "9223372036854775807"], "9223372036854775807"),
        (["hijri", "2025-03-01", "--adjust=-9223372036854775808"], "-9223372036854775808"),
        (["today", "--date", "2025-03-01", "--adjust=-9223372036854775808"], "-9223372036854775808"),
        (["devices", "add", "--platform", "apns", "--token", apns, "--tz", "UTC", "--adjust", "9223372036854775807"], "9223372036854775807"),
        // Durations: no exponent, no infinity, no sign, and within each setting's bounds.
        (["serve", "--once", "--grace", "1e308d"], "1e308d"),
        (["serve", "--once", "--grace", "inf"], "inf"),
        (["serve", "--once", "--grace=-1h"], "-1h"),
        (["serve", "--once", "--grace", "25h"], "25h"),
        (["serve", "--once", "--grace", "999999999999d"], "999999999999d"),
        (["serve", "--once", "--emit-ahead", "2h"], "2h"),
        (["guests", "purge", "--retention", "0d"], "0d"),
        (["outbox", "prune", "--retention", "99999999999d"], "99999999999d"),
        // Listen addresses (the daemon checks them before it starts anything).
        (["serve", "--listen", "127.0.0.1:65536"], "127.0.0.1:65536"),
        (["serve", "--listen", "127.0.0.1:-1"], "127.0.0.1:-1"),
        (["serve", "--listen", "127.0.0.1:99999999999999999999"], "127.0.0.1:99999999999999999999"),
        // Instants past year 9999.
        (["today", "--now", "99999-01-01T00:00:00Z"], "99999-01-01T00:00:00Z"),
        (["today", "--at", "99999-01-01T00:00:00Z"], "99999-01-01T00:00:00Z"),
        (["serve", "--once", "--now", "99999-01-01T00:00:00Z"], "99999-01-01T00:00:00Z"),
    ]

    @Test(arguments: HardeningCLITests.hostileValues)
    func hostileValueIsOneLineNotACrash(arguments: [String], value: String) throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let outcome = try Harness.run(arguments, database: db)
        Harness.expectOneLineError(outcome, naming: value)
    }

    /// The last day of each calendar converts; the day after is refused (above, `gregorian 9666-04-03`).
    @Test func tabularCalendarEdges() {
        let last = CLI.run(["gregorian", "9666-04-02", "--calendar", "tabular", "--json"])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(last.json["gregorian"] as? String == "9999-12-31")
        let first = CLI.run(["gregorian", "0001-01-01", "--calendar", "tabular", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.json["gregorian"] as? String == "0622-07-19")
    }

    /// Instants at the ends of the supported years: a result or one line of error, never a signal.
    @Test(arguments: [
        ["today", "--now", "9999-12-31T23:59:59Z", "--tz", "Pacific/Kiritimati"],
        ["today", "--now", "0001-01-03T00:00:00Z", "--tz", "Etc/GMT+12"],
        ["calendar", "--now", "9999-12-31T23:59:59Z"],
        ["calendar", "--now", "9999-12-31T23:59:59Z", "--calendar", "tabular"],
        ["outbox", "prune", "--now", "0001-01-03T00:00:00Z", "--retention", "3650d"],
        ["guests", "purge", "--now", "0001-01-03T00:00:00Z", "--retention", "3650d"],
        ["onboarding", "funnel", "--from", "0001-01-01", "--to", "9999-12-31"],
        ["status", "--now", "9999-12-31T23:59:59Z"],
    ])
    func extremeInstantsNeverCrash(arguments: [String]) throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        Harness.expectNoCrash(try Harness.run(arguments, database: db))
    }

    /// Devices whose local date is outside 0001-9999 at the pinned instant: the pass ends, by status 0 or 1.
    @Test func schedulerAtTheEndsOfTimeNeverCrashes() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let late = ["devices", "add", "--platform", "apns", "--token", Self.apns, "--tz", "Pacific/Kiritimati", "--time", "00:00"]
        #expect(CLI.run(late + ["--now", "9999-12-30T00:00:00Z"], database: db).status == 0)
        let early = ["devices", "add", "--platform", "apns", "--token", String(repeating: "cd", count: 32), "--tz", "Etc/GMT+12", "--time", "23:59"]
        #expect(CLI.run(early + ["--now", "0001-01-03T00:00:00Z"], database: db).status == 0)
        for now in ["9999-12-31T23:59:59Z", "0001-01-03T00:00:00Z"] {
            Harness.expectNoCrash(try Harness.run(["serve", "--once", "--now", now, "--grace", "1d", "--sink", "stdout"], database: db))
        }
    }

    // MARK: - 4. An adjusted date out of range names the adjusted date

    /// 1882-11-12 is 1 Muharram 1300, the first day of the Umm al-Qura table; 2174-11-25 is its last. The predicted
    /// calendar's range (1300–1500) ends sooner: a date past it is named too.
    @Test func adjustedDateOutOfRangeIsNamed() throws {
        let uq = ["--calendar", "umm-al-qura"]
        let first = CLI.run(["hijri", "1882-11-12", "--json"] + uq)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Harness.ymd(first.json) == [1300, 1, 1])
        for option in [["--adjust=-1"], ["--adjust", "-1"]] {
            let outcome = try Harness.run(["hijri", "1882-11-12"] + option + uq)
            Harness.expectOneLineError(outcome, naming: "1882-11-11")
            #expect(outcome.stderr.contains("adjusted by -1"), "\(outcome.stderr)")
        }
        let last = CLI.run(["hijri", "2174-11-25", "--json"] + uq)
        #expect(last.status == 0, "\(last.stderr)")
        #expect(Harness.ymd(last.json) == [1600, 12, 30])
        let after = try Harness.run(["hijri", "2174-11-25", "--adjust", "1"] + uq)
        Harness.expectOneLineError(after, naming: "2174-11-26")
        #expect(after.stderr.contains("adjusted by +1"), "\(after.stderr)")
        let predicted = try Harness.run(["hijri", "2100-01-01"])
        Harness.expectOneLineError(predicted, naming: "2100-01-01")
        #expect(predicted.stderr.contains("predicted") && predicted.stderr.contains("1500"), "\(predicted.stderr)")
    }

    // MARK: - 5. The log level is checked by --once too

    /// A bad log level from the flag, the environment or the configuration file fails a single pass, naming which.
    @Test func badLogLevelFailsOnce() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let levels = "expected trace, debug, info, notice, warning or error"
        Harness.expectOneLineError(
            try Harness.run(["serve", "--log-level", "loud", "--once"], database: db), naming: "invalid --log-level 'loud': \(levels)")
        Harness.expectOneLineError(
            try Harness.run(["serve", "--once"], database: db, environment: ["DAILYVERSE_LOG_LEVEL": "loud"]),
            naming: "invalid DAILYVERSE_LOG_LEVEL 'loud' (environment): \(levels)")
        let config = Harness.folder(of: db).appendingPathComponent("config.toml").path
        try "log_level = \"loud\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        Harness.expectOneLineError(
            try Harness.run(["serve", "--once", "--config", config], database: db), naming: "\(config):1: invalid log_level 'loud': \(levels)")
        // A valid level passes.
        let fine = CLI.run(["serve", "--once", "--log-level", "debug", "--now", "2025-03-01T08:30:00Z"], database: db)
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    // MARK: - 6. Database safety

    /// An explicit path (flag or DAILYVERSE_DB) into a missing folder is a typo: refused naming the folder, which
    /// is not created.
    @Test(arguments: [true, false])
    func missingFolderIsRefusedNotCreated(asFlag: Bool) throws {
        let top = FileManager.default.temporaryDirectory.appendingPathComponent("dv-missing-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: top) }
        let path = top.appendingPathComponent("nested").appendingPathComponent("db.sqlite").path
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let outcome =
            try asFlag
            ? Harness.run(["today", "--db", path, "--date", "2025-03-01"])
            : Harness.run(["today", "--date", "2025-03-01"], database: path)
        Harness.expectOneLineError(outcome, naming: "'\(folder)'")
        #expect(outcome.stderr.contains("does not exist"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: top.path), "the CLI created \(top.path)")
    }

    /// A database with a migration this binary does not know is refused by every command, naming the migration,
    /// and its file is left byte for byte as it was.
    @Test func newerVersionDatabaseIsRefusedAndLeftAlone() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let folder = Harness.folder(of: db)
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: db).status == 0)
        try Harness.markAsWrittenByNewerVersion(db)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: db))
        let snapshot = try Harness.snapshot(db)
        #expect(snapshot.migrations.contains("v99-future"))
        let commands: [[String]] = [
            ["today", "--date", "2025-03-01"],
            ["status"],
            ["hijri", "2025-03-01", "--calendar", "sighted"],
            ["sighting", "set", "1446", "9", "2025-03-02"],
            ["devices", "add", "--platform", "apns", "--token", Self.apns, "--tz", "UTC"],
            ["outbox", "prune"],
            ["guests", "purge"],
            ["serve", "--once", "--sink", "jsonl:" + folder.appendingPathComponent("spool").path],
        ]
        for command in commands {
            let outcome = try Harness.run(command, database: db)
            Harness.expectOneLineError(outcome, naming: "v99-future")
            #expect(outcome.stderr.contains(db), "\(command): \(outcome.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == bytes, "a refused command changed the database file")
        // The daemon opens a pool. (GRDB's pool makes sure the log exists by creating and dropping a table before
        // the version check can run, so the file's header may change here: what is checked is its content.)
        let daemon = try Harness.run(["serve", "--listen", "none", "--sink", "jsonl:" + folder.appendingPathComponent("spool").path], database: db)
        Harness.expectOneLineError(daemon, naming: "v99-future")
        #expect(try Harness.snapshot(db) == snapshot, "a refused command changed the database's schema or rows")
    }

    /// The refusal names the file given, not an in-memory stand-in.
    @Test func newerVersionErrorNamesOnlyTheFile() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: db).status == 0)
        try Harness.markAsWrittenByNewerVersion(db)
        let outcome = try Harness.run(["status"], database: db)
        Harness.expectOneLineError(outcome, naming: "'\(db)'")
        #expect(!outcome.stderr.contains(":memory:"), "\(outcome.stderr)")
    }

    /// What the CLI creates is its owner's only: the database, the scheduler lock, the spool and its lock, and the
    /// default data folder. (The test process's own umask is usually 022, so a missing umask would show here.)
    @Test func createdFilesAreOwnerOnly() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let folder = Harness.folder(of: db)
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: db).status == 0)
        #expect(Harness.permissions(db) == 0o600, "database mode \(Harness.octal(Harness.permissions(db)))")
        // serve --once with the default sink: a spool folder beside the database.
        let once = CLI.run(["serve", "--once", "--now", "2025-03-01T08:30:00Z"], database: db)
        #expect(once.status == 0, "\(once.stderr)")
        let spool = folder.appendingPathComponent("spool").path
        let spoolMode = try #require(Harness.permissions(spool), "no spool folder at \(spool)")
        #expect(spoolMode & 0o077 == 0, "spool folder mode \(Harness.octal(spoolMode))")
        let spoolLock = try #require(Harness.permissions(spool + "/.lock"), "no spool lock")
        #expect(spoolLock & 0o077 == 0, "spool lock mode \(Harness.octal(spoolLock))")
        #expect(
            Harness.permissions(db + ".scheduler-lock") == 0o600, "scheduler lock mode \(Harness.octal(Harness.permissions(db + ".scheduler-lock")))")
        // The default location (no explicit database): its folders are created, owner-only.
        let xdg = folder.appendingPathComponent("xdg")
        let fromDefault = CLI.run(["today", "--date", "2025-03-01"], database: "", environment: ["XDG_DATA_HOME": xdg.path])
        #expect(fromDefault.status == 0, "\(fromDefault.stderr)")
        let defaultFolder = xdg.appendingPathComponent("dailyverse")
        let folderMode = try #require(Harness.permissions(defaultFolder.path), "no folder at \(defaultFolder.path)")
        #expect(folderMode & 0o077 == 0, "data folder mode \(Harness.octal(folderMode))")
        let defaultDatabase = defaultFolder.appendingPathComponent("dailyverse.sqlite").path
        #expect(Harness.permissions(defaultDatabase) == 0o600, "database mode \(Harness.octal(Harness.permissions(defaultDatabase)))")
    }

    /// A database file or folder this user cannot write is refused up front, naming it.
    /// Not as root: root passes `access(W_OK)` on a 0444 file and in a 0555 folder, so the refusal cannot be seen.
    @Test(.disabled(if: getuid() == 0, "root may write read-only files: access(W_OK) succeeds"))
    func readOnlyDatabaseIsRefusedNamingIt() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let folder = Harness.folder(of: db)
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: db).status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: db))
        // The file read-only.
        let readOnlyFile = chmod(db, 0o444)
        try #require(readOnlyFile == 0)
        for command in [["today", "--date", "2025-03-01"], ["sighting", "set", "1446", "9", "2025-03-02"]] {
            let outcome = try Harness.run(command, database: db)
            Harness.expectOneLineError(outcome, naming: "'\(db)'")
        }
        let writableFile = chmod(db, 0o600)
        try #require(writableFile == 0)
        // The folder read-only (the log and shared-memory files live beside the database).
        let readOnlyFolder = chmod(folder.path, 0o555)
        try #require(readOnlyFolder == 0)
        defer { _ = chmod(folder.path, 0o755) }
        let outcome = try Harness.run(["today", "--date", "2025-03-01"], database: db)
        Harness.expectOneLineError(outcome, naming: "'\(folder.path)'")
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == bytes)
    }

    /// As root, file modes do not stop a write, but a read-only filesystem does: the same refusal, tested where the
    /// test above cannot run (CI runs as root).
    @Test(.enabled(if: getuid() == 0, "mounting a filesystem needs root"))
    func aDatabaseOnAReadOnlyFilesystemIsRefusedNamingIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func mount(_ arguments: [String]) -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/mount")
            process.arguments = arguments
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return -1 }
            process.waitUntilExit()
            return process.terminationStatus
        }
        guard mount(["-t", "tmpfs", "-o", "size=64m", "tmpfs", folder.path]) == 0 else { return }  // no mounting here
        defer {
            _ = mount(["-o", "remount,rw", folder.path])
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [folder.path]
            try? umount.run()
            umount.waitUntilExit()
        }
        let db = folder.appendingPathComponent("db.sqlite").path
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: db).status == 0)
        #expect(mount(["-o", "remount,ro", folder.path]) == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: db))
        for command in [["today", "--date", "2025-03-01"], ["serve", "--once", "--now", "2025-03-01T08:05:00Z", "--sink", "stdout"]] {
            let outcome = try Harness.run(command, database: db)
            Harness.expectOneLineError(outcome, naming: "'\(db)'")
            #expect(outcome.stderr.contains("Read-only file system"), "\(outcome.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == bytes)
    }

    // MARK: - 7. One scheduler per database

    /// While a daemon holds the database, `serve --once` and a second daemon are refused naming the database and
    /// the holder; once the daemon stops on SIGTERM, `serve --once` runs.
    @Test func oneSchedulerPerDatabase() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        let folder = Harness.folder(of: db)
        // Waited for as systemd waits: READY=1 on the notification socket (a SIGTERM before the daemon is up kills it
        // as it kills any process that has not yet installed its handler).
        let notify = try NotifySocket()
        let daemon = try CLI.start(
            ["serve", "--listen", "none", "--sink", "jsonl:" + folder.appendingPathComponent("daemon-spool").path], database: db,
            environment: ["NOTIFY_SOCKET": notify.path])
        defer { Harness.stop(daemon) }
        let pid = String(daemon.processIdentifier)
        let lockFile = db + ".scheduler-lock"
        let ready = notify.wait(for: "READY=1", seconds: 120) { daemon.isRunning }
        try #require(ready.found, "no READY=1 from the daemon: \(ready.messages)")
        try #require(daemon.isRunning, "the daemon exited before taking the lock")
        let holder = (try? String(contentsOfFile: lockFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(holder == pid, "the lock file holds \(holder ?? "nothing"), not the daemon's pid \(pid)")

        let once = try Harness.run(["serve", "--once", "--sink", "jsonl:" + folder.appendingPathComponent("once-spool").path], database: db)
        Harness.expectOneLineError(once, naming: "already has a scheduler")
        #expect(once.stderr.contains("'\(db)'"), "\(once.stderr)")
        #expect(once.stderr.contains("process \(pid)"), "\(once.stderr)")
        let second = try Harness.run(
            ["serve", "--listen", "none", "--sink", "jsonl:" + folder.appendingPathComponent("second-spool").path], database: db)
        Harness.expectOneLineError(second, naming: "already has a scheduler")

        kill(daemon.processIdentifier, SIGTERM)
        let stopped = Harness.waitUntil(.seconds(20)) { !daemon.isRunning }
        try #require(stopped, "the daemon did not stop within 20 s of SIGTERM")
        daemon.waitUntilExit()
        #expect(daemon.terminationReason == .exit && daemon.terminationStatus == 0)
        let after = try Harness.run(["serve", "--once", "--sink", "jsonl:" + folder.appendingPathComponent("once-spool").path], database: db)
        #expect(after.reason == .exit && after.status == 0, "\(after.stderr)")
        #expect(after.stdout.contains("pass at"))
    }

    // MARK: - 8. A listen failure ends serve

    /// The port is taken: `serve` exits by itself with status 1 and says why in a line, no trace.
    @Test func listenFailureEndsServe() throws {
        let db = Harness.scratchDatabase()
        defer { Harness.remove(db) }
        // Seeded first, so that the time limit below is the daemon's start alone.
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: db).status == 0)
        let (descriptor, port) = try Harness.occupyLoopbackPort()
        defer { close(descriptor) }
        let spool = Harness.folder(of: db).appendingPathComponent("spool").path
        let notify = try NotifySocket()
        let outcome = try Harness.run(
            ["serve", "--listen", "127.0.0.1:\(port)", "--sink", "jsonl:" + spool], database: db, environment: ["NOTIFY_SOCKET": notify.path],
            limit: .seconds(20))
        // Never READY: the API did not listen (the process has ended, so anything it sent is already queued).
        let ready = notify.wait(for: "READY=1", seconds: 1)
        #expect(!ready.found, "\(ready.messages)")
        #expect(!outcome.timedOut, "serve was still running 20 s after its listen failed")
        #expect(outcome.reason == .exit, "ended by signal \(outcome.status)")
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("cannot listen on 127.0.0.1:\(port)"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("Address already in use"), "\(outcome.stderr)")
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count <= 6, "\(outcome.stderr)")
        #expect(lines.last?.hasPrefix("dailyverse: cannot listen on 127.0.0.1:\(port)") == true, "\(outcome.stderr)")
        for trace in ["Fatal error", "Program crashed", "Backtrace", "Stack dump"] {
            #expect(!outcome.stderr.contains(trace), "\(outcome.stderr)")
        }
    }
}

/// READY=1 once the API listens and the first pass is done; STOPPING=1 and exit 0 on SIGTERM.
@Suite struct ReadinessCLITests {
    @Test func readyComesWhenTheAPIListensAndTheFirstPassIsDone() throws {
        let db = CLI.freshDatabase()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: db).deletingLastPathComponent()) }
        let notify = try NotifySocket()
        let spool = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("spool").path
        let daemon = try CLI.start(
            ["serve", "--listen", "127.0.0.1:0", "--sink", "jsonl:" + spool], database: db, environment: ["NOTIFY_SOCKET": notify.path])
        defer {
            if daemon.isRunning {
                daemon.terminate()
                daemon.waitUntilExit()
            }
        }
        let ready = notify.wait(for: "READY=1", seconds: 120) { daemon.isRunning }
        #expect(ready.found, "\(ready.messages)")
        kill(daemon.processIdentifier, SIGTERM)
        let stopping = notify.wait(for: "STOPPING=1", seconds: 60) { daemon.isRunning }
        #expect(stopping.found, "\(stopping.messages)")
        daemon.waitUntilExit()
        #expect(daemon.terminationReason == .exit && daemon.terminationStatus == 0)
    }
}

// MARK: - Harness

/// Runs the binary with a time limit and reports how it ended; files and sockets for the tests above.
private enum Harness {
    /// How a bounded run of the binary ended.
    struct Outcome {
        let status: Int32
        let reason: Process.TerminationReason
        let stdout: String
        let stderr: String
        /// Killed at the time limit.
        let timedOut: Bool
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs the binary as `CLI.run` does (same environment), its output going to files so that nothing blocks, and
    /// kills it if it is still running after `limit` (a hang guard, not a measurement).
    static func run(
        _ arguments: [String], database: String = CLI.sharedDatabase, environment: [String: String] = [:], limit: Duration = .seconds(60)
    ) throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outPath = folder.appendingPathComponent("stdout").path
        let errPath = folder.appendingPathComponent("stderr").path
        guard FileManager.default.createFile(atPath: outPath, contents: nil), FileManager.default.createFile(atPath: errPath, contents: nil) else {
            throw Failure(description: "cannot create output files in \(folder.path)")
        }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        var env = CLI.inheritedEnvironment
        env["DAILYVERSE_DB"] = database
        env["DAILYVERSE_DATA"] = CLI.repository.appendingPathComponent("data").path
        env["TZ"] = "UTC"
        env.removeValue(forKey: "DAILYVERSE_NOW")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let exited = waitUntil(limit) { !process.isRunning }
        if !exited { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        func read(_ path: String) -> String { String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }
        return Outcome(
            status: process.terminationStatus, reason: process.terminationReason, stdout: read(outPath), stderr: read(errPath), timedOut: !exited)
    }

    /// Polls `condition` every 50 ms until it holds or `limit` has passed; whether it held.
    @discardableResult
    static func waitUntil(_ limit: Duration, _ condition: () -> Bool) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while clock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    /// Ends a child still running (a test that failed midway), and reaps it.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The error contract: exit status exactly 1 (not a signal, not a hang), nothing on stdout, and exactly one line
    /// on stderr, starting `dailyverse: ` and naming `value`.
    static func expectOneLineError(_ outcome: Outcome, naming value: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!outcome.timedOut, "still running at the time limit", sourceLocation: sourceLocation)
        #expect(outcome.reason == .exit, "ended by signal \(outcome.status): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.status == 1, "status \(outcome.status): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stdout.isEmpty, "stdout: \(outcome.stdout)", sourceLocation: sourceLocation)
        #expect(lineBreaks(outcome.stderr) == 1, "stderr: \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.hasSuffix("\n"), "stderr: \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.hasPrefix("dailyverse: "), "stderr: \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains(value), "stderr does not name \(value): \(outcome.stderr)", sourceLocation: sourceLocation)
    }

    /// Either outcome is allowed, a crash or a hang is not: status 0, or status 1 with one line of error.
    static func expectNoCrash(_ outcome: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!outcome.timedOut, "still running at the time limit", sourceLocation: sourceLocation)
        #expect(outcome.reason == .exit, "ended by signal \(outcome.status): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.status == 0 || outcome.status == 1, "status \(outcome.status): \(outcome.stderr)", sourceLocation: sourceLocation)
        if outcome.status == 1 {
            #expect(lineBreaks(outcome.stderr) == 1, "stderr: \(outcome.stderr)", sourceLocation: sourceLocation)
            #expect(outcome.stderr.hasPrefix("dailyverse: "), "stderr: \(outcome.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// How many "\n" a text holds.
    static func lineBreaks(_ text: String) -> Int { text.utf8.count(where: { $0 == UInt8(ascii: "\n") }) }

    // MARK: Files

    /// A database path in a new folder of its own (see `CLI.freshDatabase`).
    static func scratchDatabase() -> String { CLI.freshDatabase() }

    static func folder(of database: String) -> URL { URL(fileURLWithPath: database).deletingLastPathComponent() }

    /// Removes a scratch database's folder and everything in it.
    static func remove(_ database: String) { try? FileManager.default.removeItem(at: folder(of: database)) }

    /// The permission bits of a file or folder, or nil if there is none.
    static func permissions(_ path: String) -> Int? {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber).map { $0.intValue & 0o777 }
    }

    static func octal(_ mode: Int?) -> String { mode.map { "0" + String($0, radix: 8) } ?? "none" }

    /// Year, month and day of a `hijri --json` or `gregorian --json` result.
    static func ymd(_ json: [String: Any]) -> [Int] {
        let hijri = json["hijri"] as? [String: Any] ?? [:]
        return ["year", "month", "day"].compactMap { hijri[$0] as? Int }
    }

    /// Records a migration this binary does not know, as a newer version would, and folds the log back into the file
    /// so that the file alone is the database when the CLI opens it.
    static func markAsWrittenByNewerVersion(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-future')") }
        try queue.writeWithoutTransaction { db in _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// What a refused command must not change: the migrations, the schema, and the rows of the tables commands write.
    struct Snapshot: Equatable, Sendable {
        let migrations: [String]
        let schema: [String]
        let counts: [Int]
    }

    static func snapshot(_ path: String) throws -> Snapshot {
        try DatabaseQueue(path: path).read { db in
            Snapshot(
                migrations: try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"),
                schema: try String.fetchAll(db, sql: "SELECT type || ' ' || name || ' ' || ifnull(sql, '') FROM sqlite_master ORDER BY type, name"),
                counts: try ["device", "outbox", "published_month_start", "user", "ayah_text", "commentary"].map { table in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? -1
                })
        }
    }

    // MARK: Sockets

    /// A socket listening on 127.0.0.1 at a port the kernel chose: the port is taken until the descriptor is closed.
    static func occupyLoopbackPort() throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard bound == 0, listen(descriptor, 8) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "bind/listen on 127.0.0.1: \(reason)")
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            close(descriptor)
            throw Failure(description: "getsockname: \(String(cString: strerror(errno)))")
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}

/// Lists stream a page at a time, and failed rows can be put back.
@Suite struct ListingCLITests {
    @Test func listsTakeALimitAndAnAfterAndRequeuePutsFailedRowsBack() throws {
        let database = CLI.freshDatabase()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: database).deletingLastPathComponent()) }
        for n in 1...5 {
            let token = String(format: "%064x", n)
            let added = CLI.run(
                ["devices", "add", "--platform", "apns", "--token", token, "--tz", "UTC", "--now", "2025-02-01T00:00:0\(n)Z"], database: database)
            #expect(added.status == 0, "\(added.stderr)")
        }
        let all = try #require(
            try JSONSerialization.jsonObject(with: Data(CLI.run(["devices", "list", "--json"], database: database).stdout.utf8)) as? [[String: Any]])
        #expect(all.count == 5)
        let ids = all.compactMap { $0["id"] as? String }
        let first = try #require(
            try JSONSerialization.jsonObject(with: Data(CLI.run(["devices", "list", "--json", "--limit", "2"], database: database).stdout.utf8))
                as? [[String: Any]])
        #expect(first.compactMap { $0["id"] as? String } == Array(ids.prefix(2)))
        let next = CLI.run(["devices", "list", "--json", "--limit", "2", "--after", ids[1]], database: database)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(next.stdout.utf8)) as? [[String: Any]])
        #expect(second.compactMap { $0["id"] as? String } == Array(ids[2..<4]))
        #expect(CLI.run(["devices", "list", "--limit", "0"], database: database).status == 1)
        #expect(CLI.run(["devices", "list", "--after", "no-such-device"], database: database).status == 1)

        // Five rows fire; then they are marked failed, as a gateway's 4xx would.
        let spool = URL(fileURLWithPath: database).deletingLastPathComponent().appendingPathComponent("spool").path
        #expect(CLI.run(["serve", "--once", "--now", "2025-03-01T08:05:00Z", "--sink", "jsonl:\(spool)"], database: database).status == 0)
        let queue = try DatabaseQueue(path: database)
        // (Each device also has two days before, inside the look-back, recorded as missed.)
        try queue.write { db in
            try db.execute(sql: "UPDATE outbox SET status = 'failed', attempts = 8, last_error = 'HTTP 400' WHERE status = 'delivered'")
        }
        let rows = try #require(
            try JSONSerialization.jsonObject(
                with: Data(CLI.run(["outbox", "list", "--json", "--status", "failed", "--limit", "3"], database: database).stdout.utf8))
                as? [[String: Any]])
        #expect(rows.count == 3)
        let lastID = try #require(rows.last?["id"] as? Int)
        let rest = try #require(
            try JSONSerialization.jsonObject(
                with: Data(CLI.run(["outbox", "list", "--json", "--status", "failed", "--after", "\(lastID)"], database: database).stdout.utf8))
                as? [[String: Any]])
        #expect(rest.count == 2)
        #expect(CLI.run(["outbox", "requeue"], database: database).status == 1, "ids or --all")
        let one = CLI.run(["outbox", "requeue", "\(lastID)", "--json"], database: database)
        #expect(one.json["requeued"] as? Int == 1)
        #expect(CLI.run(["outbox", "requeue", "--all", "--json"], database: database).json["requeued"] as? Int == 4)
        let pending = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE status = 'pending' AND attempts = 0") }
        #expect(pending == 5)
    }
}

/// What an operator meets: a configuration file others could write, settings the environment overrides, long imports.
@Suite struct OperatorCLITests {
    func configFile(_ text: String, mode: Int) throws -> String {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        let path = folder.appendingPathComponent("config.toml").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode_t(mode)) == 0)
        return path
    }

    @Test func aConfigurationFileOthersCanWriteIsRefused() throws {
        for mode in [0o666, 0o620, 0o602] {
            let path = try configFile("sink = \"webhook:http://attacker.example/x\"\n", mode: mode)
            let result = CLI.run(["today", "--date", "2025-03-01", "--config", path])
            #expect(result.status == 1, "mode \(String(mode, radix: 8))")
            #expect(result.stderr.contains(path) && result.stderr.contains("chmod go-w"), "\(result.stderr)")
        }
        let safe = try configFile("grace = \"2h\"\n", mode: 0o644)
        #expect(CLI.run(["today", "--date", "2025-03-01", "--config", safe]).status == 0)
        // Owned by someone else (only root can hand a file over, as this test does when it runs as root).
        if getuid() == 0 {
            #expect(chown(safe, 4242, 4242) == 0)
            let result = CLI.run(["today", "--date", "2025-03-01", "--config", safe])
            #expect(result.status == 1)
            #expect(result.stderr.contains("belongs to user 4242"), "\(result.stderr)")
        }
    }

    @Test func serveSaysWhichFileSettingsTheEnvironmentOverrides() throws {
        let database = CLI.freshDatabase()
        let folder = URL(fileURLWithPath: database).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        // `database` as the environment has it: the same value in both places overrides nothing, and is not said.
        let config = try configFile(
            "sink = \"jsonl:\(folder.appendingPathComponent("file-spool").path)\"\ndatabase = \"\(database)\"\n", mode: 0o600)
        let log = folder.appendingPathComponent("serve.log")
        #expect(FileManager.default.createFile(atPath: log.path, contents: nil))
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--listen", "none", "--config", config]
        var environment = CLI.inheritedEnvironment
        environment["DAILYVERSE_DB"] = database
        environment["DAILYVERSE_DATA"] = CLI.repository.appendingPathComponent("data").path
        environment["DAILYVERSE_SINK"] = "jsonl:" + folder.appendingPathComponent("env-spool").path
        environment.removeValue(forKey: "DAILYVERSE_NOW")
        process.environment = environment
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        // Wait (bounded) for the start lines.
        let deadline = Date().addingTimeInterval(120)
        var text = ""
        while Date() < deadline {
            text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if text.contains("scheduler ready") || !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(text.contains("'sink' in \(config) is overridden by DAILYVERSE_SINK in the environment"), "\(text)")
        #expect(text.contains("warning"), "said at warning level: \(text)")
        #expect(!text.contains("'database' in"), "\(text)")
    }

    /// Not on a terminal, a stage says how far it is every 5 seconds: one done sooner says nothing, so that a quick
    /// import's error is its one line (`checking: 153/153 (100%)` came before the error of the stage after).
    @Test func aQuickImportSaysNothingButItsErrorWhenNotOnATerminal() throws {
        let database = CLI.freshDatabase()
        let folder = URL(fileURLWithPath: database).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("devices.jsonl")
        var lines = (1...3000).map { #"{"platform": "apns", "token": "\#(String(format: "%064x", $0))", "timezone": "UTC"}"# }
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        let result = CLI.run(["devices", "import", file.path], database: database)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        // Every line checked, then the write refuses the last: the refusal alone.
        lines[2999] = lines[0]
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        let refused = CLI.run(["devices", "import", file.path], database: CLI.freshDatabase())
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(refused.stderr.hasPrefix("dailyverse: devices.jsonl:3000:") && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
    }
}

@Suite struct SchedulerClockCLITests {
    /// A pass looks at local dates around its instant in every zone: at the ends of the supported years it is refused
    /// in one line naming the instant, before anything is written, rather than failing inside SQLite.
    @Test(arguments: ["9999-12-31T23:59:59Z", "9999-12-30T00:00:00Z", "0001-01-01T00:00:00Z", "0001-01-03T12:00:00Z"])
    func aPassAtTheEndsOfTimeIsRefusedInOneLine(now: String) throws {
        let db = CLI.freshDatabase()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: db).deletingLastPathComponent()) }
        let token = String(format: "%064x", 9)
        #expect(
            CLI.run(
                ["devices", "add", "--platform", "apns", "--token", token, "--tz", "Pacific/Kiritimati", "--now", "2025-01-01T00:00:00Z"],
                database: db
            ).status == 0)
        let result = CLI.run(["serve", "--once", "--now", now, "--sink", "stdout"], database: db)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("dailyverse: invalid --now") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(CLI.run(["serve", "--once", "--now", "9999-12-29T00:00:00Z", "--sink", "stdout"], database: db).status == 0)
    }
}
