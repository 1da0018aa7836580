import Diagnostics
import Foundation
import GRDB
import Storage
import VerseCalendar

/// An edition as the repository bundles it, `data/tafsir/<edition>.jsonl`: the verbatim text of its blocks (or the
/// verbatim part of a long block) for the verses that can be a day's verse, written by `dailyverse content
/// bundle-tafsir` from an imported edition.
///
/// The first line is the edition, its terms and where the text was taken from:
///
///     {"edition": {"id": "en.noor", "name": …, "name_en": …, "author": …, "author_en": …, "language": "en",
///      "source": "app-furqan", "death": null}, "licence": "CC BY-ND 4.0 …", "machine_translation": null,
///      "taken_from": "narmafraz/ThaqalaynTafsirData at 1acb6d2…"}
///
/// then a block a line, in the order of the dataset's files:
///
///     {"surah": 97, "position": 0, "ayahs": [1, 2], "whole": true, "text": "Paragraph.\n\nParagraph."}
///
/// A part (`"whole": false`) keeps the block's paragraphs that the excerpts need, in order, each verbatim; a paragraph
/// holding only `…` marks where paragraphs were left out.
///
/// Then the excerpt a day shows for each of those verses, as it was cut from the whole edition when the file was
/// written (a read then takes it as it is instead of cutting it again), for each part of the edition a layer takes;
/// `"text": null` where the edition has nothing clean for the passage:
///
///     {"excerpt": {"surah": 97, "ayahs": [1, 5], "part": "commentary", "block": [1, 5], "more": true, "text": "…"}}
public struct BundledTafsir: Sendable {
    public let edition: TafsirEdition
    public let terms: TafsirEditionTerms
    public let takenFrom: String
    public let excerpts: [BundledExcerpt]

    struct Header: Codable {
        let edition: TafsirEditionInfo
        let licence: String
        let machineTranslation: Bool?
        let takenFrom: String
        enum CodingKeys: String, CodingKey { case edition, licence, machineTranslation = "machine_translation", takenFrom = "taken_from" }
    }

    struct Line: Codable {
        let surah: Int
        let position: Int
        let ayahs: [Int]
        let whole: Bool
        let text: String
    }

    /// An excerpt line; the writer puts `excerpt` first (its only key), which is how a reader tells it from a block.
    struct ExcerptLine: Codable {
        struct Body: Codable {
            let surah: Int
            let ayahs: [Int]
            let part: String
            let block: [Int]?
            let more: Bool?
            let text: String?
        }
        let excerpt: Body
    }
    static let excerptPrefix = Array(#"{"excerpt""#.utf8)

    /// The folder of data/ that holds them.
    public static let folder = "tafsir"
    /// A line holds a block or a part of one: the longest block of the editions bundled is under 1 MB.
    public static let maximumLineBytes = 4 << 20

    /// Reads and checks a bundled edition against the Quran's suras (`ayahCounts`); the first problem names the file and
    /// the line.
    public init(contentsOf url: URL, ayahCounts: [Int]) throws(StoreError) {
        let name = "\(Self.folder)/\(url.lastPathComponent)"
        var header: Header?
        var blocks: [TafsirEdition.Block] = []
        var verses: [TafsirEdition.Verse] = []
        var seen = Set<Int>()
        var excerpts: [BundledExcerpt] = []
        var excerptKeys = Set<String>()
        try StoreError.forEachLine(of: url, name: name, maximumLineBytes: Self.maximumLineBytes) { number, bytes in
            func fail(_ reason: String) -> StoreError { .malformedLine(file: name, line: number, reason: reason) }
            guard !bytes.isEmpty else { return }
            let data = Data(bytes)
            if header == nil {
                do { header = try JSONDecoder().decode(Header.self, from: data) } catch {
                    throw fail("not the edition's header: \(CommentaryFile.describe(error))")
                }
                guard TafsirEditionInfo.isValidID(header!.edition.id), url.lastPathComponent == "\(header!.edition.id).jsonl" else {
                    throw fail("the edition '\(header!.edition.id.prefix(60))' is not the file's name")
                }
                return
            }
            if bytes.starts(with: Self.excerptPrefix) {
                let body: ExcerptLine.Body
                do { body = try JSONDecoder().decode(ExcerptLine.self, from: data).excerpt } catch {
                    throw fail("not an excerpt: \(CommentaryFile.describe(error))")
                }
                let excerpt = try BundledExcerpt(checking: body, ayahCounts: ayahCounts, coveredBy: seen, fail: fail)
                guard excerptKeys.insert(excerpt.key).inserted else { throw fail("a second excerpt for \(excerpt.key)") }
                excerpts.append(excerpt)
                return
            }
            guard excerpts.isEmpty else { throw fail("a block after the excerpts: the blocks come first") }
            let line: Line
            do { line = try JSONDecoder().decode(Line.self, from: data) } catch { throw fail("not a block: \(CommentaryFile.describe(error))") }
            guard (1...114).contains(line.surah) else { throw fail("sura \(line.surah) does not exist") }
            guard !line.ayahs.isEmpty, line.ayahs.allSatisfy({ (1...ayahCounts[line.surah - 1]).contains($0) }) else {
                throw fail("ayat \(line.ayahs.prefix(5)) are not all verses of sura \(line.surah)")
            }
            guard !line.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw fail("an empty block") }
            for ayah in line.ayahs {
                guard seen.insert(line.surah * 1000 + ayah).inserted else { throw fail("\(line.surah):\(ayah) is in two blocks") }
                verses.append(.init(surah: line.surah, ayah: ayah, block: blocks.count))
            }
            blocks.append(.init(surah: line.surah, position: line.position, text: line.text, whole: line.whole))
        }
        guard let header else { throw .malformedData(file: name, reason: "empty: expected the edition's header and its blocks") }
        edition = TafsirEdition(info: header.edition, blocks: blocks, verses: verses.sorted { ($0.surah, $0.ayah) < ($1.surah, $1.ayah) })
        terms = TafsirEditionTerms(licence: header.licence, machineTranslation: header.machineTranslation)
        takenFrom = header.takenFrom
        self.excerpts = excerpts
    }

    /// Every bundled edition in a data folder (none when it has no `tafsir/`).
    static func all(in directory: URL, ayahCounts: [Int]) throws(StoreError) -> [BundledTafsir] {
        let folder = directory.appendingPathComponent(folder)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
        var editions: [BundledTafsir] = []
        for name in names { editions.append(try BundledTafsir(contentsOf: folder.appendingPathComponent(name), ayahCounts: ayahCounts)) }
        return editions
    }

    /// The file's text for `edition`: its header, its blocks (the parts kept), and the excerpts cut from the whole edition.
    public static func write(
        _ edition: TafsirEdition, terms: TafsirEditionTerms, takenFrom: String, excerpts: [BundledExcerpt]
    ) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var out = Data()
        out += try encoder.encode(
            Header(edition: edition.info, licence: terms.licence, machineTranslation: terms.machineTranslation, takenFrom: takenFrom))
        out += Data("\n".utf8)
        var ayahs: [Int: [Int]] = [:]
        for verse in edition.verses { ayahs[verse.block, default: []].append(verse.ayah) }
        for (index, block) in edition.blocks.enumerated() {
            guard let list = ayahs[index] else { continue }
            out += try encoder.encode(Line(surah: block.surah, position: block.position, ayahs: list.sorted(), whole: block.whole, text: block.text))
            out += Data("\n".utf8)
        }
        for excerpt in excerpts.sorted(by: {
            ($0.range.surah, $0.range.start, $0.range.end, $0.part.rawValue) < ($1.range.surah, $1.range.start, $1.range.end, $1.part.rawValue)
        }) {
            out += try encoder.encode(
                ExcerptLine(
                    excerpt: .init(
                        surah: excerpt.range.surah, ayahs: [excerpt.range.start, excerpt.range.end], part: excerpt.part.rawValue,
                        block: excerpt.excerpt.map { [$0.blockVerses.lowerBound, $0.blockVerses.upperBound] }, more: excerpt.excerpt?.more,
                        text: excerpt.excerpt?.text)))
            out += Data("\n".utf8)
        }
        return out
    }
}

/// The excerpt a day shows of a bundled edition's part for a passage, as cut when the bundle was written; nil where
/// the edition has nothing clean for it.
public struct BundledExcerpt: Sendable, Hashable {
    public let range: VerseRange
    public let part: ExcerptPart
    public let excerpt: EditionExcerpt?

    public init(range: VerseRange, part: ExcerptPart, excerpt: EditionExcerpt?) {
        self.range = range
        self.part = part
        self.excerpt = excerpt
    }

    var key: String { "\(range.key) (\(part.rawValue))" }

    /// An excerpt line checked: its verses exist, its part is known, and the block it names is one of the file's
    /// blocks before it (`covered`: sura × 1000 + aya of every verse they cover) and touches the passage.
    init(
        checking body: BundledTafsir.ExcerptLine.Body, ayahCounts: [Int], coveredBy covered: Set<Int>, fail: (String) -> StoreError
    ) throws(StoreError) {
        guard (1...114).contains(body.surah) else { throw fail("sura \(body.surah) does not exist") }
        let count = ayahCounts[body.surah - 1]
        guard body.ayahs.count == 2, 1 <= body.ayahs[0], body.ayahs[0] <= body.ayahs[1], body.ayahs[1] <= count else {
            throw fail("ayahs \(body.ayahs.prefix(3)) are not a first and last verse of sura \(body.surah)")
        }
        guard let part = ExcerptPart(rawValue: body.part) else { throw fail("unknown part '\(body.part.prefix(40))'") }
        range = VerseRange(surah: body.surah, start: body.ayahs[0], end: body.ayahs[1])
        self.part = part
        guard let text = body.text else {
            excerpt = nil
            return
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw fail("an empty excerpt") }
        guard let block = body.block, block.count == 2, 1 <= block[0], block[0] <= block[1], block[1] <= count,
            block[0] <= range.end, range.start <= block[1], covered.contains(body.surah * 1000 + block[0])
        else {
            throw fail("the excerpt of \(range.key) names no block of the file before it that covers its verses")
        }
        excerpt = EditionExcerpt(text: text, blockVerses: block[0]...block[1], more: body.more ?? true)
    }
}

/// The verbatim part of a long block that the repository bundles: the paragraphs the excerpts for the days' verses
/// start in and those after them (about `partWords` words from each start), with the heading above each run; `…`
/// where paragraphs are left out. A block of at most `wholeWords` words is bundled whole.
public enum TafsirBundlePart {
    public static let wholeWords = 1_500
    public static let partWords = 700

    /// The paragraphs to keep, from the paragraphs the excerpts start in.
    public static func kept(paragraphs: [String], starts: [Int]) -> [Int] {
        var keep = Set<Int>()
        for start in starts where paragraphs.indices.contains(start) {
            if let heading = (0..<start).last(where: { BlockReading.isHeading(paragraphs[$0]) }) { keep.insert(heading) }
            var words = 0
            var index = start
            while index < paragraphs.count && words < partWords {
                keep.insert(index)
                words += TafsirExcerpt.wordCount(paragraphs[index])
                index += 1
            }
        }
        return keep.sorted()
    }

    /// The part's text: the kept paragraphs, `…` between runs that are not next to each other.
    public static func text(paragraphs: [String], kept: [Int]) -> String {
        var out: [String] = []
        var previous: Int?
        for index in kept {
            if let previous, index != previous + 1 { out.append(omission) }
            if previous == nil && index != 0 { out.append(omission) }
            out.append(paragraphs[index])
            previous = index
        }
        if let previous, previous != paragraphs.count - 1 { out.append(omission) }
        return out.joined(separator: "\n\n")
    }

    /// The paragraph that marks where paragraphs of the edition's block were left out.
    public static let omission = "…"
}

extension AppDatabase {
    /// An imported edition cut down to what the days' verses need (`selections`): each block commenting on one of
    /// them, whole when short, else the verbatim part its excerpts need; checked so that every excerpt taken from the
    /// part is the one taken from the whole block (else the block is kept whole).
    ///
    /// The blocks our quotations of the edition come from (entries whose reference starts with its id, "en.safi on
    /// 5:67, …") are bundled whole too, so that `content check` can find each quotation in its block.
    ///
    /// With them, the excerpt each part a layer takes shows for each selection, cut from the whole edition with the
    /// whole Quran's index (a read checks only its own sura's quotations).
    public func bundle(
        edition id: String, sources: [LayerSource], selections: [VerseRange]
    ) throws -> (TafsirEdition, TafsirEditionTerms, [BundledExcerpt]) {
        let quran = try quranIndex()
        return try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM tafsir_edition WHERE id = ? AND origin = 'import'", arguments: [id]) else {
                throw StoreError.malformedData(
                    file: "tafsir_edition", reason: "no imported edition '\(id)': import it first (dailyverse import tafsir)")
            }
            let info = TafsirEditionInfo(
                id: id, name: row["name"], nameEnglish: row["name_english"], author: row["author"], authorEnglish: row["author_english"],
                language: row["language"], source: row["source"], death: row["author_death"])
            let terms = TafsirEditionTerms(licence: row["licence"], machineTranslation: row["machine_translation"])
            let style = ExcerptStyle(edition: id)
            let parts = Set(sources.filter { $0.edition == id }.map(\.part)).sorted { $0.rawValue < $1.rawValue }
            // Each block once, with the selections that touch it.
            var blockSelections: [Int64: [VerseRange]] = [:]
            var blockRows: [Int64: Row] = [:]
            var quoted = Set<Int64>()
            for range in selections {
                for block in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT b.id, b.surah, b.position, b.text, (SELECT min(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS first,
                            (SELECT max(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS last
                        FROM tafsir_block b WHERE b.id IN (
                            SELECT block_id FROM tafsir_verse WHERE edition_id = ? AND surah = ? AND ayah BETWEEN ? AND ?)
                        """, arguments: [id, range.surah, range.start, range.end])
                {
                    blockSelections[block["id"], default: []].append(range)
                    blockRows[block["id"]] = block
                }
            }
            let quotations = try Row.fetchAll(
                db, sql: "SELECT surah, body FROM commentary WHERE provenance = 'quotation' AND reference LIKE ? || ' %'", arguments: [id])
            for quotation in quotations {
                let wanted = ContentCheck.folded(quotation["body"])
                for block in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT b.id, b.surah, b.position, b.text, (SELECT min(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS first,
                            (SELECT max(ayah) FROM tafsir_verse w WHERE w.block_id = b.id) AS last
                        FROM tafsir_block b WHERE b.edition_id = ? AND b.surah = ?
                        """, arguments: [id, quotation["surah"] as Int]) where ContentCheck.folded(block["text"]).contains(wanted)
                {
                    blockRows[block["id"]] = block
                    quoted.insert(block["id"])
                }
            }
            var blocks: [TafsirEdition.Block] = []
            var verses: [TafsirEdition.Verse] = []
            for blockID in blockRows.keys.sorted() {
                let row = blockRows[blockID]!
                let text: String = row["text"]
                let surah: Int = row["surah"]
                let covered = (row["first"] as Int)...(row["last"] as Int)
                let paragraphs = text.components(separatedBy: "\n\n")
                func excerpts(_ paragraphs: [String]) -> [TafsirExcerpt?] {
                    (blockSelections[blockID] ?? []).flatMap { range in
                        parts.map { part in
                            TafsirExcerpt.make(
                                paragraphs: paragraphs, style: style, part: part, language: info.language,
                                verses: max(range.start, covered.lowerBound)...min(range.end, covered.upperBound), blockVerses: covered,
                                surah: surah, quran: quran)
                        }
                    }
                }
                var kept = text
                var whole = true
                if TafsirExcerpt.wordCount(text) > TafsirBundlePart.wholeWords && !quoted.contains(blockID) {
                    let fromWhole = excerpts(paragraphs)
                    let starts = fromWhole.compactMap { $0?.startParagraph }
                    // A long block no day can show an excerpt of is not bundled.
                    if starts.isEmpty { continue }
                    let part = TafsirBundlePart.text(paragraphs: paragraphs, kept: TafsirBundlePart.kept(paragraphs: paragraphs, starts: starts))
                    if excerpts(part.components(separatedBy: "\n\n")).map({ $0?.text }) == fromWhole.map({ $0?.text }) {
                        (kept, whole) = (part, false)
                    }
                }
                for ayah in try Int.fetchAll(db, sql: "SELECT ayah FROM tafsir_verse WHERE block_id = ? ORDER BY ayah", arguments: [blockID]) {
                    verses.append(.init(surah: surah, ayah: ayah, block: blocks.count))
                }
                blocks.append(.init(surah: surah, position: row["position"], text: kept, whole: whole))
            }
            var cut: [BundledExcerpt] = []
            for range in Set(selections).sorted(by: { ($0.surah, $0.start, $0.end) < ($1.surah, $1.start, $1.end) }) {
                let whole = try Self.editionBlocks(db, edition: id, range: range)
                for part in parts {
                    let excerpt = EditionExcerpt.first(
                        in: whole, style: style, part: part, language: info.language, surah: range.surah, ayahs: range.start...range.end,
                        quran: quran)
                    cut.append(BundledExcerpt(range: range, part: part, excerpt: excerpt))
                }
            }
            return (TafsirEdition(info: info, blocks: blocks, verses: verses), terms, cut)
        }
    }
}
