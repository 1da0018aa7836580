import HijriCalendar

/// A spiritual theme: what a month (or an occasion) is about and why its verses fit it.
public struct Theme: Hashable, Sendable, Codable {
    public let id: String
    public let name: String
    public let relevance: String

    public init(id: String, name: String, relevance: String) {
        self.id = id
        self.name = name
        self.relevance = relevance
    }
}

/// One Hijri month's theme and its pool of verses.
public struct MonthTheme: Hashable, Sendable, Codable {
    public let month: Int
    public let theme: Theme
    public let verses: [VerseRange]

    public init(month: Int, theme: Theme, verses: [VerseRange]) {
        self.month = month
        self.theme = theme
        self.verses = verses
    }
}

/// When an occasion is kept: through its day, or through the night that begins at sunset of the civil day before
/// (the nights of Qadr, the night of mid-Sha'ban, the nights of the Eids).
public enum Observance: String, Hashable, Sendable, Codable, CaseIterable {
    case day, night
}

/// A day of the Hijri year with its own verse or passage, which replaces the month pool on that day.
public struct Occasion: Hashable, Sendable, Codable {
    enum CodingKeys: String, CodingKey {
        case id, name, nameArabic = "name_arabic", description, note, month, day, observed, rank, verses, theme
    }

    /// `day` of an occasion kept on the last day of its month, the 29th or the 30th (`"day": "last"` in the data).
    public static let lastDay = 0
    /// Ranks decide which of two occasions on one civil day leads: 1 before 2 before 3.
    public static let ranks = 1...3

    public let id: String
    public let name: String
    /// The occasion's name in Arabic, for notifications in Arabic.
    public let nameArabic: String?
    /// What the day is, when it says more than the theme (e.g. which of the nights of Qadr).
    public let description: String?
    /// Where traditions differ: the other date, kept for the record; not shown to users.
    public let note: String?
    public let month: Int
    /// 1–30, or `lastDay`. A night occasion names the Hijri day whose night it is.
    public let day: Int
    public let observed: Observance
    public let rank: Int
    public let verses: VerseRange
    public let theme: Theme

    public init(
        id: String, name: String, nameArabic: String? = nil, description: String? = nil, note: String? = nil, month: Int, day: Int,
        observed: Observance = .day, rank: Int = 2, verses: VerseRange, theme: Theme
    ) {
        self.id = id
        self.name = name
        self.nameArabic = nameArabic
        self.description = description
        self.note = note
        self.month = month
        self.day = day
        self.observed = observed
        self.rank = rank
        self.verses = verses
        self.theme = theme
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(String.self, forKey: .id)
        let day: Int
        if let number = try? container.decode(Int.self, forKey: .day) {
            day = number
        } else if (try? container.decode(String.self, forKey: .day)) == "last" {
            day = Self.lastDay
        } else {
            throw SelectionError.invalidCalendarData("occasion \(id): day must be 1-30 or \"last\"")
        }
        let observed = try container.decodeIfPresent(String.self, forKey: .observed) ?? Observance.day.rawValue
        guard let observance = Observance(rawValue: observed) else {
            throw SelectionError.invalidCalendarData("occasion \(id): observed must be \"day\" or \"night\", not \"\(observed)\"")
        }
        try self.init(
            id: id, name: container.decode(String.self, forKey: .name), nameArabic: container.decodeIfPresent(String.self, forKey: .nameArabic),
            description: container.decodeIfPresent(String.self, forKey: .description), note: container.decodeIfPresent(String.self, forKey: .note),
            month: container.decode(Int.self, forKey: .month), day: day, observed: observance,
            rank: container.decodeIfPresent(Int.self, forKey: .rank) ?? 2, verses: container.decode(VerseRange.self, forKey: .verses),
            theme: container.decode(Theme.self, forKey: .theme))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(nameArabic, forKey: .nameArabic)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encodeIfPresent(note, forKey: .note)
        try container.encode(month, forKey: .month)
        if day == Self.lastDay { try container.encode("last", forKey: .day) } else { try container.encode(day, forKey: .day) }
        try container.encode(observed, forKey: .observed)
        try container.encode(rank, forKey: .rank)
        try container.encode(verses, forKey: .verses)
        try container.encode(theme, forKey: .theme)
    }

    /// "23 Ramadan: the Third Night of Qadr" → "the Third Night of Qadr": the name without its date.
    public var shortName: String { Self.shortName(name) }

    public static func shortName(_ name: String) -> String {
        name.range(of: ": ").map { String(name[$0.upperBound...]) } ?? name
    }

    /// "Tonight: the Third Night of Qadr" for a night that begins this evening, else the name.
    public func heading(tonight: Bool) -> String { tonight ? "Tonight: \(shortName) (the night of \(dayDescription), from sunset)" : name }

    /// "21 Ramadan", or "the last day of Safar".
    public var dayDescription: String {
        let month = HijriMonth(rawValue: month)?.englishName ?? "month \(month)"
        return day == Self.lastDay ? "the last day of \(month)" : "\(day) \(month)"
    }
}

/// The whole verse calendar: twelve month themes and the occasions.
public struct VerseCalendarData: Hashable, Sendable, Codable {
    /// No verse repeats within a month, so each pool needs a verse for every day of the longest month.
    public static let minimumPoolSize = 30

    public let months: [MonthTheme]
    public let occasions: [Occasion]

    /// Checks the structure: twelve months in order, pools of at least 30 distinct selections,
    /// occasions on days that exist with unique ids, and at most one of each rank kept the same way on a day.
    public init(months: [MonthTheme], occasions: [Occasion]) throws(SelectionError) {
        guard months.map(\.month) == Array(1...12) else {
            throw .invalidCalendarData("expected the months 1 to 12 in order, got \(months.map(\.month))")
        }
        for month in months {
            guard month.verses.count >= Self.minimumPoolSize else {
                throw .invalidCalendarData("month \(month.month) has \(month.verses.count) verses; at least \(Self.minimumPoolSize) are needed")
            }
            guard Set(month.verses).count == month.verses.count else {
                throw .invalidCalendarData("month \(month.month) lists a verse twice")
            }
        }
        var ids = Set<String>(), slots = Set<String>()
        for occasion in occasions {
            guard (1...12).contains(occasion.month), occasion.day == Occasion.lastDay || (1...30).contains(occasion.day) else {
                throw .invalidCalendarData("occasion \(occasion.id) is on month \(occasion.month) day \(occasion.day)")
            }
            guard Occasion.ranks.contains(occasion.rank) else {
                throw .invalidCalendarData("occasion \(occasion.id) has rank \(occasion.rank); ranks are 1 to 3")
            }
            guard !(occasion.observed == .night && occasion.day == Occasion.lastDay) else {
                throw .invalidCalendarData("occasion \(occasion.id): a night is named by the day it belongs to, not \"last\"")
            }
            guard ids.insert(occasion.id).inserted else { throw .invalidCalendarData("occasion id \(occasion.id) is used twice") }
            // One rule decides which of two occasions leads (the rank, then the day's own before tonight's): two of one
            // rank kept the same way on the same day would leave it to chance.
            let slot = "\(occasion.month) \(occasion.day) \(occasion.observed.rawValue) \(occasion.rank)"
            guard slots.insert(slot).inserted else {
                throw .invalidCalendarData(
                    "two occasions of rank \(occasion.rank) on the \(occasion.observed.rawValue) of \(occasion.dayDescription): give one another rank"
                )
            }
        }
        self.months = months
        self.occasions = occasions
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            months: container.decode([MonthTheme].self, forKey: .months),
            occasions: container.decode([Occasion].self, forKey: .occasions))
    }

    public func occasions(on days: [MonthDay]) -> [Occasion] {
        occasions.filter { days.contains(MonthDay(month: $0.month, day: $0.day)) }
    }
}

extension VerseCalendarData: VerseCalendarSource {
    public func monthTheme(month: Int) -> Theme { months[month - 1].theme }
    public func poolSize(month: Int) -> Int { months[month - 1].verses.count }
    public func poolEntry(month: Int, index: Int) -> VerseRange { months[month - 1].verses[index] }
}
