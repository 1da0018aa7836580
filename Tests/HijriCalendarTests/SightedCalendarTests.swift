import Testing

@testable import HijriCalendar

@Suite struct SightedCalendarTests {
    func civil(_ text: String) throws -> CivilDate { try CivilDate(parsing: text) }

    @Test func withoutPublishedStartsItIsUmmAlQura() throws {
        let sighted = try IslamicCalendar.sighted(published: [])
        for day in stride(from: try civil("1990-01-01").dayNumber, to: try civil("2060-01-01").dayNumber, by: 3) {
            #expect(try sighted.hijriDate(dayNumber: day) == IslamicCalendar.ummAlQura.hijriDate(dayNumber: day))
        }
    }

    @Test func ramadan1446BeganOnSecondMarchForSightingCommunities() throws {
        let published = [PublishedMonthStart(year: 1446, month: 9, firstDay: try civil("2025-03-02"))]
        let sighted = try IslamicCalendar.sighted(published: published)
        #expect(try sighted.hijriDate(for: civil("2025-03-02")) == HijriDate(year: 1446, month: 9, day: 1))
        // Sha'ban 1446 had 29 days by Umm al-Qura; it now has 30, and nothing before it moves.
        #expect(try sighted.hijriDate(for: civil("2025-03-01")) == HijriDate(year: 1446, month: 8, day: 30))
        #expect(try sighted.firstDay(year: 1446, month: 8) == IslamicCalendar.ummAlQura.firstDay(year: 1446, month: 8))
        // Umm al-Qura's Ramadan had 29 days (Shawwal on 30 March); a 28-day month is impossible, so Shawwal moves to 31 March.
        #expect(try IslamicCalendar.ummAlQura.monthLength(year: 1446, month: 9) == 29)
        #expect(try sighted.civilDate(for: HijriDate(year: 1446, month: 10, day: 1)) == civil("2025-03-31"))
        #expect(try sighted.monthLength(year: 1446, month: 9) == 29)
    }

    @Test func aNeighbourBeforeThatWouldGrowTo31DaysMovesToo() throws {
        // Find a 30-day Umm al-Qura month followed by a month we publish one day late.
        let uq = IslamicCalendar.ummAlQura
        let year = 1446
        var month = 1
        while try uq.monthLength(year: year, month: month) != 30 { month += 1 }
        let nextYear = month == 12 ? year + 1 : year, nextMonth = month == 12 ? 1 : month + 1
        let late = CivilDate(dayNumber: try uq.firstDay(year: nextYear, month: nextMonth) + 1)
        let sighted = try IslamicCalendar.sighted(published: [PublishedMonthStart(year: nextYear, month: nextMonth, firstDay: late)])
        // The 30-day month cannot become 31: its start moves one day later, and it keeps 30 days.
        #expect(try sighted.firstDay(year: year, month: month) == uq.firstDay(year: year, month: month) + 1)
        #expect(try sighted.monthLength(year: year, month: month) == 30)
    }

    @Test func everyMonthKeeps29Or30DaysWhateverIsPublished() throws {
        var generator = SplitMix64(seed: 1446)
        let uq = MonthTable.ummAlQura
        for _ in 0..<200 {
            // A few published starts near each other, each within two days of Umm al-Qura, kept if consistent.
            var published: [PublishedMonthStart] = []
            let base = Int(generator.next() % UInt64(uq.monthCount - 40))
            for _ in 0..<Int(generator.next() % 5 + 1) {
                let index = base + Int(generator.next() % 36)
                let shift = Int(generator.next() % 5) - 2
                published.append(
                    PublishedMonthStart(
                        year: uq.firstYear + index / 12, month: index % 12 + 1,
                        firstDay: CivilDate(dayNumber: uq.starts[index] + shift)))
            }
            guard let calendar = try? IslamicCalendar.sighted(published: published) else { continue }
            for start in published {
                #expect(try calendar.firstDay(year: start.year, month: start.month) == start.firstDay.dayNumber)
            }
            for index in max(0, base - 3)..<min(uq.monthCount, base + 40) {
                let length = try calendar.monthLength(year: uq.firstYear + index / 12, month: index % 12 + 1)
                #expect(length == 29 || length == 30)
            }
        }
    }

    @Test func refusesStartsTooFarOrInconsistent() throws {
        let tooFar = PublishedMonthStart(year: 1446, month: 9, firstDay: try civil("2025-03-05"))
        let error = #expect(throws: CalendarError.self) { try IslamicCalendar.sighted(published: [tooFar]) }
        #expect(error?.description.contains("2025-03-05") == true)
        // Ramadan and Shawwal 1446 published 31 days apart.
        let pair = [
            PublishedMonthStart(year: 1446, month: 9, firstDay: try civil("2025-02-28")),
            PublishedMonthStart(year: 1446, month: 10, firstDay: try civil("2025-03-31")),
        ]
        #expect(throws: CalendarError.self) { try IslamicCalendar.sighted(published: pair) }
        let outside = PublishedMonthStart(year: 1700, month: 1, firstDay: try civil("2270-01-01"))
        #expect(throws: CalendarError.self) { try IslamicCalendar.sighted(published: [outside]) }
    }
}

/// A small deterministic generator, so the property test is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
