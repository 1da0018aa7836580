import DailyVerseTestSupport
import Foundation
import Testing

@testable import HTTPAPI

@Suite struct ThrottleTests {
    @Test func admitCountsOnlyWhatItLetsThroughEvenUnderConcurrency() async {
        let throttle = Throttle(limit: 5, window: 3600)
        let now = Date(timeIntervalSince1970: 1_740_000_000)
        // Fifty requests at once from one address: exactly the limit gets in.
        let admitted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { throttle.admit("client", now: now) == nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(admitted == 5)
        // The refused ones counted nothing: the wait runs from the first admitted attempt.
        #expect(throttle.admit("client", now: now.addingTimeInterval(600)) == 3000)
        #expect(throttle.admit("client", now: now.addingTimeInterval(3600)) == nil)
        #expect(throttle.admit("other", now: now) == nil)
    }
}
