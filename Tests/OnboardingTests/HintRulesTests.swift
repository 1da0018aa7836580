import Foundation
import Testing

@testable import Onboarding

@Suite struct HintRulesTests {
    static let catalog: HintCatalog = try! HintCatalog.load(
        from: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("data"))
    let baghdad = TimeZone(identifier: "Asia/Baghdad")!
    /// 2025-03-01 23:30 in Baghdad (UTC+3).
    let lateEvening = Date(timeIntervalSince1970: 1_740_861_000)

    func eligible(_ records: [String: HintRecord] = [:], _ counts: [String: Int] = [:], tutorial: Bool = false, at now: Date? = nil) -> [String] {
        HintRules.eligible(
            catalog: Self.catalog, records: records, eventCounts: counts, tutorial: tutorial, now: now ?? lateEvening, zone: baghdad
        ).map(\.id)
    }

    @Test func theCatalogInDataIsValid() {
        #expect(Self.catalog.hints.map(\.id) == ["layers_swipe", "bookmark_verse", "reminder_time", "islamic_calendar", "share_verse"])
    }

    @Test func aHintWaitsForItsEventCount() {
        #expect(eligible() == [])
        #expect(eligible([:], ["verse_opened": 1]) == ["layers_swipe"])
        #expect(eligible([:], ["app_opened": 4]) == [])
        #expect(eligible([:], ["app_opened": 5]) == ["islamic_calendar"])
    }

    @Test func aHintShowsOnceAndNeverAfterItsActionWasDone() {
        let shownYesterday = HintRecord(shownAt: lateEvening.addingTimeInterval(-86_400))
        #expect(eligible(["layers_swipe": shownYesterday], ["verse_opened": 3]) == ["bookmark_verse"])
        #expect(eligible(["layers_swipe": HintRecord(dismissedAt: lateEvening.addingTimeInterval(-86_400))], ["verse_opened": 1]) == [])
        // The user already swiped through the layers: the hint would teach nothing.
        #expect(eligible([:], ["verse_opened": 3, "layer_viewed": 1]) == ["bookmark_verse"])
    }

    @Test func atMostOneNewHintPerLocalDay() {
        let counts = ["verse_opened": 3]
        let shownTonight = HintRecord(shownAt: lateEvening.addingTimeInterval(-3600))
        #expect(eligible(["layers_swipe": shownTonight], counts) == [])
        // 40 minutes later it is the next day in Baghdad (still the same day in UTC).
        #expect(eligible(["layers_swipe": shownTonight], counts, at: lateEvening.addingTimeInterval(2400)) == ["bookmark_verse"])
        // A hint replayed in the tutorial does not use up the day.
        #expect(eligible(["layers_swipe": HintRecord(shownAt: lateEvening, shownInTutorial: true)], counts) == ["bookmark_verse"])
    }

    @Test func tutorialModeReplaysEveryHint() {
        let all = ["layers_swipe", "bookmark_verse", "reminder_time", "islamic_calendar", "share_verse"]
        #expect(eligible(["layers_swipe": HintRecord(shownAt: lateEvening, dismissedAt: lateEvening)], ["layer_viewed": 9], tutorial: true) == all)
    }

    @Test func aCatalogIsChecked() {
        let hint = HintCatalog.Hint(id: "a", title: "A", body: "a", after: nil, invalidatedBy: nil)
        #expect(throws: OnboardingError.self) { try HintCatalog(version: 1, hints: [hint, hint]) }
        #expect(throws: OnboardingError.self) {
            try HintCatalog(version: 1, hints: [HintCatalog.Hint(id: "Bad Id", title: "", body: "", after: nil, invalidatedBy: nil)])
        }
        #expect(throws: OnboardingError.self) {
            try HintCatalog(
                version: 1, hints: [HintCatalog.Hint(id: "b", title: "", body: "", after: .init(event: "x", count: 0), invalidatedBy: nil)])
        }
        #expect(HintRules.isEventName("verse_opened"))
        #expect(!HintRules.isEventName("Verse opened") && !HintRules.isEventName("") && !HintRules.isEventName(String(repeating: "a", count: 65)))
    }
}
