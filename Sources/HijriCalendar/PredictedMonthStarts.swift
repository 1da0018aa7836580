import Astronomy

/// The predicted calendar: each month begins on the day after the first evening its crescent is seen at any of a
/// region's sites by the region's rule, or after 30 days.
///
/// The rule, as communities that begin months by sighting keep it (README, "The calendars": predicted):
/// 1. On the evening of the 29th of a month the crescent is looked for. Seen: the next day is the 1st of the next
///    month (a month of 29 days). Not seen: the month completes 30 days.
/// 2. A chain of months starts from the first evening its crescent is seen after a conjunction, and each month
///    after it follows by rule 1 from the one before.
/// 3. An announced start (published by the operator, or imported) replaces the prediction, and the months after it
///    follow from it by rule 1; months before it are moved by the least needed to keep 29 or 30 days (as in the
///    sighted calendar).
///
/// Rule 1 makes each start depend only on the one before, so a chain that an announcement moves joins the
/// unannounced chain again as soon as one of its starts agrees with it (usually within a month or two).
public enum PredictedMonthStarts {
    /// The years the predicted calendars cover: from Umm al-Qura's first year to 1500 (2077).
    public static let firstYear = 1300
    public static let lastYear = 1500

    /// The evening (a day number) of the 29th day of a month that starts on `start`.
    public static func lookingEvening(afterStart start: Int) -> Int { start + 28 }

    /// The verdict on the evening of day 29 of the month that starts on `start`, and the next month's first day.
    public static func step(region: CrescentRegion, start: Int) -> (next: Int, verdict: EveningVerdict) {
        let evening = lookingEvening(afterStart: start)
        let conjunction = Conjunction.nearest(evening: evening)
        let verdict = region.verdict(dayNumber: evening, conjunction: conjunction)
        return (verdict.seen ? start + 29 : start + 30, verdict)
    }

    /// The first day of a chain's first month, `year`-`month`: the day after the first evening the crescent is seen
    /// after the conjunction nearest the tabular calendar's start of that month.
    public static func firstStart(region: CrescentRegion, year: Int, month: Int) -> (start: Int, verdict: EveningVerdict) {
        let guess = Tabular.dayNumber(year: year, month: month, day: 1)
        let conjunction = Conjunction.nearest(JulianDay.unixEpoch + Double(guess))
        var evening = Int((conjunction - JulianDay.unixEpoch).rounded(.down))
        // Four evenings from the conjunction's day; the bound keeps a region whose sites never see a crescent (or
        // never have an evening) from looping, and such a month begins after the fourth anyway.
        for _ in 0..<4 {
            let verdict = region.verdict(dayNumber: evening, conjunction: conjunction)
            if verdict.seen { return (evening + 1, verdict) }
            evening += 1
        }
        return (evening, region.verdict(dayNumber: evening - 1, conjunction: conjunction))
    }

    /// The first days of every month from 1 Muharram `firstYear` to the day after the end of `lastYear`, by rules 1 and
    /// 2; `progress` is told each month done (of 12 × years).
    public static func chain(
        region: CrescentRegion, firstYear: Int = firstYear, lastYear: Int = lastYear, progress: ((Int) -> Void)? = nil
    ) -> [Int] {
        var starts = [firstStart(region: region, year: firstYear, month: 1).start]
        let months = (lastYear - firstYear + 1) * 12
        starts.reserveCapacity(months + 1)
        for index in 0..<months {
            starts.append(step(region: region, start: starts[index]).next)
            progress?(index + 1)
        }
        return starts
    }

    /// `base` (a chain by rules 1 and 2, from 1 Muharram of `firstYear`) with the announced starts put in by rule 3.
    /// Refused, with an error naming them, when two announcements cannot both hold.
    static func applying(
        _ announced: [PublishedMonthStart], to base: [Int], firstYear: Int, region: CrescentRegion
    ) throws(CalendarError) -> [Int] {
        var starts = base
        let fixed = try SightedMonthStarts.fixedStarts(announced, firstYear: firstYear, months: starts.count - 1)
        let indices = fixed.keys.sorted()
        // Forward: each announcement, then the months after it by rule 1 until the chain joins the one it replaces
        // or meets the next announcement.
        for index in indices {
            starts[index] = fixed[index]!
            var next = index + 1
            while next < starts.count, fixed[next] == nil {
                let day = step(region: region, start: starts[next - 1]).next
                if day == starts[next] { break }
                starts[next] = day
                next += 1
            }
        }
        // Backward: months before an announcement keep 29 or 30 days.
        var following: Int? = nil
        for i in starts.indices.reversed() {
            if fixed[i] != nil {
                following = i
                continue
            }
            if let n = following {
                starts[i] = min(max(starts[i], fixed[n]! - 30 * (n - i)), fixed[n]! - 29 * (n - i))
            }
        }
        // The backward pass can only have moved months before the first announcement, or between two; a month it
        // moved is followed by one the forward pass set from the announcement, so every month keeps 29 or 30 days.
        return starts
    }
}

/// A predicted calendar's month lengths, one line a year (`data/calendar/predicted/<region>.csv`): the year, the
/// first day of Muharram, the twelve lengths.
public struct PredictedTable: Sendable, Hashable {
    public let regionID: String
    public let firstYear: Int
    /// The first day of each month, and the day after the last.
    public let starts: [Int]

    public init(regionID: String, firstYear: Int, starts: [Int]) throws(CalendarError) {
        guard starts.count > 1, (starts.count - 1) % 12 == 0 else {
            throw .malformedRegions("the predicted table of '\(regionID)' does not hold whole years")
        }
        for (a, b) in zip(starts, starts.dropFirst()) where !(29...30).contains(b - a) {
            throw .malformedRegions("the predicted table of '\(regionID)' has a month of \(b - a) days from \(CivilDate(dayNumber: a))")
        }
        self.regionID = regionID
        self.firstYear = firstYear
        self.starts = starts
    }

    public var lastYear: Int { firstYear + (starts.count - 1) / 12 - 1 }

    public static let csvHeader = "hijri_year,first_day,m1,m2,m3,m4,m5,m6,m7,m8,m9,m10,m11,m12"

    /// The CSV text, header first.
    public var csv: String {
        var lines = [Self.csvHeader]
        for year in 0..<(starts.count - 1) / 12 {
            let first = starts[year * 12]
            let lengths = (0..<12).map { String(starts[year * 12 + $0 + 1] - starts[year * 12 + $0]) }
            lines.append("\(firstYear + year),\(CivilDate(dayNumber: first)),\(lengths.joined(separator: ","))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads the CSV; each year must begin where the one before ended.
    public init(regionID: String, csv: String) throws(CalendarError) {
        var lines = csv.split(separator: "\n", omittingEmptySubsequences: true).map { $0.trimmingSuffix("\r") }
        guard lines.first == Self.csvHeader[...] else {
            throw .malformedRegions("the predicted table of '\(regionID)' does not begin with the header \(Self.csvHeader)")
        }
        lines.removeFirst()
        var starts: [Int] = []
        var firstYear = 0
        for (number, line) in lines.enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 14, let year = Int(fields[0]), let first = try? CivilDate(parsing: String(fields[1])) else {
                throw .malformedRegions("line \(number + 2) of the predicted table of '\(regionID)': '\(line.prefix(80))'")
            }
            let lengths = fields[2...].compactMap { Int($0) }
            guard lengths.count == 12 else {
                throw .malformedRegions("line \(number + 2) of the predicted table of '\(regionID)': expected twelve month lengths")
            }
            if starts.isEmpty {
                firstYear = year
                starts.append(first.dayNumber)
            } else {
                guard year == firstYear + number, starts.last == first.dayNumber else {
                    throw .malformedRegions("line \(number + 2) of the predicted table of '\(regionID)': \(year) does not follow the year before")
                }
            }
            for length in lengths { starts.append(starts[starts.count - 1] + length) }
        }
        try self.init(regionID: regionID, firstYear: firstYear, starts: starts)
    }
}

extension Substring {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring { hasSuffix(suffix) ? dropLast(suffix.count) : self }
}
