import ContentStore
import DailyVerseTestSupport
import Foundation
import Testing

/// Excerpts of the fixture editions' blocks, and the checks that keep a pipeline's defects off a phone card.
@Suite struct TafsirExcerptTests {
    static let quran: QuranIndex = {
        let file = try! TanzilFile(contentsOf: dataDirectory.appendingPathComponent("quran/quran-arabic.txt"))
        return QuranIndex(verses: file.ayat.map { (surah: $0.surah, ayah: $0.ayah, text: $0.text) })
    }()

    static func edition(_ id: String) throws -> TafsirEdition {
        let folder = try TafsirFolder(directory: TafsirImportTests.fixture)
        let file = try TanzilFile(contentsOf: dataDirectory.appendingPathComponent("quran/quran-arabic.txt"))
        return try folder.read(id, ayahCounts: file.ayahCounts)
    }

    /// The excerpt of `id`'s block for `verses` of `surah`, with the block's paragraphs.
    static func excerpt(
        _ id: String, _ surah: Int, _ verses: ClosedRange<Int>, part: ExcerptPart = .commentary
    ) throws -> (
        TafsirExcerpt?, [String]
    ) {
        let edition = try edition(id)
        let mine = edition.verses.filter { $0.surah == surah }
        let block = try #require(mine.first { $0.ayah == verses.lowerBound }).block
        let covered = mine.filter { $0.block == block }.map(\.ayah)
        let paragraphs = edition.blocks[block].text.components(separatedBy: "\n\n")
        let excerpt = TafsirExcerpt.make(
            paragraphs: paragraphs, style: ExcerptStyle(edition: id), part: part, language: "en", verses: verses,
            blockVerses: covered.min()!...covered.max()!, surah: surah, quran: quran)
        return (excerpt, paragraphs)
    }

    @Test func excerptsAreTheBlocksOwnWholeSentencesAboutTheVerse() throws {
        let cases: [(String, Int, ClosedRange<Int>, ExcerptPart, String)] = [
            // The whole sura's block: al-Mizan's opening of its commentary.
            ("en.mizan", 97, 1...5, .commentary, "The Surah mentions the sending down of the Quran"),
            // One verse of a block of five: the paragraph that comes to it.
            ("en.mizan", 97, 4...4, .commentary, "His saying, the Exalted: تَنَزَّلُ الْمَلائِكَةُ"),
            ("en.mizan", 97, 1...5, .narrations, "In al-Majma', from Hammad ibn 'Uthman"),
            ("en.mizan", 108, 1...3, .commentary, "This Surah is an expression of favor toward the Prophet"),
            ("en.nemooneh", 97, 1...5, .commentary, "The Night of Power, the Night of the Quran's Revelation!"),
            // Key Points, not the verse printed above them.
            ("en.noor", 97, 1...1, .commentary, "Allah manages the affairs of the universe through the angels"),
            // A narration's opening, not the verse and al-Kashani's gloss before it.
            ("en.safi", 97, 3...3, .narrations, "In al-Kafi, narrated from Imam al-Sadiq (peace be upon him)"),
            // al-Safi's verse 2 inside a paragraph that goes on to verse 3: it stops at verse 3's mark.
            ("en.safi", 1, 2...2, .commentary, "(٢) الرَّحْمنِ الرَّحِيمِ (2) the All-beneficent"),
        ]
        for (id, surah, verses, part, opening) in cases {
            let (found, paragraphs) = try Self.excerpt(id, surah, verses, part: part)
            let excerpt = try #require(found, "\(id) \(surah):\(verses) \(part)")
            #expect(excerpt.text.hasPrefix(opening), "\(id) \(surah):\(verses): \(excerpt.text.prefix(80))")
            #expect((TafsirExcerpt.minimumWords...TafsirExcerpt.maximumWords).contains(excerpt.words))
            #expect(excerpt.words == excerpt.text.split(whereSeparator: { $0.isWhitespace }).count)
            for piece in excerpt.text.components(separatedBy: "\n\n") {
                #expect(paragraphs.contains { $0.contains(piece) }, "verbatim: \(piece.prefix(80))")
                #expect(TafsirExcerpt.endsSentence(piece), "whole sentences: …\(piece.suffix(60))")
            }
            #expect(TafsirExcerpt.defect(in: excerpt.text, language: "en", quran: Self.quran) == nil)
        }
        let (safi, _) = try Self.excerpt("en.safi", 1, 2...2)
        #expect(safi?.text.contains("مالِكِ يَوْمِ الدِّينِ") == false, "verse 3 is another verse's part")
        // Verse 1 of al-Safi's block for 97:1-2 has no narration of its own: none, rather than verse 2's.
        #expect(try Self.excerpt("en.safi", 97, 1...1, part: .narrations).0 == nil)
    }

    /// A quotation of three verses whose words are all equally rare is the Quran's text whichever word the search
    /// starts from: the answer once hung on a Set's order, which changes from one process to the next, so the same
    /// excerpt was cut two ways.
    @Test func aQuotationAcrossVersesIsFoundWhicheverRareWordLeads() {
        let verses = ["كتب علم", "قلم رسم", "نور سلم", "حكم فصل"].enumerated().map { (surah: 1, ayah: $0.offset + 1, text: $0.element) }
        let quran = QuranIndex(verses: verses)
        #expect(quran.match("كتب علم قلم رسم نور سلم") == .quran)
        #expect(quran.match("قلم رسم نور سلم حكم فصل") == .quran)
        #expect(quran.match("كتب علم قلم رسم نور سلم حكم فصل") == .quran, "four verses, found from a word of the second or third")
    }

    @Test func quotedArabicIsTheQuranAMisquotationOrNeither() {
        let quran = Self.quran
        // Tanzil's simple text, the Uthmani script, Persian letter forms: one skeleton.
        #expect(quran.match("وَلَنَبْلُوَنَّكُمْ بِشَيْءٍ مِنَ الْخَوْفِ وَالْجُوعِ") == .quran)
        #expect(quran.match("وَبَشِّرِ ٱلصَّـٰبِرِينَ") == .quran)
        #expect(quran.match("«وبشّر الصابرین»") == .quran)
        #expect(quran.match("لا يَسْمِقُونَهُ بِالْقَوْلِ وَهُمْ بِأَمْرِهِ يَعْمَلُونَ") == .misquoted(surah: 21, ayah: 27))
        // A saying of Imam Ali that borrows two words of 2:155; the honorific formula.
        #expect(quran.match("انّ اللَّه یبتلى عباده عند الاعمال السیّئة بنقص الّثمرات و حبس البركات") == .other)
        #expect(quran.match("صلى الله عليه وآله وسلم") != .misquoted(surah: 33, ayah: 56))
        #expect(QuranIndex.skeleton("ٱلصَّـٰبِرِينَ") == QuranIndex.skeleton("الصابرين"))
    }

    @Test func aPipelineDefectIsNeverShown() {
        let quran = Self.quran
        let defective = [
            "He said so [QARAI TRANSLATION NEEDED: 2:5].", "[Exception in en chunk 1]", "The word is rare.[^3] It is old.",
            "قال: این است که ایشان گفتند.", "The Exalted says: لا يَسْمِقُونَهُ بِالْقَوْلِ وَهُمْ بِأَمْرِهِ يَعْمَلُونَ (21:27).",
            "See the figure data:image/png;base64,AAAA.",
        ]
        for text in defective { #expect(TafsirExcerpt.defect(in: text, language: "en", quran: quran) != nil, "\(text)") }
        for text in ["Allah says: إِنَّا أَنْزَلْنَاهُ فِي لَيْلَةِ الْقَدْرِ (97:1).", "In the Messenger (صلى الله عليه وآله وسلم) [that is, in him]."] {
            #expect(TafsirExcerpt.defect(in: text, language: "en", quran: quran) == nil, "\(text)")
        }

        // A defect in the middle: the excerpt stops before it; a first sentence that is defective: the next start.
        let clean = "This is a clean sentence of the commentary with enough words in it to be read on its own card."
        let block = [
            "(Commentary)", "[QARAI TRANSLATION NEEDED: 1:1] \(clean)", "\(clean) \(clean) Then [^4] a marker. \(clean)",
        ]
        let excerpt = TafsirExcerpt.make(
            paragraphs: block, style: .mizan, part: .commentary, language: "en", verses: 1...1, blockVerses: 1...1, surah: 1, quran: quran)
        #expect(excerpt?.text == "\(clean) \(clean)")
        // Over the word limit: whole sentences up to it, never a cut one.
        let long = TafsirExcerpt.make(
            paragraphs: ["Commentary", Array(repeating: clean, count: 30).joined(separator: " ")], style: .nemooneh, part: .commentary,
            language: "en", verses: 1...1, blockVerses: 1...1, surah: 1, quran: quran)
        #expect(long?.words == 240 && long?.text.hasSuffix("card.") == true)
    }

    @Test func sentencesEndWhereSentencesDo() {
        #expect(
            TafsirExcerpt.sentences("Tafsir-e Nemooneh, Vol. 2, p. 49. Then he said: \"No.\" A. B. Smith wrote it! Is it so? Yes…")
                == ["Tafsir-e Nemooneh, Vol. 2, p. 49.", "Then he said: \"No.\"", "A. B. Smith wrote it!", "Is it so?", "Yes…"])
        #expect(TafsirExcerpt.endsSentence("He said: \"Seek it.\"") && !TafsirExcerpt.endsSentence("His saying, the Exalted:"))
    }
}
