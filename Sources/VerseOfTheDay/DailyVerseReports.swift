import Astronomy
import ContentStore
import Foundation
import HijriCalendar
import Storage
import VerseCalendar

/// What `today` needs to know: the user's local date and the calendar settings.
public struct TodayRequest: Sendable {
    public let date: CivilDate
    public let timeZone: String
    public let calendar: CalendarKind
    public let adjustment: Adjustment
    public let translation: String
    /// The reader's language (`AppDatabase.readerLanguages`): each layer takes an edition in it first.
    public let language: String?

    public init(
        date: CivilDate, timeZone: String, calendar: CalendarKind = .installationDefault, adjustment: Adjustment = .zero,
        translation: String = "en.pickthall", language: String? = nil
    ) {
        self.date = date
        self.timeZone = timeZone
        self.calendar = calendar
        self.adjustment = adjustment
        self.translation = translation
        self.language = language
    }
}

/// Calendar, selection and store together: the day's verse, any verse, a year's calendar.
public struct DailyVerseReports: Sendable {
    public let database: AppDatabase

    public init(database: AppDatabase) { self.database = database }

    public func today(_ request: TodayRequest) throws -> TodayReport {
        let calendar = try database.islamicCalendar(request.calendar)
        let hijri = try calendar.hijriDate(for: request.date, adjustment: request.adjustment)
        // A night begins at sunset of the civil day before its Hijri day: tomorrow's date says which night is tonight.
        // At the far edge of the calendar's range there is no tomorrow, and no night is looked for.
        let tomorrow = try? calendar.hijriDate(for: request.date.adding(days: 1), adjustment: request.adjustment)
        let selection = try VerseSelector.select(hijri, tomorrow: tomorrow, from: database.calendarSource)
        let content = try database.verse(
            selection.verses, translation: request.translation, occasion: selection.occasion?.id, language: request.language)
        let report = VerseReport(content)
        return TodayReport(
            date: request.date.description, timezone: request.timeZone,
            hijri: .init(
                year: hijri.year, month: hijri.month, day: hijri.day, monthName: hijri.monthName.englishName,
                calendar: request.calendar.rawValue, adjustment: request.adjustment.days),
            occasion: selection.occasions.first.map(TodayReport.OccasionJSON.init),
            otherOccasions: selection.others.map(TodayReport.OccasionJSON.init),
            theme: selection.theme, verse: report.verse, layers: report.layers, attribution: report.attribution,
            content: content, selection: selection, hijriDate: hijri)
    }

    public func verse(_ range: VerseRange, translation: String = "en.pickthall", language: String? = nil) throws -> VerseReport {
        VerseReport(try database.verse(range, translation: translation, language: language))
    }

    /// An occasion with its verse or passage and its layers, the entries written for it first.
    public func occasion(_ id: String, translation: String = "en.pickthall", language: String? = nil) throws -> OccasionReport {
        let occasion = try database.occasion(id: id)
        return OccasionReport(
            occasion, content: try database.verse(occasion.verses, translation: translation, occasion: occasion.id, language: language))
    }

    /// A layer's whole text for a verse or passage, with its source.
    public func commentary(_ range: VerseRange, layer: String, language: String? = nil) throws -> CommentaryJSON {
        CommentaryJSON(try database.commentary(range, layer: layer, language: language))
    }

    /// A Hijri year's months and occasions with their Gregorian dates.
    public func year(_ year: Int, calendar kind: CalendarKind, adjustment: Adjustment) throws -> YearReport {
        let calendar = try database.islamicCalendar(kind)
        let data = try database.verseCalendar()
        let announced = kind == .sighted || kind == .predicted ? Set(try database.publishedMonthStarts().map { $0.year * 12 + $0.month }) : []
        let region = kind == .predicted ? try database.crescentRegion().region : nil
        var months: [YearReport.Month] = []
        for month in 1...12 {
            let start = try calendar.civilDate(for: HijriDate(year: year, month: month, day: 1), adjustment: adjustment)
            let theme = data.months[month - 1].theme
            let (basis, evidence) = try Self.basis(year: year, month: month, kind: kind, calendar: calendar, announced: announced, region: region)
            months.append(
                .init(
                    month: month, monthName: HijriMonth(rawValue: month)!.englishName, monthNameArabic: HijriMonth(rawValue: month)!.arabicName,
                    start: start.description, length: try calendar.monthLength(year: year, month: month),
                    theme: .init(id: theme.id, name: theme.name), basis: basis, evidence: evidence))
        }
        var occasions: [YearReport.OccasionDate] = []
        for occasion in data.occasions {
            let dayOfMonth = occasion.day == Occasion.lastDay ? try calendar.monthLength(year: year, month: occasion.month) : occasion.day
            let day = HijriDate(year: year, month: occasion.month, day: dayOfMonth)
            // A 30th that a 29-day month does not have is skipped that year.
            guard let date = try? calendar.civilDate(for: day, adjustment: adjustment) else { continue }
            // A night is kept from the evening of the civil day before: that is the day that shows it.
            let shown = occasion.observed == .night ? date.adding(days: -1) : date
            occasions.append(
                .init(
                    id: occasion.id, name: occasion.name, hijri: day.description, gregorian: date.description, observed: occasion.observed.rawValue,
                    shownOn: shown.description, rank: occasion.rank, verses: occasion.verses.key))
        }
        return YearReport(
            hijriYear: year, calendar: kind.rawValue, region: region?.id, adjustment: adjustment.days, months: months, occasions: occasions)
    }

    /// Where a month's start comes from, and for a predicted one the evening that decided it (the 29th of the month
    /// before: seen, a month of 29 days; not seen, 30).
    static func basis(
        year: Int, month: Int, kind: CalendarKind, calendar: IslamicCalendar, announced: Set<Int>, region: CrescentRegion?
    ) throws -> (YearReport.Basis, CrescentEvidence?) {
        if announced.contains(year * 12 + month) { return (.announced, nil) }
        switch kind {
        case .ummAlQura, .sighted: return (.ummAlQura, nil)
        case .tabular: return (.tabular, nil)
        case .predicted:
            guard let region else { return (.predicted, nil) }
            let (previousYear, previousMonth) = month == 1 ? (year - 1, 12) : (year, month - 1)
            guard let previous = try? calendar.firstDay(year: previousYear, month: previousMonth) else { return (.predicted, nil) }
            let evidence = PredictedMonthStarts.evidence(region: region, previousStart: previous)
            let expected = previous + (evidence?.seen == true ? 29 : 30)
            // A month moved to keep 29 or 30 days before an announced start says so.
            return (try calendar.firstDay(year: year, month: month) == expected ? .predicted : .moved, evidence)
        }
    }
}

/// `calendar --json`.
public struct YearReport: Encodable, Sendable {
    public let hijriYear: Int
    public let calendar: String
    /// The region of a predicted calendar, else nil.
    public let region: String?
    public let adjustment: Int
    public let months: [Month]
    public let occasions: [OccasionDate]

    /// Where a month's start comes from.
    public enum Basis: String, Encodable, Sendable {
        /// Published by the operator (`sighting set`, `sighting import`).
        case announced
        /// From the crescent's visibility at the region's sites (the evidence says which evening decided).
        case predicted
        /// Predicted, then moved by a day so that the months before an announced start keep 29 or 30 days.
        case moved
        case ummAlQura = "umm-al-qura"
        case tabular
    }

    public struct Month: Encodable, Sendable {
        public let month: Int
        public let monthName: String
        public let monthNameArabic: String
        public let start: String
        public let length: Int
        public let theme: ThemeRef
        public let basis: Basis
        /// For a predicted month, the evening that decided its start.
        public let evidence: CrescentEvidence?
        enum CodingKeys: String, CodingKey {
            case month, monthName = "month_name", monthNameArabic = "month_name_arabic", start, length, theme, basis, evidence
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(month, forKey: .month)
            try container.encode(monthName, forKey: .monthName)
            try container.encode(monthNameArabic, forKey: .monthNameArabic)
            try container.encode(start, forKey: .start)
            try container.encode(length, forKey: .length)
            try container.encode(theme, forKey: .theme)
            try container.encode(basis, forKey: .basis)
            // null, not absent, for a month with none: every month has the same keys.
            try container.encode(evidence, forKey: .evidence)
        }
    }

    public struct ThemeRef: Encodable, Sendable {
        public let id: String
        public let name: String
    }

    public struct OccasionDate: Encodable, Sendable {
        public let id: String
        public let name: String
        public let hijri: String
        /// The civil day of the Hijri date (for a night, the day after the evening it begins).
        public let gregorian: String
        public let observed: String
        /// The civil day whose verse it is: the Hijri date's, or for a night the day before.
        public let shownOn: String
        public let rank: Int
        public let verses: String
        enum CodingKeys: String, CodingKey { case id, name, hijri, gregorian, observed, shownOn = "shown_on", rank, verses }
    }

    enum CodingKeys: String, CodingKey { case hijriYear = "hijri_year", calendar, region, adjustment, months, occasions }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hijriYear, forKey: .hijriYear)
        try container.encode(calendar, forKey: .calendar)
        try container.encode(region, forKey: .region)
        try container.encode(adjustment, forKey: .adjustment)
        try container.encode(months, forKey: .months)
        try container.encode(occasions, forKey: .occasions)
    }
}
