import Foundation
import VerseCalendar

/// A sura's names and its place of revelation.
public struct Surah: Hashable, Sendable, Codable {
    public let number: Int
    public let transliteration: String
    public let arabic: String
    public let english: String
    public let revelation: String
    public let ayahCount: Int
}

/// One of the five layers of commentary, in the seed's order.
public struct Layer: Hashable, Sendable, Codable {
    public static let ids = ["foundation", "classical_shia", "contemporary", "ahlul_bayt", "comparative"]
    public let id: String
    public let position: Int
    public let icon: String
    public let title: String
    public let description: String
}

/// Where a commentary entry comes from. `provenance` says whose words the body is:
/// `editorial` (this project's own explanatory text), `editorial-summary` (this project's summary of the named work) or
/// `quotation` (the named source's own words, with its standard reference).
public struct CommentarySource: Hashable, Sendable, Codable {
    public static let provenances = ["editorial", "editorial-summary", "quotation"]
    /// The licence of this project's own text (editorial entries and summaries).
    public static let ownLicence = "DailyVerse's own text"
    public let work: String?
    public let author: String?
    public let reference: String?
    public let provenance: String
    /// The commentary edition quoted (`en.mizan`), for a quotation taken from one.
    public let edition: String?
    /// The language of the body (`en`, `ar`).
    public let language: String
    /// Whether the body is a machine translation (nil: not known).
    public let machineTranslation: Bool?
    /// The terms the body is shown under.
    public let licence: String

    public init(
        work: String?, author: String?, reference: String?, provenance: String, edition: String? = nil, language: String = "en",
        machineTranslation: Bool? = false, licence: String = CommentarySource.ownLicence
    ) {
        self.work = work
        self.author = author
        self.reference = reference
        self.provenance = provenance
        self.edition = edition
        self.language = language
        self.machineTranslation = machineTranslation
        self.licence = licence
    }

    /// The source fields a summary or a quotation leaves empty: each names its work, author and reference (README,
    /// "Commentary format"); none for an editorial entry.
    public var missingFields: [String] {
        guard provenance != "editorial" else { return [] }
        return [("work", work), ("author", author), ("reference", reference)].filter { Self.isBlank($0.1) }.map { $0.0 }
    }

    /// Whether an editorial entry (this project's own text) names a source, which it may not: a named work's position
    /// is an editorial-summary.
    public var isEditorialNamingASource: Bool {
        provenance == "editorial" && [work, author, reference].contains { !Self.isBlank($0) }
    }

    static func isBlank(_ value: String?) -> Bool { (value ?? "").trimmingCharacters(in: .whitespaces).isEmpty }
}

/// One commentary entry: a layer's text for a verse or passage, for any day or for one occasion.
public struct CommentaryEntry: Hashable, Sendable {
    public let verses: VerseRange
    public let layer: String
    /// The occasion the entry was written for: it is shown on that occasion only. Nil: on any day the verse is shown.
    public let occasion: String?
    public let body: String
    public let source: CommentarySource

    public init(verses: VerseRange, layer: String, occasion: String? = nil, body: String, source: CommentarySource) {
        self.verses = verses
        self.layer = layer
        self.occasion = occasion
        self.body = body
        self.source = source
    }

    /// What makes an entry one of a kind: its verses, its layer and its occasion.
    public var key: String { "\(verses.key) \(layer)" + (occasion.map { " @\($0)" } ?? "") }
}

extension CommentaryEntry {
    /// The entry a layer shows for `range`: one written for no occasion or for `occasion`, whose verses contain the
    /// range; among those, the occasion's own first, then the narrowest, then the earliest start. The one statement of
    /// the rule: the store shows what it picks, and `content check` checks what it picks.
    static func shown(for range: VerseRange, layer: String, occasion: String?, among entries: some Sequence<CommentaryEntry>) -> CommentaryEntry? {
        entries.filter {
            $0.layer == layer && $0.verses.surah == range.surah && $0.verses.start <= range.start && $0.verses.end >= range.end
                && ($0.occasion == nil || $0.occasion == occasion)
        }.min {
            ($0.occasion == nil ? 1 : 0, $0.verses.end - $0.verses.start, $0.verses.start)
                < ($1.occasion == nil ? 1 : 0, $1.verses.end - $1.verses.start, $1.verses.start)
        }
    }
}

/// A layer as shown with a verse: its text, or nil when the store has no entry for it. `more`: the body is an excerpt,
/// and the whole text (`AppDatabase.commentary`) is longer.
public struct LayerText: Hashable, Sendable {
    public let layer: Layer
    public let entry: CommentaryEntry?
    public let more: Bool
    /// The whole text behind the entry when it is not an edition's blocks (a hadith's English and Arabic).
    let whole: String?

    public init(layer: Layer, entry: CommentaryEntry?, more: Bool = false) {
        self.init(layer: layer, entry: entry, more: more, whole: nil)
    }

    init(layer: Layer, entry: CommentaryEntry?, more: Bool, whole: String?) {
        self.layer = layer
        self.entry = entry
        self.more = more
        self.whole = whole
    }
}

/// The text of a verse or passage in one edition, ayah by ayah.
public struct VerseText: Hashable, Sendable {
    public let edition: String
    public let ayat: [(number: Int, text: String)]

    public static func == (lhs: VerseText, rhs: VerseText) -> Bool {
        lhs.edition == rhs.edition && lhs.ayat.map(\.number) == rhs.ayat.map(\.number) && lhs.ayat.map(\.text) == rhs.ayat.map(\.text)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(edition)
        for ayah in ayat {
            hasher.combine(ayah.number)
            hasher.combine(ayah.text)
        }
    }
}

/// A text edition: the Arabic Quran or a translation.
public struct Edition: Hashable, Sendable, Codable {
    public let id: String
    public let kind: String  // "quran" | "translation"
    public let language: String
    public let name: String
    public let credit: String

    public init(id: String, kind: String, language: String, name: String, credit: String) {
        self.id = id
        self.kind = kind
        self.language = language
        self.name = name
        self.credit = credit
    }
}

/// One of the four display themes the onboarding offers.
public struct DisplayTheme: Hashable, Sendable, Codable {
    public let id: String
    public let name: String
    public let background: String
    public let surface: String
    public let text: String
    public let accent: String
}
