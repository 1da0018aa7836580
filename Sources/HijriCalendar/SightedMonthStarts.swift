/// A month start the operator has published, for communities that begin months by moon sighting.
public struct PublishedMonthStart: Hashable, Sendable, Codable {
    public let year: Int
    public let month: Int
    public let firstDay: CivilDate

    public init(year: Int, month: Int, firstDay: CivilDate) {
        self.year = year
        self.month = month
        self.firstDay = firstDay
    }

    /// snake_case, as every other key the project prints.
    enum CodingKeys: String, CodingKey { case year, month, firstDay = "first_day" }
}

/// Builds the sighted calendar's month table from Umm al-Qura and the published starts.
///
/// The rule (README, "The calendars": sighted):
/// 1. A published month starts on the published day. It may differ from the Umm al-Qura start by at most
///    `maximumDeviation` days.
/// 2. Every other month keeps its Umm al-Qura start, moved by the least needed so that every month still has
///    29 or 30 days: a month k months after a published start begins 29k to 30k days after it, and a month k
///    months before a published start begins 29k to 30k days before it.
/// 3. Two published starts k months apart must lie 29k to 30k days apart; otherwise the set is refused.
///
/// Clamping a sequence whose steps are 29 or 30 into bounds whose steps are 29 or 30 keeps steps of 29 or 30,
/// so rule 2 always yields valid months; the effect of a published start fades within a month or two.
public enum SightedMonthStarts {
    public static let maximumDeviation = 2

    /// Checks one published start against Umm al-Qura and the range (rule 1).
    public static func validate(_ start: PublishedMonthStart) throws(CalendarError) {
        let base = MonthTable.ummAlQura
        guard let index = base.index(year: start.year, month: start.month) else {
            throw .outOfRange(
                date: "\(start.year)-\(start.month)", calendar: .sighted,
                supported: "Hijri years \(base.firstYear) to \(base.lastYear)")
        }
        let uq = base.starts[index]
        guard abs(start.firstDay.dayNumber - uq) <= maximumDeviation else {
            throw .publishedStartTooFar(
                year: start.year, month: start.month, date: start.firstDay, ummAlQura: CivilDate(dayNumber: uq))
        }
    }

    /// The published starts by month index in a table of `months` months from 1 Muharram `firstYear` (starts outside
    /// it left out): one start a month, and starts k months apart 29k to 30k days apart (rule 3).
    static func fixedStarts(_ published: [PublishedMonthStart], firstYear: Int, months: Int) throws(CalendarError) -> [Int: Int] {
        var fixed: [Int: Int] = [:]  // month index -> published first day
        for start in published {
            let index = (start.year - firstYear) * 12 + start.month - 1
            guard (0..<months).contains(index) else { continue }
            if let other = fixed[index], other != start.firstDay.dayNumber {
                throw .publishedStartsInconsistent("two starts for \(start.year)-\(start.month)")
            }
            fixed[index] = start.firstDay.dayNumber
        }
        let indices = fixed.keys.sorted()
        for (a, b) in zip(indices, indices.dropFirst()) {
            let months = b - a
            let days = fixed[b]! - fixed[a]!
            guard (29 * months)...(30 * months) ~= days else {
                let first = CivilDate(dayNumber: fixed[a]!)
                let second = CivilDate(dayNumber: fixed[b]!)
                throw .publishedStartsInconsistent(
                    "\(first) and \(second) are \(days) days apart, but \(months) month(s) last \(29 * months) to \(30 * months) days")
            }
        }
        return fixed
    }

    static func table(published: [PublishedMonthStart]) throws(CalendarError) -> MonthTable {
        let base = MonthTable.ummAlQura
        for start in published { try validate(start) }
        let fixed = try fixedStarts(published, firstYear: base.firstYear, months: base.monthCount)
        guard !fixed.isEmpty else { return base }

        var starts = base.starts
        // Bounds from the nearest published start before each month (forward pass) …
        var lower = [Int](repeating: .min, count: starts.count)
        var upper = [Int](repeating: .max, count: starts.count)
        var previous: Int? = nil
        for i in starts.indices {
            if let day = fixed[i] {
                previous = i
                lower[i] = day
                upper[i] = day
                continue
            }
            if let p = previous {
                lower[i] = fixed[p]! + 29 * (i - p)
                upper[i] = fixed[p]! + 30 * (i - p)
            }
        }
        // … and after it (backward pass).
        var next: Int? = nil
        for i in starts.indices.reversed() {
            if fixed[i] != nil {
                next = i
                continue
            }
            if let n = next {
                lower[i] = max(lower[i], fixed[n]! - 30 * (n - i))
                upper[i] = min(upper[i], fixed[n]! - 29 * (n - i))
            }
            starts[i] = min(max(starts[i], lower[i]), upper[i])
        }
        for (i, day) in fixed { starts[i] = day }
        return MonthTable(firstYear: base.firstYear, starts: starts)
    }
}
