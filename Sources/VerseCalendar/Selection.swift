import HijriCalendar

/// A Hijri month and day, the key occasions are kept under (`day` may be `Occasion.lastDay`).
public struct MonthDay: Hashable, Sendable {
    public let month: Int
    public let day: Int

    public init(month: Int, day: Int) {
        self.month = month
        self.day = day
    }
}

/// An occasion as one civil day meets it: kept today, or tonight (its night begins at sunset of this civil day).
public struct ObservedOccasion: Hashable, Sendable {
    public let occasion: Occasion
    /// The occasion is a night that begins this evening: the civil day before the Hijri day it belongs to.
    public let tonight: Bool

    public init(occasion: Occasion, tonight: Bool) {
        self.occasion = occasion
        self.tonight = tonight
    }
}

/// What a day shows: its verse or passage and the theme it is shown under.
public struct DailySelection: Hashable, Sendable {
    public let hijri: HijriDate
    public let verses: VerseRange
    public let theme: Theme
    /// Every occasion this civil day meets, the one that leads first; the others are named beside it.
    public let occasions: [ObservedOccasion]

    /// The occasion whose verse the day shows.
    public var occasion: Occasion? { occasions.first?.occasion }
    /// The leading occasion is tonight's.
    public var tonight: Bool { occasions.first?.tonight ?? false }
    /// The occasions named beside the one that leads.
    public var others: ArraySlice<ObservedOccasion> { occasions.dropFirst() }
}

/// Where the selection rule reads the calendar from: the decoded data in memory, or the store, which then
/// reads only the rows a day needs.
public protocol VerseCalendarSource {
    /// The occasions on any of these Hijri month-days (`Occasion.lastDay` for those kept on a month's last day),
    /// read at once: a day asks for its own date, its month's last day and tomorrow's date together.
    func occasions(on days: [MonthDay]) throws -> [Occasion]
    func monthTheme(month: Int) throws -> Theme
    func poolSize(month: Int) throws -> Int
    func poolEntry(month: Int, index: Int) throws -> VerseRange
}

/// The selection rule, the same for every user (README, "How a day's verse is chosen"):
///
/// 1. An occasion wins: one kept on this day's Hijri date, or a night that begins this evening (its Hijri day is
///    tomorrow's). Of several, the lowest rank leads; at equal rank the day's own leads over tonight's; the others are
///    named beside it.
/// 2. Otherwise the month's pool of n ≥ 30 selections is used, at index `(day − 1 + 11 × year) mod n`.
///    Within a month consecutive days take consecutive entries, so no verse repeats; from one Hijri year to the
///    next the same month-day moves 11 places along the pool, so it does not show the same verse every year.
///
/// The Hijri date is the one the chosen calendar and adjustment give for the user's local civil date,
/// so the same (local date, calendar, adjustment) always gives the same verse.
public enum VerseSelector {
    public static let yearStride = 11

    public static func poolIndex(for date: HijriDate, poolSize: Int) -> Int {
        precondition(poolSize > 0)
        let raw = (date.day - 1) + yearStride * date.year
        return ((raw % poolSize) + poolSize) % poolSize
    }

    /// The occasions a civil day meets, the leading one first. `tomorrow` is the Hijri date of the next civil day
    /// (nil at the edge of the calendar's range: then no night is looked for, and no last-day occasion).
    public static func occasions(on date: HijriDate, tomorrow: HijriDate?, from source: some VerseCalendarSource) throws -> [ObservedOccasion] {
        // Kept by day: on this date, or on the month's last day when this is it. Kept by night: tomorrow's, from tonight.
        var byDay = [MonthDay(month: date.month, day: date.day)]
        if let tomorrow, tomorrow.month != date.month || tomorrow.year != date.year {
            byDay.append(MonthDay(month: date.month, day: Occasion.lastDay))
        }
        let tonight = tomorrow.map { MonthDay(month: $0.month, day: $0.day) }
        let found: [ObservedOccasion] = try source.occasions(on: byDay + (tonight.map { [$0] } ?? [])).compactMap { occasion in
            let key = MonthDay(month: occasion.month, day: occasion.day)
            switch occasion.observed {
            case .day: return byDay.contains(key) ? ObservedOccasion(occasion: occasion, tonight: false) : nil
            case .night: return key == tonight ? ObservedOccasion(occasion: occasion, tonight: true) : nil
            }
        }
        return found.sorted { ($0.occasion.rank, $0.tonight ? 1 : 0, $0.occasion.id) < ($1.occasion.rank, $1.tonight ? 1 : 0, $1.occasion.id) }
    }

    public static func select(_ date: HijriDate, tomorrow: HijriDate?, from source: some VerseCalendarSource) throws -> DailySelection {
        let occasions = try occasions(on: date, tomorrow: tomorrow, from: source)
        if let lead = occasions.first {
            return DailySelection(hijri: date, verses: lead.occasion.verses, theme: lead.occasion.theme, occasions: occasions)
        }
        let index = poolIndex(for: date, poolSize: try source.poolSize(month: date.month))
        return DailySelection(
            hijri: date, verses: try source.poolEntry(month: date.month, index: index), theme: try source.monthTheme(month: date.month),
            occasions: [])
    }

    public static func select(_ date: HijriDate, tomorrow: HijriDate?, in data: VerseCalendarData) -> DailySelection {
        try! select(date, tomorrow: tomorrow, from: data)  // the in-memory source never throws
    }
}
