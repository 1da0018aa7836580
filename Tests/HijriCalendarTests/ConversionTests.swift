import Foundation
import Testing

@testable import HijriCalendar

@Suite struct ConversionTests {
    func civil(_ text: String) throws -> CivilDate { try CivilDate(parsing: text) }

    @Test(arguments: [
        // Gregorian, Umm al-Qura Hijri (year-month-day)
        ("2025-03-01", "1446-09-01"),  // 1 Ramadan 1446
        ("2025-03-30", "1446-10-01"),  // 1 Shawwal 1446
        ("2024-07-07", "1446-01-01"),  // 1 Muharram 1446
        ("2024-07-16", "1446-01-10"),  // Ashura 1446
        ("2023-07-19", "1445-01-01"),
        ("2026-06-16", "1448-01-01"),
        ("1882-11-12", "1300-01-01"),
        ("2174-11-25", "1600-12-30"),
        ("2000-01-01", "1420-09-24"),
    ])
    func ummAlQuraFixtures(gregorian: String, hijri: String) throws {
        let date = try civil(gregorian)
        let expected = try HijriDate(parsing: hijri)
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: date) == expected)
        #expect(try IslamicCalendar.ummAlQura.civilDate(for: expected) == date)
    }

    @Test func roundTripsEveryDayBothWays() throws {
        for calendar in [IslamicCalendar.ummAlQura, .tabular] {
            let start = try CivilDate(year: 1990, month: 1, day: 1).dayNumber
            for day in start..<(start + 365 * 40) {
                let date = CivilDate(dayNumber: day)
                #expect(try calendar.civilDate(for: calendar.hijriDate(for: date)) == date)
            }
        }
    }

    @Test func outsideTheUmmAlQuraRangeIsAnErrorNamingTheRange() throws {
        for text in ["1882-11-11", "2174-11-26", "1700-01-01"] {
            let error = #expect(throws: CalendarError.self) { try IslamicCalendar.ummAlQura.hijriDate(for: civil(text)) }
            let message = error?.description ?? ""
            #expect(message.contains(text))
            #expect(message.contains("1882-11-12 to 2174-11-25"))
        }
        // The tabular calendar takes them.
        #expect(try IslamicCalendar.tabular.hijriDate(for: civil("1700-01-01")).year == 1111)
        #expect(throws: CalendarError.self) { try IslamicCalendar.ummAlQura.civilDate(for: HijriDate(year: 1601, month: 1, day: 1)) }
    }

    @Test func impossibleDatesAreRefused() throws {
        for text in ["2025-02-30", "2023-02-29", "2025-13-01", "2025-00-10", "2025-1-01", "25-01-01", "2025-01-01x", "", "२०२५-०१-०१"] {
            let error = #expect(throws: CalendarError.self) { try CivilDate(parsing: text) }
            #expect(error?.description.contains("'\(text)'") == true)
        }
        #expect(try civil("2024-02-29").day == 29)
        // Day 30 of a 29-day month.
        let muharram1446 = try IslamicCalendar.ummAlQura.monthLength(year: 1446, month: 1)
        #expect(muharram1446 == 29)
        #expect(throws: CalendarError.dayNotInMonth(HijriDate(year: 1446, month: 1, day: 30), monthLength: 29)) {
            try IslamicCalendar.ummAlQura.civilDate(for: HijriDate(year: 1446, month: 1, day: 30))
        }
        // A Hijri date is written as a Gregorian one is: two digits for the month and the day; the year as every
        // Hijri year is (`HijriDate.year(parsing:)`).
        for text in [
            "1446-13-01", "1446-00-01", "1446-01-31", "abc", "1446-9-1", "1446-09-1", "1446-9-01", "1446-009-01", "01446-09-01",
            "+446-09-01", "1446-+9-01", "1446-09-01 ", "١٤٤٦-٠٩-٠١", "1446--9-01",
        ] {
            let error = #expect(throws: CalendarError.self) { try HijriDate(parsing: text) }
            #expect(error?.description.contains("'\(text)'") == true)
        }
        #expect(try HijriDate(parsing: "1446-09-01") == HijriDate(year: 1446, month: 9, day: 1))
        #expect(try HijriDate(parsing: "1-01-30") == HijriDate(year: 1, month: 1, day: 30))
    }

    /// A Hijri year, wherever it is given (a date, `--hijri-year`, `sighting`, `/v1/calendar/{year}`): one to four
    /// ASCII digits, 1 to 9999, and nothing else.
    @Test func hijriYearsAreDigitsAlone() {
        for text in ["01447", "+1447", "-1", "0", "0000", "", " 1447", "1447 ", "1e3", "0x10", "١٤٤٧", "10000", "9223372036854775807"] {
            #expect(HijriDate.year(parsing: text) == nil, "\(text.debugDescription)")
        }
        for (text, year) in [("1447", 1447), ("1", 1), ("9999", 9999)] {
            #expect(HijriDate.year(parsing: text) == year)
        }
    }

    @Test func adjustmentsShiftTheHijriDayAcrossMonthEnds() throws {
        // 29 Sha'ban 1446 (Umm al-Qura) is 2025-02-28; Sha'ban 1446 has 29 days.
        let eve = try civil("2025-02-28")
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: eve) == HijriDate(year: 1446, month: 8, day: 29))
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: eve, adjustment: Adjustment(1)) == HijriDate(year: 1446, month: 9, day: 1))
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: eve, adjustment: Adjustment(2)) == HijriDate(year: 1446, month: 9, day: 2))
        #expect(
            try IslamicCalendar.ummAlQura.hijriDate(for: civil("2025-03-01"), adjustment: Adjustment(-1)) == HijriDate(year: 1446, month: 8, day: 29))
        #expect(
            try IslamicCalendar.ummAlQura.hijriDate(for: civil("2025-03-01"), adjustment: Adjustment(-2)) == HijriDate(year: 1446, month: 8, day: 28))
        // Hijri -> Gregorian moves the other way.
        let ramadan1 = HijriDate(year: 1446, month: 9, day: 1)
        #expect(try IslamicCalendar.ummAlQura.civilDate(for: ramadan1, adjustment: Adjustment(1)) == civil("2025-02-28"))
        #expect(
            try IslamicCalendar.tabular.civilDate(for: ramadan1, adjustment: Adjustment(-2))
                == IslamicCalendar.tabular.civilDate(for: ramadan1).adding(days: 2))
        // Year ends too: 29 Dhu al-Hijjah 1445 + 2 days.
        let lastDay = try IslamicCalendar.ummAlQura.civilDate(for: HijriDate(year: 1445, month: 12, day: 29))
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: lastDay, adjustment: Adjustment(2)).year == 1446)
        // Out-of-range adjustments.
        for value in [7, -3, 3] {
            #expect(throws: CalendarError.invalidAdjustment(value)) { try Adjustment(value) }
        }
        // An adjustment that leaves the range names the date asked for.
        let last = try civil("2174-11-25")
        let error = #expect(throws: CalendarError.self) { try IslamicCalendar.ummAlQura.hijriDate(for: last, adjustment: Adjustment(1)) }
        #expect(error?.description.contains("2174-11-25") == true)
    }

    @Test func datesAreWrittenAsISO8601AndReadBack() throws {
        // Every 397th day from year 1 to 9999 (a step that visits every month and day of the month), and beyond.
        for dayNumber in stride(from: -719_162, through: 2_932_896, by: 397) {
            let date = CivilDate(dayNumber: dayNumber)
            #expect(date.description == String(format: "%04d-%02d-%02d", date.year, date.month, date.day))
            #expect(try CivilDate(parsing: date.description) == date)
        }
        #expect(CivilDate(dayNumber: -719_163).description == "0000-12-31")
        #expect(CivilDate(dayNumber: 2_932_897).description == "10000-01-01")
        #expect(CivilDate(dayNumber: -719_528).description == "0000-01-01")
    }

    @Test func todayDependsOnTheUsersZone() throws {
        // 2025-02-28T20:00Z: already 1 March in Tokyo (1 Ramadan), still 28 February in Los Angeles (29 Sha'ban).
        let instant = ISO8601DateFormatter().date(from: "2025-02-28T20:00:00Z")!
        let tokyo = CivilDate(instant: instant, timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        let losAngeles = CivilDate(instant: instant, timeZone: TimeZone(identifier: "America/Los_Angeles")!)
        #expect(tokyo.description == "2025-03-01")
        #expect(losAngeles.description == "2025-02-28")
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: tokyo) == HijriDate(year: 1446, month: 9, day: 1))
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: losAngeles) == HijriDate(year: 1446, month: 8, day: 29))
        // Before 1970 and on the zone's midnight.
        let before = ISO8601DateFormatter().date(from: "1969-12-31T23:59:59Z")!
        #expect(CivilDate(instant: before, timeZone: TimeZone(identifier: "UTC")!).description == "1969-12-31")
        // The extremes: UTC+14 and UTC-11 are two civil days apart at 10:30 UTC.
        let morning = ISO8601DateFormatter().date(from: "2025-02-28T10:30:00Z")!
        #expect(CivilDate(instant: morning, timeZone: TimeZone(identifier: "Pacific/Kiritimati")!).description == "2025-03-01")
        #expect(CivilDate(instant: morning, timeZone: TimeZone(identifier: "Pacific/Pago_Pago")!).description == "2025-02-27")
    }

    @Test func dayNumbersRoundTripAcrossTheWholeYearRange() throws {
        for day in stride(
            from: try CivilDate(year: 1, month: 1, day: 1).dayNumber, through: try CivilDate(year: 9999, month: 12, day: 31).dayNumber, by: 97)
        {
            let date = CivilDate(dayNumber: day)
            #expect(date.dayNumber == day)
            #expect(try CivilDate(year: date.year, month: date.month, day: date.day) == date)
        }
        #expect(try civil("1970-01-01").dayNumber == 0)
        #expect(try civil("1970-01-01").isoWeekday == 4)
    }

    @Test func utcTimestampsMatchISO8601DateFormatter() {
        let formatter = ISO8601DateFormatter()
        // Whole seconds from 1900 to 2100 (every 86,399 s, so every time of day comes round), and the day edges.
        for seconds in Array(stride(from: -2_208_988_800, through: 4_102_444_800, by: 86_399)) + [0, -1, 86_399, 86_400, 1_740_805_200] {
            let date = Date(timeIntervalSince1970: Double(seconds))
            #expect(date.iso8601UTC == formatter.string(from: date), "\(seconds)")
        }
        // Fractions are cut, never rounded up.
        #expect(Date(timeIntervalSince1970: 1_740_805_200.9).iso8601UTC == "2025-03-01T05:00:00Z")
        #expect(Date(timeIntervalSince1970: -0.5).iso8601UTC == "1969-12-31T23:59:59Z")
    }

    @Test func monthNames() {
        #expect(HijriMonth.ramadan.englishName == "Ramadan")
        #expect(HijriMonth.ramadan.arabicName == "رمضان")
        #expect(HijriMonth.allCases.count == 12)
        #expect(HijriDate(year: 1446, month: 9, day: 1).formatted == "1 Ramadan 1446")
    }
}
