import ContentStore
import DailyVerseTestSupport
import Foundation
import Testing
import VerseCalendar

/// `import hadith` on a synthetic fixture in the dataset's two layouts (placeholder text: the dataset states no licence
/// for its translations), and the ahlul_bayt layer showing a hadith that cites the verse, with its reference.
@Suite struct HadithImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/hadith")
    static let counts = try! seededDatabase().ayahCounts()

    @Test func alKafiIsReadChapterByChapterWithTheNumbersItsNotesGive() throws {
        let folder = try HadithFolder(directory: Self.fixture)
        #expect(folder.books == ["al-kafi", "test-book"])
        let kafi = try folder.read("al-kafi", ayahCounts: Self.counts)
        let described = kafi.hadiths.map { "\($0.volume)|\($0.chapter ?? "-")|\($0.number)|\($0.numberFrom)|\($0.verses)" }
        #expect(
            described == [
                "1|1|1|footnote|[]", "1|1|2|footnote|[2255]",
                // The note says "Ch 9": the chapter is the heading's ("Chater 2", misspelt as in the source).
                "1|2|1|footnote|[112001]",
                // No note: closed by the next chapter's heading, numbered by its place, across a heading without a number.
                "1|2|2|position|[]",
                // A reference without its number ("Ch 3 H").
                "1|3|1|position|[]",
                // Volume 8: numbered by its heading, the Arabic opened in the file before.
                "8|-|14450|heading|[1001]", "8|-|14451|heading|[]",
            ], "\(described)")
        let first = kafi.hadiths[0]
        #expect(first.book == "THE BOOK OF TESTING" && first.chapterTitle == "Test chapter one")
        // The honorific in superscript is kept, the note markers are not; a glossary note does not end the hadith.
        #expect(
            first.english
                == "Test narrator A, from Test narrator B,\n\nTest narration one says that Allah(azwj) is praised in a placeholder sentence.")
        #expect(first.arabic == "نص تجريبي")
        #expect(kafi.hadiths[3].english.hasSuffix("Test narration four, continued under a heading without a number."))
        #expect(kafi.hadiths[5].arabic == "14450-  نص تجريبي" && kafi.hadiths[5].chapterTitle == "TEST SERMON")
        #expect(kafi.hadiths[5].english.hasPrefix("Test narrator D, who said:"))
        #expect(kafi.hadiths.allSatisfy { !$0.english.contains("[1]") && !$0.english.contains("completed") && !$0.english.contains("out of") })
    }

    @Test func aThaqalaynBookKeepsItsGradingsAndTheVersesItsTranslatorCites() throws {
        let book = try HadithFolder(directory: Self.fixture).read("test-book", ayahCounts: Self.counts)
        #expect(book.title == "Test Book" && book.author == "Test Author" && book.translator == "Test Translator")
        #expect(book.hadiths.count == 2, "the error record is left out")
        #expect(book.hadiths[0].verses == [2255, 3018, 3019], "a time of day is no citation")
        #expect(book.hadiths[0].gradings == [Hadith.Grading(grader: "Test Grader", grade: "معتبر", reference: "Test Reference")])
        #expect(book.hadiths[0].number == "1" && book.hadiths[0].url == "https://thaqalayn.net/hadith/99/1/1/1")
        #expect(book.hadiths[1].verses == [21101, 21102, 21103], "21:101-3, and no sura 115")
    }

    @Test func aBrokenOrMissingCollectionIsRefusedNamingIt() throws {
        #expect(throws: StoreError.self) { try HadithFolder(directory: URL(fileURLWithPath: "/nonexistent-dataset")) }
        let folder = try HadithFolder(directory: Self.fixture)
        #expect(throws: StoreError.self) { try folder.read("nahj-al-balagha", ayahCounts: Self.counts) }
        // A citation of a verse that does not exist names it.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dv-hadith-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let volume = scratch.appendingPathComponent("hubeali_com/Al-Kafi-Volume-1")
        try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
        let source = Self.fixture.appendingPathComponent("scraped/hubeali_com/Al-Kafi-Volume-1")
        for name in try FileManager.default.contentsOfDirectory(atPath: source.path) {
            var text = try String(contentsOf: source.appendingPathComponent(name), encoding: .utf8)
            if name == "c006.xhtml" { text = text.replacingOccurrences(of: "112:1]", with: "112:9]") }
            try text.write(to: volume.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        do {
            _ = try HadithFolder(directory: scratch).read("al-kafi", ayahCounts: Self.counts)
            Issue.record("read a citation of 112:9")
        } catch {
            #expect(error.description.contains("Al-Kafi-Volume-1/c006.xhtml") && error.description.contains("[112:9]"), "\(error)")
        }
        // Markup that is not well-formed names the file and line.
        try "<html><body><p>unclosed</body></html>".write(to: volume.appendingPathComponent("c005.xhtml"), atomically: true, encoding: .utf8)
        do {
            _ = try HadithFolder(directory: scratch).read("al-kafi", ayahCounts: Self.counts)
            Issue.record("read broken XHTML")
        } catch {
            #expect(error.description.contains("Al-Kafi-Volume-1/c005.xhtml:1"), "\(error)")
        }
    }

    @Test func theAhlulBaytLayerShowsAHadithThatCitesTheVerseWithItsReference() throws {
        let database = try seededDatabase()
        let folder = try HadithFolder(directory: Self.fixture)
        for id in folder.books { try database.importHadith(try folder.read(id, ayahCounts: Self.counts), at: fixedNow) }
        #expect(try database.hadithBooks().map(\.id) == ["al-kafi", "test-book"])
        #expect(try database.hadithBooks().first?.citing == 3)
        database.useLayerSources(try LayerSources(parsing: "ahlul_bayt=hadith:al-kafi"))
        let range = VerseRange(surah: 2, start: 255, end: 255)
        let shown = try #require(try database.verse(range, translation: "en.pickthall").layers.first { $0.layer.id == "ahlul_bayt" })
        let entry = try #require(shown.entry)
        #expect(entry.body.contains("Test narration two, citing [2:255]"))
        #expect(entry.source.provenance == "quotation" && entry.source.work == "al-Kafi" && entry.source.author == "al-Kulayni")
        #expect(entry.source.reference?.hasPrefix("al-Kafi, vol. 1, THE BOOK OF TESTING, chapter 1 (Test chapter one), hadith 2") == true)
        #expect(entry.source.licence.hasPrefix("No licence stated"))
        // The whole text: the English and the Arabic.
        let whole = try database.commentary(range, layer: "ahlul_bayt")
        #expect(whole.text?.contains("نص تجريبي") == true && whole.text?.contains("Test narrator C") == true)
        // Another collection's citation of another verse; none for a verse no hadith cites.
        database.useLayerSources(try LayerSources(parsing: "ahlul_bayt=hadith"))
        let graded = try database.verse(VerseRange(surah: 3, start: 18, end: 19), translation: "en.pickthall").layers.first {
            $0.layer.id == "ahlul_bayt"
        }?.entry
        #expect(graded?.source.reference?.contains("graded معتبر by Test Grader") == true, "\(graded?.source.reference ?? "none")")
        let none = try database.verse(VerseRange(surah: 2, start: 256, end: 256), translation: "en.pickthall").layers.first {
            $0.layer.id == "ahlul_bayt"
        }?.entry
        #expect(none?.source.work != "al-Kafi" && none?.source.work != "Test Book")
        database.useLayerSources(nil)
        #expect(LayerSource(parsing: "hadith:Bad Book") == nil && LayerSource(parsing: "hadith:al-kafi")?.description == "hadith:al-kafi")
    }
}
