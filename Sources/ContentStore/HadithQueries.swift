import Foundation
import GRDB
import Storage
import VerseCalendar

/// A hadith collection in the store, as `import hadith` and `content coverage` name it.
public struct StoredHadithBook: Sendable, Hashable, Codable {
    public let id: String
    public let title: String
    public let author: String
    public let hadiths: Int
    /// Hadith that cite at least one verse, and the distinct verses cited.
    public let citing: Int
    public let verses: Int
}

extension AppDatabase {
    /// Replaces a collection (its hadith and the verses they cite) in one transaction.
    public func importHadith(_ book: HadithBook, at now: Date, progress: ((Int, Int) -> Void)? = nil) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM hadith_book WHERE id = ?", arguments: [book.id])
            try db.execute(
                sql: "INSERT INTO hadith_book (id, title, author, translator, source, licence, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [book.id, book.title, book.author, book.translator, book.source, HadithBook.terms, now.iso8601UTC])
            let hadith = try db.makeStatement(
                sql: """
                    INSERT INTO hadith (book_id, volume, book, chapter, chapter_title, number, number_from, position, english, arabic,
                        gradings, url, verse_count)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            let verse = try db.makeStatement(sql: "INSERT OR IGNORE INTO hadith_verse (surah, ayah, hadith_id) VALUES (?, ?, ?)")
            let encoder = JSONEncoder()
            for (index, entry) in book.hadiths.enumerated() {
                try hadith.execute(arguments: [
                    book.id, entry.volume, entry.book, entry.chapter, entry.chapterTitle, entry.number, entry.numberFrom, entry.position,
                    entry.english, entry.arabic, String(decoding: try encoder.encode(entry.gradings), as: UTF8.self), entry.url,
                    entry.verses.count,
                ])
                let id = db.lastInsertedRowID
                for key in entry.verses { try verse.execute(arguments: [key / 1000, key % 1000, id]) }
                if index % 512 == 0 || index == book.hadiths.count - 1 { progress?(index + 1, book.hadiths.count) }
            }
        }
    }

    /// The collections imported, with their counts.
    public func hadithBooks() throws -> [StoredHadithBook] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT b.id, b.title, b.author, (SELECT count(*) FROM hadith h WHERE h.book_id = b.id) AS hadiths,
                        (SELECT count(*) FROM hadith h WHERE h.book_id = b.id AND h.verse_count > 0) AS citing,
                        (SELECT count(*) FROM (SELECT DISTINCT v.surah, v.ayah FROM hadith_verse v JOIN hadith h ON h.id = v.hadith_id
                            WHERE h.book_id = b.id)) AS verses
                    FROM hadith_book b ORDER BY b.id
                    """
            ).map {
                StoredHadithBook(
                    id: $0["id"], title: $0["title"], author: $0["author"], hadiths: $0["hadiths"], citing: $0["citing"], verses: $0["verses"])
            }
        }
    }

    /// A hadith that cites a verse of the range, from `book` (any collection when nil), for a layer: the ones that cite
    /// fewest verses first (about this verse rather than a chapter quoting dozens), then the shortest; its English as
    /// whole sentences of about `TafsirExcerpt.maximumWords` at most, with its reference. Nil when none cites the range
    /// or none reads cleanly. The third value is the hadith's whole text (English, then Arabic).
    static func hadithLayer(
        _ db: Database, layer: String, book: String?, range: VerseRange
    ) throws -> (CommentaryEntry, Bool, String)? {
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT DISTINCT h.*, b.title, b.author, b.translator, b.licence FROM hadith_verse v
                    JOIN hadith h ON h.id = v.hadith_id JOIN hadith_book b ON b.id = h.book_id
                    WHERE v.surah = ? AND v.ayah BETWEEN ? AND ? AND (? IS NULL OR h.book_id = ?)
                    ORDER BY h.verse_count, length(h.english), h.id LIMIT 16
                    """), arguments: [range.surah, range.start, range.end, book, book])
        // The hadith's English quotes no verse in Arabic to check: an empty index, built once.
        let noVerses = QuranIndex(verses: [])
        for row in rows {
            let english: String = row["english"]
            guard TafsirExcerpt.defect(in: english, language: "en", quran: noVerses) == nil else { continue }
            // Whole sentences from the start, within the card's length.
            var kept: [String] = []
            var words = 0
            paragraphs: for paragraph in english.components(separatedBy: "\n\n") {
                var sentences: [String] = []
                for sentence in TafsirExcerpt.sentences(paragraph) {
                    let count = TafsirExcerpt.wordCount(sentence)
                    if words + count > TafsirExcerpt.maximumWords {
                        if !sentences.isEmpty { kept.append(sentences.joined(separator: " ")) }
                        break paragraphs
                    }
                    words += count
                    sentences.append(sentence)
                }
                kept.append(sentences.joined(separator: " "))
            }
            let body = kept.filter { !$0.isEmpty }.joined(separator: "\n\n")
            guard TafsirExcerpt.wordCount(body) >= TafsirExcerpt.minimumWords else { continue }
            let whole = [english, row["arabic"] as String?].compactMap { $0 }.joined(separator: "\n\n")
            let entry = CommentaryEntry(
                verses: range, layer: layer, body: body,
                source: CommentarySource(
                    work: row["title"], author: row["author"], reference: Self.hadithReference(row), provenance: "quotation", edition: nil,
                    language: "en", machineTranslation: nil, licence: row["licence"]))
            return (entry, body != english || row["arabic"] as String? != nil, whole)
        }
        return nil
    }

    /// "al-Kafi, vol. 1, The Book of Tawheed, chapter 2 (Title), hadith 4", with the gradings where given.
    static func hadithReference(_ row: Row) -> String {
        var parts: [String] = [row["title"], "vol. \(row["volume"] as Int)"]
        if let book = row["book"] as String?, !book.isEmpty { parts.append(book) }
        let chapterTitle = (row["chapter_title"] as String?).flatMap { $0.isEmpty ? nil : $0 }
        switch (row["chapter"] as String?, chapterTitle) {
        case (let number?, let title?): parts.append("chapter \(number) (\(title))")
        case (let number?, nil): parts.append("chapter \(number)")
        case (nil, let title?): parts.append(title)
        case (nil, nil): break
        }
        let numberFrom: String = row["number_from"]
        parts.append("hadith \(row["number"] as String)" + (numberFrom == "position" ? " (its place in the chapter)" : ""))
        let gradings = (try? JSONDecoder().decode([Hadith.Grading].self, from: Data((row["gradings"] as String).utf8))) ?? []
        for grading in gradings { parts.append("graded \(grading.grade) by \(grading.grader)") }
        if let translator = row["translator"] as String? { parts.append("translated by \(translator)") }
        return parts.joined(separator: ", ")
    }
}
