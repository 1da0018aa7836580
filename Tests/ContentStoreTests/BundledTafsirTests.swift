import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import Testing
import VerseCalendar

/// The editions bundled in data/tafsir: read and checked like any data file, shown as the layers' first choice, and
/// replaced by an import of the whole edition.
@Suite struct BundledTafsirTests {
    static let counts = try! seededDatabase().ayahCounts()

    func refusal(_ lines: [String], name: String = "en.test.jsonl") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent(name)
        try Data(lines.joined(separator: "\n").utf8).write(to: url)
        do {
            _ = try BundledTafsir(contentsOf: url, ayahCounts: Self.counts)
            return "read"
        } catch { return error.description }
    }

    static let header =
        #"{"edition": {"id": "en.test", "name": "T", "author": "A", "language": "en", "source": "app-furqan"}, "licence": "CC BY-ND 4.0", "taken_from": "a test"}"#

    @Test func aBrokenBundleIsRefusedNamingTheFileAndLine() throws {
        let block = { (ayahs: String, text: String) in #"{"surah": 97, "position": 0, "ayahs": \#(ayahs), "whole": true, "text": "\#(text)"}"# }
        #expect(try refusal([Self.header, block("[1, 2]", "One.")]) == "read")
        #expect(try refusal([Self.header, block("[1, 2]", "One."), block("[2]", "Two.")]).contains("tafsir/en.test.jsonl:3: 97:2 is in two blocks"))
        #expect(try refusal([Self.header, block("[6]", "One.")]).contains("tafsir/en.test.jsonl:2: ayat [6] are not all verses of sura 97"))
        #expect(try refusal([Self.header, block("[1]", " ")]).contains("tafsir/en.test.jsonl:2: an empty block"))
        #expect(try refusal([Self.header, "{\"surah\": 97}"]).contains("tafsir/en.test.jsonl:2: not a block"))
        #expect(try refusal([Self.header], name: "en.other.jsonl").contains("is not the file's name"))
        #expect(try refusal(["not json"]).contains("tafsir/en.test.jsonl:1: not the edition's header"))
        #expect(try refusal([]).contains("empty"))
    }

    @Test func aBrokenExcerptLineIsRefusedNamingTheFileAndLine() throws {
        let block = #"{"surah": 97, "position": 0, "ayahs": [1, 2], "whole": true, "text": "One."}"#
        let excerpt = { (fields: String) in #"{"excerpt": {"surah": 97, \#(fields)}}"# }
        let good = excerpt(#""ayahs": [1, 2], "part": "commentary", "block": [1, 2], "more": false, "text": "One.""#)
        #expect(try refusal([Self.header, block, good, excerpt(#""ayahs": [1, 1], "part": "narrations", "text": null"#)]) == "read")
        #expect(try refusal([Self.header, block, good, good]).contains("tafsir/en.test.jsonl:4: a second excerpt for 97:1-2 (commentary)"))
        #expect(try refusal([Self.header, block, excerpt(#""ayahs": [1, 2], "part": "all", "text": null"#)]).contains(":3: unknown part 'all'"))
        #expect(
            try refusal([Self.header, block, excerpt(#""ayahs": [2, 1], "part": "commentary", "text": null"#)])
                .contains(":3: ayahs [2, 1] are not a first and last verse of sura 97"))
        #expect(
            try refusal([Self.header, block, excerpt(#""ayahs": [1, 2], "part": "commentary", "block": [3, 5], "text": "One.""#)])
                .contains(":3: the excerpt of 97:1-2 names no block of the file before it that covers its verses"))
        #expect(try refusal([Self.header, good, block]).contains(":2: the excerpt of 97:1-2 names no block"), "blocks come first")
        #expect(
            try refusal([Self.header, block, good, block.replacingOccurrences(of: "[1, 2]", with: "[3]")]).contains(":4: a block after the excerpts"))
        #expect(
            try refusal([Self.header, block, excerpt(#""ayahs": [1, 2], "part": "commentary", "block": [1, 2], "text": " ""#)]).contains(
                "an empty excerpt"))
    }

    /// A day shows the excerpt kept for its verse (the bundle's, cut when it was written) without cutting it again; an
    /// excerpt it has to cut (an imported edition's) is kept for the next read, for the verses a day can show only; an
    /// import drops what was kept of the edition it replaces.
    @Test func aDayTakesTheExcerptKeptForItAndKeepsTheOnesItCuts() throws {
        let database = try seededDatabase()
        let qadr = VerseRange(surah: 97, start: 1, end: 5)
        func kept(_ edition: String, _ range: VerseRange, part: String = "commentary") throws -> String?? {
            try database.read { db in
                try Row.fetchOne(
                    db, sql: "SELECT text FROM tafsir_excerpt WHERE edition_id = ? AND part = ? AND surah = ? AND ayah_start = ? AND ayah_end = ?",
                    arguments: [edition, part, range.surah, range.start, range.end]
                ).map { $0["text"] as String? }
            }
        }
        func shown(_ range: VerseRange, _ layer: String) throws -> CommentaryEntry? {
            try database.verse(range, translation: "en.pickthall").layers.first { $0.layer.id == layer }?.entry
        }
        // The bundle's excerpt is what the day shows: replaced in the store, the replacement is shown.
        let bundled = try #require(try kept("en.mizan", qadr) ?? nil)
        #expect(try shown(qadr, "classical_shia")?.body == bundled)
        try database.write { db in
            try db.execute(sql: "UPDATE tafsir_excerpt SET text = 'Kept, not cut again.' WHERE edition_id = 'en.mizan' AND surah = 97")
        }
        #expect(try shown(qadr, "classical_shia")?.body == "Kept, not cut again.")

        // The fixture's en.noor imported in place of the bundled one: nothing of the bundled one is kept.
        let folder = try TafsirFolder(directory: TafsirImportTests.fixture)
        let edition = try folder.read("en.noor", ayahCounts: try database.ayahCounts())
        try database.importTafsir(edition, terms: TafsirEditionTerms(licence: "CC BY-ND 4.0", machineTranslation: nil), at: fixedNow)
        #expect(try kept("en.noor", qadr) == nil)
        // A day cuts it from the imported text and keeps it; a verse no day shows is cut and not kept.
        let cut = try #require(try shown(qadr, "contemporary"))
        #expect(cut.source.edition == "en.noor")
        #expect(try kept("en.noor", qadr) == .some(cut.body))
        #expect(try shown(qadr, "contemporary")?.body == cut.body)
        let single = VerseRange(surah: 97, start: 2, end: 2)
        #expect(try shown(single, "contemporary")?.source.edition == "en.noor")
        #expect(try kept("en.noor", single) == nil)
        // Seeding changed data keeps none from the reads (the rules that cut them may have changed), the bundle's again.
        try database.write { db in try db.execute(sql: "UPDATE meta SET value = 'older data' WHERE key = 'seed_fingerprint'") }
        try database.seed(bundledContent)
        #expect(try kept("en.noor", qadr) == nil)
        #expect(try kept("en.mizan", qadr) == .some(bundled))
    }

    /// An `ar` reader gets al-Mizan in Arabic where the Arabic edition is in the store (the fixture's ar.mizan on sura
    /// 97, verbatim), from the paragraph that comes to the verse ("قوله تعالى : «…»"), right to left; an `en` reader,
    /// or a layer with no Arabic edition, is as before.
    @Test func anArabicReaderGetsTheArabicEditionFirst() throws {
        let database = try seededDatabase()
        let folder = try TafsirFolder(directory: TafsirImportTests.fixture)
        let edition = try folder.read("ar.mizan", ayahCounts: try database.ayahCounts())
        try database.importTafsir(edition, terms: TafsirEditionTerms(licence: "CC BY-ND 4.0", machineTranslation: false), at: fixedNow)
        func classical(_ range: VerseRange, _ language: String?) throws -> CommentaryEntry? {
            try database.verse(range, translation: "en.pickthall", language: language).layers.first { $0.layer.id == "classical_shia" }?.entry
        }
        let qadr = VerseRange(surah: 97, start: 1, end: 5)
        #expect(try classical(qadr, nil)?.source.edition == "en.mizan")
        #expect(try classical(qadr, "en")?.source.edition == "en.mizan")
        let arabic = try #require(try classical(qadr, "ar"))
        #expect(arabic.source.edition == "ar.mizan" && arabic.source.language == "ar" && arabic.source.machineTranslation == false)
        #expect(arabic.body.unicodeScalars.filter { (0x0600...0x06FF).contains($0.value) }.count > arabic.body.count / 2)
        // A single verse: the paragraph that comes to it, not the block's opening.
        let third = try #require(try classical(VerseRange(surah: 97, start: 3, end: 3), "ar"))
        #expect(third.body.hasPrefix("قوله تعالى : «لَيْلَةُ الْقَدْرِ خَيْرٌ مِنْ أَلْفِ شَهْرٍ»"), "\(third.body.prefix(80))")
        #expect(try classical(VerseRange(surah: 2, start: 155, end: 157), "ar")?.source.edition == "en.mizan", "no Arabic edition for it")
    }

    @Test func theLayersShowTheBundledEditionsWithWhoseWordsTheyAre() throws {
        let database = try seededDatabase()
        let bundled = try database.tafsirEditions()
        #expect(Set(bundled.map(\.id)) == ["en.mizan", "en.nemooneh", "en.noor", "en.safi"])
        #expect(bundled.allSatisfy { $0.origin == "bundled" && $0.licence.hasPrefix("CC BY-ND 4.0") })
        let content = try database.verse(VerseRange(surah: 97, start: 1, end: 5), translation: "en.pickthall")
        let classical = try #require(content.layers.first { $0.layer.id == "classical_shia" }?.entry)
        #expect(classical.source.provenance == "quotation" && classical.source.edition == "en.mizan")
        #expect(classical.source.reference == "en.mizan on 97:1-5" && classical.source.machineTranslation == true)
        #expect(classical.body.split(whereSeparator: \.isWhitespace).count <= TafsirExcerpt.maximumWords)
        // The whole text behind it holds the excerpt, verbatim.
        let full = try database.commentary(VerseRange(surah: 97, start: 1, end: 5), layer: "classical_shia")
        for paragraph in classical.body.components(separatedBy: "\n\n") { #expect(full.text?.contains(paragraph) == true) }
        // A layer no edition feeds shows our entry, and says so.
        let pool = try database.verse(VerseRange(surah: 2, start: 155, end: 157), translation: "en.pickthall")
        let foundation = try #require(pool.layers.first { $0.layer.id == "foundation" }?.entry)
        #expect(foundation.source.provenance == "editorial" && foundation.source.edition == nil)
        #expect(foundation.source.licence == CommentarySource.ownLicence)
        #expect(throws: StoreError.unknownLayer("tafsir")) { try database.commentary(VerseRange(surah: 97, start: 1, end: 1), layer: "tafsir") }
    }

    @Test func anInstallationChoosesItsOwnEditionsAndAnImportReplacesTheBundledOne() throws {
        let database = try seededDatabase()
        let range = VerseRange(surah: 97, start: 1, end: 1)
        database.useLayerSources(try LayerSources(parsing: "ahlul_bayt=en.noor:narrations;contemporary="))
        let chosen = try database.verse(range, translation: "en.pickthall").layers
        #expect(chosen.first { $0.layer.id == "ahlul_bayt" }?.entry?.source.edition == "en.noor")
        #expect(chosen.first { $0.layer.id == "contemporary" }?.entry?.source.provenance == "editorial", "no edition: our entry")
        #expect(try database.layerSources().sources(for: "classical_shia").first == LayerSource(edition: "en.mizan"), "not named: kept")
        database.useLayerSources(nil)

        // The fixture's en.noor (two suras) imported in place of the bundled one: only its suras remain.
        let folder = try TafsirFolder(directory: TafsirImportTests.fixture)
        let edition = try folder.read("en.noor", ayahCounts: try database.ayahCounts())
        try database.importTafsir(edition, terms: TafsirEditionTerms(licence: "CC BY-ND 4.0", machineTranslation: nil), at: fixedNow)
        let noor = try #require(try database.tafsirEditions().first { $0.id == "en.noor" })
        #expect(noor.origin == "import" && noor.verses == 12)
        // Seeding again leaves the import alone.
        try database.seed(bundledContent)
        #expect(try database.tafsirEditions().first { $0.id == "en.noor" }?.origin == "import")

        for bad in [
            "tafsir=en.mizan", "classical_shia", "classical_shia=en/mizan", "classical_shia=en.mizan:everything", "foundation=;foundation=",
            // An item left empty: never passed over.
            "", ";", "classical_shia=en.mizan;", "classical_shia=en.mizan;;contemporary=en.noor", "classical_shia=en.mizan,",
            "classical_shia=,en.mizan", "classical_shia=en.mizan, ,en.noor",
        ] {
            #expect(throws: StoreError.self, "\(bad)") { try LayerSources(parsing: bad) }
        }
        // The store says which editions and collections it holds: a misspelt edition, or a collection not imported, is
        // refused by name with the ones it holds; `hadith` alone and a layer given no edition name none.
        try database.checkLayerSources(LayerSources(parsing: "classical_shia=en.mizan,en.noor;ahlul_bayt=en.safi:narrations,hadith;foundation="))
        let misspelt = #expect(throws: StoreError.self) { try database.checkLayerSources(LayerSources(parsing: "classical_shia=en.mizan,en.mizna")) }
        #expect(misspelt?.description.contains("classical_shia names 'en.mizna'") == true, "\(misspelt?.description ?? "")")
        #expect(misspelt?.description.contains("en.mizan, en.nemooneh, en.noor, en.safi") == true, "\(misspelt?.description ?? "")")
        let book = #expect(throws: StoreError.self) { try database.checkLayerSources(LayerSources(parsing: "ahlul_bayt=hadith:nosuch")) }
        #expect(book?.description.contains("'hadith:nosuch'") == true, "\(book?.description ?? "")")
    }
}
