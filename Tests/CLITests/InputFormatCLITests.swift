import Foundation
import GRDB
import Testing

/// Each format the command line reads has one rule, the strict one the README writes, applied in one place: a Hijri
/// date is `YYYY-MM-DD` as a Gregorian one is (`gregorian 1446-9-1` was taken, `hijri 2026-1-1` refused); a verse key's
/// numbers have no leading zeros on either side (`002:255` was taken, `2:0255` refused); a Hijri year is one to four
/// digits and nothing else (`--hijri-year 01447` was taken); a coordinate is a plain decimal number (`0x10,20` and
/// `1e1,2e1` were taken as regions).
@Suite struct InputFormatCLITests {
    /// One line on stderr starting `dailyverse: ` and naming `value`, nothing on stdout, exit status 1.
    static func expectRefused(_ result: CLI.Result, naming value: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 1, "status \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "stdout: \(result.stdout)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.hasPrefix("dailyverse: ") && result.stderr.utf8.count(where: { $0 == UInt8(ascii: "\n") }) == 1,
            "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(value), "stderr does not name \(value): \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test(
        arguments: [
            // Dates: two-digit month and day, in both calendars.
            (["gregorian", "1446-9-1"], "1446-9-1"),
            (["gregorian", "1446-09-1"], "1446-09-1"),
            (["gregorian", "01446-09-01"], "01446-09-01"),
            (["hijri", "2026-1-1"], "2026-1-1"),
            (["today", "--date", "2026-1-01"], "2026-1-01"),
            // Verse keys: no leading zeros, on either side.
            (["verse", "02:255"], "02:255"),
            (["verse", "002:255"], "002:255"),
            (["verse", "2:0255"], "2:0255"),
            (["verse", "2:025"], "2:025"),
            (["verse", "96:1-05"], "96:1-05"),
            (["verse", "2:0255", "--layer", "foundation", "--full"], "2:0255"),
            // Hijri years: one to four digits alone, wherever they are given.
            (["calendar", "--hijri-year", "01447"], "01447"),
            (["calendar", "--hijri-year", "+1447"], "+1447"),
            (["calendar", "--hijri-year", "0"], "'0'"),
            (["content", "coverage", "--hijri-year", "01447"], "01447"),
            (["sighting", "set", "01446", "9", "2025-03-02"], "01446"),
            (["sighting", "set", "+1446", "9", "2025-03-02"], "+1446"),
            (["sighting", "set", "1446", "+9", "2025-03-02"], "+9"),
            (["sighting", "set", "1446", "009", "2025-03-02"], "009"),
            (["sighting", "remove", "01446", "9"], "01446"),
            (["sighting", "remove", "1446", "13"], "13"),
            // Coordinates: plain decimal numbers.
            (["hijri", "2025-03-02", "--region", "0x10,20"], "0x10,20"),
            (["hijri", "2025-03-02", "--region", "1e1,2e1"], "1e1,2e1"),
            (["hijri", "2025-03-02", "--region", "35.,51"], "35.,51"),
            (["hijri", "2025-03-02", "--region", "35,.5"], "35,.5"),
            (["hijri", "2025-03-02", "--region", "35,51,1E3"], "35,51,1E3"),
            (["hijri", "2025-03-02", "--region", "35,--51"], "35,--51"),
        ] as [([String], String)])
    func everyFormatHasOneStrictRule(arguments: [String], value: String) {
        // A fresh database each: a refusal must leave nothing (the sighting commands would write one).
        let db = CLI.freshDatabase()
        Self.expectRefused(CLI.run(arguments, database: db), naming: value)
        let published = (try? DatabaseQueue(path: db).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM published_month_start") }) ?? 0
        #expect(published == 0, "\(arguments) published a month start")
    }

    /// The forms the README writes are taken, by the same parsers.
    @Test func theDocumentedFormsAreTaken() {
        let db = CLI.freshDatabase()
        for arguments in [
            ["gregorian", "1446-09-01"], ["hijri", "2026-01-01"], ["verse", "2:255"], ["verse", "96:1-5"],
            ["calendar", "--hijri-year", "1447"], ["hijri", "2025-03-02", "--region", "-33.87,151.21,+58.5"],
            ["sighting", "set", "1446", "9", "2025-03-02"], ["sighting", "remove", "1446", "9"],
        ] {
            let result = CLI.run(arguments, database: db)
            #expect(result.status == 0 && !result.stdout.isEmpty, "\(arguments): \(result.stderr)")
        }
    }

    /// The configuration file is `key = value` lines: a `[section]`, even an empty one, is refused with the file and
    /// the line, by every command that reads the file (an empty `[extra]` was taken, exit 0).
    @Test func aConfigurationFileSectionIsRefused() throws {
        let db = CLI.freshDatabase()
        let config = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("config.toml")
        try Data("region = \"iran\"\n\n[extra]\n".utf8).write(to: config)
        #expect(chmod(config.path, 0o600) == 0)
        for command in [["today", "--date", "2025-03-02"], ["sighting", "list"], ["serve", "--once", "--sink", "stdout"]] {
            Self.expectRefused(CLI.run(command + ["--config", config.path], database: db), naming: "config.toml:3: a section ([extra]) is not read")
        }
    }

    /// `sighting import` reads its years as `sighting set` does, in its lines and in `--years`.
    @Test func sightingImportReadsYearsAsSetDoes() throws {
        let db = CLI.freshDatabase()
        let folder = URL(fileURLWithPath: db).deletingLastPathComponent()
        let file = folder.appendingPathComponent("starts.csv")
        try Data("hijri_year,hijri_month,first_day\n+1446,9,2025-03-02\n".utf8).write(to: file)
        Self.expectRefused(CLI.run(["sighting", "import", file.path], database: db), naming: "starts.csv:2:")
        try Data("hijri_year,hijri_month,first_day\n1446,9,2025-03-02\n".utf8).write(to: file)
        Self.expectRefused(CLI.run(["sighting", "import", file.path, "--years", "01446-1447"], database: db), naming: "01446-1447")
        #expect(CLI.run(["sighting", "import", file.path, "--years", "1446-1447"], database: db).status == 0)
    }
}
