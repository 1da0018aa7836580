import ContentStore
import HijriCalendar
import VerseCalendar

/// A verse or passage as the CLI and the API print it (`verse` in `today --json`).
public struct VerseJSON: Encodable, Sendable {
    public let key: String
    public let surah: Int
    public let ayah: Int
    public let ayahEnd: Int
    public let surahName: String
    public let arabic: String
    /// The basmala that opens the sura, shown as a heading above aya 1 (every sura but 1 and 9); null otherwise.
    public let basmala: String?
    public let translation: TranslationJSON

    public struct TranslationJSON: Encodable, Sendable {
        public let id: String
        public let text: String
    }

    enum CodingKeys: String, CodingKey {
        case key, surah, ayah, ayahEnd = "ayah_end", surahName = "surah_name", arabic, basmala, translation
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(surah, forKey: .surah)
        try container.encode(ayah, forKey: .ayah)
        try container.encode(ayahEnd, forKey: .ayahEnd)
        try container.encode(surahName, forKey: .surahName)
        try container.encode(arabic, forKey: .arabic)
        try container.encode(basmala, forKey: .basmala)
        try container.encode(translation, forKey: .translation)
    }

    init(_ content: VerseContent) {
        key = content.range.key
        surah = content.range.surah
        ayah = content.range.start
        ayahEnd = content.range.end
        surahName = content.surah.transliteration
        arabic = VerseFormatting.arabic(content.arabic, surah: content.range.surah, passage: content.range.isPassage)
        basmala = content.arabic.ayat.first.flatMap { VerseFormatting.basmala($0.text, surah: content.range.surah, ayah: $0.number) }
        translation = TranslationJSON(
            id: content.translation.edition,
            text: VerseFormatting.translation(content.translation, passage: content.range.isPassage))
    }
}

/// One of the five layers; `body` and `source` are null where the store has no entry. `more`: the body is an excerpt
/// of a longer text (`GET /v1/verses/{key}/commentary/{layer}`); `direction`: how the body runs (`rtl` for Arabic).
public struct LayerJSON: Encodable, Sendable {
    public let id: String
    public let title: String
    public let body: String?
    public let source: SourceJSON?
    public let more: Bool
    public let direction: String

    /// Whose words the body is (`provenance`: editorial, editorial-summary, quotation), where it comes from, in which
    /// language, whether it is a machine translation (null: not known), and under which terms.
    public struct SourceJSON: Encodable, Sendable {
        public let work: String?
        public let author: String?
        public let reference: String?
        public let provenance: String
        public let edition: String?
        public let language: String
        public let machineTranslation: Bool?
        public let licence: String

        init(_ source: CommentarySource) {
            (work, author, reference, provenance) = (source.work, source.author, source.reference, source.provenance)
            (edition, language, machineTranslation, licence) = (source.edition, source.language, source.machineTranslation, source.licence)
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(work, forKey: .work)
            try container.encode(author, forKey: .author)
            try container.encode(reference, forKey: .reference)
            try container.encode(provenance, forKey: .provenance)
            try container.encode(edition, forKey: .edition)
            try container.encode(language, forKey: .language)
            try container.encode(machineTranslation, forKey: .machineTranslation)
            try container.encode(licence, forKey: .licence)
        }
        enum CodingKeys: String, CodingKey {
            case work, author, reference, provenance, edition, language, licence, machineTranslation = "machine_translation"
        }
    }

    public init(_ text: LayerText) {
        id = text.layer.id
        title = text.layer.title
        body = text.entry?.body
        source = text.entry.map { SourceJSON($0.source) }
        more = text.more
        direction = LayerJSON.direction(text.entry?.source.language)
    }

    /// `rtl` for the languages written right to left.
    static func direction(_ language: String?) -> String { ["ar", "fa", "ur", "he"].contains(language ?? "") ? "rtl" : "ltr" }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(body, forKey: .body)
        try container.encode(source, forKey: .source)
        try container.encode(more, forKey: .more)
        try container.encode(direction, forKey: .direction)
    }
    enum CodingKeys: String, CodingKey { case id, title, body, source, more, direction }
}

/// `GET /v1/verses/{key}/commentary/{layer}` and `verse KEY --layer L --full`: a layer's whole text with its source.
/// `whole` is false when the text is the part of the edition's blocks the repository bundles (import the edition for
/// the rest).
public struct CommentaryJSON: Encodable, Sendable {
    public let key: String
    public let layer: String
    public let title: String
    public let text: String?
    public let source: LayerJSON.SourceJSON?
    public let whole: Bool
    public let direction: String

    public init(_ commentary: LayerCommentary) {
        key = commentary.range.key
        layer = commentary.layer.id
        title = commentary.layer.title
        text = commentary.text
        source = commentary.entry.map { LayerJSON.SourceJSON($0.source) }
        whole = commentary.whole
        direction = LayerJSON.direction(commentary.entry?.source.language)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(layer, forKey: .layer)
        try container.encode(title, forKey: .title)
        try container.encode(text, forKey: .text)
        try container.encode(source, forKey: .source)
        try container.encode(whole, forKey: .whole)
        try container.encode(direction, forKey: .direction)
    }
    enum CodingKeys: String, CodingKey { case key, layer, title, text, source, whole, direction }
}

/// `today --json`.
public struct TodayReport: Encodable, Sendable {
    public let date: String
    public let timezone: String
    public let hijri: HijriJSON
    /// The occasion whose verse the day shows, if any.
    public let occasion: OccasionJSON?
    /// Other occasions the day meets, named beside it.
    public let otherOccasions: [OccasionJSON]
    public let theme: Theme
    public let verse: VerseJSON
    public let layers: [LayerJSON]
    public let attribution: String

    /// Not printed in JSON: what the text output needs beyond it.
    public let content: VerseContent
    public let selection: DailySelection
    public let hijriDate: HijriDate

    public struct HijriJSON: Encodable, Sendable {
        public let year: Int
        public let month: Int
        public let day: Int
        public let monthName: String
        public let calendar: String
        public let adjustment: Int
        enum CodingKeys: String, CodingKey {
            case year, month, day, monthName = "month_name", calendar, adjustment
        }
    }

    public struct OccasionJSON: Encodable, Sendable {
        public let id: String
        public let name: String
        public let nameArabic: String?
        /// "day", or "night": kept from sunset of the civil day before its Hijri day.
        public let observed: String
        /// A night that begins this evening ("Tonight: the Third Night of Qadr").
        public let tonight: Bool
        public let rank: Int
        /// What the day is, in a few sentences.
        public let description: String?
        /// The occasion's own verse or passage; an occasion that does not lead the day is read with its own layers at
        /// `GET /v1/occasions/{id}` (`dailyverse verse --occasion ID`).
        public let verses: String

        init(_ observed: ObservedOccasion) {
            id = observed.occasion.id
            name = observed.occasion.name
            nameArabic = observed.occasion.nameArabic
            self.observed = observed.occasion.observed.rawValue
            tonight = observed.tonight
            rank = observed.occasion.rank
            description = observed.occasion.description
            verses = observed.occasion.verses.key
        }

        enum CodingKeys: String, CodingKey { case id, name, nameArabic = "name_arabic", observed, tonight, rank, description, verses }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(nameArabic, forKey: .nameArabic)
            try container.encode(observed, forKey: .observed)
            try container.encode(tonight, forKey: .tonight)
            try container.encode(rank, forKey: .rank)
            try container.encode(description, forKey: .description)
            try container.encode(verses, forKey: .verses)
        }
    }

    enum CodingKeys: String, CodingKey {
        case date, timezone, hijri, occasion, otherOccasions = "other_occasions", theme, verse, layers, attribution
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(date, forKey: .date)
        try container.encode(timezone, forKey: .timezone)
        try container.encode(hijri, forKey: .hijri)
        try container.encode(occasion, forKey: .occasion)
        try container.encode(otherOccasions, forKey: .otherOccasions)
        try container.encode(theme, forKey: .theme)
        try container.encode(verse, forKey: .verse)
        try container.encode(layers, forKey: .layers)
        try container.encode(attribution, forKey: .attribution)
    }
}

/// `GET /v1/occasions/{id}`, `verse --occasion ID --json`: an occasion, its verse or passage, and its layers, the
/// entries written for it first. An occasion that shares its day with one that leads is read here.
public struct OccasionReport: Encodable, Sendable {
    public let occasion: OccasionJSON
    public let verse: VerseJSON
    public let layers: [LayerJSON]
    public let attribution: String
    public let content: VerseContent

    public struct OccasionJSON: Encodable, Sendable {
        public let id: String
        public let name: String
        public let nameArabic: String?
        public let description: String?
        public let month: Int
        /// Its day of the month; 0 for the month's last day.
        public let day: Int
        public let observed: String
        public let rank: Int
        public let verses: String
        public let theme: Theme

        enum CodingKeys: String, CodingKey {
            case id, name, nameArabic = "name_arabic", description, month, day, observed, rank, verses, theme
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(nameArabic, forKey: .nameArabic)
            try container.encode(description, forKey: .description)
            try container.encode(month, forKey: .month)
            try container.encode(day, forKey: .day)
            try container.encode(observed, forKey: .observed)
            try container.encode(rank, forKey: .rank)
            try container.encode(verses, forKey: .verses)
            try container.encode(theme, forKey: .theme)
        }
    }

    enum CodingKeys: String, CodingKey { case occasion, verse, layers, attribution }

    public init(_ occasion: Occasion, content: VerseContent) {
        self.occasion = OccasionJSON(
            id: occasion.id, name: occasion.name, nameArabic: occasion.nameArabic, description: occasion.description,
            month: occasion.month, day: occasion.day, observed: occasion.observed.rawValue, rank: occasion.rank, verses: occasion.verses.key,
            theme: occasion.theme)
        let report = VerseReport(content)
        self.content = content
        verse = report.verse
        layers = report.layers
        attribution = report.attribution
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(occasion, forKey: .occasion)
        try container.encode(verse, forKey: .verse)
        try container.encode(layers, forKey: .layers)
        try container.encode(attribution, forKey: .attribution)
    }
}

/// `verse --json`.
public struct VerseReport: Encodable, Sendable {
    public let verse: VerseJSON
    public let layers: [LayerJSON]
    public let attribution: String
    public let content: VerseContent

    enum CodingKeys: String, CodingKey { case verse, layers, attribution }

    public init(_ content: VerseContent) {
        self.content = content
        verse = VerseJSON(content)
        layers = content.layers.map(LayerJSON.init)
        attribution = content.credits.joined(separator: ". ")
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(verse, forKey: .verse)
        try container.encode(layers, forKey: .layers)
        try container.encode(attribution, forKey: .attribution)
    }
}

/// How verse text is put together for display. The stored text is never changed.
public enum VerseFormatting {
    /// Tanzil writes the basmala at the start of aya 1 of every sura but 1 and 9; it is a heading, not part
    /// of that aya (Pickthall does not translate it there), so it is left out when an aya is shown.
    public static func withoutBasmala(_ text: String, surah: Int, ayah: Int) -> String {
        split(text, surah: surah, ayah: ayah)?.rest ?? text
    }

    /// The basmala at the start of aya 1 (every sura but 1 and 9), to show as the passage's heading; nil elsewhere.
    public static func basmala(_ text: String, surah: Int, ayah: Int) -> String? {
        split(text, surah: surah, ayah: ayah)?.basmala
    }

    /// Its four words, and the aya after them.
    static func split(_ text: String, surah: Int, ayah: Int) -> (basmala: String, rest: String)? {
        guard ayah == 1, surah != 1, surah != 9 else { return nil }
        let words = text.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard words.count == 5, words[0].unicodeScalars.first == "\u{0628}" else { return nil }
        return (words[0..<4].joined(separator: " "), String(words[4]))
    }

    /// A passage carries the end-of-aya sign with its number in Arabic-Indic digits after each aya.
    public static func arabic(_ text: VerseText, surah: Int, passage: Bool) -> String {
        let ayat = text.ayat.map { withoutBasmala($0.text, surah: surah, ayah: $0.number) }
        guard passage else { return ayat.joined() }
        return zip(text.ayat, ayat).map { "\($1) \u{FD3F}\(arabicIndic($0.number))\u{FD3E}" }.joined(separator: " ")
    }

    public static func translation(_ text: VerseText, passage: Bool) -> String {
        guard passage else { return text.ayat.map(\.text).joined() }
        return text.ayat.map { "\($0.text) (\($0.number))" }.joined(separator: " ")
    }

    static func arabicIndic(_ number: Int) -> String {
        String(String(number).unicodeScalars.map { Character(Unicode.Scalar($0.value - 0x30 + 0x0660)!) })
    }
}
