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

/// A day of the Hijri year with its own verse or passage, which replaces the month pool on that day.
public struct Occasion: Hashable, Sendable, Codable {
    enum CodingKeys: String, CodingKey { case id, name, nameArabic = "name_arabic", description, month, day, verses, theme }

    public let id: String
    public let name: String
    /// The occasion's name in Arabic, for notifications in Arabic.
    public let nameArabic: String?
    /// What the day is, when it says more than the theme (e.g. which of the nights of Qadr).
    public let description: String?
    public let month: Int
    public let day: Int
    public let verses: VerseRange
    public let theme: Theme

    public init(
        id: String, name: String, nameArabic: String? = nil, description: String? = nil, month: Int, day: Int, verses: VerseRange,
        theme: Theme
    ) {
        self.id = id
        self.name = name
        self.nameArabic = nameArabic
        self.description = description
        self.month = month
        self.day = day
        self.verses = verses
        self.theme = theme
    }
}

/// The whole verse calendar: twelve month themes and the occasions.
public struct VerseCalendarData: Hashable, Sendable, Codable {
    /// No verse repeats within a month, so each pool needs a verse for every day of the longest month.
    public static let minimumPoolSize = 30

    public let months: [MonthTheme]
    public let occasions: [Occasion]

    /// Checks the structure: twelve months in order, pools of at least 30 distinct selections,
    /// occasions on days that exist with unique ids and at most one per day.
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
        var ids = Set<String>(), days = Set<Int>()
        for occasion in occasions {
            guard (1...12).contains(occasion.month), (1...30).contains(occasion.day) else {
                throw .invalidCalendarData("occasion \(occasion.id) is on month \(occasion.month) day \(occasion.day)")
            }
            guard ids.insert(occasion.id).inserted else { throw .invalidCalendarData("occasion id \(occasion.id) is used twice") }
            guard days.insert(occasion.month * 100 + occasion.day).inserted else {
                throw .invalidCalendarData("two occasions on month \(occasion.month) day \(occasion.day)")
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

    public func occasion(month: Int, day: Int) -> Occasion? {
        occasions.first { $0.month == month && $0.day == day }
    }
}

extension VerseCalendarData: VerseCalendarSource {
    public func monthTheme(month: Int) -> Theme { months[month - 1].theme }
    public func poolSize(month: Int) -> Int { months[month - 1].verses.count }
    public func poolEntry(month: Int, index: Int) -> VerseRange { months[month - 1].verses[index] }
}
