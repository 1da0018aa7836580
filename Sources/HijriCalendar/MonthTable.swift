/// Consecutive Hijri months from 1 Muharram of `firstYear`, as the day numbers on which they start.
///
/// The hot path of table calendars: an index estimate and a step or two over an array of integers, no ICU.
struct MonthTable: Sendable {
    let firstYear: Int
    /// `starts[i]` is the first day of month `i` (month 1 of `firstYear` is 0); the last entry is the day after the table.
    let starts: [Int]

    var monthCount: Int { starts.count - 1 }
    var firstDay: Int { starts[0] }
    var lastDay: Int { starts[starts.count - 1] - 1 }
    var lastYear: Int { firstYear + monthCount / 12 - 1 }

    init(firstYear: Int, starts: [Int]) {
        precondition(starts.count > 1 && (starts.count - 1) % 12 == 0)
        self.firstYear = firstYear
        self.starts = starts
    }

    /// The Umm al-Qura table, expanded from one 12-bit mask of month lengths per year.
    static let ummAlQura: MonthTable = {
        var starts = [UmmAlQuraData.firstDay]
        starts.reserveCapacity(UmmAlQuraData.monthLengthMasks.count * 12 + 1)
        for mask in UmmAlQuraData.monthLengthMasks {
            for month in 0..<12 {
                starts.append(starts[starts.count - 1] + (mask & (1 << month) != 0 ? 30 : 29))
            }
        }
        return MonthTable(firstYear: UmmAlQuraData.firstYear, starts: starts)
    }()

    /// The month's index, or nil outside the table. The range is checked before any arithmetic, so no year overflows it.
    func index(year: Int, month: Int) -> Int? {
        guard (firstYear...lastYear).contains(year), (1...12).contains(month) else { return nil }
        return (year - firstYear) * 12 + (month - 1)
    }

    func hijri(dayNumber: Int) -> HijriDate? {
        guard dayNumber >= starts[0], dayNumber < starts[starts.count - 1] else { return nil }
        // Months average 29.530589 days, and these tables stay within a few days of that mean, so the estimate
        // is the right month or a neighbour; the loops step to the month whose start is the last <= dayNumber.
        var index = min((dayNumber - starts[0]) * 1_000_000 / 29_530_589, monthCount - 1)
        while starts[index] > dayNumber { index -= 1 }
        while starts[index + 1] <= dayNumber { index += 1 }
        return HijriDate(year: firstYear + index / 12, month: index % 12 + 1, day: dayNumber - starts[index] + 1)
    }

    func monthLength(index: Int) -> Int { starts[index + 1] - starts[index] }
}
