import Foundation
import Testing

@Suite struct ContentCLITests {
    @Test func coverageSaysPerLayerHowManyDaysShowIt() throws {
        let json = CLI.run(["content", "coverage", "--hijri-year", "1446", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(Set(json.json.keys) == ["hijri_year", "calendar", "days", "selections", "layers", "incomplete", "entries", "all_layers_days"])
        #expect(json.json["days"] as? Int == 355, "1446 has 355 days by the predicted calendar (354 by Umm al-Qura)")
        let layers = try #require(json.json["layers"] as? [[String: Any]])
        #expect(layers.map { $0["id"] as? String } == ["foundation", "classical_shia", "contemporary", "ahlul_bayt", "comparative"])
        // Per layer, the days by whose words it is; they add up to the days it is shown.
        for layer in layers {
            let provenance = try #require(layer["provenance"] as? [String: Int])
            #expect(provenance.values.reduce(0, +) == layer["days"] as? Int)
            #expect(Set(provenance.keys).isSubset(of: ["editorial", "editorial-summary", "quotation"]))
        }
        // The bar for the bundled data: all five layers on at least 95 % of the days.
        let allFive = try #require(json.json["all_layers_days"] as? Int)
        #expect(allFive * 100 >= 95 * 355, "all five layers on \(allFive) of 355 days")
        let classical = try #require(layers.first { $0["id"] as? String == "classical_shia" })
        #expect(((classical["sources"] as? [String: Int])?["en.mizan"] ?? 0) > 300, "al-Mizan's excerpts on most days")
        let text = CLI.run(["content", "coverage", "--hijri-year", "1446", "--show", "2"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("1446 AH (predicted): 355 days, "))
        #expect(text.stdout.contains("foundation ") && text.stdout.contains("commentary entries: "))
        for (arguments, value) in [(["--hijri-year", "0"], "0"), (["--hijri-year", "99999"], "99999"), (["--show=-1"], "-1")] {
            let bad = CLI.run(["content", "coverage"] + arguments)
            #expect(bad.status == 1 && bad.stderr.hasPrefix("dailyverse: ") && bad.stderr.contains(value), "\(arguments): \(bad.stderr)")
            #expect(bad.stderr.split(separator: "\n").count == 1)
        }
    }

    /// `bundle-tafsir` reads and checks every edition named before it writes a file: an unknown one named last
    /// leaves the folder as it was. A good run leaves each file whole and nothing beside it.
    @Test func bundlingWritesEveryEditionOrNone() throws {
        let db = CLI.freshDatabase()
        let fixture = CLI.repository.appendingPathComponent("Tests/ContentStoreTests/Fixtures/thaqalayn-tafsir").path
        try #require(CLI.run(["import", "tafsir", fixture], database: db).status == 0)
        let out = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("bundle")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let bundle = { (editions: [String]) in
            CLI.run(["content", "bundle-tafsir", "--out", out.path, "--taken-from", "test"] + editions.flatMap { ["--edition", $0] }, database: db)
        }
        let refused = bundle(["en.noor", "en.mizan", "en.xx"])
        #expect(refused.status == 1 && refused.stderr.contains("'en.xx'") && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
        let written = bundle(["en.noor", "en.mizan", "en.noor"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["en.mizan.jsonl", "en.noor.jsonl"])
        #expect(written.stdout.split(separator: "\n").count == 2, "each edition once: \(written.stdout)")
        let missing = CLI.run(
            ["content", "bundle-tafsir", "--out", out.appendingPathComponent("nowhere").path, "--taken-from", "t", "--edition", "en.noor"],
            database: db)
        #expect(missing.status == 1 && missing.stderr.contains("nowhere': No such file or directory"), "\(missing.stderr)")
        let file = out.appendingPathComponent("en.noor.jsonl").path
        let notAFolder = CLI.run(["content", "bundle-tafsir", "--out", file, "--taken-from", "t", "--edition", "en.noor"], database: db)
        #expect(notAFolder.status == 1 && notAFolder.stderr.contains("'\(file)' is not a folder"), "\(notAFolder.stderr)")
    }

    /// `content check` with no folder named checks the one `serve` seeds from, the configuration file's `data` too.
    @Test func checkReadsTheConfiguredDataFolder() throws {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        let config = folder.appendingPathComponent("config.toml").path
        try Data("data = \"/nonexistent-data-folder\"\n".utf8).write(to: URL(fileURLWithPath: config))
        #expect(chmod(config, 0o644) == 0)
        let result = CLI.run(["content", "check", "--config", config], environment: ["DAILYVERSE_DATA": ""])
        #expect(result.status == 1 && result.stderr.contains("/nonexistent-data-folder"), "\(result.stderr)")
    }

    /// `content coverage --adjust` says which Hijri year is today's, as `hijri` and `calendar` read it.
    @Test func coverageTakesTheAdjustmentForTheCurrentYear() throws {
        let eve = ["--calendar", "umm-al-qura", "--now", "2025-06-25T12:00:00Z", "--json"]
        for (adjust, year) in [("0", 1446), ("1", 1447)] {
            let result = CLI.run(["content", "coverage", "--adjust", adjust] + eve)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.json["hijri_year"] as? Int == year, "--adjust \(adjust)")
            let hijri = CLI.run(["hijri", "2025-06-25", "--adjust", adjust] + eve)
            #expect((hijri.json["hijri"] as? [String: Any])?["year"] as? Int == year, "\(hijri.stdout)")
        }
    }

    @Test func checkPassesOnTheBundledDataAndNamesABadFolder() throws {
        let text = CLI.run(["content", "check"])
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        #expect(text.stdout.split(separator: "\n").last?.hasPrefix("ok: ") == true, "\(text.stdout)")
        let json = CLI.run(["content", "check", "--json", "--show", "0"])
        #expect(json.status == 0 && json.json["ok"] as? Bool == true)
        #expect(Set(json.json.keys) == ["ok", "selections", "entries", "problems"])
        let missing = CLI.run(["content", "check", "/nonexistent-folder"])
        #expect(
            missing.status == 1 && missing.stderr.hasPrefix("dailyverse: ") && missing.stderr.contains("/nonexistent-folder"), "\(missing.stderr)")
        #expect(missing.stderr.split(separator: "\n").count == 1)
    }

    /// One layer, its whole text, an installation's own sources, and the bad values each refuses with one line.
    @Test func aLayerItsWholeTextAndTheInstallationsSources() throws {
        let one = CLI.run(["verse", "97:1-5", "--layer", "classical_shia"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.hasPrefix("Classical Shia — 97:1-5") && one.stdout.contains("[quotation · Al-Mizan"))
        #expect(one.stdout.contains("machine translation") && one.stdout.contains("more: --full"))
        let full = CLI.run(["verse", "97:1-5", "--layer", "classical_shia", "--full", "--json"])
        #expect(full.status == 0, "\(full.stderr)")
        #expect(Set(full.json.keys) == ["key", "layer", "title", "text", "source", "whole", "direction"])
        #expect((full.json["text"] as? String ?? "").count > (one.stdout.count / 2))
        let chosen = CLI.run(
            ["verse", "97:1", "--layer", "ahlul_bayt", "--json"], environment: ["DAILYVERSE_LAYERS": "ahlul_bayt=en.noor:narrations"])
        #expect(((chosen.json["source"] as? [String: Any])?["edition"] as? String) == "en.noor", "\(chosen.stdout)")
        for (arguments, value) in [
            (["verse", "1:1", "--layer", "tafsir"], "tafsir"), (["verse", "1:1", "--full"], "--full"),
            (["verse", "1:1", "--layers", "classical_shia=en/mizan"], "en/mizan"), (["verse", "1:1", "--layers", "tafsir=en.mizan"], "tafsir"),
        ] {
            let bad = CLI.run(arguments)
            #expect(bad.status != 0 && bad.stderr.contains(value), "\(arguments): \(bad.stderr)")
            #expect(bad.stderr.split(separator: "\n").count <= 2, "one clear line: \(bad.stderr)")
        }
    }

    /// An edition the layer setting names that the database does not have (a typo: en.mizna) left the layer without it
    /// and said nothing: now one line naming it, from the flag, the environment or the configuration file, and an empty
    /// item is a parse error naming it. An import may bring the edition named, and is not refused for it.
    @Test func theLayersNameOnlyEditionsTheDatabaseHas() throws {
        let db = CLI.freshDatabase()
        let folder = URL(fileURLWithPath: db).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.toml").path
        try Data("layers = \"classical_shia=en.mizna\"\n".utf8).write(to: URL(fileURLWithPath: config))
        #expect(chmod(config, 0o600) == 0)
        // Each names where the setting came from: the flag, the variable, or the file's line and key.
        let misspelt = "'classical_shia=en.mizna'"
        let cases: [([String], [String: String], String)] = [
            (["--layers", "classical_shia=en.mizna"], [:], "invalid --layers \(misspelt): classical_shia names 'en.mizna'"),
            (
                [], ["DAILYVERSE_LAYERS": "classical_shia=en.mizna"],
                "invalid DAILYVERSE_LAYERS \(misspelt) (environment): classical_shia names 'en.mizna'"
            ),
            (["--config", config], [:], "\(config):1: invalid layers \(misspelt): classical_shia names 'en.mizna'"),
            (["--layers", "ahlul_bayt=hadith:nosuch"], [:], "'hadith:nosuch'"),
            (["--layers", ";"], [:], "invalid --layers ';': an empty item"),
            (["--layers", "classical_shia=en.mizan,"], [:], "an empty edition"),
        ]
        for (arguments, environment, named) in cases {
            let result = CLI.run(["verse", "1:1"] + arguments, database: db, environment: environment)
            #expect(
                result.status == 1 && result.stdout.isEmpty && result.stderr.hasPrefix("dailyverse: ")
                    && result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(named),
                "\(arguments) \(environment): \(result.stderr)")
        }
        let known = CLI.run(["verse", "1:1", "--layers", "classical_shia=en.mizna"], database: db)
        #expect(known.stderr.contains("it has: en.mizan, en.nemooneh, en.noor, en.safi"), "\(known.stderr)")
        #expect(CLI.run(["verse", "1:1", "--layers", "classical_shia=en.mizan;foundation="], database: db).status == 0)
        // The fixture's ar.mizan is not bundled: refused until it is imported, and its import is not refused for it.
        let layers = ["DAILYVERSE_LAYERS": "classical_shia=ar.mizan,en.mizan"]
        #expect(CLI.run(["verse", "97:1"], database: db, environment: layers).status == 1)
        let fixture = CLI.repository.appendingPathComponent("Tests/ContentStoreTests/Fixtures/thaqalayn-tafsir").path
        let imported = CLI.run(["import", "tafsir", fixture, "--edition", "ar.mizan"], database: db, environment: layers)
        #expect(imported.status == 0, "\(imported.stderr)")
        let read = CLI.run(["verse", "97:1"], database: db, environment: layers)
        #expect(read.status == 0, "\(read.stderr)")
    }
}
