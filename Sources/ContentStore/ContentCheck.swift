import Foundation
import HijriCalendar
import Storage
import VerseCalendar

/// `dailyverse content check`: what a content team's change must keep true of a data folder, found all at once.
///
/// Errors fail the check; warnings say what falls short of the content rules (README, "Content") without failing it.
public struct ContentCheck: Sendable {
    public struct Problem: Hashable, Sendable, Encodable {
        public enum Severity: String, Sendable, Encodable { case error, warning }
        public let severity: Severity
        /// Where: a file, or a verse and layer.
        public let subject: String
        public let message: String
    }

    public let problems: [Problem]
    /// Selections checked: pool entries and occasions.
    public let selections: Int
    public let entries: Int

    public var errors: [Problem] { problems.filter { $0.severity == .error } }
    public var warnings: [Problem] { problems.filter { $0.severity == .warning } }

    /// A foundation entry explains and gives context: 50 to 150 words (README, "What each layer is for").
    public static let foundationWords = 50...150

    /// Checks the data folder at `directory`. A folder that cannot be read at all (bad JSON, an unknown verse) gives
    /// the one error that stopped the reading.
    ///
    /// `recut`: also cut every excerpt the bundled editions keep again with today's rules (`TafsirExcerpt`) and fail on
    /// any that differs: the rules changed and the bundle was not written again. Tens of seconds on a release build
    /// (`progress` gets excerpts done and in all); without it each kept excerpt is only looked for in its block.
    public init(directory: URL, recut: Bool = false, progress: ((Int, Int) -> Void)? = nil) {
        let content: BundledContent
        do { content = try BundledContent(directory: directory) } catch {
            self.init(problems: [Problem(severity: .error, subject: "data", message: error.description)], selections: 0, entries: 0)
            return
        }
        self.init(content, recut: recut, progress: progress)
    }

    init(problems: [Problem], selections: Int, entries: Int) {
        self.problems = problems
        self.selections = selections
        self.entries = entries
    }

    init(_ content: BundledContent, recut: Bool = false, progress: ((Int, Int) -> Void)? = nil) {
        var problems: [Problem] = []
        func error(_ subject: String, _ message: String) { problems.append(Problem(severity: .error, subject: subject, message: message)) }
        func warning(_ subject: String, _ message: String) { problems.append(Problem(severity: .warning, subject: subject, message: message)) }
        let calendar = content.calendar

        // Month pools: at least 30 selections (the decoder already refuses fewer, and a selection listed twice), and
        // no verse in two selections of one month, which would repeat it within the month.
        for month in calendar.months {
            var seen: [Int: String] = [:]  // surah * 1000 + ayah → the selection that holds it
            for range in month.verses {
                for ayah in range.start...range.end {
                    if let other = seen[range.surah * 1000 + ayah], other != range.key {
                        error("calendar/months.json", "month \(month.month): \(range.surah):\(ayah) is in both \(other) and \(range.key)")
                    }
                    seen[range.surah * 1000 + ayah] = range.key
                }
            }
        }

        // Occasions: a date every year has, both names, a short name that fits a title.
        for occasion in calendar.occasions {
            let subject = "occasion \(occasion.id)"
            if occasion.day == 30 {
                let month = HijriMonth(rawValue: occasion.month)?.englishName ?? "month \(occasion.month)"
                error(subject, "is on 30 \(month), which a 29-day month lacks: use \"last\" or another day")
            }
            if occasion.name.range(of: ": ") == nil { error(subject, "name '\(occasion.name)' should read \"D Month: the Short Name\"") }
            if (occasion.nameArabic ?? "").isEmpty { error(subject, "has no name_arabic") }
            if occasion.shortName.count > 40 { warning(subject, "short name '\(occasion.shortName)' is over 40 characters, long for a title") }
        }

        // What each day shows: every selection with its occasion, and the entry each layer takes (the store's rule).
        struct Shown: Hashable {
            let verses: VerseRange
            let occasion: String?
        }
        var shown: [Shown] = []
        var seenShown = Set<Shown>()
        for month in calendar.months {
            for range in month.verses where seenShown.insert(Shown(verses: range, occasion: nil)).inserted {
                shown.append(Shown(verses: range, occasion: nil))
            }
        }
        for occasion in calendar.occasions where seenShown.insert(Shown(verses: occasion.verses, occasion: occasion.id)).inserted {
            shown.append(Shown(verses: occasion.verses, occasion: occasion.id))
        }
        let occasionPassages = Dictionary(calendar.occasions.map { ($0.verses, $0.id) }, uniquingKeysWith: { first, _ in first })
        var reached = Set<CommentaryEntry>()
        for selection in shown {
            for layer in Layer.ids {
                guard let entry = CommentaryEntry.shown(for: selection.verses, layer: layer, occasion: selection.occasion, among: content.commentary)
                else {
                    continue
                }
                reached.insert(entry)
                // A leak: an ordinary day showing what was written for an occasion's passage.
                if selection.occasion == nil, entry.verses != selection.verses, let occasion = occasionPassages[entry.verses] {
                    error(
                        "\(selection.verses.key) \(layer)",
                        "on ordinary days shows the entry for \(entry.verses.key), the passage of occasion \(occasion): bind that entry with \"occasion\" or give \(selection.verses.key) its own"
                    )
                }
            }
        }
        for entry in content.commentary where !reached.contains(entry) {
            error(
                entry.key,
                "is never shown: no day's selection takes it (check its verses\(entry.occasion == nil ? "" : " and its occasion's passage"))")
        }

        // Sources: whose words each body is, and where a summary or a quotation comes from.
        for entry in content.commentary {
            let source = entry.source
            if source.isEditorialNamingASource {
                error(entry.key, "is editorial but names a source: a named work's position is an editorial-summary")
            }
            for field in source.missingFields { error(entry.key, "is \(source.provenance) without source.\(field)") }
            if entry.layer == "foundation" {
                let words = entry.body.split(whereSeparator: \.isWhitespace).count
                if !Self.foundationWords.contains(words) {
                    warning(
                        entry.key,
                        "foundation has \(words) words; it should explain and give context in \(Self.foundationWords.lowerBound)-\(Self.foundationWords.upperBound)"
                    )
                }
            }
        }
        let quran = QuranIndex(verses: content.arabic.ayat.map { (surah: $0.surah, ayah: $0.ayah, text: $0.text) })
        problems += Self.sourcedText(content, quran: quran)
        problems += Self.keptExcerpts(content, selections: shown.map(\.verses), quran: recut ? quran : nil, progress: progress)
        self.init(problems: problems, selections: shown.count, entries: content.commentary.count)
    }

    /// The excerpts a bundled edition keeps are its block's words (each paragraph, and each piece between omission
    /// marks, found in the block it names) and, with `quran` (`--recut`), the ones the rules cut today from its bundled
    /// text (else the rules changed and the bundle was not written again); it keeps one for every selection and part a
    /// layer takes of it (else a day cuts its own, tens of milliseconds a read).
    static func keptExcerpts(
        _ content: BundledContent, selections: [VerseRange], quran: QuranIndex?, progress: ((Int, Int) -> Void)?
    ) -> [Problem] {
        var problems: [Problem] = []
        let wanted = Layer.ids.flatMap { content.layerSources.sources(for: $0) }
        let total = content.tafsir.reduce(0) { $0 + $1.excerpts.count }
        var done = 0
        for bundled in content.tafsir {
            let info = bundled.edition.info
            let file = "\(BundledTafsir.folder)/\(info.id).jsonl"
            // Each block's verses, and the blocks (in order) about a verse.
            var covered: [Int: [Int]] = [:]
            for verse in bundled.edition.verses { covered[verse.block, default: []].append(verse.ayah) }
            var blockOf: [Int: Int] = [:]
            for verse in bundled.edition.verses { blockOf[verse.surah * 1000 + verse.ayah] = verse.block }
            func blocks(_ range: VerseRange) -> [EditionExcerpt.Block] {
                Set((range.start...range.end).compactMap { blockOf[range.surah * 1000 + $0] }).sorted {
                    bundled.edition.blocks[$0].position < bundled.edition.blocks[$1].position
                }.map { index in
                    let block = bundled.edition.blocks[index]
                    let ayahs = covered[index] ?? []
                    return EditionExcerpt.Block(text: block.text, whole: block.whole, verses: (ayahs.min() ?? 1)...(ayahs.max() ?? 1))
                }
            }
            var kept = Set<String>()
            var foldedBlocks: [Int: String] = [:]  // by sura × 10⁶ + first verse × 10³ + last verse
            for excerpt in bundled.excerpts {
                kept.insert(excerpt.key)
                done += 1
                if done % 64 == 0 || done == total { progress?(done, total) }
                if let text = excerpt.excerpt?.text, let verses = excerpt.excerpt?.blockVerses {
                    let key = excerpt.range.surah * 1_000_000 + verses.lowerBound * 1000 + verses.upperBound
                    let block =
                        foldedBlocks[key]
                        ?? folded(
                            blocks(VerseRange(surah: excerpt.range.surah, start: verses.lowerBound, end: verses.upperBound))
                                .first { $0.verses == verses }?.text ?? "")
                    foldedBlocks[key] = block
                    // Its paragraphs, and the sentences either side of an omission mark, each verbatim in the block.
                    let pieces = text.components(separatedBy: "\n\n").flatMap { $0.components(separatedBy: TafsirBundlePart.omission) }
                        .map(folded).filter { !$0.isEmpty }
                    if let missing = pieces.first(where: { !block.contains($0) }) {
                        problems.append(
                            Problem(
                                severity: .error, subject: file,
                                message: "keeps an excerpt for \(excerpt.key) whose words are not its block's: '\(missing.prefix(60))…'"))
                        continue
                    }
                }
                guard let quran else { continue }
                let fresh = EditionExcerpt.first(
                    in: blocks(excerpt.range), style: ExcerptStyle(edition: info.id), part: excerpt.part, language: info.language,
                    surah: excerpt.range.surah, ayahs: excerpt.range.start...excerpt.range.end, quran: quran)
                if fresh?.text != excerpt.excerpt?.text {
                    problems.append(
                        Problem(
                            severity: .error, subject: file,
                            message:
                                "keeps an excerpt for \(excerpt.key) that is not the one the excerpt rules cut from its text: write the bundle again (scripts/bundle-tafsir.sh)"
                        ))
                }
            }
            let parts = Set(wanted.filter { $0.edition == info.id }.map(\.part))
            let missing = Set(selections).flatMap { range in parts.map { BundledExcerpt(range: range, part: $0, excerpt: nil) } }
                .filter { !kept.contains($0.key) && !blocks($0.range).isEmpty }
            if let first = missing.min(by: { $0.key < $1.key }) {
                problems.append(
                    Problem(
                        severity: .warning, subject: file,
                        message:
                            "keeps no excerpt for \(missing.count) selections and parts (\(first.key) first): a day cuts its own; write the bundle again (scripts/bundle-tafsir.sh)"
                    ))
            }
        }
        return problems
    }

    /// The rules for the words of others: a summary names the passage it summarises; a quotation is whole sentences,
    /// carries no pipeline artefact, and (when its edition is bundled) is in that edition's text.
    static func sourcedText(_ content: BundledContent, quran: QuranIndex) -> [Problem] {
        var problems: [Problem] = []
        func error(_ subject: String, _ message: String) { problems.append(Problem(severity: .error, subject: subject, message: message)) }
        func warning(_ subject: String, _ message: String) { problems.append(Problem(severity: .warning, subject: subject, message: message)) }
        // Each bundled edition's blocks by sura, their white space folded, to find a quotation in.
        var editions: [String: [Int: [(text: String, verses: Set<Int>)]]] = [:]
        for bundled in content.tafsir {
            var bySurah: [Int: [(text: String, verses: Set<Int>)]] = [:]
            var verses: [Int: Set<Int>] = [:]
            for verse in bundled.edition.verses { verses[verse.block, default: []].insert(verse.ayah) }
            for (index, block) in bundled.edition.blocks.enumerated() {
                bySurah[block.surah, default: []].append((folded(block.text), verses[index] ?? []))
            }
            editions[bundled.edition.info.id] = bySurah
        }
        for entry in content.commentary {
            let reference = entry.source.reference ?? ""
            switch entry.source.provenance {
            case "editorial-summary":
                if !namesPassage(reference) {
                    error(entry.key, "is a summary that names no passage: give the verse and the heading or first words of what it summarises")
                }
            case "quotation":
                if let defect = TafsirExcerpt.defect(in: entry.body, language: entry.source.language, quran: quran) {
                    error(entry.key, "is a quotation that \(defect): cut it around the defect or leave it out")
                }
                if !TafsirExcerpt.endsSentence(entry.body) { error(entry.key, "is a quotation that does not end on a sentence") }
                if let first = entry.body.trimmingCharacters(in: .whitespaces).first, first.isLowercase {
                    error(entry.key, "is a quotation that does not start on a sentence ('\(entry.body.prefix(30))…')")
                }
                let edition = String(reference.prefix { !$0.isWhitespace && $0 != "," })
                guard let blocks = editions[edition] else { continue }
                let body = folded(entry.body)
                let sura = blocks[entry.verses.surah] ?? []
                if sura.contains(where: { $0.text.contains(body) }) { continue }
                if sura.contains(where: { !$0.verses.isDisjoint(with: entry.verses.start...entry.verses.end) }) {
                    error(entry.key, "is a quotation not found in \(edition)'s text for \(entry.verses.key): quote the edition's words exactly")
                } else {
                    warning(entry.key, "quotes \(edition), whose bundled text has no block for \(entry.verses.key): it cannot be checked")
                }
            default: continue
            }
        }
        return problems
    }

    /// A reference names a passage when it quotes the passage's heading or first words, or gives its place in the
    /// book (a volume, book, chapter, hadith, sermon, saying, letter or supplication): "commentary on 2:255" alone does
    /// not.
    static func namesPassage(_ reference: String) -> Bool {
        let quoted = reference.range(of: #"["“«][^"”»]{3,}["”»]|'[^']{8,}'"#, options: .regularExpression) != nil
        let place =
            reference.range(
                of: #"(?i)\b(vol\.|volume|book of|kitab|chapter|bab|hadith|hadiths|sermon|saying|letter|supplication|section|narration)\b"#,
                options: .regularExpression) != nil
        return quoted || place
    }

    /// White space folded to single spaces, Markdown residue dropped: how a quotation is looked for in a block.
    static func folded(_ text: String) -> String {
        text.replacingOccurrences(of: "**", with: "").split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}
