import Foundation
import Testing

/// A setting may be given in three places at once (a flag, the unit's environment, the configuration file): a value
/// refused names the one it came from, so the operator knows which to mend. The flag by its name, the variable with
/// "(environment)", the file by its path and the line of the key, each with the value and why, in one line. Each kind
/// of check is here: a duration, a count (from a flag, and one with no flag), a level, a throttle, an address list.
@Suite struct SettingOriginCLITests {
    struct Case: CustomStringConvertible, Sendable {
        let key: String
        /// Its flag on `serve`, with a value the parser takes and the setting refuses; nil for a setting with no flag.
        let flag: (name: String, value: String)?
        /// A value the setting refuses, as the environment and the file give it, and as the file writes it (TOML).
        let value: String
        let written: String
        /// Why the environment's and the file's value is refused, and the flag's.
        let reason: String
        let flagReason: String
        var environment: String { "DAILYVERSE_" + key.uppercased() }
        var description: String { key }
    }

    static let durations = "expected a number with s, m, h or d, from 1d to 3650d"
    static let cases: [Case] = [
        Case(
            key: "outbox_retention", flag: ("--outbox-retention", "3651d"), value: "3x", written: "\"3x\"", reason: durations,
            flagReason: "expected 1d to 3650d"),
        Case(
            key: "max_connections", flag: ("--max-connections", "many"), value: "many", written: "\"many\"",
            reason: "expected a whole number from 1 to 9999999", flagReason: "expected a whole number from 1 to 9999999"),
        Case(
            key: "max_devices_per_user", flag: nil, value: "0", written: "0", reason: "expected a whole number from 1 to 10000",
            flagReason: ""),
        Case(
            key: "log_level", flag: ("--log-level", "loud"), value: "loud", written: "'loud'",
            reason: "expected trace, debug, info, notice, warning or error", flagReason: "expected trace, debug, info, notice, warning or error"),
        Case(
            key: "throttle_sign_in", flag: nil, value: "5", written: "\"5\"",
            reason: "expected COUNT/DURATION such as 5/15m, COUNT from 1 to 1000000",
            flagReason: ""),
        Case(
            key: "trusted_proxies", flag: ("--trusted-proxies", "10.0.0.0/8,proxy.local"), value: "::1 proxy.local", written: "\"::1 proxy.local\"",
            reason: "the entry 'proxy.local' is not an IP address or a CIDR block such as 127.0.0.1, 10.0.0.0/8 or ::1",
            flagReason: "the entry 'proxy.local' is not an IP address or a CIDR block such as 127.0.0.1, 10.0.0.0/8 or ::1"),
    ]

    /// `serve --once`, which checks every setting before it opens anything (the database is never made here).
    static let serve = ["serve", "--once", "--sink", "stdout"]

    /// The setting's bad value on the third line of a configuration file of its own.
    static func configuration(_ setting: Case, beside db: String) throws -> String {
        let path = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("origin.toml").path
        try Data("# one bad value, after a good one\ngrace = \"2h\"\n\(setting.key) = \(setting.written)\n".utf8).write(
            to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o600) == 0)
        return path
    }

    static func expectRefused(_ result: CLI.Result, says line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 1 && result.stdout.isEmpty, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr == "dailyverse: \(line)\n", sourceLocation: sourceLocation)
    }

    @Test(arguments: cases)
    func aRefusedValueNamesWhereItCameFrom(setting: Case) throws {
        let db = CLI.freshDatabase()
        let config = try Self.configuration(setting, beside: db)
        // The file: its path, the line of the key, the key.
        Self.expectRefused(
            CLI.run(Self.serve + ["--config", config], database: db),
            says: "\(config):3: invalid \(setting.key) '\(setting.value)': \(setting.reason)")
        // The environment, by the variable's name; it wins over the file, so it is the one named.
        let environment = [setting.environment: setting.value]
        let line = "invalid \(setting.environment) '\(setting.value)' (environment): \(setting.reason)"
        Self.expectRefused(CLI.run(Self.serve, database: db, environment: environment), says: line)
        Self.expectRefused(CLI.run(Self.serve + ["--config", config], database: db, environment: environment), says: line)
        // The flag, by its name as typed; it wins over both.
        if let flag = setting.flag {
            Self.expectRefused(
                CLI.run(Self.serve + ["--config", config, flag.name, flag.value], database: db, environment: environment),
                says: "invalid \(flag.name) '\(flag.value)': \(setting.flagReason)")
        }
        #expect(!FileManager.default.fileExists(atPath: db), "a database was made for a refused setting")
    }

    /// A database address is named with where it came from too, and shown as the store shows it: never whole, where
    /// it may hold a password.
    @Test func aDatabaseAddressIsNamedWithoutItsPassword() throws {
        let db = CLI.freshDatabase()
        let address = "mysql://dv:secret@db.example.org/dv"
        let (shown, reason) = (
            "'mysql://dv:***@db.example.org/dv'", "a database is a postgresql:// (or postgres://) address, or the path of a SQLite file"
        )
        Self.expectRefused(CLI.run(["status", "--db", address], database: db), says: "invalid --db \(shown): \(reason)")
        Self.expectRefused(CLI.run(["status"], database: address), says: "invalid DAILYVERSE_DB \(shown) (environment): \(reason)")
        // From the file (an empty variable is none): the file's line, and no password.
        let config = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("database.toml").path
        try Data("database = \"postgresql://dv:secret@db.example.org/dv\"\n".utf8).write(to: URL(fileURLWithPath: config))
        #expect(chmod(config, 0o600) == 0)
        let file = CLI.run(["status", "--config", config], database: db, environment: ["DAILYVERSE_DB": ""])
        #expect(file.status == 1 && file.stderr.hasPrefix("dailyverse: \(config):1: invalid database '"), "\(file.stderr)")
        #expect(!file.stderr.contains("secret") && file.stderr.split(separator: "\n").count == 1, "\(file.stderr)")
    }

    /// What is refused by its form is refused before anything is opened, wherever it came from: a sink's URL that is not
    /// http(s) (it was found once the database was made, its password shown, and "invalid" said twice), a layer
    /// setting of the wrong form from the environment or the file and a region the data does not have (the database was
    /// made first), and a database address holding a line break (taken, and the server asked for a database of that
    /// name).
    @Test func aValueOfTheWrongFormIsRefusedBeforeAnythingIsMade() throws {
        let db = CLI.freshDatabase()
        let cases: [([String], [String: String], String)] = [
            (
                ["serve", "--once", "--sink", "webhook:ftp://u:secret@h/x"], [:],
                "invalid --sink 'webhook:***': expected an http:// or https:// URL after webhook:"
            ),
            (
                ["serve", "--once"], ["DAILYVERSE_SINK": "gorush:h:9000"],
                "invalid DAILYVERSE_SINK 'gorush:h:9000' (environment): expected an http:// or https:// URL after gorush:"
            ),
            (["today", "--date", "2025-03-01"], ["DAILYVERSE_LAYERS": "nolayer=x"], "invalid DAILYVERSE_LAYERS 'nolayer=x' (environment): "),
            (["today", "--date", "2025-03-01"], ["DAILYVERSE_REGION": "mars"], "invalid DAILYVERSE_REGION 'mars' (environment): no such region"),
            (["today", "--date", "2025-03-01", "--region", "95,10"], [:], "invalid --region '95,10': "),
            (
                ["status", "--db", "postgresql://dv@db.example.org/d\nb"], [:],
                "invalid --db 'postgresql://dv@db.example.org/d\\u{A}b': it holds a control character (a newline?) or bytes that are not UTF-8"
            ),
        ]
        for (arguments, environment, line) in cases {
            let result = CLI.run(arguments, database: db, environment: environment)
            #expect(result.status == 1 && result.stdout.isEmpty, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("dailyverse: \(line)") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!result.stderr.contains("secret"))
            #expect(!FileManager.default.fileExists(atPath: db), "\(arguments): a database was made for a refused setting")
        }
    }
}
