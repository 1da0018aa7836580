import Foundation

/// The Quran's Arabic reduced to its consonant skeleton, to tell whether Arabic quoted in a commentary is the Quran's
/// text, a misquotation of it, or something else (a narration, a poem).
///
/// Editions quote the Quran in different orthographies (Tanzil's simple text, the Uthmani script, Persian letter
/// forms), so quotations are compared on their skeleton: the marks, the letters that carry long vowels and hamza (alif,
/// waw, ya and their forms), the tatweel, spaces and punctuation are dropped, and the Persian forms of kaf and ha are
/// read as the Arabic ones. `ٱلصَّـٰبِرِينَ`, `الصابرين` and `الصابرین` have one skeleton.
public struct QuranIndex: Sendable {
    /// Each verse's skeleton, by sura and aya.
    let verses: [VerseKey: String]
    /// Every verse's skeleton in order, joined: a quotation that spans two verses is found too.
    let whole: String
    /// For each skeleton of a word of three letters or more, the verses it occurs in.
    let words: [String: [VerseKey]]

    public struct VerseKey: Hashable, Sendable, Comparable {
        public let surah: Int
        public let ayah: Int
        public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.surah, lhs.ayah) < (rhs.surah, rhs.ayah) }
    }

    /// `verses`: every verse's Arabic text, in the Quran's order.
    public init(verses list: [(surah: Int, ayah: Int, text: String)]) {
        var verses: [VerseKey: String] = [:]
        var words: [String: [VerseKey]] = [:]
        var whole = ""
        for verse in list {
            let key = VerseKey(surah: verse.surah, ayah: verse.ayah)
            let skeleton = Self.skeleton(verse.text)
            verses[key] = skeleton
            whole += skeleton
            for word in Set(Self.wordSkeletons(verse.text)) where word.unicodeScalars.count >= 3 { words[word, default: []].append(key) }
        }
        (self.verses, self.whole, self.words) = (verses, whole, words)
    }

    /// The skeleton of one verse, or nil for a verse the index lacks.
    public func skeleton(surah: Int, ayah: Int) -> String? { verses[VerseKey(surah: surah, ayah: ayah)] }

    /// What a run of Arabic words is: the Quran's text (its skeleton occurs in it), a misquotation of one verse (not
    /// found, but most of its words are one verse's), or neither.
    public enum Match: Equatable, Sendable {
        case quran
        case misquoted(surah: Int, ayah: Int)
        case other
    }

    public func match(_ arabic: String) -> Match {
        let skeleton = Self.skeleton(arabic)
        if skeleton.isEmpty { return .quran }
        let runWords = Set(Self.wordSkeletons(arabic).filter { $0.unicodeScalars.count >= 3 })
        // Where the text can be: the verses holding its rarest words, each with two neighbours either side (a quotation
        // may span verses, and the rarest word may be in its first or its last); the whole text only when no word
        // of it is indexed. The words in a fixed order (fewest verses, then the word): a Set's order changes from one
        // process to the next, and with it, once, which of two equally rare words decided.
        let indexed = runWords.compactMap { word in words[word].map { (word: word, verses: $0) } }
            .sorted { ($0.verses.count, $0.word) < ($1.verses.count, $1.word) }
        if let rarest = indexed.first {
            for candidate in indexed.prefix(3) where candidate.verses.count <= max(50, rarest.verses.count) {
                for verse in candidate.verses {
                    let window = (verse.ayah - 2...verse.ayah + 2).map { verses[VerseKey(surah: verse.surah, ayah: $0)] ?? "" }.joined()
                    if window.contains(skeleton) { return .quran }
                }
            }
        } else if whole.contains(skeleton) {
            return .quran
        }
        // Four words or more: a formula ("صلى الله عليه وآله وسلم") shares its few words with many verses.
        guard runWords.count >= 4 else { return .other }
        var shared: [VerseKey: Int] = [:]
        for word in runWords { for verse in words[word] ?? [] { shared[verse, default: 0] += 1 } }
        guard let best = shared.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else { return .other }
        // Most of its words are one verse's: a verse quoted wrongly, not a saying that borrows a phrase or two.
        return Double(best.value) >= 0.7 * Double(runWords.count) ? .misquoted(surah: best.key.surah, ayah: best.key.ayah) : .other
    }

    /// The consonant skeleton of Arabic text (see the type's description).
    public static func skeleton(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let folded = fold(scalar) { out.append(folded) }
        }
        return String(out)
    }

    static func wordSkeletons(_ text: String) -> [String] {
        // Split on the scalars, not on grapheme clusters: a verse's words are separated by plain spaces.
        text.unicodeScalars.split(whereSeparator: { $0.properties.isWhitespace }).map { word in
            var out = String.UnicodeScalarView()
            for scalar in word { if let folded = fold(scalar) { out.append(folded) } }
            return String(out)
        }.filter { !$0.isEmpty }
    }

    /// The letter a scalar keeps in a skeleton, or nil when it is dropped.
    static func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        switch scalar.value {
        case 0x06A9: return "\u{0643}"  // Persian kaf
        case 0x06C0, 0x06C1, 0x0629: return "\u{0647}"  // ha forms and ta marbuta
        case 0x0621...0x0626, 0x0627, 0x0648, 0x0649, 0x064A, 0x0671, 0x06CC, 0x06D2, 0x06D3: return nil  // alif, hamza, waw, ya
        case 0x0628...0x063A, 0x0641...0x0647: return scalar
        case 0x067E, 0x0686, 0x0698, 0x06AF: return scalar  // Persian letters stay themselves
        default: return nil  // marks, tatweel, digits, punctuation, spaces, Latin
        }
    }

    /// A letter of any script (marks, which carry the vowels, are not letters).
    static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic && scalar.properties.generalCategory != .nonspacingMark
            && scalar.properties.generalCategory != .spacingMark
    }

    /// Whether a scalar is an Arabic-script letter.
    static func isArabicLetter(_ scalar: Unicode.Scalar) -> Bool {
        (0x0621...0x064A).contains(scalar.value) || (0x0671...0x06D3).contains(scalar.value)
    }
}

/// How an edition marks, inside a block, the part about each verse: the place an excerpt for a verse starts.
public enum ExcerptStyle: String, Sendable, CaseIterable {
    /// al-Mizan: the verses, then "(Commentary)", whose paragraphs "His saying, the Exalted: …" each open on a verse.
    case mizan
    /// al-Safi: each verse's part opens with its number, "(155)" or "(١٥٥)"; the narrations follow it.
    case safi
    /// Tafsir Noor: the verse, "Key Points", then "Messages" (numbered, each quoting a fragment of the verse).
    case noor
    /// Tafsir-e Nemooneh: the verses, then "Commentary", whose paragraphs quote the verse they come to in Arabic.
    case nemooneh
    /// Any other edition: the block from its start.
    case plain

    /// The style of an edition, by its id (`en.mizan`, `ar.mizan` → mizan); plain for the ones not known.
    public init(edition: String) {
        let work = edition.split(separator: ".").dropFirst().first.map(String.init) ?? edition
        self = ExcerptStyle(rawValue: work) ?? .plain
    }
}

/// Which part of a block a layer takes.
public enum ExcerptPart: String, Sendable, CaseIterable {
    /// The commentary itself.
    case commentary
    /// Only the narrations it reports (from the Prophet and the Imams), for `ahlul_bayt`.
    case narrations
}

/// An edition's excerpt for a verse or passage as a day shows it: from the first of the edition's blocks about the
/// passage (in order) that has a clean one, with the verses that block covers and whether there is more to read.
public struct EditionExcerpt: Hashable, Sendable {
    public let text: String
    /// The verses of the block it is taken from.
    public let blockVerses: ClosedRange<Int>
    /// More to read: other blocks, the rest of this one, or the part of it a bundle leaves out.
    public let more: Bool

    /// A block of an edition, with the verses it covers; `whole` is false for the part of it a bundle keeps.
    public struct Block: Sendable {
        public let text: String
        public let whole: Bool
        public let verses: ClosedRange<Int>

        public init(text: String, whole: Bool, verses: ClosedRange<Int>) {
            self.text = text
            self.whole = whole
            self.verses = verses
        }
    }

    public init(text: String, blockVerses: ClosedRange<Int>, more: Bool) {
        self.text = text
        self.blockVerses = blockVerses
        self.more = more
    }

    /// The excerpt for the verses `ayahs` of `surah` from the edition's `blocks` about them, or nil when none has a
    /// clean one.
    public static func first(
        in blocks: [Block], style: ExcerptStyle, part: ExcerptPart, language: String, surah: Int, ayahs: ClosedRange<Int>,
        quran: QuranIndex
    ) -> EditionExcerpt? {
        for block in blocks {
            let (low, high) = (max(ayahs.lowerBound, block.verses.lowerBound), min(ayahs.upperBound, block.verses.upperBound))
            guard low <= high,
                let excerpt = TafsirExcerpt.make(
                    paragraphs: block.text.components(separatedBy: "\n\n"), style: style, part: part, language: language, verses: low...high,
                    blockVerses: block.verses, surah: surah, quran: quran)
            else { continue }
            return EditionExcerpt(text: excerpt.text, blockVerses: block.verses, more: blocks.count > 1 || excerpt.text != block.text || !block.whole)
        }
        return nil
    }
}

/// An excerpt of a commentary block for a verse or passage: verbatim whole sentences, about `maximumWords` at most,
/// from the part of the block about the verse where the block marks it, with no pipeline defect in it.
///
/// Pure: the block's paragraphs, the verses the block covers and the passage come in as values, with the Quran's
/// skeleton to check quoted verses against.
public struct TafsirExcerpt: Hashable, Sendable {
    public let text: String
    /// The paragraph of the block the excerpt starts in.
    public let startParagraph: Int
    /// The words the excerpt holds.
    public let words: Int

    public static let maximumWords = 250
    /// An excerpt shorter than this (a lone line) is not worth a card.
    public static let minimumWords = 20

    /// The excerpt for `verses` (an aya range of the block's sura) from a block covering `blockVerses`, or nil when the
    /// block has no clean passage of whole sentences about them.
    public static func make(
        paragraphs: [String], style: ExcerptStyle, part: ExcerptPart, language: String, verses: ClosedRange<Int>,
        blockVerses: ClosedRange<Int>, surah: Int, quran: QuranIndex, maximumWords: Int = maximumWords
    ) -> TafsirExcerpt? {
        let block = BlockReading(paragraphs: paragraphs, style: style, language: language, surah: surah, quran: quran)
        for start in block.starts(for: verses, blockVerses: blockVerses, part: part) {
            if let excerpt = block.sentences(from: start, part: part, verses: verses, maximumWords: maximumWords) { return excerpt }
        }
        return nil
    }

    /// Why a text cannot be shown as an edition's excerpt, or nil: a pipeline artefact (a placeholder in square
    /// brackets, `[Exception…]`, a `[^n]` footnote marker, an embedded image), untranslated Persian in a translation, or
    /// a quoted verse whose Arabic differs from the Quran's text.
    public static func defect(in text: String, language: String, quran: QuranIndex) -> String? {
        for marker in ["[Exception", "TRANSLATION NEEDED", "[QARAI", "[^", "data:image", "\u{FFFD}"] where text.contains(marker) {
            return "holds the pipeline artefact '\(marker)'"
        }
        if let placeholder = placeholder(in: text) { return "holds the placeholder '\(placeholder)'" }
        if language != "fa" && language != "ar" {
            if text.unicodeScalars.contains(where: { [0x067E, 0x0686, 0x0698, 0x06AF].contains($0.value) }) {
                return "holds untranslated Persian"
            }
            let persianWords: Set<Substring> = ["است", "برای", "های", "می", "را", "شده", "ایشان"]
            if text.split(whereSeparator: { $0.isWhitespace || $0.isPunctuation }).contains(where: { persianWords.contains($0) }) {
                return "holds untranslated Persian"
            }
            for run in arabicRuns(in: text) {
                if case .misquoted(let surah, let ayah) = quran.match(run) {
                    return "quotes \(surah):\(ayah) in Arabic differently from the Quran's text ('\(run.prefix(40))')"
                }
            }
        }
        return nil
    }

    /// A placeholder such as "[QARAI TRANSLATION: 2:5]" or "[TRANSLATOR NOTE]": square brackets opening on three
    /// capital letters.
    static func placeholder(in text: String) -> String? {
        var rest = text[...]
        while let open = rest.firstIndex(of: "[") {
            let after = rest[rest.index(after: open)...]
            if after.prefix(3).count == 3 && after.prefix(3).allSatisfy({ $0.isUppercase && $0.isASCII }) {
                return String(rest[open...].prefix(40))
            }
            rest = after
        }
        return nil
    }

    /// The runs of Arabic words in a text (two words or more), each as written.
    static func arabicRuns(in text: String) -> [String] {
        var runs: [String] = []
        var current: [Substring] = []
        func close() {
            if current.count >= 2 { runs.append(current.joined(separator: " ")) }
            current = []
        }
        for word in text.split(whereSeparator: { $0.isWhitespace }) {
            let letters = word.unicodeScalars.filter(QuranIndex.isLetter)
            if !letters.isEmpty && letters.allSatisfy(QuranIndex.isArabicLetter) {
                current.append(word)
            } else if letters.isEmpty && !current.isEmpty {
                continue  // a mark or a number inside the run
            } else {
                close()
            }
        }
        close()
        return runs
    }

    /// The text split into sentences: after `.`, `?`, `!` or `…` (with any closing quotation marks and brackets), before
    /// a space; not after a common abbreviation or a single capital (an initial).
    public static func sentences(_ paragraph: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        let characters = Array(paragraph)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            current.append(character)
            index += 1
            guard ".?!…".contains(character) else { continue }
            while index < characters.count, "\"'”’»)]".contains(characters[index]) {
                current.append(characters[index])
                index += 1
            }
            guard index == characters.count || characters[index] == " " else { continue }
            let lastWord = current.split(separator: " ").last.map(String.init) ?? ""
            if character == "." && (abbreviations.contains(lastWord.lowercased()) || isInitial(lastWord)) { continue }
            sentences.append(current.trimmingCharacters(in: .whitespaces))
            current = ""
        }
        let rest = current.trimmingCharacters(in: .whitespaces)
        if !rest.isEmpty { sentences.append(rest) }
        // Tafsir Noor closes a sentence with the verse's words it rests on, «…»: they belong to it.
        var merged: [String] = []
        for sentence in sentences {
            if sentence.hasPrefix("«"), let last = merged.popLast() { merged.append(last + " " + sentence) } else { merged.append(sentence) }
        }
        return merged
    }

    static let abbreviations: Set<String> = [
        "vol.", "vols.", "p.", "pp.", "e.g.", "i.e.", "cf.", "no.", "nos.", "ibid.", "mr.", "st.", "ch.", "v.", "vv.", "ed.", "trans.",
        "d.", "b.", "ah.", "h.", "a.h.", "c.", "ca.", "al.", "etc.", "(vol.", "(p.",
    ]

    /// "A." or "M.": a single capital, an initial or a list mark.
    static func isInitial(_ word: String) -> Bool {
        let letters = word.filter { $0.isLetter }
        return letters.count == 1 && letters.first!.isUppercase
    }

    /// Whether a sentence ends as a sentence does.
    public static func endsSentence(_ text: String) -> Bool {
        var trimmed = Substring(text.trimmingCharacters(in: .whitespaces))
        // A sentence of Tafsir Noor followed by the verse's words in «…».
        while trimmed.hasSuffix("»"), let open = trimmed.lastIndex(of: "«"), open != trimmed.startIndex {
            trimmed = trimmed[..<open]
            trimmed = Substring(trimmed.trimmingCharacters(in: .whitespaces))
        }
        while let last = trimmed.last, "\"'”’»)]".contains(last) { trimmed = trimmed.dropLast() }
        return trimmed.last.map { ".?!…".contains($0) } ?? false
    }

    static func wordCount(_ text: String) -> Int { text.split(whereSeparator: { $0.isWhitespace }).count }
}

/// A block read for excerpts: which paragraphs are the verses' own text, headings or footnotes, and where each verse's
/// part begins.
struct BlockReading {
    let paragraphs: [String]
    let style: ExcerptStyle
    let language: String
    let surah: Int
    let quran: QuranIndex
    /// Paragraphs an excerpt never includes: the verses as printed above the commentary, headings, footnotes.
    let skipped: Set<Int>
    /// The headings, by paragraph.
    let headings: Set<Int>

    init(paragraphs: [String], style: ExcerptStyle, language: String, surah: Int, quran: QuranIndex) {
        (self.paragraphs, self.style, self.language, self.surah, self.quran) = (paragraphs, style, language, surah, quran)
        var skipped = Set<Int>()
        var headings = Set<Int>()
        var inVerses = false
        for (index, paragraph) in paragraphs.enumerated() {
            // The printed edition's page marks, "( ١٦ ـ الميزان ـ ٢٠ )": neither text nor a heading.
            if style == .mizan && Self.isPageMark(paragraph) {
                skipped.insert(index)
                continue
            }
            let isHeading = Self.isHeading(paragraph)
            if isHeading {
                headings.insert(index)
                skipped.insert(index)
                let name = paragraph.trimmingCharacters(in: CharacterSet(charactersIn: "() ")).lowercased()
                inVerses = name == "ayah" || name == "ayahs" || name == "ayat"
                continue
            }
            if inVerses || Self.isFootnote(paragraph) || (language != "ar" && language != "fa" && Self.isMostlyArabic(paragraph)) {
                skipped.insert(index)
            }
        }
        (self.skipped, self.headings) = (skipped, headings)
    }

    /// A heading: short, and not ending as a sentence or a clause does.
    static func isHeading(_ paragraph: String) -> Bool {
        // The mark of paragraphs a bundled part leaves out ends a run as a heading does.
        if paragraph == TafsirBundlePart.omission { return true }
        let words = TafsirExcerpt.wordCount(paragraph)
        guard words <= 14 else { return false }
        guard let last = paragraph.trimmingCharacters(in: .whitespaces).last else { return true }
        return !".?!…:;,»\"”'’".contains(last) && !(paragraph.hasPrefix("(") && paragraph.last != ")")
    }

    /// A page mark of the printed Arabic al-Mizan: "( ١٦ ـ الميزان ـ ٢٠ )", volume and page.
    static func isPageMark(_ paragraph: String) -> Bool {
        let trimmed = paragraph.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("(") && trimmed.hasSuffix(")") && trimmed.contains("الميزان") && trimmed.count <= 40
    }

    /// Footnotes: "(465) Nahj al-Balaghah, …", "465) …", "[1]: …".
    static func isFootnote(_ paragraph: String) -> Bool {
        let scalars = Array(paragraph.unicodeScalars.prefix(8))
        var index = 0
        if index < scalars.count, scalars[index] == "(" || scalars[index] == "[" { index += 1 }
        let digitsStart = index
        while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
        guard index > digitsStart, index < scalars.count else { return false }
        return scalars[index] == ")" || scalars[index] == "]"
    }

    /// Most of its letters Arabic: the verse's own text, or a quotation left untranslated.
    static func isMostlyArabic(_ paragraph: String) -> Bool {
        var arabic = 0
        var letters = 0
        for scalar in paragraph.unicodeScalars where QuranIndex.isLetter(scalar) {
            letters += 1
            if QuranIndex.isArabicLetter(scalar) { arabic += 1 }
        }
        return letters > 0 && arabic * 2 > letters
    }

    /// The paragraphs to start an excerpt from, best first.
    func starts(for verses: ClosedRange<Int>, blockVerses: ClosedRange<Int>, part: ExcerptPart) -> [Int] {
        let content = paragraphs.indices.filter { !skipped.contains($0) }
        switch style {
        case .safi:
            let segment = safiSegment(verses)
            if part == .narrations { return segment.filter { Self.opensNarration(paragraphs[$0]) } }
            return segment.filter { !skipped.contains($0) }
        case .mizan, .nemooneh:
            // The Arabic al-Mizan heads its commentary "( بيان )" and its narrations "( بحث روائي )".
            let commentary = section(named: ["commentary", "بيان"], major: true) ?? content
            if part == .narrations && style == .nemooneh {
                return commentary.filter { Self.narrationSentence(in: paragraphs[$0]) != nil && quotes(verses, in: $0) }
            }
            if part == .narrations {
                // The narrations of a passage's discussion that quote one of these verses (all of them when the passage
                // is the block's).
                let whole = verses.lowerBound <= blockVerses.lowerBound && verses.upperBound >= blockVerses.upperBound
                return (section(named: ["traditions", "narrative discussion", "discussion of narrations", "بحث روائي"], major: true) ?? []).filter {
                    Self.opensNarration(paragraphs[$0]) && (whole || quotes(verses, in: $0))
                }
            }
            // The whole block's verses: its opening; else the first paragraph that comes to a verse of the passage.
            let opens = commentary.filter { aboutVerse($0, among: blockVerses).map(verses.contains) ?? false }
            if verses.lowerBound <= blockVerses.lowerBound && verses.upperBound >= blockVerses.upperBound { return commentary + opens }
            return opens + commentary
        case .noor:
            if part == .narrations { return content.filter { Self.narrationSentence(in: paragraphs[$0]) != nil } }
            return (section(named: ["key points", "explanations"]) ?? []) + (section(named: ["messages"]) ?? []) + content
        case .plain:
            return part == .narrations ? content.filter { Self.opensNarration(paragraphs[$0]) } : content
        }
    }

    /// The paragraphs under the first heading named one of `names` (in parentheses or not), up to the next heading.
    /// `major`: the section runs on through its subheadings, to the next of the edition's own sections (al-Mizan's
    /// are in parentheses, "(Narrative Discussion)"; Nemooneh's commentary runs to the block's end).
    func section(named names: Set<String>, major: Bool = false) -> [Int]? {
        guard
            let heading = headings.sorted().first(where: {
                names.contains(paragraphs[$0].trimmingCharacters(in: CharacterSet(charactersIn: "() ")).lowercased())
            })
        else { return nil }
        // A bundled part's omission mark ends an excerpt, not a section.
        let end =
            headings.sorted().first(where: {
                $0 > heading && paragraphs[$0] != TafsirBundlePart.omission
                    && (!major || (style == .mizan && paragraphs[$0].hasPrefix("(")))
            }) ?? paragraphs.count
        return (heading + 1..<end).filter { !skipped.contains($0) }
    }

    /// The verse of the block a paragraph comes to: the first Arabic run in it is (part of) that verse; in the Arabic
    /// al-Mizan, whose every word is Arabic, the words in «…» after "قوله تعالى" ("His saying, the Exalted").
    func aboutVerse(_ index: Int, among blockVerses: ClosedRange<Int>) -> Int? {
        let paragraph = paragraphs[index]
        let run: String
        if language == "ar" {
            guard paragraph.hasPrefix("قوله تعالى"), let open = paragraph.firstIndex(of: "«"),
                let close = paragraph[open...].firstIndex(of: "»")
            else { return nil }
            run = String(paragraph[paragraph.index(after: open)..<close])
        } else {
            guard let first = TafsirExcerpt.arabicRuns(in: paragraph).first else { return nil }
            run = first
        }
        let skeleton = QuranIndex.skeleton(run)
        guard skeleton.unicodeScalars.count >= 6 else { return nil }
        // Only the block's own verses: a block of al-Mizan runs to hundreds of paragraphs, and a sura to 286 verses.
        return blockVerses.first { quran.skeleton(surah: surah, ayah: $0)?.contains(skeleton) == true }
    }

    /// Whether a paragraph quotes (in Arabic, three words or more) one of `verses` of the block's sura.
    func quotes(_ verses: ClosedRange<Int>, in index: Int) -> Bool {
        let skeletons = verses.compactMap { quran.skeleton(surah: surah, ayah: $0) }
        return TafsirExcerpt.arabicRuns(in: paragraphs[index]).contains { run in
            let skeleton = QuranIndex.skeleton(run)
            return run.split(separator: " ").count >= 3 && skeleton.unicodeScalars.count >= 6 && skeletons.contains { $0.contains(skeleton) }
        }
    }

    /// al-Safi's part for the verses: from the paragraph opening with the first one's number to the one opening with
    /// the number after the last; the whole block when it has no numbers.
    func safiSegment(_ verses: ClosedRange<Int>) -> [Int] {
        var opening: [Int: Int] = [:]
        for (index, paragraph) in paragraphs.enumerated() {
            if let number = Self.leadingVerseNumber(paragraph), opening[number] == nil { opening[number] = index }
        }
        guard let start = opening[verses.lowerBound] ?? opening.filter({ verses.contains($0.key) }).values.min() else {
            return opening.isEmpty ? Array(paragraphs.indices) : []
        }
        let end = opening.filter { $0.key > verses.upperBound }.values.min() ?? paragraphs.count
        return Array(start..<max(start, end))
    }

    /// "(155)" or "(١٥٥)" opening a paragraph.
    static func leadingVerseNumber(_ paragraph: String) -> Int? {
        guard paragraph.hasPrefix("(") else { return nil }
        var value = 0
        var digits = 0
        for scalar in paragraph.unicodeScalars.dropFirst() {
            if let digit = scalar.properties.numericType == .decimal ? scalar.properties.numericValue : nil {
                value = value * 10 + Int(digit)
                digits += 1
            } else {
                return scalar == ")" && (1...3).contains(digits) ? value : nil
            }
        }
        return nil
    }

    /// A paragraph reporting a narration from the Prophet or the Imams.
    static func isNarration(_ paragraph: String) -> Bool {
        // al-Safi's rendering of العامّة (the Sunni reports) as "the general public" hides whose report it is; a
        // garbled name reads as a narrator on 3:61. Such a paragraph is not shown.
        for misreading in ["general public", "general populace", "Istafham"] where paragraph.contains(misreading) { return false }
        let markers = [
            "narrated from", "narrated that", "it is narrated", "It is narrated", "reported from", "on the authority of", "peace be upon him",
            "peace be upon them", "(عليه السلام)", "عليه السلام", "عليهم السلام",
        ]
        return markers.contains { paragraph.contains($0) }
    }

    /// A paragraph that begins a narration ("In al-Kafi, narrated from …", "It is narrated …"), not one that carries
    /// on a story begun above it.
    static func opensNarration(_ paragraph: String) -> Bool {
        guard isNarration(paragraph) else { return false }
        let opening = paragraph.prefix(160)
        return ["narrated", "reported", "In al-", "And in ", "In Tafsir", "on the authority", "from Abu", "from Imam"].contains {
            opening.contains($0)
        }
    }

    /// The first sentence of a paragraph that reports a saying of the Prophet or an Imam ("Imam Ali عليه السلام
    /// says: «…»"), for the editions that weave narrations into their commentary (Tafsir Noor, Nemooneh).
    static func narrationSentence(in paragraph: String) -> Int? {
        let holy = ["عليه السلام", "عليهم السلام", "صلى الله عليه", "(peace be upon him)", "(peace be upon them)", "(AS)", "(a.s.)", "(SAW)"]
        let telling = [" said", " says", " narrat", " hadith", " stated", " states", " reported"]
        for (index, sentence) in TafsirExcerpt.sentences(paragraph).enumerated()
        where holy.contains(where: sentence.contains) && telling.contains(where: sentence.contains) {
            for misreading in ["general public", "general populace", "Istafham"] where sentence.contains(misreading) { return nil }
            return index
        }
        return nil
    }

    /// A narration woven into commentary is shown with the sentences after it in its paragraph, up to this many words.
    static let wovenNarrationWords = 150

    /// A verse number opening a sentence of al-Safi ("(٢) الرَّحْمنِ … (2) the All-beneficent"): where a verse's part begins.
    static func verseMark(_ sentence: String) -> Int? { leadingVerseNumber(sentence.replacingOccurrences(of: "**", with: "")) }

    /// Whole sentences from paragraph `start` on, within `maximumWords`; a defective sentence ends the excerpt there (or,
    /// before anything is taken, is stepped over). Nil when fewer than the minimum words can be taken.
    func sentences(from start: Int, part: ExcerptPart, verses: ClosedRange<Int>, maximumWords: Int) -> TafsirExcerpt? {
        var taken: [[String]] = []
        var words = 0
        var index = start
        var stop = false
        paragraphs: while index < paragraphs.count && !stop {
            defer { index += 1 }
            if headings.contains(index) && !taken.isEmpty { break }
            if skipped.contains(index) { continue }
            if part == .narrations && !Self.isNarration(paragraphs[index]) && !taken.isEmpty { break }
            if style == .safi, index > start, let number = Self.leadingVerseNumber(paragraphs[index]), !verses.contains(number) { break }
            var sentencesHere: [String] = []
            var sentences = TafsirExcerpt.sentences(paragraphs[index])[...]
            // al-Safi runs several verses into one paragraph: start at the first verse's mark, stop at another's.
            if style == .safi && index == start, let mark = sentences.firstIndex(where: { Self.verseMark($0) == verses.lowerBound }) {
                sentences = sentences[mark...]
            }
            // A narration woven into commentary: from its sentence, within its paragraph.
            let woven = part == .narrations && (style == .noor || style == .nemooneh)
            if woven {
                guard index == start, let first = Self.narrationSentence(in: paragraphs[index]) else { break }
                sentences = sentences.dropFirst(first)
            }
            let limit = woven ? min(maximumWords, Self.wovenNarrationWords) : maximumWords
            for sentence in sentences {
                if style == .safi, let mark = Self.verseMark(sentence), !verses.contains(mark), !(taken.isEmpty && sentencesHere.isEmpty) {
                    stop = true
                    break
                }
                let count = TafsirExcerpt.wordCount(sentence)
                let bad = TafsirExcerpt.defect(in: sentence, language: language, quran: quran) != nil || !TafsirExcerpt.endsSentence(sentence)
                if bad || words + count > limit {
                    // A start whose first sentence cannot be shown is no start: the next one is tried.
                    if taken.isEmpty && sentencesHere.isEmpty { return nil }
                    stop = true
                    break
                }
                sentencesHere.append(sentence)
                words += count
            }
            if !sentencesHere.isEmpty { taken.append(sentencesHere) }
            if stop { break paragraphs }
        }
        guard words >= TafsirExcerpt.minimumWords else { return nil }
        return TafsirExcerpt(text: taken.map { $0.joined(separator: " ") }.joined(separator: "\n\n"), startParagraph: start, words: words)
    }
}
