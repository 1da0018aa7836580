/// Consecutive Hijri months from 1 Muharram of `firstYear`, as the day numbers on which they start.
///
/// The hot path of table calendars: a binary search over at most a few thousand integers, no ICU.
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

    func index(year: Int, month: Int) -> Int? {
        let i = (year - firstYear) * 12 + (month - 1)
        return (0..<monthCount).contains(i) ? i : nil
    }

    func hijri(dayNumber: Int) -> HijriDate? {
        guard dayNumber >= starts[0], dayNumber < starts[starts.count - 1] else { return nil }
        // Last index whose start is <= dayNumber.
        var low = 0
        var high = starts.count - 1
        while high - low > 1 {
            let mid = (low + high) >> 1
            if starts[mid] <= dayNumber { low = mid } else { high = mid }
        }
        return HijriDate(year: firstYear + low / 12, month: low % 12 + 1, day: dayNumber - starts[low] + 1)
    }

    func monthLength(index: Int) -> Int { starts[index + 1] - starts[index] }
}
