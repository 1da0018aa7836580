import Foundation
import GRDB
import Storage
import VerseCalendar

extension AppDatabase {
    /// Replaces (or adds) a Quran text edition from a Tanzil file. The whole file is checked first; one transaction.
    public func importQuran(_ file: TanzilFile, edition: Edition, progress: ((Int, Int) -> Void)? = nil) throws {
        try write { db in
            let counts = try Int.fetchAll(db, sql: "SELECT ayah_count FROM surah ORDER BY number")
            if counts.count == 114, counts != file.ayahCounts {
                throw StoreError.malformedData(file: edition.id, reason: "ayat per sura differ from the stored Quran")
            }
            try Self.refuseAnotherKind(db, edition)
            try Self.storeEdition(db, edition, file: file, progress: progress)
        }
    }

    /// Adds or replaces a translation. Its ayat must match the stored Arabic sura by sura (checked on parsing).
    public func importTranslation(_ file: TanzilFile, edition: Edition, progress: ((Int, Int) -> Void)? = nil) throws {
        try write { db in
            try Self.refuseAnotherKind(db, edition)
            try Self.storeEdition(db, edition, file: file, progress: progress)
        }
    }

    /// An import replaces the edition of its id, but only one of its own kind: a Quran text imported under a
    /// translation's id took its place (the edition row became Arabic Quran text, and `today` and `verse` no longer
    /// found the translation), and the other way round.
    static func refuseAnotherKind(_ db: Database, _ edition: Edition) throws {
        if let kind = try String.fetchOne(db, sql: "SELECT kind FROM edition WHERE id = ?", arguments: [edition.id]), kind != edition.kind {
            throw StoreError.editionOfAnotherKind(id: edition.id, kind: kind)
        }
    }

    /// Ayat per sura, from the stored Arabic text.
    public func ayahCounts() throws -> [Int] {
        try read { db in try Int.fetchAll(db, sql: "SELECT ayah_count FROM surah ORDER BY number") }
    }

    /// Imports commentary entries; an entry for the same verses, layer and occasion replaces the one stored.
    /// Every entry's verses are checked first; one transaction.
    public func importCommentary(_ file: CommentaryFile, name: String, progress: ((Int, Int) -> Void)? = nil) throws {
        try write { db in
            let counts = try Int.fetchAll(db, sql: "SELECT ayah_count FROM surah ORDER BY number")
            guard counts.count == 114 else { throw StoreError.notSeeded("Quran text") }
            for (entry, line) in zip(file.entries, file.lineNumbers) where entry.verses.end > counts[entry.verses.surah - 1] {
                throw StoreError.malformedLine(file: name, line: line, reason: StoreError.verseNotFound(entry.verses.key).description)
            }
            // Whose words each body is, as its provenance says (README, "Commentary format"): a quotation or a summary
            // with no work, author or reference is never stored. (`content check` lists these in the bundled data; an
            // import is refused at the first.)
            for (entry, line) in zip(file.entries, file.lineNumbers) {
                let source = entry.source
                if source.isEditorialNamingASource {
                    let named = [("work", source.work), ("author", source.author), ("reference", source.reference)].first {
                        !CommentarySource.isBlank($0.1)
                    }
                    throw StoreError.malformedLine(
                        file: name, line: line,
                        reason:
                            "source.\(named?.0 ?? "work") is given to an editorial entry, which is the project's own words and names no source: a named work's position is an editorial-summary"
                    )
                }
                if let field = source.missingFields.first {
                    let kind = source.provenance == "quotation" ? "a quotation" : "an editorial-summary"
                    throw StoreError.malformedLine(
                        file: name, line: line, reason: "source.\(field) is missing: \(kind) names its work, author and reference")
                }
            }
            let occasions = Set(try String.fetchAll(db, sql: "SELECT id FROM occasion"))
            for (entry, line) in zip(file.entries, file.lineNumbers) {
                if let occasion = entry.occasion, !occasions.contains(occasion) {
                    throw StoreError.malformedLine(file: name, line: line, reason: "unknown occasion '\(occasion)': `dailyverse calendar` lists them")
                }
            }
            try Self.storeCommentary(db, file.entries, origin: "import", replace: true, progress: progress)
        }
    }
}
