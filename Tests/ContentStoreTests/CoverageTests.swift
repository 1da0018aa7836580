import ContentStore
import DailyVerseTestSupport
import Foundation
import HijriCalendar
import Testing
import VerseCalendar
import VerseOfTheDay

@Suite struct CoverageTests {
    @Test func everyDayOfTheYearIsCountedOnceAndEachLayerAddsUp() throws {
        let database = try seededDatabase()
        let report = try DailyVerseReports(database: database).coverage(year: 1446, calendar: .ummAlQura)
        let calendar = try database.islamicCalendar(.ummAlQura)
        #expect(report.days == (try (1...12).reduce(0) { $0 + (try calendar.monthLength(year: 1446, month: $1)) }))
        #expect(report.layers.map(\.id) == Layer.ids)
        for layer in report.layers {
            // The days a layer is shown and the days of the selections that lack it are the whole year.
            let lacking = report.incomplete.filter { $0.missing.contains(layer.id) }
            #expect(layer.days + lacking.reduce(0) { $0 + $1.days } == report.days, "\(layer.id)")
            #expect(lacking.count == layer.missing)
        }
        // Every occasion of the year is one of its selections.
        let occasions = try DailyVerseReports(database: database).year(1446, calendar: .ummAlQura, adjustment: .zero).occasions
        #expect(report.selections >= Set(occasions.map(\.id)).count)
        #expect(report.entries.values.reduce(0, +) > 0)
    }

    @Test func anEntryForASelectionShowsOnItsDays() throws {
        let database = try seededDatabase()
        let service = DailyVerseReports(database: database)
        let before = try service.coverage(year: 1446, calendar: .ummAlQura)
        let target = try #require(before.incomplete.first { $0.occasion == nil })
        let layer = try #require(target.missing.first)
        let line =
            #"{"verses": "\#(target.verses)", "layer": "\#(layer)", "body": "Test.", "source": {"work": null, "author": null, "reference": null, "provenance": "editorial"}}"#
        try database.importCommentary(CommentaryFile(data: Data(line.utf8), name: "t.jsonl"), name: "t.jsonl")
        let after = try service.coverage(year: 1446, calendar: .ummAlQura)
        let shown = { (report: CoverageReport) in report.layers.first { $0.id == layer }! }
        #expect(shown(after).days == shown(before).days + target.days)
        #expect(shown(after).missing == shown(before).missing - 1)
        #expect(after.entries["editorial"] == (before.entries["editorial"] ?? 0) + 1)
    }
}
