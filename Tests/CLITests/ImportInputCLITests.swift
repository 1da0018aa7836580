import Foundation
import GRDB
import Testing

/// What an import is handed, as an operator hands it: every format refuses the characters no text meant to be read
/// holds, naming the file, where in it, and the character, and stores nothing; Windows line ends and a byte-order
/// mark are read as the text they frame; a Tanzil line with a column more, a quotation without its source and a Quran
/// text under a translation's id are refused in one line.
@Suite struct ImportInputCLITests {
    static let arabic = CLI.repository.appendingPathComponent("data/quran/quran-arabic.txt")
    static let pickthall = CLI.repository.appendingPathComponent("data/quran/translation-en-pickthall.txt")

    /// The README's refusal: one line on stderr starting `dailyverse: ` and naming each of `values`, nothing on stdout,
    /// exit status 1.
    static func expectRefused(_ result: CLI.Result, naming values: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 1, "status \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "stdout: \(result.stdout)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.hasPrefix("dailyverse: ") && result.stderr.utf8.count(where: { $0 == UInt8(ascii: "\n") }) == 1,
            "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        for value in values {
            #expect(result.stderr.contains(value), "stderr does not name \(value): \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// The rows of the tables the imports write.
    static func counts(_ database: String) throws -> [Int] {
        try DatabaseQueue(path: database).read { db in
            try ["edition", "ayah_text", "commentary", "tafsir_edition", "tafsir_block", "hadith_book", "hadith", "device", "published_month_start"]
                .map { try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") ?? -1 }
        }
    }

    /// A fresh database, seeded, and the folder it is in (for the files to import).
    static func scratch() -> (database: String, folder: URL) {
        let database = CLI.freshDatabase()
        _ = CLI.run(["hijri", "2025-03-01", "--calendar", "sighted"], database: database)
        return (database, URL(fileURLWithPath: database).deletingLastPathComponent())
    }

    /// `c` as a JSON string escape: `\u001b`.
    static func escaped(_ character: Character) -> String { "\\u" + String(format: "%04x", character.unicodeScalars.first!.value) }

    /// Every import format, each given a text holding a NUL, an escape or a bidirectional override: refused in one
    /// line naming the file, the line (or the verse, the hadith) and the character, with nothing stored. A tafsir
    /// block is HTML, shown as plain text: its control characters are left out as HTML leaves them (a NUL no longer
    /// cuts it), its overrides refused.
    @Test(arguments: [("\u{0}", "U+0000"), ("\u{1B}", "U+001B"), ("\u{202E}", "U+202E")] as [(Character, String)])
    func everyImportRefusesControlCharacters(character: Character, named: String) throws {
        let (database, folder) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Self.counts(database)
        func write(_ name: String, _ text: String) throws -> String {
            let url = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        let json = Self.escaped(character)
        let tanzil = "1|1|before\(character)after\n"
        let commentary =
            "# notes\n"
            + #"{"verses": "2:255", "layer": "foundation", "body": "before\#(json)after", "source": {"provenance": "editorial"}}"#
        let device = #"{"platform": "apns", "token": "\#(String(repeating: "ab", count: 32))", "timezone": "UTC\#(json)"}"#
        let sighting = "hijri_year,hijri_month,first_day\n1446,9,2025-03-01\(character)\n"
        _ = try write("tafsir/editions.json", #"[{"id": "en.test", "name": "Test", "author": "A", "language": "en", "source": "test"}]"#)
        _ = try write(
            "tafsir/en.test/1.json",
            #"{"edition": "en.test", "surah": 1, "blocks": ["<p>before\#(json)after</p>"], "ayahs": [{"ayah": 1, "block": 0}]}"#)
        _ = try write(
            "hadith/scraped/thaqalayn_api/test-book/hadiths.json", #"{"hadiths": [{"book": "Test", "englishText": "before\#(json)after"}]}"#)
        let cases: [([String], [String])] = [
            (["import", "quran", try write("q.txt", tanzil), "--id", "ar.test"], ["q.txt:1:", "1:1", named]),
            (["import", "translation", try write("t.txt", tanzil), "--id", "en.test"], ["t.txt:1:", "1:1", named]),
            (["import", "commentary", try write("c.jsonl", commentary)], ["c.jsonl:2:", "body", named]),
            (["import", "hadith", folder.appendingPathComponent("hadith").path, "--book", "test-book"], ["test-book", "hadith 1", named]),
            (["devices", "import", try write("d.jsonl", device)], ["d.jsonl:1:", "timezone", named]),
            (["sighting", "import", try write("s.csv", sighting)], ["s.csv:2:", named]),
        ]
        for (arguments, values) in cases {
            let result = CLI.run(arguments, database: database)
            Self.expectRefused(result, naming: values)
            // Named, never written raw to the terminal.
            #expect(!result.stderr.unicodeScalars.contains(character.unicodeScalars.first!), "\(arguments): \(result.stderr.debugDescription)")
        }
        #expect(try Self.counts(database) == before)
        let tafsir = CLI.run(["import", "tafsir", folder.appendingPathComponent("tafsir").path], database: database)
        if named == "U+202E" {
            Self.expectRefused(tafsir, naming: ["en.test/1.json", "1:1", named])
            #expect(try Self.counts(database) == before)
        } else {
            #expect(tafsir.status == 0, "\(tafsir.stderr)")
            let block = try DatabaseQueue(path: database).read { db in
                try String.fetchOne(db, sql: "SELECT text FROM tafsir_block WHERE edition_id = 'en.test'")
            }
            #expect(block == "beforeafter")
        }
    }

    /// A Quran text under a translation's id took the translation's place (`verse` and `today` then found no
    /// translation); a translation under a Quran text's id is refused the same way.
    @Test func anEditionIsReplacedOnlyByOneOfItsKind() throws {
        let (database, folder) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let refused = CLI.run(["import", "quran", Self.arabic.path, "--id", "en.pickthall"], database: database)
        Self.expectRefused(refused, naming: ["'en.pickthall'", "is a translation"])
        let verse = CLI.run(["verse", "1:1", "--json"], database: database)
        #expect(verse.status == 0, "\(verse.stderr)")
        let translation = (verse.json["verse"] as? [String: Any])?["translation"] as? [String: Any]
        #expect(translation?["text"] as? String == "In the name of Allah, the Beneficent, the Merciful.")
        #expect(CLI.run(["import", "quran", Self.arabic.path, "--id", "ar.second"], database: database).status == 0)
        Self.expectRefused(
            CLI.run(["import", "translation", Self.pickthall.path, "--id", "ar.second"], database: database),
            naming: ["'ar.second'", "is a Quran text"])
        #expect(CLI.run(["today", "--date", "2025-03-01", "--tz", "UTC"], database: database).status == 0)
    }

    /// Windows line ends (the Tanzil import said "ends at sura 1, aya 1") and a byte-order mark at a file's start (the
    /// sighting import read it as part of its header) in every text import: read as the text they frame.
    @Test func windowsLineEndsAndAByteOrderMarkAreReadAsText() throws {
        let (database, folder) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        func windows(_ name: String, _ text: String) throws -> String {
            let url = folder.appendingPathComponent(name)
            try Data(("\u{FEFF}" + text).replacingOccurrences(of: "\n", with: "\r\n").utf8).write(to: url)
            return url.path
        }
        let translation = CLI.run(
            ["import", "translation", try windows("p.txt", try String(contentsOf: Self.pickthall, encoding: .utf8)), "--id", "en.windows"],
            database: database)
        #expect(translation.status == 0, "\(translation.stderr)")
        let quran = CLI.run(
            ["import", "quran", try windows("q.txt", try String(contentsOf: Self.arabic, encoding: .utf8)), "--id", "ar.windows"], database: database)
        #expect(quran.status == 0, "\(quran.stderr)")
        let commentary =
            #"{"verses": "2:255", "layer": "foundation", "body": "Imported.", "source": {"provenance": "editorial"}}"# + "\n"
        #expect(CLI.run(["import", "commentary", try windows("c.jsonl", commentary)], database: database).status == 0)
        let device = #"{"platform": "apns", "token": "\#(String(repeating: "cd", count: 32))", "timezone": "UTC"}"# + "\n"
        let devices = CLI.run(["devices", "import", try windows("d.jsonl", device)], database: database)
        #expect(devices.stdout.hasPrefix("imported 1 devices"), "\(devices.stderr)")
        let sightings = CLI.run(
            ["sighting", "import", try windows("s.csv", "hijri_year,hijri_month,first_day\n1446,9,2025-03-01\n")], database: database)
        #expect(sightings.stdout.hasPrefix("published 1 month starts"), "\(sightings.stderr)")
        // Stored as the Unix files are, with no "\r" and no byte-order mark.
        try DatabaseQueue(path: database).read { db in
            for (copy, original) in [("en.windows", "en.pickthall"), ("ar.windows", "quran-simple")] {
                let differing = try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM ayah_text a JOIN ayah_text b ON b.surah = a.surah AND b.ayah = a.ayah AND b.edition_id = ?
                        WHERE a.edition_id = ? AND a.text != b.text
                        """, arguments: [original, copy])
                #expect(differing == 0, "\(copy)")
                #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM ayah_text WHERE edition_id = ?", arguments: [copy]) == 6236)
            }
            #expect(try String.fetchOne(db, sql: "SELECT body FROM commentary WHERE origin = 'import'") == "Imported.")
        }
    }

    /// `sura|aya|text` with a column more stored "x|…" as the verse: refused in both Tanzil imports, naming the line.
    @Test func aTanzilLineWithAColumnMoreIsRefused() throws {
        let (database, folder) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Self.counts(database)
        for (source, command) in [
            (Self.arabic, ["import", "quran", "--id", "ar.extra"]), (Self.pickthall, ["import", "translation", "--id", "en.extra"]),
        ] {
            var lines = try String(contentsOf: source, encoding: .utf8).components(separatedBy: "\n")
            let index = try #require(lines.firstIndex { $0.hasPrefix("1|5|") })
            lines[index] = "1|5|x|" + lines[index].dropFirst(4)
            let file = folder.appendingPathComponent("extra.txt")
            try Data(lines.joined(separator: "\n").utf8).write(to: file)
            Self.expectRefused(CLI.run(command + [file.path], database: database), naming: ["extra.txt:\(index + 1):", "third '|'", "1:5"])
        }
        #expect(try Self.counts(database) == before)
    }

    /// A translation's id is LANGUAGE.NAME and its language is the id's: `--id ar.test` was stored as English (the
    /// default `--language`), `--id en.test --language zz` as zz. A language is two or three lowercase letters, an id
    /// of its characters alone (a final line break passed the pattern).
    @Test func aTranslationsLanguageIsItsIds() throws {
        let (database, folder) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Self.counts(database)
        let translation = ["import", "translation", Self.pickthall.path]
        let refusals: [([String], [String])] = [
            (translation + ["--id", "en.test", "--language", "zz"], ["--language 'zz'", "'en.test'", "('en')"]),
            (translation + ["--id", "ar.test", "--language", "en"], ["--language 'en'", "'ar.test'", "('ar')"]),
            (translation + ["--id", "en.test", "--language", "EN"], ["invalid --language 'EN'"]),
            (translation + ["--id", "en.test", "--language", "e"], ["invalid --language 'e'"]),
            (translation + ["--id", "en.test", "--language", "en\n"], ["invalid --language 'en\\u{A}'"]),
            (translation + ["--id", "en.test\n"], ["invalid translation id 'en.test\\u{A}'"]),
            (translation + ["--id", "english.test"], ["invalid translation id 'english.test'"]),
            (["import", "quran", Self.arabic.path, "--id", "ar.test\n"], ["invalid edition id 'ar.test\\u{A}'"]),
        ]
        for (arguments, values) in refusals { Self.expectRefused(CLI.run(arguments, database: database), naming: values) }
        #expect(try Self.counts(database) == before)
        for arguments in [translation + ["--id", "ar.test"], translation + ["--id", "fas.test", "--language", "fas"]] {
            let result = CLI.run(arguments, database: database)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let languages = try DatabaseQueue(path: database).read { db in
            try String.fetchAll(db, sql: "SELECT id || '=' || language FROM edition WHERE id IN ('ar.test', 'fas.test') ORDER BY id")
        }
        #expect(languages == ["ar.test=ar", "fas.test=fas"])
    }

    /// A hadith collection gives each record's id once: two records with one id were both imported, the hadith twice.
    /// Refused naming the file and the id, with nothing stored; the same ids in two collections are theirs.
    @Test func aHadithIdGivenTwiceInACollectionIsRefused() throws {
        let (database, folder) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Self.counts(database)
        let books = folder.appendingPathComponent("hadith/scraped/thaqalayn_api")
        func record(_ id: Int, _ text: String) -> String {
            #"{"id": \#(id), "book": "Test", "category": "Content", "chapter": "Test chapter", "chapterInCategoryId": 1, "englishText": "\#(text)"}"#
        }
        for (book, records) in [
            ("twice", [record(7, "Placeholder one."), record(8, "Placeholder two."), record(7, "Placeholder three.")]),
            ("other", [record(7, "Placeholder one."), record(8, "Placeholder two.")]),
        ] {
            try FileManager.default.createDirectory(at: books.appendingPathComponent(book), withIntermediateDirectories: true)
            try Data(#"{"hadiths": [\#(records.joined(separator: ", "))]}"#.utf8).write(to: books.appendingPathComponent("\(book)/hadiths.json"))
        }
        let dataset = folder.appendingPathComponent("hadith").path
        Self.expectRefused(
            CLI.run(["import", "hadith", dataset, "--book", "twice"], database: database),
            naming: ["thaqalayn_api/twice/hadiths.json", "hadith id 7 is given twice", "records 1 and 3"])
        #expect(try Self.counts(database) == before)
        let other = CLI.run(["import", "hadith", dataset, "--book", "other"], database: database)
        #expect(other.status == 0, "\(other.stderr)")
        let stored = try DatabaseQueue(path: database).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM hadith WHERE book_id = 'other'") }
        #expect(stored == 2)
    }

    /// A quotation or a summary names its work, author and reference, and an editorial entry none (README,
    /// "Commentary format"): a quotation with no source was stored.
    @Test(arguments: [
        (#"{"provenance": "quotation"}"#, "source.work is missing"),
        (#"{"work": "W", "author": "A", "provenance": "quotation"}"#, "source.reference is missing"),
        (#"{"work": "W", "author": " ", "reference": "R", "provenance": "editorial-summary"}"#, "source.author is missing"),
        (#"{"work": "W", "provenance": "editorial"}"#, "source.work is given to an editorial entry"),
    ])
    func aSourceIsWhatItsProvenanceAsks(source: String, says: String) throws {
        let (database, folder) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Self.counts(database)
        let file = folder.appendingPathComponent("quotes.jsonl")
        let good = #"{"verses": "2:255", "layer": "foundation", "body": "Ours.", "source": {"provenance": "editorial"}}"#
        let bad = #"{"verses": "2:256", "layer": "ahlul_bayt", "body": "Words.", "source": \#(source)}"#
        try Data((good + "\n" + bad + "\n").utf8).write(to: file)
        Self.expectRefused(CLI.run(["import", "commentary", file.path], database: database), naming: ["quotes.jsonl:2:", says])
        #expect(try Self.counts(database) == before)
    }
}
