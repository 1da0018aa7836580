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
    }

    public struct Selection: Encodable, Sendable {
        public let verses: String
        public let occasion: String?
        /// Days of the year it is the verse of the day.
        public let days: Int
        public let missing: [String]
    }

    enum CodingKeys: String, CodingKey { case hijriYear = "hijri_year", calendar, days, selections, layers, incomplete, entries }
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
        var shown: [Key: (days: Int, present: Set<String>)] = [:]
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
            shown[key] = (1, Set(content.layers.compactMap { $0.entry == nil ? nil : $0.layer.id }))
            order.append(key)
        }
        let coverage = layers.map { layer in
            CoverageReport.LayerCoverage(
                id: layer.id, title: layer.title, days: shown.values.filter { $0.present.contains(layer.id) }.reduce(0) { $0 + $1.days },
                missing: shown.values.filter { !$0.present.contains(layer.id) }.count)
        }
        // Most days first; among equals, in the order the year shows them.
        let incomplete = order.enumerated().compactMap { index, key -> (Int, CoverageReport.Selection)? in
            let value = shown[key]!
            let missing = layers.map(\.id).filter { !value.present.contains($0) }
            return missing.isEmpty ? nil : (index, .init(verses: key.verses, occasion: key.occasion, days: value.days, missing: missing))
        }.sorted { ($0.1.days, -$0.0) > ($1.1.days, -$1.0) }.map(\.1)
        return CoverageReport(
            hijriYear: year, calendar: kind.rawValue, days: days, selections: shown.count, layers: coverage, incomplete: incomplete,
            entries: try database.commentaryCountsByProvenance())
    }
}
