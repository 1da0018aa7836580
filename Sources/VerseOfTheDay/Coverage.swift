import ContentStore
import HijriCalendar
import VerseCalendar

/// What a reader sees over a Hijri year: on how many days each of the five layers is shown, which selections lack
/// which layers, and how the commentary is made (editorial text, summaries of named works, quotations).
public struct CoverageReport: Encodable, Sendable {
    public let hijriYear: Int
    public let calendar: String
    public let days: Int
    /// Distinct selections (a verse or passage, and the occasion it is chosen for) that the year shows.
    public let selections: Int
    public let layers: [LayerCoverage]
    /// Selections without every layer, the ones shown on most days first.
    public let incomplete: [Selection]
    /// Commentary entries in the store, by provenance.
    public let entries: [String: Int]

    public struct LayerCoverage: Encodable, Sendable {
        public let id: String
        public let title: String
        /// Days that show this layer.
        public let days: Int
        /// Selections that lack it.
        public let missing: Int
        /// Days by whose words the layer is: quotation, editorial-summary, editorial.
        public let provenance: [String: Int]
        /// Days by the work shown: an edition's id for an excerpt of it, else the entry's work ("editorial" for ours).
        public let sources: [String: Int]
    }

    public struct Selection: Encodable, Sendable {
        public let verses: String
        public let occasion: String?
        /// Days of the year it is the verse of the day.
        public let days: Int
        public let missing: [String]
    }

    /// Days that show all five layers.
    public var allLayersDays: Int { days - incomplete.reduce(0) { $0 + $1.days } }

    enum CodingKeys: String, CodingKey {
        case hijriYear = "hijri_year", calendar, days, selections, layers, incomplete, entries, allLayersDays = "all_layers_days"
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hijriYear, forKey: .hijriYear)
        try container.encode(calendar, forKey: .calendar)
        try container.encode(days, forKey: .days)
        try container.encode(selections, forKey: .selections)
        try container.encode(layers, forKey: .layers)
        try container.encode(incomplete, forKey: .incomplete)
        try container.encode(entries, forKey: .entries)
        try container.encode(allLayersDays, forKey: .allLayersDays)
    }
}

extension DailyVerseReports {
    /// The coverage of every day of Hijri `year` in `calendar`, as the days' selections would show it.
    public func coverage(year: Int, calendar kind: CalendarKind) throws -> CoverageReport {
        let calendar = try database.islamicCalendar(kind)
        let layers = try database.layers()
        // Each selection's layers are read once, however many days show it.
        struct Key: Hashable {
            let verses: String
            let occasion: String?
        }
        var shown: [Key: (days: Int, present: [String: (provenance: String, source: String)])] = [:]
        var order: [Key] = []
        // Every day of the year, then the next year's first: a day's tomorrow says which night begins that evening.
        var dates: [HijriDate] = []
        for month in 1...12 {
            for day in 1...(try calendar.monthLength(year: year, month: month)) { dates.append(HijriDate(year: year, month: month, day: day)) }
        }
        dates.append(HijriDate(year: year + 1, month: 1, day: 1))
        let days = dates.count - 1
        for (date, tomorrow) in zip(dates, dates.dropFirst()) {
            let selection = try VerseSelector.select(date, tomorrow: tomorrow, from: database.calendarSource)
            let key = Key(verses: selection.verses.key, occasion: selection.occasion?.id)
            if let seen = shown[key] {
                shown[key] = (seen.days + 1, seen.present)
                continue
            }
            let content = try database.verse(selection.verses, translation: "en.pickthall", occasion: selection.occasion?.id)
            var present: [String: (provenance: String, source: String)] = [:]
            for layer in content.layers {
                guard let source = layer.entry?.source else { continue }
                present[layer.layer.id] = (source.provenance, source.edition ?? source.work ?? "editorial")
            }
            shown[key] = (1, present)
            order.append(key)
        }
        let coverage = layers.map { layer in
            var provenance: [String: Int] = [:]
            var sources: [String: Int] = [:]
            for value in shown.values {
                guard let present = value.present[layer.id] else { continue }
                provenance[present.provenance, default: 0] += value.days
                sources[present.source, default: 0] += value.days
            }
            return CoverageReport.LayerCoverage(
                id: layer.id, title: layer.title, days: shown.values.filter { $0.present[layer.id] != nil }.reduce(0) { $0 + $1.days },
                missing: shown.values.filter { $0.present[layer.id] == nil }.count, provenance: provenance, sources: sources)
        }
        // Most days first; among equals, in the order the year shows them.
        let incomplete = order.enumerated().compactMap { index, key -> (Int, CoverageReport.Selection)? in
            let value = shown[key]!
            let missing = layers.map(\.id).filter { value.present[$0] == nil }
            return missing.isEmpty ? nil : (index, .init(verses: key.verses, occasion: key.occasion, days: value.days, missing: missing))
        }.sorted { ($0.1.days, -$0.0) > ($1.1.days, -$1.0) }.map(\.1)
        return CoverageReport(
            hijriYear: year, calendar: kind.rawValue, days: days, selections: shown.count, layers: coverage, incomplete: incomplete,
            entries: try database.commentaryCountsByProvenance())
    }
}

/// Every verse of the Quran, one at a time: how many show each layer, and from what (`content coverage --every-verse`).
public struct VerseCoverageReport: Encodable, Sendable {
    public let verses: Int
    public let layers: [Layer]

    public struct Layer: Encodable, Sendable {
        public let id: String
        /// Verses that show the layer.
        public let verses: Int
        /// Verses by the work shown: an edition's id for its excerpt, else the entry's work ("editorial" for ours).
        public let sources: [String: Int]
    }
}

extension DailyVerseReports {
    /// Each of the Quran's verses read as `verse S:A` reads it; `progress` is told each sura done.
    public func everyVerseCoverage(progress: ((Int, Int) -> Void)? = nil) throws -> VerseCoverageReport {
        let counts = try database.ayahCounts()
        let layers = try database.layers()
        var shown: [String: [String: Int]] = [:]
        var total = 0
        for (index, count) in counts.enumerated() {
            for ayah in 1...count {
                let content = try database.verse(VerseRange(surah: index + 1, start: ayah, end: ayah), translation: "en.pickthall")
                total += 1
                for layer in content.layers {
                    guard let source = layer.entry?.source else { continue }
                    shown[layer.layer.id, default: [:]][source.edition ?? source.work ?? "editorial", default: 0] += 1
                }
            }
            progress?(index + 1, counts.count)
        }
        return VerseCoverageReport(
            verses: total,
            layers: layers.map { .init(id: $0.id, verses: shown[$0.id]?.values.reduce(0, +) ?? 0, sources: shown[$0.id] ?? [:]) })
    }
}
