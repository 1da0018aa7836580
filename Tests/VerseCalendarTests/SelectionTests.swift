import HijriCalendar
import Testing

@testable import VerseCalendar

@Suite struct SelectionTests {
    static func pool(_ surah: Int, count: Int = 30) -> [VerseRange] { (1...count).map { VerseRange(surah: surah, start: $0) } }

    static func data(poolSize: Int = 30) throws -> VerseCalendarData {
        let months = (1...12).map { month in
            MonthTheme(month: month, theme: Theme(id: "m\(month)", name: "Month \(month)", relevance: "r"), verses: pool(month + 1, count: poolSize))
        }
        let ashura = Occasion(
            id: "ashura", name: "Ashura", month: 1, day: 10, verses: try VerseRange(parsing: "89:27-30"),
            theme: Theme(id: "t", name: "T", relevance: "r"))
        return try VerseCalendarData(months: months, occasions: [ashura])
    }

    @Test func parsesVerseKeys() throws {
        #expect(try VerseRange(parsing: "2:183") == VerseRange(surah: 2, start: 183))
        #expect(try VerseRange(parsing: "96:1-5") == VerseRange(surah: 96, start: 1, end: 5))
        #expect(try VerseRange(parsing: "96:1-5").key == "96:1-5")
        #expect(try VerseRange(parsing: "2:255").isPassage == false)
        for bad in ["115:1", "0:1", "2", "2:", ":5", "2:0", "2:5-3", "2:5-5", "a:b", "2:1-2-3", "2:1000", " 2:1", "２:1"] {
            let error = #expect(throws: SelectionError.self) { try VerseRange(parsing: bad) }
            #expect(error?.description.contains("'\(bad)'") == true)
        }
    }

    @Test func anOccasionWinsOnItsDay() throws {
        let data = try Self.data()
        let ashura = VerseSelector.select(HijriDate(year: 1446, month: 1, day: 10), in: data)
        #expect(ashura.occasion?.id == "ashura")
        #expect(ashura.verses.key == "89:27-30")
        let before = VerseSelector.select(HijriDate(year: 1446, month: 1, day: 9), in: data)
        #expect(before.occasion == nil)
        #expect(before.theme.id == "m1")
    }

    @Test func noVerseRepeatsWithinAMonth() throws {
        for size in [30, 31, 33, 45] {
            let data = try Self.data(poolSize: size)
            for year in 1440...1460 {
                for month in 1...12 {
                    let verses = (1...30).map { VerseSelector.select(HijriDate(year: year, month: month, day: $0), in: data).verses }
                    #expect(Set(verses).count == 30, "pool \(size), \(year)-\(month)")
                }
            }
        }
    }

    @Test func theSameMonthDayRotatesAcrossYears() throws {
        let data = try Self.data()
        for month in 2...12 {
            for day in [1, 15, 29] {
                let verses = (1440...1449).map { VerseSelector.select(HijriDate(year: $0, month: month, day: day), in: data).verses }
                #expect(Set(verses).count == verses.count, "month \(month) day \(day): \(verses)")
            }
        }
        // The documented formula.
        #expect(VerseSelector.poolIndex(for: HijriDate(year: 1446, month: 9, day: 1), poolSize: 30) == (0 + 11 * 1446) % 30)
    }

    @Test func refusesBadCalendarData() throws {
        let months = try Self.data().months
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
