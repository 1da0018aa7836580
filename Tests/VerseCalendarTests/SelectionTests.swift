import Foundation
import HijriCalendar
import Testing

@testable import VerseCalendar

/// `count` single verses of `surah`, from its first: a month's pool.
private func pool(_ surah: Int, count: Int = 30) -> [VerseRange] { (1...count).map { VerseRange(surah: surah, start: $0) } }

/// Twelve months, each with a pool of `poolSize` verses of its own surah, and Ashura.
private func sampleCalendar(poolSize: Int = 30) throws -> VerseCalendarData {
    let months = (1...12).map { month in
        MonthTheme(month: month, theme: Theme(id: "m\(month)", name: "Month \(month)", relevance: "r"), verses: pool(month + 1, count: poolSize))
    }
    let ashura = Occasion(
        id: "ashura", name: "Ashura", month: 1, day: 10, verses: try VerseRange(parsing: "89:27-30"), theme: Theme(id: "t", name: "T", relevance: "r")
    )
    return try VerseCalendarData(months: months, occasions: [ashura])
}

@Suite struct SelectionTests {
    @Test func parsesVerseKeys() throws {
        #expect(try VerseRange(parsing: "2:183") == VerseRange(surah: 2, start: 183))
        #expect(try VerseRange(parsing: "96:1-5") == VerseRange(surah: 96, start: 1, end: 5))
        #expect(try VerseRange(parsing: "96:1-5").key == "96:1-5")
        #expect(try VerseRange(parsing: "2:255").isPassage == false)
        #expect(try VerseRange(parsing: "114:6") == VerseRange(surah: 114, start: 6))
        #expect(try VerseRange(parsing: "2:100-286") == VerseRange(surah: 2, start: 100, end: 286))
        for bad in [
            "115:1", "0:1", "2", "2:", ":5", "2:0", "2:5-3", "2:5-5", "a:b", "2:1-2-3", "2:1000", " 2:1", "２:1",
            // No leading zeros, on either side of the colon or the dash: one rule for every number of a key.
            "02:255", "002:255", "2:0255", "2:025", "96:01-5", "96:1-05", "+2:255", "2:+255",
        ] {
            let error = #expect(throws: SelectionError.self) { try VerseRange(parsing: bad) }
            #expect(error?.description.contains("'\(bad)'") == true)
        }
    }

    @Test func anOccasionWinsOnItsDay() throws {
        let data = try sampleCalendar()
        let ashura = VerseSelector.select(HijriDate(year: 1446, month: 1, day: 10), tomorrow: HijriDate(year: 1446, month: 1, day: 11), in: data)
        #expect(ashura.occasion?.id == "ashura")
        #expect(ashura.verses.key == "89:27-30")
        let before = VerseSelector.select(HijriDate(year: 1446, month: 1, day: 9), tomorrow: HijriDate(year: 1446, month: 1, day: 10), in: data)
        #expect(before.occasion == nil)
        #expect(before.theme.id == "m1")
    }

    @Test func noVerseRepeatsWithinAMonth() throws {
        for size in [30, 31, 33, 45] {
            let data = try sampleCalendar(poolSize: size)
            for year in 1440...1460 {
                for month in 1...12 {
                    let verses = (1...30).map { VerseSelector.select(HijriDate(year: year, month: month, day: $0), tomorrow: nil, in: data).verses }
                    #expect(Set(verses).count == 30, "pool \(size), \(year)-\(month)")
                }
            }
        }
    }

    @Test func theSameMonthDayRotatesAcrossYears() throws {
        let data = try sampleCalendar()
        for month in 2...12 {
            for day in [1, 15, 29] {
                let verses = (1440...1449).map { VerseSelector.select(HijriDate(year: $0, month: month, day: day), tomorrow: nil, in: data).verses }
                #expect(Set(verses).count == verses.count, "month \(month) day \(day): \(verses)")
            }
        }
        // The documented formula.
        #expect(VerseSelector.poolIndex(for: HijriDate(year: 1446, month: 9, day: 1), poolSize: 30) == (0 + 11 * 1446) % 30)
    }

    @Test func refusesBadCalendarData() throws {
        let months = try sampleCalendar().months
        #expect(throws: SelectionError.self) { try VerseCalendarData(months: Array(months.dropLast()), occasions: []) }
        var short = months
        short[3] = MonthTheme(month: 4, theme: months[3].theme, verses: Array(months[3].verses.prefix(29)))
        #expect(throws: SelectionError.self) { try VerseCalendarData(months: short, occasions: []) }
        var repeated = months
        repeated[0] = MonthTheme(month: 1, theme: months[0].theme, verses: months[0].verses + [months[0].verses[0]])
        #expect(throws: SelectionError.self) { try VerseCalendarData(months: repeated, occasions: []) }
        let theme = Theme(id: "x", name: "x", relevance: "x")
        let twice = [
            Occasion(id: "a", name: "a", month: 1, day: 1, verses: VerseRange(surah: 1, start: 1), theme: theme),
            Occasion(id: "b", name: "b", month: 1, day: 1, verses: VerseRange(surah: 1, start: 2), theme: theme),
        ]
        #expect(throws: SelectionError.self) { try VerseCalendarData(months: months, occasions: twice) }
    }
}

@Suite struct OccasionRuleTests {
    static let theme = Theme(id: "t", name: "T", relevance: "r")

    static func occasion(
        _ id: String, month: Int, day: Int, observed: Observance = .day, rank: Int = 2, verses: String = "97:1-5"
    ) throws -> Occasion {
        Occasion(
            id: id, name: "\(day) M: the \(id)", month: month, day: day, observed: observed, rank: rank, verses: try VerseRange(parsing: verses),
            theme: theme)
    }

    static func data(_ occasions: [Occasion]) throws -> VerseCalendarData {
        try VerseCalendarData(months: sampleCalendar().months, occasions: occasions)
    }

    static func day(_ month: Int, _ day: Int) -> HijriDate { HijriDate(year: 1446, month: month, day: day) }

    /// A night belongs to its Hijri day but begins at sunset of the civil day before: that day shows it, as tonight;
    /// the civil day of its Hijri date (the morning after the vigil) does not.
    @Test func aNightIsShownOnTheCivilDayBefore() throws {
        let data = try Self.data([Self.occasion("qadr-23", month: 9, day: 23, observed: .night, rank: 1)])
        let eve = VerseSelector.select(Self.day(9, 22), tomorrow: Self.day(9, 23), in: data)
        #expect(eve.occasion?.id == "qadr-23" && eve.tonight && eve.verses.key == "97:1-5")
        let after = VerseSelector.select(Self.day(9, 23), tomorrow: Self.day(9, 24), in: data)
        #expect(after.occasion == nil && !after.tonight && after.theme.id == "m9")
        // At the edge of the calendar there is no tomorrow: no night is looked for, and nothing fails.
        #expect(VerseSelector.select(Self.day(9, 22), tomorrow: nil, in: data).occasion == nil)
        // The night of the 1st is the last day of the month before, 29th or 30th.
        let eid = try Self.data([Self.occasion("night-of-eid", month: 10, day: 1, observed: .night)])
        for last in [29, 30] {
            let selection = VerseSelector.select(Self.day(9, last), tomorrow: Self.day(10, 1), in: eid)
            #expect(selection.occasion?.id == "night-of-eid" && selection.tonight)
        }
        #expect(VerseSelector.select(Self.day(9, 28), tomorrow: Self.day(9, 29), in: eid).occasion == nil)
    }

    /// Several occasions on one civil day: the lowest rank leads; at equal rank the day's own leads over tonight's;
    /// every other one is named beside it, in the same order.
    @Test func oneRuleDecidesWhichOccasionLeads() throws {
        let data = try Self.data([
            Self.occasion("mawlid", month: 3, day: 17, rank: 1, verses: "21:107"),
            Self.occasion("birth-of-al-sadiq", month: 3, day: 17, rank: 2, verses: "35:32"),
            Self.occasion("arafah", month: 12, day: 9, rank: 2, verses: "2:198-199"),
            Self.occasion("muslim-ibn-aqil", month: 12, day: 9, rank: 3, verses: "3:169"),
            Self.occasion("night-of-eid-al-adha", month: 12, day: 10, observed: .night, rank: 2, verses: "22:37"),
            Self.occasion("tonight-first", month: 5, day: 2, observed: .night, rank: 1, verses: "1:1-7"),
            Self.occasion("day-second", month: 5, day: 1, rank: 2, verses: "2:1-5"),
        ])
        let mawlid = VerseSelector.select(Self.day(3, 17), tomorrow: Self.day(3, 18), in: data)
        #expect(mawlid.occasions.map(\.occasion.id) == ["mawlid", "birth-of-al-sadiq"] && mawlid.verses.key == "21:107")
        #expect(mawlid.others.map(\.occasion.id) == ["birth-of-al-sadiq"])
        let arafah = VerseSelector.select(Self.day(12, 9), tomorrow: Self.day(12, 10), in: data)
        #expect(arafah.occasions.map(\.occasion.id) == ["arafah", "night-of-eid-al-adha", "muslim-ibn-aqil"])
        #expect(arafah.occasions.map(\.tonight) == [false, true, false] && !arafah.tonight && arafah.verses.key == "2:198-199")
        let rankWins = VerseSelector.select(Self.day(5, 1), tomorrow: Self.day(5, 2), in: data)
        #expect(rankWins.occasions.map(\.occasion.id) == ["tonight-first", "day-second"] && rankWins.tonight)
    }

    /// A day reads its occasions once — its date, its month's last day and tomorrow's night together — so a store
    /// behind the source answers one query, not three; a night kept on a day and a day kept on tomorrow stay out.
    @Test func aDayReadsItsOccasionsInOneRead() throws {
        final class Counting: VerseCalendarSource {
            let data: VerseCalendarData
            var reads: [[MonthDay]] = []
            init(_ data: VerseCalendarData) { self.data = data }
            func occasions(on days: [MonthDay]) -> [Occasion] {
                reads.append(days)
                return data.occasions(on: days)
            }
            func monthTheme(month: Int) -> Theme { data.monthTheme(month: month) }
            func poolSize(month: Int) -> Int { data.poolSize(month: month) }
            func poolEntry(month: Int, index: Int) -> VerseRange { data.poolEntry(month: month, index: index) }
        }
        let source = Counting(
            try Self.data([
                Self.occasion("end-of-safar", month: 2, day: Occasion.lastDay),
                Self.occasion("a-night-today", month: 2, day: 30, observed: .night, verses: "1:1-7"),
                Self.occasion("a-day-tomorrow", month: 3, day: 1, verses: "2:1-5"),
                Self.occasion("tonight", month: 3, day: 1, observed: .night, rank: 3, verses: "3:1-5"),
            ]))
        let selection = try VerseSelector.select(Self.day(2, 30), tomorrow: Self.day(3, 1), from: source)
        #expect(source.reads == [[MonthDay(month: 2, day: 30), MonthDay(month: 2, day: Occasion.lastDay), MonthDay(month: 3, day: 1)]])
        #expect(selection.occasions.map(\.occasion.id) == ["end-of-safar", "tonight"])
        _ = try VerseSelector.select(Self.day(2, 12), tomorrow: nil, from: source)
        #expect(source.reads.last == [MonthDay(month: 2, day: 12)])
    }

    @Test func anOccasionOnTheLastDayFollowsTheMonthsLength() throws {
        let data = try Self.data([Self.occasion("end-of-safar", month: 2, day: Occasion.lastDay)])
        #expect(VerseSelector.select(Self.day(2, 29), tomorrow: Self.day(3, 1), in: data).occasion?.id == "end-of-safar")
        #expect(VerseSelector.select(Self.day(2, 29), tomorrow: Self.day(2, 30), in: data).occasion == nil)
        #expect(VerseSelector.select(Self.day(2, 30), tomorrow: Self.day(3, 1), in: data).occasion?.id == "end-of-safar")
        // Dhu al-Hijjah's last day ends the year.
        let year = try Self.data([Self.occasion("end-of-year", month: 12, day: Occasion.lastDay)])
        #expect(VerseSelector.select(Self.day(12, 29), tomorrow: HijriDate(year: 1447, month: 1, day: 1), in: year).occasion?.id == "end-of-year")
    }

    @Test func theDataSaysHowEachOccasionIsKept() throws {
        let json = """
            {"id": "end", "name": "Last of Safar: the end", "month": 2, "day": "last", "rank": 3, "verses": "2:1",
             "theme": {"id": "t", "name": "T", "relevance": "r"}}
            """
        let decoded = try JSONDecoder().decode(Occasion.self, from: Data(json.utf8))
        #expect(decoded.day == Occasion.lastDay && decoded.observed == .day && decoded.rank == 3 && decoded.dayDescription == "the last day of Safar")
        let night = try JSONDecoder().decode(
            Occasion.self,
            from: Data(
                json.replacingOccurrences(of: "\"last\"", with: "23").replacingOccurrences(of: "\"rank\": 3", with: "\"observed\": \"night\"").utf8))
        #expect(night.day == 23 && night.observed == .night && night.rank == 2)
        let roundTrip = try JSONDecoder().decode(Occasion.self, from: JSONEncoder().encode(decoded))
        #expect(roundTrip == decoded)
        for (bad, words) in [("\"day\": \"last\"", "\"day\": \"first\""), ("\"rank\": 3", "\"rank\": 3, \"observed\": \"evening\"")] {
            let error = #expect(throws: SelectionError.self) {
                try JSONDecoder().decode(Occasion.self, from: Data(json.replacingOccurrences(of: bad, with: words).utf8))
            }
            #expect(error?.description.contains("occasion end") == true)
        }
    }

    @Test func refusesOccasionsTheRuleCannotOrder() throws {
        let cases: [([Occasion], String)] = [
            (
                [try Self.occasion("a", month: 1, day: 1), try Self.occasion("b", month: 1, day: 1)],
                "two occasions of rank 2 on the day of 1 Muharram"
            ),
            ([try Self.occasion("a", month: 1, day: 1, rank: 4)], "rank 4"),
            ([try Self.occasion("a", month: 1, day: 1, rank: 0)], "rank 0"),
            ([try Self.occasion("a", month: 1, day: 31)], "day 31"),
            ([try Self.occasion("a", month: 13, day: 1)], "month 13"),
            ([try Self.occasion("a", month: 1, day: Occasion.lastDay, observed: .night)], "a night is named by the day"),
            ([try Self.occasion("a", month: 1, day: 1), try Self.occasion("a", month: 2, day: 1)], "used twice"),
        ]
        for (occasions, words) in cases {
            let error = #expect(throws: SelectionError.self) { try Self.data(occasions) }
            #expect(error?.description.contains(words) == true, "\(error?.description ?? "") lacks \(words)")
        }
        // A day and a night on one Hijri day are kept on different civil days; so are different ranks on one day.
        _ = try Self.data([try Self.occasion("a", month: 8, day: 15), try Self.occasion("b", month: 8, day: 15, observed: .night)])
        _ = try Self.data([try Self.occasion("a", month: 3, day: 17, rank: 1), try Self.occasion("b", month: 3, day: 17, rank: 2)])
    }
}
