import Foundation
import GRDB
import Storage
import VerseCalendar

/// The layers from the commentary editions: which editions feed each layer (the seeded default, or this process's
/// choice), the excerpt a day shows, and the whole text behind it.
extension AppDatabase {
    private static let sourcesKey = "content.layers.sources"

    /// Feeds the layers named in `overrides` from their editions in this process (nil: the data's default for all).
    public func useLayerSources(_ overrides: LayerSources?) {
        kept.set(Self.sourcesKey, overrides)
    }

    /// The editions and hadith collections `sources` names that the store does not hold, refused in one line naming the
    /// first and, briefly, the ones it holds: a misspelt edition (`en.mizna`) left its layer without it, and said nothing.
    /// `hadith` alone (any collection) names none.
    public func checkLayerSources(_ sources: LayerSources) throws {
        let (editions, books) = try read { db -> ([String], [String]) in
            let editions = try String.fetchAll(db, sql: "SELECT id FROM tafsir_edition ORDER BY id")
            let books = try String.fetchAll(db, sql: "SELECT id FROM hadith_book ORDER BY id")
            return (editions, books)
        }
        func some(_ ids: [String]) -> String {
            ids.isEmpty ? "none" : ids.prefix(8).joined(separator: ", ") + (ids.count > 8 ? ", … \(ids.count - 8) more" : "")
        }
        for layer in Layer.ids {
            for source in sources.sources(for: layer) {
                if source.isHadith {
                    if let book = source.book, !books.contains(book) {
                        throw StoreError.invalidLayerSources(
                            "\(layer) names '\(source)', a hadith collection this database does not have (it has: \(some(books)); `dailyverse import hadith` adds one)"
                        )
                    }
                } else if !editions.contains(source.edition) {
                    throw StoreError.invalidLayerSources(
                        "\(layer) names '\(source.edition)', an edition this database does not have (it has: \(some(editions)); `dailyverse import tafsir` adds one)"
                    )
                }
            }
        }
    }

    /// The editions feeding each layer: the data's default with this process's choice in place of it.
    public func layerSources() throws -> LayerSources {
        try read { db in try Self.layerSources(db, overrides: kept.value(Self.sourcesKey, as: LayerSources.self)) }
    }

    static func layerSources(_ db: Database, overrides: LayerSources?) throws -> LayerSources {
        var byLayer: [String: [LayerSource]] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT id, sources FROM layer")) {
            let names = (try? JSONDecoder().decode([String].self, from: Data((row["sources"] as String).utf8))) ?? []
            byLayer[row["id"]] = names.compactMap(LayerSource.init(parsing:))
        }
        let seeded = LayerSources(byLayer)
        return overrides.map { seeded.overridden(by: $0) } ?? seeded
    }

    /// The whole Quran's skeleton index, from the Arabic text in the store (the bundle needs it; a day's read uses its
    /// sura's, `layerContext(surah:)`).
    func quranIndex() throws -> QuranIndex {
        try read { db in
            QuranIndex(verses: try Self.arabicVerses(db, surah: nil))
        }
    }

    /// The Arabic text's verses, of one sura or all.
    static func arabicVerses(_ db: Database, surah: Int?) throws -> [(surah: Int, ayah: Int, text: String)] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT surah, ayah, text FROM ayah_text WHERE edition_id = ? AND (? IS NULL OR surah = ?) ORDER BY surah, ayah"),
            arguments: [BundledContent.arabicEdition.id, surah, surah]
        ).map { (surah: $0["surah"] as Int, ayah: $0["ayah"] as Int, text: $0["text"] as String) }
    }

    /// What a read of the layers needs from this process: the layers' sources it chose, and the reader's language.
    func layerContext(language: String? = nil) -> LayerContext {
        LayerContext(overrides: kept.value(Self.sourcesKey, as: LayerSources.self), language: language)
    }

    /// The languages a reader may ask the layers in: an edition in the reader's language comes before the others of
    /// its layer (an `ar` reader gets al-Mizan in Arabic where the Arabic edition is in the store).
    public static let readerLanguages = ["en", "ar"]

    /// `sources` with those whose edition is in the reader's language first, each group in its order (the imported
    /// hadith are read in their English).
    static func preferring(_ sources: [LayerSource], _ context: LayerContext, _ db: Database) throws -> [LayerSource] {
        guard let language = context.language, sources.count > 1 else { return sources }
        let languages = try context.editionLanguages(db)
        let ours = sources.filter { ($0.isHadith ? "en" : languages[$0.edition]) == language }
        return ours + sources.filter { !ours.contains($0) }
    }

    /// Keeps the excerpts a read had to cut, so that the next read of the verse takes them as they are: only for the
    /// verses a day can show (the month pools and the occasions), so that what clients ask for cannot grow the table,
    /// and only from the edition the read cut them from (not one imported since). Cutting costs a read a few tens of
    /// milliseconds; keeping is what spares the next read them, so a database that cannot be written (read-only, full)
    /// only leaves the next read to cut again.
    func keepExcerpts(_ context: LayerContext, for range: VerseRange) {
        guard !context.cuts.isEmpty else { return }
        try? write { db in
            guard try Self.isSelection(db, range) else { return }
            for cut in context.cuts {
                try Self.storeExcerpt(db, edition: cut.source.edition, importedAt: cut.importedAt, part: cut.source.part, range: range, cut.excerpt)
            }
        }
    }

    /// Whether a day can show `range`: a month pool's verse or an occasion's.
    static func isSelection(_ db: Database, _ range: VerseRange) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM month_pool WHERE surah = ?1 AND ayah_start = ?2 AND ayah_end = ?3)
                        OR EXISTS (SELECT 1 FROM occasion WHERE surah = ?1 AND ayah_start = ?2 AND ayah_end = ?3)
                    """), arguments: [range.surah, range.start, range.end]) ?? false
    }

    /// Stores an edition's excerpt for a passage (nil: it has no clean one), in place of any kept before; when
    /// `importedAt` is given, only if the edition stored is still the one of that import.
    static func storeExcerpt(
        _ db: Database, edition: String, importedAt: String? = nil, part: ExcerptPart, range: VerseRange, _ excerpt: EditionExcerpt?
    ) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO tafsir_excerpt (edition_id, part, surah, ayah_start, ayah_end, text, block_start, block_end, more)
                SELECT id, ?, ?, ?, ?, ?, ?, ?, ? FROM tafsir_edition WHERE id = ? AND (? IS NULL OR imported_at = ?)
                """,
            arguments: [
                part.rawValue, range.surah, range.start, range.end, excerpt?.text, excerpt?.blockVerses.lowerBound ?? 0,
                excerpt?.blockVerses.upperBound ?? 0, excerpt?.more ?? false, edition, importedAt, importedAt,
            ])
    }

    /// The excerpt kept for an edition's part and a passage: nil when none is kept, `.some(nil)` when the edition has no
    /// clean one for it.
    static func keptExcerpt(_ db: Database, edition: String, part: ExcerptPart, range: VerseRange) throws -> EditionExcerpt?? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT text, block_start, block_end, more FROM tafsir_excerpt
                        WHERE edition_id = ? AND part = ? AND surah = ? AND ayah_start = ? AND ayah_end = ?
                        """), arguments: [edition, part.rawValue, range.surah, range.start, range.end])
        else { return nil }
        guard let text = row["text"] as String? else { return .some(nil) }
        return EditionExcerpt(text: text, blockVerses: (row["block_start"] as Int)...(row["block_end"] as Int), more: row["more"])
    }

    /// The whole text behind a layer of a verse or passage: the blocks of the edition it is taken from (each once, in
    /// order), or the entry itself when the layer shows one of ours.
    public func commentary(_ range: VerseRange, layer: String, occasion: String? = nil, language: String? = nil) throws -> LayerCommentary {
        guard Layer.ids.contains(layer) else { throw StoreError.unknownLayer(layer) }
        let context = layerContext(language: language)
        defer { keepExcerpts(context, for: range) }
        return try read { db in
            guard let surah = try Self.surah(db, range.surah) else { throw StoreError.notSeeded("suras") }
            guard range.end <= surah.ayahCount else { throw StoreError.verseNotFound(range.key) }
            guard let shown = try Self.layerTexts(db, for: range, occasion: occasion, context: context, only: layer).first else {
                throw StoreError.unknownLayer(layer)
            }
            guard let entry = shown.entry else { return LayerCommentary(layer: shown.layer, range: range, entry: nil, text: nil, whole: true) }
            if let whole = shown.whole { return LayerCommentary(layer: shown.layer, range: range, entry: entry, text: whole, whole: true) }
            guard let edition = entry.source.edition else {
                return LayerCommentary(layer: shown.layer, range: range, entry: entry, text: entry.body, whole: true)
            }
            let blocks = try Self.editionBlocks(db, edition: edition, range: range)
            return LayerCommentary(
                layer: shown.layer, range: range, entry: entry, text: blocks.map(\.text).joined(separator: "\n\n"),
                whole: blocks.allSatisfy(\.whole))
        }
    }

    /// The blocks of `edition` for the verses of `range`, in order, each once, with the span of verses each covers.
    static func editionBlocks(_ db: Database, edition: String, range: VerseRange) throws -> [EditionExcerpt.Block] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT b.text, b.whole, (SELECT min(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS first,
                        (SELECT max(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS last
                    FROM tafsir_block b WHERE b.id IN (
                        SELECT block_id FROM tafsir_verse WHERE edition_id = ? AND surah = ? AND ayah BETWEEN ? AND ?)
                    ORDER BY b.position
                    """), arguments: [edition, range.surah, range.start, range.end]
        ).map { EditionExcerpt.Block(text: $0["text"], whole: $0["whole"], verses: ($0["first"] as Int)...($0["last"] as Int)) }
    }

    /// The first of `sources` whose edition is in the store and has a clean excerpt for the range: the entry it shows,
    /// and whether its whole text is longer. The excerpt is the one kept for the passage (the bundle's, or an earlier
    /// read's), else it is cut from the blocks and the context notes it for keeping.
    static func editionLayer(
        _ db: Database, layer: String, sources: [LayerSource], range: VerseRange, context: LayerContext
    ) throws -> (CommentaryEntry, Bool, String?)? {
        for source in sources {
            if source.isHadith {
                if let (entry, more, whole) = try hadithLayer(db, layer: layer, book: source.book, range: range) { return (entry, more, whole) }
                continue
            }
            guard
                let edition = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM tafsir_edition WHERE id = ?"), arguments: [source.edition])
            else { continue }
            let found: EditionExcerpt?
            if let kept = try keptExcerpt(db, edition: source.edition, part: source.part, range: range) {
                found = kept
            } else {
                found = EditionExcerpt.first(
                    in: try editionBlocks(db, edition: source.edition, range: range), style: ExcerptStyle(edition: source.edition),
                    part: source.part, language: edition["language"], surah: range.surah, ayahs: range.start...range.end,
                    quran: try context.quran(db, surah: range.surah))
                context.cuts.append(LayerContext.Cut(source: source, importedAt: edition["imported_at"], excerpt: found))
            }
            guard let excerpt = found else { continue }
            let span =
                excerpt.blockVerses.lowerBound == excerpt.blockVerses.upperBound
                ? "\(excerpt.blockVerses.lowerBound)" : "\(excerpt.blockVerses.lowerBound)-\(excerpt.blockVerses.upperBound)"
            let work: String = edition["name_english"] ?? edition["name"]
            let reference = "\(source.edition) on \(range.surah):\(span)" + (source.part == .narrations ? ", a narration it reports" : "")
            let entry = CommentaryEntry(
                verses: range, layer: layer, body: excerpt.text,
                source: CommentarySource(
                    work: work, author: edition["author_english"] ?? edition["author"], reference: reference, provenance: "quotation",
                    edition: source.edition, language: edition["language"], machineTranslation: edition["machine_translation"],
                    licence: edition["licence"]))
            return (entry, excerpt.more, nil)
        }
        return nil
    }
}

/// What a read of the layers needs from this process (the sources it chose) and what it learns: the excerpts it had to
/// cut, which `keepExcerpts` keeps afterwards for the next read. One read's, not shared.
final class LayerContext {
    struct Cut {
        let source: LayerSource
        let importedAt: String
        let excerpt: EditionExcerpt?
    }

    let overrides: LayerSources?
    /// The reader's language: its editions first.
    let language: String?
    var cuts: [Cut] = []
    private var index: (surah: Int, quran: QuranIndex)?

    init(overrides: LayerSources?, language: String? = nil) {
        self.overrides = overrides
        self.language = language
    }

    private var languages: [String: String]?

    /// Each stored edition's language, read once for the five layers of a read.
    func editionLanguages(_ db: Database) throws -> [String: String] {
        if let languages { return languages }
        var read: [String: String] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT id, language FROM tafsir_edition")) { read[row["id"]] = row["language"] }
        languages = read
        return read
    }

    /// The skeleton of the sura's verses, which a cut checks the commentary's quotations of its own sura against (a
    /// millisecond to build; `content check` and the bundle check every sura's, with the whole index): built at the
    /// first cut, once.
    func quran(_ db: Database, surah: Int) throws -> QuranIndex {
        if let index, index.surah == surah { return index.quran }
        let quran = QuranIndex(verses: try AppDatabase.arabicVerses(db, surah: surah))
        index = (surah, quran)
        return quran
    }
}

/// A layer's whole text for a verse or passage (`GET /v1/verses/{key}/commentary/{layer}`): the edition's blocks, or
/// our entry. `whole` is false when the text is the part of the edition's blocks that the repository bundles.
public struct LayerCommentary: Sendable {
    public let layer: Layer
    public let range: VerseRange
    public let entry: CommentaryEntry?
    public let text: String?
    public let whole: Bool
}
