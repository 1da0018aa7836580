import DailyVerseTestSupport
import Engagement
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HTTPAPI

@Suite struct HintRoutesTests {
    let helper = JSONAPI()

    func hints(_ client: some TestClientProtocol, _ token: String) async throws -> [String] {
        let body = try await helper.get(client, "/v1/hints", token: token).1
        return (body["hints"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
    }

    func event(_ client: some TestClientProtocol, _ name: String, _ token: String, times: Int = 1) async throws {
        for _ in 0..<times { #expect(try await helper.post(client, "/v1/events", ["name": name], token: token).0 == 200) }
    }

    @Test(arguments: StoreKind.available) func aHintShowsOnceAfterItsEventAndOneNewHintADay(_ store: StoreKind) async throws {
        try await store.run {
            let clock = SettableClock()
            try await makeApp(clock: { clock.now }).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                #expect(try await hints(client, a) == [])
                try await event(client, "verse_opened", a, times: 3)
                #expect(try await hints(client, a) == ["layers_swipe"])
                // Not eligible yet: refused, nothing recorded.
                let (refused, error) = try await helper.post(client, "/v1/hints/bookmark_verse/shown", [:], token: a)
                #expect(refused == 409)
                #expect((error["error"] as? [String: Any])?["code"] as? String == "invalid_transition")
                #expect(try await helper.post(client, "/v1/hints/layers_swipe/dismissed", [:], token: a).0 == 409)
                let (shown, record) = try await helper.post(client, "/v1/hints/layers_swipe/shown", [:], token: a)
                #expect(shown == 200)
                #expect(record["shown_at"] as? String == "2025-03-01T08:00:00Z")
                #expect(try await helper.post(client, "/v1/hints/layers_swipe/shown", [:], token: a).0 == 200)
                #expect(try await helper.post(client, "/v1/hints/layers_swipe/dismissed", [:], token: a).0 == 200)
                // bookmark_verse's rule is met, but one new hint a day is the limit.
                #expect(try await hints(client, a) == [])
                clock.now = clock.now.addingTimeInterval(86_400)
                #expect(try await hints(client, a) == ["bookmark_verse"])
                #expect(try await helper.post(client, "/v1/hints/nonsense/shown", [:], token: a).0 == 404)
            }
        }
    }

    @Test(arguments: StoreKind.available) func theActionItTeachesInvalidatesAHint(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                try await event(client, "verse_opened", a)
                try await event(client, "layer_viewed", a)
                #expect(try await hints(client, a) == [])
            }
        }
    }

    @Test(arguments: StoreKind.available) func tutorialModeBelongsToOneSessionAndResetForgets(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let created = try await helper.post(client, "/v1/accounts", ["email": "hints@example.org", "password": "correct horse battery"])
                let first = helper.token(created.1)
                let second = helper.token(
                    try await helper.post(client, "/v1/sessions", ["email": "hints@example.org", "password": "correct horse battery"]).1)
                #expect(try await helper.post(client, "/v1/hints/tutorial", [:], token: first).0 == 200)
                let all = ["layers_swipe", "bookmark_verse", "reminder_time", "islamic_calendar", "share_verse"]
                #expect(try await hints(client, first) == all)
                #expect(try await hints(client, second) == [])
                // Replayed hints can be shown and dismissed in the tutorial, and again.
                for _ in 0..<2 {
                    #expect(try await helper.post(client, "/v1/hints/share_verse/shown", [:], token: first).0 == 200)
                    #expect(try await helper.post(client, "/v1/hints/share_verse/dismissed", [:], token: first).0 == 200)
                }
                #expect(try await helper.post(client, "/v1/hints/tutorial", ["enabled": false], token: first).0 == 200)
                #expect(try await helper.post(client, "/v1/hints/tutorial", ["enabled": "yes"], token: first).0 == 400)
                try await event(client, "verse_opened", second, times: 7)
                #expect(try await hints(client, first) == ["layers_swipe"])
                #expect(try await helper.post(client, "/v1/hints/reset", [:], token: second).0 == 200)
                #expect(try await hints(client, first) == [])
            }
        }
    }

    @Test(arguments: StoreKind.available) func eventsAreCheckedAndBounded(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let (status, body) = try await helper.post(client, "/v1/events", ["name": "verse_opened"], token: a)
                #expect(status == 200 && body["count"] as? Int == 1)
                for bad: [String: Any] in [["name": "Verse Opened"], ["name": ""], ["name": 7], [:], ["name": "ok", "extra": 1]] {
                    #expect(try await helper.post(client, "/v1/events", bad, token: a).0 == 400, "\(bad)")
                }
                #expect(try await helper.post(client, "/v1/events", ["name": "x"]).0 == 401)
                for n in 1..<maximumEventNames { try await event(client, "event_\(n)", a) }
                #expect(try await helper.post(client, "/v1/events", ["name": "one_too_many"], token: a).0 == 409)
                #expect(try await helper.post(client, "/v1/events", ["name": "verse_opened"], token: a).0 == 200)
            }
        }
    }

    /// A guest's event names join its account's only while the account has room for them: the counts of names both
    /// have are added, and of the guest's others the latest join until the account has the most allowed (signing in
    /// guests one after another took an account past it).
    @Test(arguments: StoreKind.available) func aGuestsEventNamesNeverTakeItsAccountPastTheLimit(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let credentials = ["email": "names@example.org", "password": "correct horse battery"]
                let account = helper.token(try await helper.post(client, "/v1/accounts", credentials).1)
                try await event(client, "shared", account)
                // 98 names: room for two more.
                for n in 3..<maximumEventNames { try await event(client, "account_\(n)", account) }
                let guest = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                for name in ["shared", "guest_a", "guest_b", "guest_c", "guest_d"] { try await event(client, name, guest) }
                #expect(try await helper.post(client, "/v1/sessions", credentials, token: guest).0 == 200)
                // 1 + 1 before, and this one.
                #expect(try await helper.post(client, "/v1/events", ["name": "shared"], token: account).1["count"] as? Int == 3)
                // Room for two more: guest_a and guest_b (the same moment, so by name); not guest_c, nor a new one.
                #expect(try await helper.post(client, "/v1/events", ["name": "guest_b"], token: account).1["count"] as? Int == 2)
                #expect(try await helper.post(client, "/v1/events", ["name": "guest_c"], token: account).0 == 409)
                #expect(try await helper.post(client, "/v1/events", ["name": "brand_new"], token: account).0 == 409)
            }
        }
    }

    @Test(arguments: StoreKind.available) func aGuestsHintsFollowItIntoItsAccount(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                _ = try await helper.post(client, "/v1/accounts", ["email": "merge@example.org", "password": "correct horse battery"])
                let guest = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                try await event(client, "verse_opened", guest)
                #expect(try await helper.post(client, "/v1/hints/layers_swipe/shown", [:], token: guest).0 == 200)
                let account = helper.token(
                    try await helper.post(client, "/v1/sessions", ["email": "merge@example.org", "password": "correct horse battery"], token: guest).1
                )
                // Shown today as a guest: not again, and the day's new hint is used.
                try await event(client, "verse_opened", account, times: 2)
                #expect(try await hints(client, account) == [])
            }
        }
    }
}
