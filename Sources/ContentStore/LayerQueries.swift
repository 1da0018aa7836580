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

    /// What the layers' editions need in a read of a verse of `surah`: the sources, and the skeleton of that sura's
    /// verses (a commentary's quotations of its own sura are checked as a day is shown; `content check` and the
    /// bundle check every sura's, with the whole index, which takes a process a fifth of a second to build).
    func layerContext(surah: Int) throws -> LayerContext {
        let verses = try read { db in try Self.arabicVerses(db, surah: surah) }
        return LayerContext(overrides: kept.value(Self.sourcesKey, as: LayerSources.self), quran: QuranIndex(verses: verses))
    }

    /// The whole text behind a layer of a verse or passage: the blocks of the edition it is taken from (each once, in
    /// order), or the entry itself when the layer shows one of ours.
    public func commentary(_ range: VerseRange, layer: String, occasion: String? = nil) throws -> LayerCommentary {
        guard Layer.ids.contains(layer) else { throw StoreError.unknownLayer(layer) }
        let context = try layerContext(surah: range.surah)
        return try read { db in
            guard let surah = try Self.surah(db, range.surah) else { throw StoreError.notSeeded("suras") }
            guard range.end <= surah.ayahCount else { throw StoreError.verseNotFound(range.key) }
            guard let shown = try Self.layerTexts(db, for: range, occasion: occasion, context: context, only: layer).first else {
                throw StoreError.unknownLayer(layer)
            }
            guard let entry = shown.entry else { return LayerCommentary(layer: shown.layer, range: range, entry: nil, text: nil, whole: true) }
            guard let edition = entry.source.edition else {
                return LayerCommentary(layer: shown.layer, range: range, entry: entry, text: entry.body, whole: true)
            }
            let blocks = try Self.editionBlocks(db, edition: edition, range: range)
            return LayerCommentary(
                layer: shown.layer, range: range, entry: entry, text: blocks.map(\.text).joined(separator: "\n\n"),
                whole: blocks.allSatisfy(\.whole))
        }
    }

    /// A block of an edition with the verses it covers.
    struct EditionBlock {
        let text: String
        let whole: Bool
        let verses: ClosedRange<Int>
    }

    /// The blocks of `edition` for the verses of `range`, in order, each once, with the span of verses each covers.
    static func editionBlocks(_ db: Database, edition: String, range: VerseRange) throws -> [EditionBlock] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT b.text, b.whole, (SELECT min(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS first,
                        (SELECT max(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS last
                    FROM tafsir_block b WHERE b.id IN (
                        SELECT block_id FROM tafsir_verse WHERE edition_id = ? AND surah = ? AND ayah BETWEEN ? AND ?)
                    ORDER BY b.position
                    """), arguments: [edition, range.surah, range.start, range.end]
        ).map { EditionBlock(text: $0["text"], whole: $0["whole"], verses: ($0["first"] as Int)...($0["last"] as Int)) }
    }

    /// The first of `sources` whose edition is in the store and has a clean excerpt for the range: the entry it shows,
    /// and whether its whole text is longer.
    static func editionLayer(
        _ db: Database, layer: String, sources: [LayerSource], range: VerseRange, quran: QuranIndex
    ) throws -> (
        CommentaryEntry, Bool
    )? {
        for source in sources {
            guard
                let edition = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM tafsir_edition WHERE id = ?"), arguments: [source.edition])
            else { continue }
            let blocks = try editionBlocks(db, edition: source.edition, range: range)
            for block in blocks {
                let verses = max(range.start, block.verses.lowerBound)...min(range.end, block.verses.upperBound)
                guard
                    let excerpt = TafsirExcerpt.make(
                        paragraphs: block.text.components(separatedBy: "\n\n"), style: ExcerptStyle(edition: source.edition), part: source.part,
                        language: edition["language"], verses: verses, blockVerses: block.verses, surah: range.surah, quran: quran)
                else { continue }
                let span =
                    block.verses.lowerBound == block.verses.upperBound
                    ? "\(block.verses.lowerBound)" : "\(block.verses.lowerBound)-\(block.verses.upperBound)"
                let work: String = edition["name_english"] ?? edition["name"]
                let reference = "\(source.edition) on \(range.surah):\(span)" + (source.part == .narrations ? ", a narration it reports" : "")
                let entry = CommentaryEntry(
                    verses: range, layer: layer, body: excerpt.text,
                    source: CommentarySource(
                        work: work, author: edition["author_english"] ?? edition["author"], reference: reference, provenance: "quotation",
                        edition: source.edition, language: edition["language"], machineTranslation: edition["machine_translation"],
                        licence: edition["licence"]))
                // More to read: other blocks, the rest of this one, or the part of it the bundle leaves out.
                return (entry, blocks.count > 1 || excerpt.text != block.text || !block.whole)
            }
        }
        return nil
    }
}

/// What a read needs to show the layers from the editions.
struct LayerContext: Sendable {
    let overrides: LayerSources?
    let quran: QuranIndex
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
