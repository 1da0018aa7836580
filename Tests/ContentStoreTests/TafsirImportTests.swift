import ContentStore
import DailyVerseTestSupport
import Foundation
import Testing

/// `import tafsir`: a few sura files of ThaqalaynTafsirData (Fixtures/thaqalayn-tafsir, verbatim), their HTML made
/// plain text, the verses each block covers, and what a broken folder gets.
@Suite struct TafsirImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/thaqalayn-tafsir")

    static func terms() throws -> TafsirEditionCatalog { try TafsirEditionCatalog(dataDirectory: dataDirectory) }

    @Test func theEditionsAreImportedWithTheVersesEachBlockCovers() throws {
        let database = try seededDatabase()
        let folder = try TafsirFolder(directory: Self.fixture)
        #expect(folder.editions.map(\.id) == ["ar.mizan", "en.mizan", "en.nemooneh", "en.noor", "en.safi"])
        let counts = try database.ayahCounts()
        for id in ["en.mizan", "en.nemooneh", "en.noor", "en.safi"] {
            let edition = try folder.read(id, ayahCounts: counts)
            try database.importTafsir(edition, terms: try Self.terms().terms(for: edition.info), at: fixedNow)
        }
        let stored = try database.tafsirEditions()
        #expect(stored.map(\.id) == ["en.mizan", "en.nemooneh", "en.noor", "en.safi"])
        // The files' own mapping: en.noor 1 has a block a verse, 97 one for verses 2-3; en.safi 1 one for 2-3, 97 one
        // for 1-2; en.mizan 108 one for all three, 97 one for all five; en.nemooneh 97 one for all five.
        #expect(stored.map(\.verses) == [8, 5, 12, 12])
        #expect(stored.map(\.blocks) == [2, 1, 11, 10])
        #expect(stored.first { $0.id == "en.safi" }?.machineTranslation == true)
        #expect(stored.first { $0.id == "en.noor" }?.machineTranslation == nil)
        #expect(stored.allSatisfy { $0.licence.hasPrefix("CC BY-ND 4.0") })

        let qadr = try database.tafsirBlocks(edition: "en.noor", surah: 97, ayahs: 1...5)
        #expect(qadr.count == 4, "five verses, verses 2 and 3 in one block")
        #expect(try database.tafsirBlocks(edition: "en.noor", surah: 97, ayahs: 2...3).count == 1)
        #expect(try database.tafsirBlocks(edition: "en.mizan", surah: 108, ayahs: 2...2).count == 1)
        #expect(try database.tafsirBlocks(edition: "en.mizan", surah: 2, ayahs: 255...255).isEmpty)
        // Plain text: no markup, no Markdown residue, paragraphs kept, the Arabic with its marks.
        for text in qadr + (try database.tafsirBlocks(edition: "en.safi", surah: 1, ayahs: 1...7)) {
            #expect(!text.contains("<") && !text.contains(">") && !text.contains("**") && !text.contains("&amp;"), "\(text.prefix(200))")
        }
        #expect(qadr[0].contains("إِنَّآ أَنزَلْنَـٰهُ فِى لَيْلَةِ ٱلْقَدْرِ") && qadr[0].contains("\n\nKey Points\n\n"))

        // Importing again replaces the edition: nothing doubles.
        let again = try folder.read("en.noor", ayahCounts: counts)
        try database.importTafsir(again, terms: try Self.terms().terms(for: again.info), at: fixedNow)
        #expect(try database.tafsirEditions().map(\.blocks) == [2, 1, 11, 10])
    }

    /// A copy of the fixture with one file changed, read: the error names the file (and the verse).
    func refusal(_ file: String, _ change: (String) -> String, edition: String = "en.noor") throws -> String {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-tafsir-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let url = copy.appendingPathComponent(file)
        try Data(change(try String(contentsOf: url, encoding: .utf8)).utf8).write(to: url)
        do {
            _ = try TafsirFolder(directory: copy).read(edition, ayahCounts: try seededDatabase().ayahCounts())
            return "accepted"
        } catch { return "\(error)" }
    }

    @Test func aBrokenFolderIsRefusedNamingTheFileAndVerse() throws {
        #expect(try refusal("en.noor/1.json", { $0.replacingOccurrences(of: "\"ayah\": 7", with: "\"ayah\": 8") }).contains("en.noor/1.json: 1:8"))
        #expect(try refusal("en.noor/97.json", { $0.replacingOccurrences(of: "\"block\": 3", with: "\"block\": 30") }).contains("97:5: block 30"))
        #expect(
            try refusal("en.noor/97.json", { $0.replacingOccurrences(of: "\"surah\": 97", with: "\"surah\": 98") }).contains(
                "expected en.noor sura 97"))
        #expect(try refusal("en.noor/97.json", { $0.replacingOccurrences(of: "\"ayah\": 5", with: "\"ayah\": 4") }).contains("97:4 is given twice"))
        #expect(try refusal("en.noor/97.json", { String($0.dropLast(20)) }).contains("en.noor/97.json"))
        #expect(try refusal("editions.json", { $0 }, edition: "ar.burhan").contains("no edition 'ar.burhan'"))
        #expect(try refusal("editions.json", { _ in "{\"not\": \"a list\"}" }).contains("editions.json"))
        #expect(try refusal("editions.json", { $0.replacingOccurrences(of: "\"en.noor\"", with: "\"../../etc\"") }).contains("'../../etc'"))
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-no-tafsir-\(UUID().uuidString)")
        #expect(throws: StoreError.self) { try TafsirFolder(directory: missing) }
    }

    @Test func htmlBecomesTheEditionsWordsInParagraphs() {
        let html = """
            <h1>Key Points</h1>\n<p>One &amp; two &lt;three&gt; &#1587;&#x644;&#x627;&#x645; **bold**</p><script>alert(1)</script>
            <style>p { color: red }</style><div dir="rtl">بِسْمِ اللَّهِ<br/>second&nbsp;line &unknown; & lone</div><p>  </p>
            """
        #expect(
            TafsirText.paragraphs(fromHTML: html) == ["Key Points", "One & two <three> سلام bold", "بِسْمِ اللَّهِ", "second line &unknown; & lone"])
        #expect(TafsirText.plain(fromHTML: "<p>a</p><p>b</p>") == "a\n\nb")
        #expect(TafsirText.plain(fromHTML: "unclosed <b") == "unclosed <b")
        #expect(TafsirText.plain(fromHTML: "&#0; &#xFFFFFFFF; x") == "&#0; &#xFFFFFFFF; x")
        // Control characters are not shown by HTML, and are left out (fa.noor 48:29 ends a footnote with a DEL); a NUL
        // no longer cuts the block where it is stored.
        #expect(TafsirText.plain(fromHTML: "<p>before\u{0}after\u{1B}[31m \u{7F}end\u{9B}</p><p>&#27;x</p>") == "beforeafter[31m end\n\nx")
    }
}

/// `import tafsir --format tafsir-api`: spa5k/tafsir_api's layout, a block for each verse (Fixtures/tafsir-api is our
/// own test text in that layout).
@Suite struct TafsirAPIImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/tafsir-api")

    @Test func aSuraFileOrAFileAVerse() throws {
        let database = try seededDatabase()
        let folder = try TafsirFolder(directory: Self.fixture, format: .tafsirAPI)
        #expect(folder.editions.map(\.id) == ["en-test-notes"] && folder.editions[0].author == "DailyVerse tests")
        let edition = try folder.read("en-test-notes", ayahCounts: try database.ayahCounts())
        // Sura 1 from its file (1:3's text is empty: no block), sura 112 from a file a verse.
        #expect(edition.verses.map { "\($0.surah):\($0.ayah)" } == ["1:1", "1:2", "1:4", "1:5", "1:6", "1:7", "112:1", "112:2", "112:3", "112:4"])
        try database.importTafsir(edition, terms: TafsirEditionTerms(licence: "test data", machineTranslation: nil), at: fixedNow)
        let notes = try database.tafsirBlocks(edition: "en-test-notes", surah: 1, ayahs: 1...7)
        #expect(notes.count == 6 && notes[0] == "Test note on 1:1: the layout of spa5k/tafsir_api, written for this repository's tests.")
        #expect(try database.tafsirBlocks(edition: "en-test-notes", surah: 112, ayahs: 4...4) == ["Test note on 112:4, a file of its own."])
    }

    @Test func aBrokenFileIsNamed() throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-tafsir-api-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: Self.fixture, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        try Data(#"{"surah": 112, "ayah": 5, "text": "x"}"#.utf8).write(to: copy.appendingPathComponent("en-test-notes/112/4.json"))
        #expect {
            try TafsirFolder(directory: copy, format: .tafsirAPI).read("en-test-notes", ayahCounts: try seededDatabase().ayahCounts())
        } throws: { "\($0)".contains("en-test-notes/112/4.json: 112:5 is not a verse of sura 112") }
    }
}
