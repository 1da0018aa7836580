import AppSchema
import DailyVerseTestSupport
import Foundation
import Storage
import Testing

@testable import Delivery

/// A platform one process found misconfigured (its key revoked) is paused in every process: each reads the pauses back
/// from PostgreSQL, at most every few seconds, rather than spending its own requests to find it out.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct SharedPausesTests {
    @Test func aPauseOneProcessMakesTheOthersHonour() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let (first, second) = (PauseBoard(store: store), PauseBoard(store: store))
            await second.refresh(now: now)
            await first.pause("apns", reason: "InvalidProviderToken", now: now, until: now.addingTimeInterval(300))
            #expect(second.remaining("apns", now: now) == nil)
            // Read back at most every five seconds: not yet at 4 s, then at 5 s.
            await second.refresh(now: now.addingTimeInterval(4))
            #expect(second.remaining("apns", now: now.addingTimeInterval(4)) == nil)
            await second.refresh(now: now.addingTimeInterval(5))
            #expect(second.remaining("apns", now: now.addingTimeInterval(5)) == 295)
            #expect(second.reason("apns") == "InvalidProviderToken" && second.remaining("fcm", now: now) == nil)
            // A pause that has ended is not read back.
            await first.pause("fcm", reason: "bad key", now: now, until: now.addingTimeInterval(6))
            await second.refresh(now: now.addingTimeInterval(10))
            #expect(second.reason("fcm") == nil)
            // A pause taken from the database ends with it: the first process's send was accepted (the key fixed).
            await first.clear("apns")
            await second.refresh(now: now.addingTimeInterval(16))
            #expect(second.remaining("apns", now: now.addingTimeInterval(16)) == nil && second.reason("apns") == nil)
            // Its own pause, from its own answer, is not the database's to end.
            await second.pause("webpush", reason: "VAPID key refused", now: now, until: now.addingTimeInterval(300))
            try await store.clearPause(platform: "webpush")
            await second.refresh(now: now.addingTimeInterval(22))
            #expect(second.remaining("webpush", now: now.addingTimeInterval(22)) == 278)
            await store.close()
        }
    }
}
