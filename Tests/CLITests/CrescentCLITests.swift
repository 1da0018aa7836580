import Foundation
import GRDB
import Testing

/// The predicted calendar from the command line: its evidence, one evening's verdict, and announcements imported.
@Suite struct CrescentCLITests {
    static let observed = CLI.repository.appendingPathComponent("data/sightings/iran-observed.csv").path

    /// `calendar --hijri-year 1447` shows each month's evidence: Ramadan 1447 began on 19 February 2026 because the
    /// crescent was seen on the evening of the 18th (not on the 17th, the day of the conjunction).
    @Test func theCalendarShowsEachMonthsEvidence() throws {
        let text = CLI.run(["calendar", "--hijri-year", "1447"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.hasPrefix("Hijri year 1447 AH · predicted for Iran (5 sites, odeh-b)"), "\(text.stdout.prefix(200))")
        #expect(text.stdout.contains("Ramadan            2026-02-19  30 days"))
        #expect(text.stdout.contains("seen on the evening of 2026-02-18 at Tehran · conjunction 2026-02-17 12:01 UT"))
        let json = CLI.run(["calendar", "--hijri-year", "1447", "--json"]).json
        #expect(json["region"] as? String == "iran")
        let months = try #require(json["months"] as? [[String: Any]])
        #expect(months.allSatisfy { $0["basis"] as? String == "predicted" && $0["evidence"] is [String: Any] })
        let ramadan = try #require(months[8]["evidence"] as? [String: Any])
        #expect(
            Set(ramadan.keys) == [
                "evening", "site", "seen", "rule", "conjunction", "sunset", "moonset", "lag_minutes", "age_hours", "arcv", "arcl", "width", "v",
                "zone",
            ])
        #expect(ramadan["evening"] as? String == "2026-02-18" && ramadan["seen"] as? Bool == true && ramadan["zone"] as? String == "A")
        let saudi = CLI.run(["calendar", "--hijri-year", "1447", "--calendar", "umm-al-qura", "--json"]).json
        #expect(saudi["region"] is NSNull)
        #expect((saudi["months"] as? [[String: Any]])?.allSatisfy { $0["basis"] as? String == "umm-al-qura" && $0["evidence"] is NSNull } == true)
    }

    @Test func anEveningIsJudgedAtEachSite() throws {
        let before = CLI.run(["crescent", "evening", "--date", "2026-02-17", "--json"])
        #expect(before.status == 0, "\(before.stderr)")
        let sites = try #require(try JSONSerialization.jsonObject(with: Data(before.stdout.utf8)) as? [[String: Any]])
        #expect(sites.map { $0["site"] as? String } == ["Tehran", "Mashhad", "Ahvaz", "Bandar Abbas", "Chabahar"])
        #expect(sites.allSatisfy { $0["zone"] as? String == "D" && $0["seen"] as? Bool == false })
        let after = CLI.run(["crescent", "evening", "--date", "2026-02-18", "--region", "iraq"])
        #expect(after.stdout.contains("Najaf") && after.stdout.contains("Seen by the rule"), "\(after.stdout)")
        for bad in [["--date", "2026-02-30"], ["--date", "2026-02-18", "--region", "mars"]] {
            let result = CLI.run(["crescent", "evening"] + bad)
            #expect(result.status == 1 && result.stderr.split(separator: "\n").count == 1, "\(bad): \(result.stderr)")
            #expect(result.stderr.contains(bad.last == "mars" ? "'mars'" : "2026-02-30"))
        }
    }

    /// Iran's observed months imported replace the predictions: all of 1446 is announced, and 1448 (after the last
    /// announcement) is predicted again from 1 Shawwal 1447 as announced.
    @Test func importedAnnouncementsReplaceThePrediction() throws {
        let db = CLI.freshDatabase()
        let first = CLI.run(["sighting", "import", Self.observed, "--years", "1423-1447", "--json"], database: db)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.json["published"] as? Int == 298 && first.json["replaced"] as? Int == 0 && first.json["left_out"] as? Int == 1896)
        let again = CLI.run(["sighting", "import", Self.observed, "--years", "1423-1447"], database: db)
        #expect(again.stdout.contains("published 298 month starts from iran-observed.csv (1423-1447 AH)") && !again.stdout.contains("replaced"))
        let year = CLI.run(["calendar", "--hijri-year", "1446", "--json"], database: db).json
        #expect((year["months"] as? [[String: Any]])?.allSatisfy { $0["basis"] as? String == "announced" } == true)
        let next = try #require(CLI.run(["calendar", "--hijri-year", "1448", "--json"], database: db).json["months"] as? [[String: Any]])
        #expect(next.allSatisfy { ["predicted", "announced"].contains($0["basis"] as? String) })
        #expect(next.contains { $0["basis"] as? String == "predicted" })
        #expect(CLI.run(["sighting", "list", "--json"], database: db).stdout.filter { $0 == "{" }.count == 298)
    }

    /// A bad file is refused on one line naming the line at fault, and nothing of it is written.
    @Test func aBadFileIsRefusedWholeNamingTheLine() throws {
        let db = CLI.freshDatabase()
        let folder = URL(fileURLWithPath: db).deletingLastPathComponent()
        let header = "hijri_year,hijri_month,first_day\n"
        let cases: [(String, String)] = [
            ("", "empty"),
            ("year,month,day\n1447,1,2025-06-27\n", ":1: expected the header"),
            (header + "1447,1,2025-06-27\n1447,13,2025-07-26\n", ":3: expected hijri_year"),
            (header + "1447,1,2025-06-27\n1447,2,2025-02-30\n", ":3: invalid date '2025-02-30'"),
            (header + "1265,1,1848-11-28\n", ":2: date 1265-1 is outside"),
            (header + "1447,1,2025-06-27\n1447,1,2025-06-26\n", ":3: 1447-1 was given already on line 2"),
            (header + "1447,9,2026-02-25\n", ":2: published start 2026-02-25"),
            (header + "1447,1,2025-06-25\n1447,2,2025-07-27\n", "are 32 days apart"),
            (header + String(repeating: "9", count: 300) + "\n", ":2: expected hijri_year"),
        ]
        for (index, (content, expected)) in cases.enumerated() {
            let file = folder.appendingPathComponent("bad-\(index).csv")
            try Data(content.utf8).write(to: file)
            let result = CLI.run(["sighting", "import", file.path], database: db)
            #expect(result.status == 1 && result.stderr.contains(expected), "case \(index): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "case \(index): \(result.stderr)")
        }
        #expect(CLI.run(["sighting", "import", Self.observed], database: db).stderr.contains("--years leaves such lines out"))
        #expect(CLI.run(["sighting", "list", "--json"], database: db).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]")
    }
}

/// `crescent map`: an SVG and a PNG of one evening, and what bad options get.
@Suite struct CrescentMapCLITests {
    @Test func theMapIsDrawnAsSVGAndPNG() throws {
        let folder = URL(fileURLWithPath: CLI.freshDatabase()).deletingLastPathComponent()
        let svg = folder.appendingPathComponent("map.svg").path
        let png = folder.appendingPathComponent("map.PNG").path
        let drawn = CLI.run(["crescent", "map", "--date", "2026-02-17", "--out", svg, "--spacing", "4"])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        #expect(drawn.stdout.contains("Iran (odeh-b): not seen"), "\(drawn.stdout)")
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(text.hasPrefix("<?xml") && text.contains("Crescent visibility on the evening of 17 February 2026") && text.hasSuffix("</svg>\n"))
        #expect(text.contains(">Chabahar</text>"))
        #expect(CLI.run(["crescent", "map", "--date", "2026-02-18", "--out", png, "--spacing", "4", "--region", "iraq"]).status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: png))
        #expect(Array(bytes.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
        let stdout = CLI.run(["crescent", "map", "--date", "2026-02-18", "--spacing", "10"])
        #expect(stdout.status == 0 && stdout.stdout.hasPrefix("<?xml"))
        for (arguments, value) in [
            (["--date", "2026-02-18", "--out", folder.appendingPathComponent("map.gif").path], "map.gif"),
            (["--date", "1899-12-31"], "1899-12-31"), (["--date", "2101-01-01"], "2101-01-01"), (["--date", "2026-02-18", "--spacing", "0"], "0"),
            (["--date", "2026-02-18", "--spacing", "11"], "11"), (["--date", "tomorrow"], "tomorrow"),
        ] {
            let result = CLI.run(["crescent", "map"] + arguments)
            #expect(
                result.status == 1 && result.stderr.contains(value) && result.stderr.split(separator: "\n").count == 1,
                "\(arguments): \(result.stderr)")
        }
    }
}

/// A region given by its coordinates: its table computed on first use and kept in the database.
@Suite struct OwnRegionCLITests {
    @Test func sitesGivenByCoordinatesKeepTheirOwnCalendar() throws {
        let db = CLI.freshDatabase()
        let tehran = ["--region", "35.69,51.39,1190"]
        let first = CLI.run(["hijri", "2025-03-02"] + tehran, database: db)
        #expect(first.status == 0 && first.stdout.contains("1 Ramadan 1446"), "\(first.stdout)\(first.stderr)")
        let kept = try DatabaseQueue(path: db).read { db in
            try String.fetchAll(db, sql: "SELECT key FROM meta WHERE key LIKE 'predicted %'")
        }
        #expect(kept.count == 1 && kept[0].hasSuffix(" 35.69,51.39,1190.0/odeh-b"), "\(kept)")
        #expect(CLI.run(["hijri", "2025-03-02"] + tehran, database: db).stdout == first.stdout)
        let evening = CLI.run(["crescent", "evening", "--date", "2026-02-18", "--region", "35.69,51.39;32.03,44.35/odeh-a", "--json"], database: db)
        let sites = try #require(try JSONSerialization.jsonObject(with: Data(evening.stdout.utf8)) as? [[String: Any]])
        #expect(sites.map { $0["site"] as? String } == ["35.69,51.39", "32.03,44.35"] && sites.allSatisfy { $0["rule"] as? String == "odeh-a" })
        for (region, value) in [("95,10", "95,10"), ("35,51/odeh-x", "odeh-x"), ("35", "'35'"), ("35,nan", "35,nan"), ("mars", "'mars'")] {
            let result = CLI.run(["hijri", "2025-03-02", "--region", region], database: db)
            #expect(
                result.status == 1 && result.stderr.contains(value) && result.stderr.split(separator: "\n").count == 1, "\(region): \(result.stderr)")
        }
    }
}
