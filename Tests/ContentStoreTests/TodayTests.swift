import ContentStore
import DailyVerseTestSupport
import Foundation
import HijriCalendar
import Testing
import VerseCalendar
import VerseOfTheDay

@Suite struct TodayTests {
    /// Fixed dates across several Hijri years: the Umm al-Qura date, the occasion and the verse expected.
    @Test(
        arguments: [
            ("2024-07-16", "1446-01-10", "ashura", "89:27-30"),
            ("2025-03-01", "1446-09-01", nil, "17:82"),
            ("2025-03-02", "1446-09-02", nil, "10:57"),
            ("2024-04-01", "1445-09-22", "qadr-23", "97:1-5"),
            ("2024-04-10", "1445-10-01", "eid-al-fitr", "87:14-15"),
            ("2025-06-14", "1446-12-18", "ghadir", "5:67"),
            ("2025-06-20", "1446-12-24", "mubahala", "3:61"),
            ("2025-01-27", "1446-07-27", "mabath", "96:1-5"),
            ("2026-06-25", "1448-01-10", "ashura", "89:27-30"),
            ("2026-11-21", "1448-06-11", nil, "26:88-89"),
            ("2023-09-06", "1445-02-21", nil, "31:17"),
            ("2030-01-15", "1451-09-11", nil, "39:23"),
            // The Shia year: an occasion on a month's last day (Safar 1446 has 30 days, Dhu al-Qa'dah 29), both days of
            // Imam Ali in Ramadan, and a night of Eid on its eve.
            ("2024-09-03", "1446-02-30", "martyrdom-of-imam-al-rida", "112:1-4"),
            ("2025-05-27", "1446-11-29", "martyrdom-of-imam-al-jawad", "2:154"),
            ("2025-03-19", "1446-09-19", "imam-ali-struck", "3:185"),
            ("2025-03-21", "1446-09-21", "martyrdom-of-imam-ali", "2:207"),
            ("2025-03-29", "1446-09-29", "night-of-eid-al-fitr", "10:58"),
        ] as [(String, String, String?, String)])
    func fixtures(date: String, hijri: String, occasion: String?, verse: String) throws {
        let service = DailyVerseReports(database: try seededDatabase())
        let report = try service.today(TodayRequest(date: try CivilDate(parsing: date), timeZone: "UTC", calendar: .ummAlQura))
        #expect(report.hijriDate == (try HijriDate(parsing: hijri)))
        #expect(report.occasion?.id == occasion)
        #expect(report.verse.key == verse)
        #expect(report.layers.map(\.id) == Layer.ids)
        #expect(report.attribution.contains("Tanzil Project (https://tanzil.net)"))
    }

    /// The nights of Qadr begin at sunset of the civil day before their Hijri day: over a whole Ramadan, with each
    /// adjustment, the eve shows the night as tonight and the day after the vigil does not.
    @Test func theNightsOfQadrAreShownOnTheirEve() throws {
        let service = DailyVerseReports(database: try seededDatabase())
        // 1 Ramadan 1446 is 2025-03-01 (Umm al-Qura); an adjustment of +1 moves every Hijri day a civil day earlier.
        for adjust in -1...1 {
            var tonight: [String: String] = [:]
            for offset in -1...30 {
                let date = try CivilDate(parsing: "2025-03-01").adding(days: offset)
                let report = try service.today(TodayRequest(date: date, timeZone: "UTC", calendar: .ummAlQura, adjustment: Adjustment(adjust)))
                if let lead = report.selection.occasions.first, lead.tonight, lead.occasion.id.hasPrefix("qadr-") {
                    tonight[date.description] = lead.occasion.id
                    #expect(report.occasion?.tonight == true && report.occasion?.observed == "night")
                    #expect(report.verse.key == "97:1-5")
                }
                for observed in report.selection.occasions where observed.occasion.id.hasPrefix("qadr-") {
                    #expect(observed.tonight, "\(date): \(observed.occasion.id) on the morning after its night")
                }
            }
            let eve = { (day: Int) in try CivilDate(parsing: "2025-03-01").adding(days: day - 2 - adjust).description }
            #expect(tonight == [try eve(19): "qadr-19", try eve(21): "qadr-21", try eve(23): "qadr-23"], "adjust \(adjust)")
        }
    }

    /// With no calendar named, the day is the predicted calendar's (Iran, the default region), which keeps the days
    /// that matter when Iran kept them, a day after Umm al-Qura: the night of Eid al-Fitr 1446 on the evening of
    /// 30 March 2025 (not the 29th), Ashura 1447 on 6 July 2025, and 18 February 2026 still in Sha'ban.
    @Test(
        arguments: [
            ("2025-03-29", "1446-09-28", nil, "1446-09-29", "night-of-eid-al-fitr"),
            ("2025-03-30", "1446-09-29", "night-of-eid-al-fitr", "1446-10-01", "eid-al-fitr"),
            ("2025-03-31", "1446-10-01", "eid-al-fitr", "1446-10-02", nil),
            ("2025-07-05", "1447-01-09", "tasua", "1447-01-10", "ashura"),
            ("2025-07-06", "1447-01-10", "ashura", "1447-01-11", nil),
            ("2026-02-18", "1447-08-29", nil, "1447-09-01", nil),
        ] as [(String, String, String?, String, String?)])
    func theDefaultCalendarKeepsTheShiaDates(
        date: String, hijri: String, occasion: String?, ummAlQura: String, ummAlQuraOccasion: String?
    )
        throws
    {
        let service = DailyVerseReports(database: try seededDatabase())
        let day = try CivilDate(parsing: date)
        let report = try service.today(TodayRequest(date: day, timeZone: "UTC"))
        #expect(report.hijriDate == (try HijriDate(parsing: hijri)) && report.hijri.calendar == "predicted")
        #expect(report.occasion?.id == occasion)
        let saudi = try service.today(TodayRequest(date: day, timeZone: "UTC", calendar: .ummAlQura))
        #expect(saudi.hijriDate == (try HijriDate(parsing: ummAlQura)))
        #expect(saudi.occasion?.id == ummAlQuraOccasion)
    }

    /// Days that hold several occasions: the rank decides which leads, and the others are named beside it.
    @Test(
        arguments: [
            ("2024-09-01", "passing-of-the-prophet", ["martyrdom-of-imam-hasan"]),
            ("2024-09-20", "mawlid", ["birth-of-imam-al-sadiq"]),
            ("2025-06-05", "arafah", ["martyrdom-of-muslim-ibn-aqil", "night-of-eid-al-adha"]),
        ] as [(String, String, [String])])
    func aDaysOccasionsLeadByRankAndTheOthersAreNamed(date: String, lead: String, others: [String]) throws {
        let report = try DailyVerseReports(database: try seededDatabase())
            .today(TodayRequest(date: try CivilDate(parsing: date), timeZone: "UTC", calendar: .ummAlQura))
        #expect(report.occasion?.id == lead)
        #expect(report.otherOccasions.map(\.id) == others)
        #expect(report.layers.first { $0.id == "foundation" }?.body != nil)
        // Each one named beside the lead is read with its own passage and the layers written for it.
        for other in report.otherOccasions {
            let own = try DailyVerseReports(database: try seededDatabase()).occasion(other.id)
            #expect(own.occasion.id == other.id && own.occasion.verses == other.verses)
            #expect(own.content.range.key == other.verses)
            #expect(own.content.layers.contains { $0.entry?.occasion == other.id }, "\(other.id) shows entries written for it")
        }
        #expect(throws: StoreError.unknownOccasion("no-such-day")) { try DailyVerseReports(database: try seededDatabase()).occasion("no-such-day") }
    }

    @Test func passagesAreShownWithoutTheBasmalaAndWithAyaNumbers() throws {
        let report = try DailyVerseReports(database: try seededDatabase()).verse(VerseRange(parsing: "96:1-5"))
        #expect(report.verse.arabic.hasPrefix("اقْرَأْ"))
        #expect(report.verse.arabic.contains("\u{FD3F}١\u{FD3E}"))
        #expect(report.verse.arabic.hasSuffix("\u{FD3F}٥\u{FD3E}"))
        #expect(report.verse.translation.text.hasPrefix("Read: In the name of thy Lord Who createth, (1)"))
        #expect(report.verse.ayah == 1 && report.verse.ayahEnd == 5)
        // 1:1 is the basmala itself and stays.
        let fatiha = try DailyVerseReports(database: try seededDatabase()).verse(VerseRange(surah: 1, start: 1))
        #expect(fatiha.verse.arabic.hasPrefix("بِسْمِ"))
    }

    @Test func sameInputsSameVerseAndCalendarsDiffer() throws {
        let service = DailyVerseReports(database: try seededDatabase())
        let date = try CivilDate(parsing: "2025-03-01")
        let a = try service.today(TodayRequest(date: date, timeZone: "Asia/Tokyo"))
        let b = try service.today(TodayRequest(date: date, timeZone: "America/Los_Angeles"))
        #expect(a.verse.key == b.verse.key)
        let adjusted = try service.today(TodayRequest(date: date, timeZone: "UTC", adjustment: Adjustment(-1)))
        #expect(adjusted.hijriDate == HijriDate(year: 1446, month: 8, day: 29))
        #expect(adjusted.theme.id == "hope-and-preparation")
        let tabular = try service.today(TodayRequest(date: date, timeZone: "UTC", calendar: .tabular))
        #expect(tabular.hijri.calendar == "tabular")
    }

    @Test func sightedCalendarReadsPublishedStarts() throws {
        let database = try seededDatabase()
        let now = Date(timeIntervalSince1970: 1_740_000_000)
        try database.publishMonthStart(PublishedMonthStart(year: 1446, month: 9, firstDay: try CivilDate(parsing: "2025-03-02")), at: now)
        let service = DailyVerseReports(database: database)
        let report = try service.today(TodayRequest(date: try CivilDate(parsing: "2025-03-01"), timeZone: "UTC", calendar: .sighted))
        #expect(report.hijriDate == HijriDate(year: 1446, month: 8, day: 30))
        // An inconsistent second start is refused and nothing changes.
        #expect(throws: CalendarError.self) {
            try database.publishMonthStart(PublishedMonthStart(year: 1446, month: 10, firstDay: try CivilDate(parsing: "2025-04-02")), at: now)
        }
        #expect(try database.publishedMonthStarts().count == 1)
        #expect(try database.removeMonthStart(year: 1446, month: 9))
        #expect(try database.removeMonthStart(year: 1446, month: 9) == false)
    }

    @Test func yearCalendarListsMonthsAndOccasions() throws {
        let report = try DailyVerseReports(database: try seededDatabase()).year(1446, calendar: .ummAlQura, adjustment: .zero)
        #expect(report.months.count == 12)
        #expect(report.months[8].start == "2025-03-01")
        #expect(report.months[8].length == 29)
        #expect(report.occasions.first { $0.id == "ghadir" }?.gregorian == "2025-06-14")
        #expect(report.occasions.first { $0.id == "ghadir" }?.shownOn == "2025-06-14")
        // A night is shown from the evening of the civil day before its Hijri day.
        let qadr = try #require(report.occasions.first { $0.id == "qadr-23" })
        #expect(qadr.gregorian == "2025-03-23" && qadr.shownOn == "2025-03-22" && qadr.observed == "night" && qadr.rank == 1)
    }
}
