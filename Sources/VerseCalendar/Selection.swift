import HijriCalendar

/// What a day shows: its verse or passage and the theme it is shown under.
public struct DailySelection: Hashable, Sendable {
    public let hijri: HijriDate
    public let verses: VerseRange
    public let theme: Theme
    public let occasion: Occasion?
}

/// The selection rule, the same for every user (README, "How a day's verse is chosen"):
///
/// 1. An occasion on the Hijri month and day wins; its verse or passage and theme are shown.
/// 2. Otherwise the month's pool of n ≥ 30 selections is used, at index `(day − 1 + 11 × year) mod n`.
///    Within a month consecutive days take consecutive entries, so no verse repeats; from one Hijri year to the
///    next the same month-day moves 11 places along the pool, so it does not show the same verse every year.
///
/// The Hijri date is the one the chosen calendar and adjustment give for the user's local civil date,
/// so the same (local date, calendar, adjustment) always gives the same verse.
/// Where the selection rule reads the calendar from: the decoded data in memory, or the store, which then
/// reads only the rows a day needs.
public protocol VerseCalendarSource {
    func occasion(month: Int, day: Int) throws -> Occasion?
    func monthTheme(month: Int) throws -> Theme
    func poolSize(month: Int) throws -> Int
    func poolEntry(month: Int, index: Int) throws -> VerseRange
}

public enum VerseSelector {
    public static let yearStride = 11

    public static func poolIndex(for date: HijriDate, poolSize: Int) -> Int {
        precondition(poolSize > 0)
        let raw = (date.day - 1) + yearStride * date.year
        return ((raw % poolSize) + poolSize) % poolSize
    }

    public static func select(_ date: HijriDate, from source: some VerseCalendarSource) throws -> DailySelection {
        if let occasion = try source.occasion(month: date.month, day: date.day) {
            return DailySelection(hijri: date, verses: occasion.verses, theme: occasion.theme, occasion: occasion)
        }
        let index = poolIndex(for: date, poolSize: try source.poolSize(month: date.month))
        return DailySelection(
            hijri: date, verses: try source.poolEntry(month: date.month, index: index), theme: try source.monthTheme(month: date.month),
            occasion: nil)
    }

    public static func select(_ date: HijriDate, in data: VerseCalendarData) -> DailySelection {
        try! select(date, from: data)  // the in-memory source never throws
    }
}
