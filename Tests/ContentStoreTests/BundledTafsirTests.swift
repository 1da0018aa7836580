import ContentStore
import DailyVerseTestSupport
import Foundation
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

        for bad in ["tafsir=en.mizan", "classical_shia", "classical_shia=en/mizan", "classical_shia=en.mizan:everything", "foundation=;foundation="] {
            #expect(throws: StoreError.self, "\(bad)") { try LayerSources(parsing: bad) }
        }
    }
}
