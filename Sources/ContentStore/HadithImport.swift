import Diagnostics
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A hadith as an import reads it: where its book puts it (volume, the book within it, chapter, number as the source
/// gives them), its text, its gradings where the source gives any, and the verses of the Quran it cites.
public struct Hadith: Sendable, Hashable {
    public let volume: Int
    /// The book (kitab) within the collection: "The Book of Tawheed", "Sermons".
    public let book: String?
    /// The chapter's number as the source gives it ("12", "1a"), and its title.
    public let chapter: String?
    public let chapterTitle: String?
    /// The hadith's number as the source gives it ("4", "14453").
    public let number: String
    /// Where the number comes from: `footnote` (al-Kafi's reference notes), `heading` (al-Kafi volume 8), `source` (the
    /// record's own field) or `position` (its place in the chapter, where the source gives none).
    public let numberFrom: String
    /// Its place in its chapter, from 1.
    public let position: Int
    public let english: String
    public let arabic: String?
    public let gradings: [Grading]
    /// The verses it cites, each once, in order: sura × 1000 + aya.
    public let verses: [Int]
    public let url: String?

    public struct Grading: Sendable, Hashable, Codable {
        public let grader: String
        public let grade: String
        public let reference: String?

        public init(grader: String, grade: String, reference: String?) {
            self.grader = grader
            self.grade = grade
            self.reference = reference
        }
    }
}

/// A hadith collection read from the dataset: its title, author and translator, its terms, and its hadith.
public struct HadithBook: Sendable {
    /// `al-kafi`, or the dataset's folder for a thaqalayn.net book (`nahj-al-balagha`).
    public let id: String
    public let title: String
    public let author: String
    public let translator: String?
    /// Where it was read from, for the source line.
    public let source: String
    public let hadiths: [Hadith]

    /// Nothing in narmafraz/ThaqalaynDataSources states a licence for these translations (hubeali.com's, thaqalayn.net's):
    /// an installation that has the right imports them; they are never bundled.
    public static let terms =
        "No licence stated: narmafraz/ThaqalaynDataSources gives none for the translations it scraped (hubeali.com, thaqalayn.net); imported by an installation that has the right to use them, never bundled."
}

/// The folder of narmafraz/ThaqalaynDataSources (its root, or `scraped/`): al-Kafi from `hubeali_com/Al-Kafi-Volume-N/`
/// (the translation's EPUB files, whose text marks the verses a hadith cites `[2:255]`) and the books of
/// `thaqalayn_api/<book>/hadiths.json`.
public struct HadithFolder: Sendable {
    public let scraped: URL
    /// The books found, in order: al-Kafi first, then the thaqalayn.net books by folder name.
    public let books: [String]

    public static let kafi = "al-kafi"
    /// At most this much of one file (the largest in the dataset is under 10 MB).
    static let maximumFileBytes = 64 << 20

    public init(directory: URL) throws(StoreError) {
        let candidates = [directory.appendingPathComponent("scraped"), directory]
        guard
            let scraped = candidates.first(where: {
                FileManager.default.fileExists(atPath: $0.appendingPathComponent("hubeali_com").path)
                    || FileManager.default.fileExists(atPath: $0.appendingPathComponent("thaqalayn_api").path)
            })
        else {
            throw .malformedData(
                file: directory.path, reason: "no hubeali_com/ or thaqalayn_api/ here: expected narmafraz/ThaqalaynDataSources or its scraped/ folder"
            )
        }
        self.scraped = scraped
        var books: [String] = []
        if !Self.kafiVolumes(in: scraped).isEmpty { books.append(Self.kafi) }
        let api = scraped.appendingPathComponent("thaqalayn_api")
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: api.path)) ?? []).sorted()
        for folder in folders where HadithFolder.isValidID(folder) {
            let file = api.appendingPathComponent(folder).appendingPathComponent("hadiths.json")
            if FileManager.default.fileExists(atPath: file.path) { books.append(folder) }
        }
        self.books = books
    }

    /// A book id: lowercase letters, digits and dashes.
    static func isValidID(_ id: String) -> Bool {
        (1...80).contains(id.utf8.count) && id.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
    }

    static func kafiVolumes(in scraped: URL) -> [(volume: Int, folder: URL)] {
        let hubeali = scraped.appendingPathComponent("hubeali_com")
        return ((try? FileManager.default.contentsOfDirectory(atPath: hubeali.path)) ?? []).compactMap { name in
            guard name.hasPrefix("Al-Kafi-Volume-"), let volume = Int(name.dropFirst("Al-Kafi-Volume-".count)), (1...8).contains(volume) else {
                return nil
            }
            return (volume, hubeali.appendingPathComponent(name))
        }.sorted { $0.volume < $1.volume }
    }

    /// Reads a book whole, checked; the first problem names the file. `ayahCounts`: the suras' lengths, to check the
    /// verses cited. `progress` gets files done and in all.
    public func read(_ id: String, ayahCounts: [Int], progress: ((Int, Int) -> Void)? = nil) throws(StoreError) -> HadithBook {
        guard books.contains(id) else {
            throw .malformedData(file: scraped.path, reason: "no book '\(id.prefix(80))' here: found \(books.joined(separator: ", "))")
        }
        let book: HadithBook
        if id == Self.kafi {
            book = try KafiReader(ayahCounts: ayahCounts).read(Self.kafiVolumes(in: scraped), progress: progress)
        } else {
            book = try ThaqalaynAPIReader(ayahCounts: ayahCounts).read(
                id, file: scraped.appendingPathComponent("thaqalayn_api").appendingPathComponent(id).appendingPathComponent("hadiths.json"))
        }
        try Self.checkText(of: book)
        return book
    }

    /// What the app shows of a collection holds no NUL, escape or bidirectional override (`ImportedText`), from either
    /// reader; the first is refused naming the collection's source and the hadith.
    static func checkText(of book: HadithBook) throws(StoreError) {
        let about: [(String, String?)] = [("title", book.title), ("author", book.author), ("translator", book.translator)]
        for (field, value) in about {
            if let value, let refusal = ImportedText.refusal(of: "the collection's \(field)", in: value, newlines: true) {
                throw .malformedData(file: book.source, reason: refusal)
            }
        }
        for hadith in book.hadiths {
            var fields: [(String, String?)] = [
                ("English", hadith.english), ("Arabic", hadith.arabic), ("book", hadith.book), ("chapter", hadith.chapter),
                ("chapter title", hadith.chapterTitle), ("number", hadith.number), ("url", hadith.url),
            ]
            for grading in hadith.gradings {
                fields += [("grader", grading.grader), ("grade", grading.grade), ("grading reference", grading.reference)]
            }
            for (field, value) in fields {
                if let value, let refusal = ImportedText.refusal(of: "the \(field)", in: value, newlines: true) {
                    let place = "volume \(hadith.volume)" + (hadith.chapter.map { ", chapter \($0)" } ?? "") + ", hadith \(hadith.number)"
                    throw .malformedData(file: book.source, reason: "\(place): \(refusal)")
                }
            }
        }
    }
}

/// The verses a text cites as `[2:255]`, each once, in order (sura × 1000 + aya); a citation of a verse that does not
/// exist is an error naming it.
enum VerseCitations {
    static func bracketed(in text: String, ayahCounts: [Int]) throws(StoreError) -> [Int] {
        var found: [Int] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "[") {
            rest = rest[rest.index(after: open)...]
            guard let close = rest.firstIndex(of: "]") else { break }
            let inside = rest[..<close]
            let parts = inside.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let surah = Int(parts[0]), let ayah = Int(parts[1]), parts[0].count <= 3, parts[1].count <= 3 else { continue }
            guard (1...114).contains(surah), (1...ayahCounts[surah - 1]).contains(ayah) else {
                throw .malformedData(file: "citation", reason: "[\(surah):\(ayah)] is not a verse of the Quran")
            }
            if !found.contains(surah * 1000 + ayah) { found.append(surah * 1000 + ayah) }
        }
        return found
    }

    /// The verses a thaqalayn.net translation cites in parentheses, in the forms its translators use: `(2:255)`,
    /// `(al-Nisa, 4:54)`, `(Qur'an, 2:34; 7:11)`, `(Surah Al Furqan 25:48)`, `(75:22-23)`; and `[2:255]`. Only verses
    /// that exist; a group with anything that is not a citation in it (a time, a page) is left alone.
    static func parenthesized(in text: String, ayahCounts: [Int]) -> [Int] {
        var found: [Int] = []
        func add(_ surah: Int, _ first: Int, _ last: Int) {
            guard (1...114).contains(surah), first >= 1, last >= first, last <= ayahCounts[surah - 1], last - first < 40 else { return }
            for ayah in first...last where !found.contains(surah * 1000 + ayah) { found.append(surah * 1000 + ayah) }
        }
        let groups =
            text.split(whereSeparator: { $0 == "(" }).dropFirst().compactMap { $0.split(separator: ")", maxSplits: 1).first }
            + text.split(whereSeparator: { $0 == "[" }).dropFirst().compactMap { $0.split(separator: "]", maxSplits: 1).first }
        for group in groups where group.count <= 200 {
            for citation in group.split(whereSeparator: { $0 == ";" || $0 == "," }) {
                // The last word: "2:255", "Q17:64", "75:22-23".
                guard var word = citation.split(separator: " ").last else { continue }
                while let first = word.first, first.isLetter { word = word.dropFirst() }
                let pieces = word.split(separator: ":")
                guard pieces.count == 2, let surah = Int(pieces[0]) else { continue }
                let range = pieces[1].split(whereSeparator: { $0 == "-" || $0 == "–" })
                guard let first = range.first.flatMap({ Int($0) }) else { continue }
                var last = range.count == 2 ? Int(range[1]) ?? first : first
                // "21:101-3": the last aya written short.
                if last < first, range.count == 2, range[1].count < String(first).count {
                    last = Int(String(String(first).dropLast(range[1].count)) + range[1]) ?? first
                }
                add(surah, first, last)
            }
        }
        return found
    }
}

/// al-Kafi as hubeali.com's translation has it (narmafraz/ThaqalaynDataSources, `scraped/hubeali_com/Al-Kafi-Volume-N/`):
/// one EPUB content file (`cNNN.xhtml`) a chapter; a book's and a chapter's heading in the file's `h1`; each hadith's
/// Arabic and English paragraphs, the English closed by a note whose text, at the end of the volume, is its reference
/// ("Al Kafi V 1 – The Book Of Intellect and Ignorance CH 1 H 4"). Volume 8 (al-Rawda) heads each hadith "H 14453 – …".
/// The book and chapter come from the headings (the notes' are sometimes wrong), the number from the note.
struct KafiReader {
    let ayahCounts: [Int]

    /// A paragraph of a content file: its attributes, its text (honorifics in superscript kept in parentheses, note
    /// markers left out) and the notes it refers to.
    struct Paragraph {
        var style = ""
        var dir = ""
        var text = ""
        var notes: [Int] = []
        /// After the file's `<hr/>`: a note's text, `[5] Al Kafi V 1 – …`.
        var isNote = false
        var noteNumber: Int?
    }

    struct File {
        var heading: String?
        var paragraphs: [Paragraph] = []
    }

    func read(_ volumes: [(volume: Int, folder: URL)], progress: ((Int, Int) -> Void)?) throws(StoreError) -> HadithBook {
        var files: [(volume: Int, url: URL)] = []
        for (volume, folder) in volumes {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
                $0.hasPrefix("c") && $0.hasSuffix(".xhtml") && Int($0.dropFirst().dropLast(6)) != nil
            }.sorted()
            files += names.map { (volume, folder.appendingPathComponent($0)) }
        }
        guard !files.isEmpty else { throw .malformedData(file: "hubeali_com", reason: "no Al-Kafi-Volume-N/cNNN.xhtml files") }
        var hadiths: [Hadith] = []
        var done = 0
        for (volume, _) in volumes {
            let parsed = try files.filter { $0.volume == volume }.map { entry throws(StoreError) -> (String, File) in
                let file = try Self.parse(entry.url)
                done += 1
                if done % 32 == 0 || done == files.count { progress?(done, files.count) }
                return ("Al-Kafi-Volume-\(volume)/\(entry.url.lastPathComponent)", file)
            }
            hadiths += try (volume == 8 ? rawda(parsed) : chapters(volume: volume, parsed))
        }
        return HadithBook(
            id: HadithFolder.kafi, title: "al-Kafi", author: "al-Kulayni", translator: "Hube Ali (hubeali.com)",
            source: "narmafraz/ThaqalaynDataSources, scraped/hubeali_com", hadiths: hadiths)
    }

    /// Whether a paragraph is Arabic: more Arabic letters than Latin ones (its `dir` is sometimes wrong).
    static func isArabic(_ text: String) -> Bool {
        var arabic = 0
        var latin = 0
        for scalar in text.unicodeScalars {
            if (0x0600...0x06FF).contains(scalar.value) { arabic += 1 } else if scalar.isASCII && scalar.properties.isAlphabetic { latin += 1 }
        }
        return arabic > latin
    }

    /// Paragraphs that are no hadith's text: a colophon or title (centred), the next chapter's or book's Arabic title
    /// (bold and underlined), a scene break, the volume's page counter.
    static func isApparatus(_ paragraph: Paragraph) -> Bool {
        let style = paragraph.style
        if style.contains("text-align: center") || style.contains("x-large") { return true }
        if style.contains("font-weight: bold") && style.contains("underline") { return true }
        if paragraph.text.hasPrefix("out of ") || paragraph.text.allSatisfy({ $0 == "–" || $0 == "-" || $0.isWhitespace }) { return true }
        if isArabic(paragraph.text) && (paragraph.text.hasPrefix("بَابُ") || paragraph.text.hasPrefix("بَاب") || paragraph.text.hasPrefix("باب")) {
            return true
        }
        return false
    }

    /// A volume's title page or table of contents (its headings, upper-cased): no hadith in it.
    static func isFrontMatter(_ upper: String) -> Bool {
        upper.hasPrefix("AL-KAFI VOLUME") || upper.hasPrefix("AL KAFI VOLUME") || upper.hasPrefix("TABLE OF CONTENTS")
    }

    /// "Chapter 12 – Title", with the source's misspellings ("Chater", "Chapater", "Cahpter").
    static func chapter(_ heading: String) -> (number: String, title: String)? {
        let words = heading.split(separator: " ", maxSplits: 2)
        guard words.count >= 2, words[0].count >= 5, words[0].count <= 9, words[0].lowercased().hasPrefix("c"),
            words[0].lowercased().hasSuffix("ter")
        else { return nil }
        var number = Substring(words[1])
        var title = words.count == 3 ? Substring(words[2]) : ""
        // "Chapter 2–Title" or "Chapter 2-Title" without spaces.
        if let dash = number.firstIndex(where: { $0 == "–" || $0 == "-" }) {
            title = number[number.index(after: dash)...] + (title.isEmpty ? "" : " " + title)
            number = number[..<dash]
        }
        guard let digit = number.first, digit.isNumber, number.count <= 4 else { return nil }
        let trimmed = title.trimmingCharacters(in: .whitespaces)
        let withoutDash = trimmed.hasPrefix("–") || trimmed.hasPrefix("-") ? String(trimmed.dropFirst()) : trimmed
        return (String(number), withoutDash.trimmingCharacters(in: .whitespaces))
    }

    /// The notes' references: note number → the hadith number its text gives ("Al Kafi V 1 – … CH 1 H 4" → "4").
    /// A note that is not a reference ("Aql is a Divine property …") is left out: it does not end a hadith.
    static func references(_ files: [(String, File)]) -> [Int: String?] {
        var references: [Int: String?] = [:]
        for (_, file) in files {
            for paragraph in file.paragraphs where paragraph.isNote {
                guard let number = paragraph.noteNumber else { continue }
                let text = paragraph.text.trimmingCharacters(in: .whitespaces)
                let folded = text.replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "  ", with: " ")
                guard folded.hasPrefix("Al Kafi") || folded.hasPrefix("Al Kafy") || folded.hasPrefix("Al  Kafi") else { continue }
                // The number after the last " H ": "CH 1 H 4", "Ch 27 H 1", "H 5a"; none ("CH 7 H").
                var hadith: String?
                let words = text.split(whereSeparator: { $0.isWhitespace })
                if let index = words.lastIndex(where: { $0 == "H" }), index + 1 < words.count, let first = words[index + 1].first, first.isNumber {
                    hadith = String(words[index + 1])
                }
                references[number] = .some(hadith)
            }
        }
        return references
    }

    /// Volumes 1-7: a book's heading, chapters' headings, and each hadith closed by its reference note (or by the next
    /// heading, for the few without one).
    func chapters(volume: Int, _ files: [(String, File)]) throws(StoreError) -> [Hadith] {
        let references = Self.references(files)
        var hadiths: [Hadith] = []
        var book: String?
        var chapter: (number: String, title: String)?
        var position = 0
        var english: [String] = []
        var arabic: [String] = []
        func close(number: String?) throws(StoreError) {
            defer { (english, arabic) = ([], []) }
            guard !english.isEmpty, let chapter else { return }
            position += 1
            let text = english.joined(separator: "\n\n")
            hadiths.append(
                Hadith(
                    volume: volume, book: book, chapter: chapter.number, chapterTitle: chapter.title, number: number ?? String(position),
                    numberFrom: number == nil ? "position" : "footnote", position: position, english: text,
                    arabic: arabic.isEmpty ? nil : arabic.joined(separator: "\n\n"), gradings: [],
                    verses: try VerseCitations.bracketed(in: text, ayahCounts: ayahCounts), url: nil))
        }
        for (name, file) in files {
            guard let heading = file.heading else { continue }
            let upper = heading.uppercased()
            if Self.isFrontMatter(upper) { continue }
            let numbered = Self.chapter(heading)
            // A book's, a section's or a chapter's heading ends a hadith that had no note; a heading without a number
            // inside a chapter ("The Cheek", "THE AFTERMATH") does not.
            if numbered != nil || upper.hasPrefix("THE BOOK") || upper.hasPrefix("CHAPTERS ON") {
                do {
                    try close(number: nil)
                } catch { throw .malformedData(file: name, reason: error.description) }
            }
            if upper.hasPrefix("THE BOOK") {
                // The Book of Zakat runs on from volume 3 into volume 4: its chapters go on numbering.
                if book?.uppercased() != upper { (book, chapter) = (heading, nil) }
                continue
            }
            if upper.hasPrefix("CHAPTERS ON") { continue }
            if let numbered { (chapter, position) = (numbered, 0) }
            // A heading without a number ("The Cheek", "THE AFTERMATH") goes on with the chapter before it.
            for paragraph in file.paragraphs where !paragraph.isNote && !Self.isApparatus(paragraph) {
                let text = paragraph.text.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { continue }
                if Self.isArabic(text) {
                    arabic.append(text)
                } else {
                    english.append(text)
                }
                if let note = paragraph.notes.first(where: { references[$0] != nil }) {
                    do {
                        try close(number: references[note] ?? nil)
                    } catch { throw .malformedData(file: name, reason: error.description) }
                }
            }
        }
        do {
            try close(number: nil)
        } catch { throw .malformedData(file: files.last?.0 ?? "Al-Kafi-Volume-\(volume)", reason: error.description) }
        return hadiths
    }

    /// Volume 8 (al-Rawda): each hadith's heading "H 14453 – its chain"; its Arabic opens at the end of the file
    /// before, numbered "14453- …"; section headings ("SERMON OF AL-TAALUTIYYA") stand for chapters.
    func rawda(_ files: [(String, File)]) throws(StoreError) -> [Hadith] {
        var hadiths: [Hadith] = []
        var book: String?
        var section: String?
        var pending: [String] = []
        var position = 0
        for (name, file) in files {
            guard let heading = file.heading else { continue }
            let upper = heading.uppercased()
            if Self.isFrontMatter(upper) { continue }
            var english: [String] = []
            var arabic: [String] = []
            let words = heading.split(separator: " ", maxSplits: 2)
            let isHadith = words.count >= 2 && words[0] == "H" && Int(words[1]) != nil
            if isHadith {
                arabic = pending
                pending = []
                if words.count == 3 {
                    let chain = words[2].trimmingCharacters(in: .whitespaces)
                    let rest = chain.hasPrefix("–") || chain.hasPrefix("-") ? String(chain.dropFirst()) : chain
                    if !rest.trimmingCharacters(in: .whitespaces).isEmpty { english.append(rest.trimmingCharacters(in: .whitespaces)) }
                }
            } else if upper.hasPrefix("THE BOOK") {
                book = heading
            } else {
                section = heading
                position = 0
            }
            var opened = false
            for paragraph in file.paragraphs where !paragraph.isNote && !Self.isApparatus(paragraph) {
                let text = paragraph.text.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { continue }
                if Self.isArabic(text) {
                    // "14454- …": the next hadith's Arabic begins.
                    let digits = text.prefix { $0.isNumber || $0 == " " || $0 == "-" || $0 == "—" || $0 == "\u{00A0}" }
                    if digits.contains(where: \.isNumber) && (digits.contains("-") || digits.contains("—")) { opened = true }
                    if opened || !isHadith { pending.append(text) } else { arabic.append(text) }
                } else if isHadith {
                    english.append(text)
                }
            }
            guard isHadith, !english.isEmpty else { continue }
            position += 1
            let text = english.joined(separator: "\n\n")
            do {
                hadiths.append(
                    Hadith(
                        volume: 8, book: book, chapter: nil, chapterTitle: section, number: String(words[1]), numberFrom: "heading",
                        position: position,
                        english: text, arabic: arabic.isEmpty ? nil : arabic.joined(separator: "\n\n"), gradings: [],
                        verses: try VerseCitations.bracketed(in: text, ayahCounts: ayahCounts), url: nil))
            } catch { throw .malformedData(file: name, reason: error.description) }
        }
        return hadiths
    }

    /// Reads a content file: its `h1`, and its paragraphs.
    static func parse(_ url: URL) throws(StoreError) -> File {
        let name = url.pathComponents.suffix(2).joined(separator: "/")
        let data = try StoreError.contents(of: url, maximumBytes: HadithFolder.maximumFileBytes)
        let reader = XHTMLReader()
        let parser = XMLParser(data: data)
        parser.delegate = reader
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        guard parsed, parser.parserError == nil, reader.closed else {
            throw .malformedLine(
                file: name, line: parser.lineNumber,
                reason: "not well-formed XHTML"
                    + ((parser.parserError as NSError?).map { " (XML parser error \($0.code))" } ?? ": the file ends early"))
        }
        return reader.file
    }

    /// Collects a content file's heading and paragraphs.
    final class XHTMLReader: NSObject, XMLParserDelegate {
        var file = File()
        private var heading: String?
        private var paragraph: Paragraph?
        private var afterRule = false
        /// Inside a note marker's `<sup>[5]</sup>`: its text is not the hadith's.
        private var skippingSup = 0
        private var pendingNote: Int?
        private var supDepth = 0
        private var supText = ""

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch element {
            case "h1": heading = ""
            case "hr": afterRule = true
            case "p":
                paragraph = Paragraph(style: attributes["style"] ?? "", dir: attributes["dir"] ?? "", isNote: afterRule)
            case "a":
                if let id = attributes["id"], id.hasPrefix("_ftnref"), let number = Int(id.dropFirst(7)) {
                    paragraph?.notes.append(number)
                    pendingNote = number
                } else if let href = attributes["href"], let range = href.range(of: "#_ftnref"), let number = Int(href[range.upperBound...]) {
                    paragraph?.noteNumber = number
                    pendingNote = number
                }
            case "sup":
                supDepth += 1
                supText = ""
            default: break
            }
        }

        /// Whether the document's root element was closed (a file cut short is not).
        var closed = false

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            switch element {
            case "html": closed = true
            case "h1":
                file.heading = heading.map { $0.replacingOccurrences(of: "\u{00A0}", with: " ").trimmingCharacters(in: .whitespacesAndNewlines) }
                heading = nil
            case "p":
                if var done = paragraph {
                    done.text = done.text.replacingOccurrences(of: "\u{00A0}", with: " ")
                    file.paragraphs.append(done)
                }
                paragraph = nil
            case "sup":
                supDepth -= 1
                let text = supText.trimmingCharacters(in: .whitespaces)
                if let note = pendingNote, text == "[\(note)]" {
                    pendingNote = nil  // the note's marker: not text
                } else if !text.isEmpty {
                    append("(\(text))")
                }
                supText = ""
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if supDepth > 0 {
                supText += string
                return
            }
            append(string)
        }

        private func append(_ string: String) {
            if heading != nil { heading! += string } else if paragraph != nil { paragraph!.text += string }
        }
    }
}

/// A book of thaqalayn.net as the dataset keeps it (`scraped/thaqalayn_api/<book>/hadiths.json`): records with the
/// book, volume, category (its books or parts), chapter and the hadith's place, its English and Arabic, and gradings
/// (al-Mohseni's and others', where given). The verses a hadith cites are read from its English, in the translators'
/// forms (`(al-Nisa, 4:54)`, `(Qur'an, 2:34; 7:11)`).
struct ThaqalaynAPIReader {
    let ayahCounts: [Int]

    struct File: Decodable {
        let hadiths: [Record]
    }

    struct Record: Decodable {
        let id: Int?
        let book: String?
        let author: String?
        let translator: String?
        let category: String?
        let chapter: String?
        let chapterInCategoryId: Int?
        let englishText: String?
        let arabicText: String?
        let volume: Int?
        let URL: String?
        let gradingsFull: [GradingRecord]?
        let error: String?
    }

    struct GradingRecord: Decodable {
        struct Author: Decodable { let name_en: String? }
        let grade_en: String?
        let grade_ar: String?
        let reference_en: String?
        let author: Author?
    }

    func read(_ id: String, file url: URL) throws(StoreError) -> HadithBook {
        let name = "thaqalayn_api/\(id)/hadiths.json"
        let data = try StoreError.contents(of: url, maximumBytes: HadithFolder.maximumFileBytes)
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw .malformedData(file: name, reason: CommentaryFile.describe(error))
        }
        var hadiths: [Hadith] = []
        var positions: [String: Int] = [:]
        var first: Record?
        // A record's id is its identity in the collection: two records with one id were both imported, the hadith twice.
        var seen: [Int: Int] = [:]  // id -> the record's place in the file, from 1
        for (index, record) in file.hadiths.enumerated() where record.error == nil {
            guard let english = record.englishText?.trimmingCharacters(in: .whitespacesAndNewlines), !english.isEmpty else { continue }
            if let id = record.id {
                if let other = seen[id] {
                    throw .malformedData(
                        file: name, reason: "hadith id \(id) is given twice (records \(other) and \(index + 1)): one collection has each once")
                }
                seen[id] = index + 1
            }
            if first == nil { first = record }
            let chapter = record.chapterInCategoryId.map(String.init)
            let key = "\(record.volume ?? 1)|\(record.category ?? "")|\(chapter ?? "")"
            positions[key, default: 0] += 1
            // The number: the URL's last segment, the hadith's place in its chapter for most books.
            let number = record.URL?.split(separator: "/").last.map(String.init) ?? String(positions[key]!)
            let gradings = (record.gradingsFull ?? []).compactMap { grading -> Hadith.Grading? in
                guard let grade = grading.grade_en ?? grading.grade_ar, !grade.isEmpty else { return nil }
                return Hadith.Grading(grader: grading.author?.name_en ?? "not named", grade: grade, reference: grading.reference_en)
            }
            hadiths.append(
                Hadith(
                    volume: record.volume ?? 1, book: record.category, chapter: chapter, chapterTitle: record.chapter, number: number,
                    numberFrom: record.URL == nil ? "position" : "source", position: positions[key]!, english: english,
                    arabic: record.arabicText.flatMap { $0.isEmpty ? nil : $0 }, gradings: gradings,
                    verses: VerseCitations.parenthesized(in: english, ayahCounts: ayahCounts), url: record.URL))
        }
        guard let first else { throw .malformedData(file: name, reason: "no hadith in it") }
        return HadithBook(
            id: id, title: first.book ?? id, author: first.author ?? "not named", translator: first.translator,
            source: "narmafraz/ThaqalaynDataSources, scraped/thaqalayn_api/\(id)", hadiths: hadiths)
    }
}
