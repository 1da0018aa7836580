import DailyVerseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HTTPAPI

@Suite struct UserDataRoutesTests {
    let helper = JSONAPI()

    @Test(arguments: StoreKind.available) func bookmarksBelongToTheirOwner(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let b = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                #expect(try await helper.send(client, .put, "/v1/bookmarks/2:255", token: a).0 == 201)
                #expect(try await helper.send(client, .put, "/v1/bookmarks/2:255", token: a).0 == 200)
                #expect(try await helper.send(client, .put, "/v1/bookmarks/96:1-5", token: a).0 == 201)
                #expect(try await helper.send(client, .put, "/v1/bookmarks/2:300", token: a).0 == 404)
                #expect(try await helper.send(client, .put, "/v1/bookmarks/nonsense", token: a).0 == 400)
                let listed = try await helper.send(client, .get, "/v1/bookmarks", token: a).1["bookmarks"] as? [[String: Any]]
                #expect(listed?.map { $0["verse_key"] as? String } == ["2:255", "96:1-5"])
                // The time each was made, in ISO 8601 (UTC, whole seconds), as the contract says, from either store.
                #expect(listed?.compactMap { $0["created_at"] as? String } == [String](repeating: fixedNow.formatted(.iso8601), count: 2))
                #expect(listed?.first?["created_at"] as? String == "2025-03-01T08:00:00Z")
                // B sees none of A's, and cannot delete them.
                #expect((try await helper.send(client, .get, "/v1/bookmarks", token: b).1["bookmarks"] as? [Any])?.isEmpty == true)
                #expect(try await helper.send(client, .delete, "/v1/bookmarks/2:255", token: b).0 == 404)
                #expect(try await helper.send(client, .delete, "/v1/bookmarks/2:255", token: a).0 == 204)
                #expect((try await helper.send(client, .get, "/v1/bookmarks", token: a).1["bookmarks"] as? [Any])?.count == 1)
            }
        }
    }

    @Test(arguments: StoreKind.available) func settingsArePatchedFieldByFieldAndChecked(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let defaults = try await helper.get(client, "/v1/me", token: a).1["settings"] as? [String: Any]
                #expect(defaults?["reminder_time"] as? String == "08:00")
                #expect(defaults?["notifications"] as? Bool == false)
                let (status, patched) = try await helper.send(
                    client, .patch, "/v1/me/settings", ["reminder_time": "06:45", "timezone": "Asia/Baghdad", "locale": "ar"], token: a)
                #expect(status == 200)
                let settings = patched["settings"] as? [String: Any]
                #expect(settings?["reminder_time"] as? String == "06:45")
                #expect(settings?["timezone"] as? String == "Asia/Baghdad")
                #expect(settings?["display_theme"] as? String == "parchment")
                // The same rules and codes as the device routes (the fields go to the user's devices too).
                for (bad, code): ([String: Any], String) in [
                    (["reminder_time": "25:00"], "bad_time"), (["timezone": "Mars/Olympus"], "bad_zone"), (["adjustment": 7], "bad_adjustment"),
                    (["display_theme": "neon"], "bad_theme"), (["locale": "fr"], "bad_locale"), (["calendar": "lunar"], "bad_calendar"),
                    (["reminder_time": "05:00", "calendar": "lunar"], "bad_calendar"), (["colour": "red"], "unknown_field"),
                ] {
                    let (status, body) = try await helper.send(client, .patch, "/v1/me/settings", bad, token: a)
                    #expect(status == 400 && (body["error"] as? [String: Any])?["code"] as? String == code, "\(bad): \(body)")
                }
                #expect(try await helper.send(client, .patch, "/v1/me/settings", ["adjustment": "one"], token: a).0 == 400)
                // Nothing of the refused patches stuck.
                #expect((try await helper.get(client, "/v1/me", token: a).1["settings"] as? [String: Any])?["reminder_time"] as? String == "06:45")
            }
        }
    }

    @Test(arguments: StoreKind.available) func completingOnboardingCarriesThemeAndNotificationsIntoSettings(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                for event in [
                    ["type": "advance"], ["type": "advance"], ["type": "advance"], ["type": "notification_permission", "state": "primed"],
                    ["type": "notification_permission", "state": "granted"], ["type": "advance"], ["type": "select_theme", "theme": "dawn"],
                    ["type": "choose_account", "mode": "guest"], ["type": "complete"],
                ] {
                    #expect(try await helper.post(client, "/v1/onboarding/events", event, token: a).0 == 200, "\(event)")
                }
                let settings = try await helper.get(client, "/v1/me", token: a).1["settings"] as? [String: Any]
                #expect(settings?["display_theme"] as? String == "dawn")
                #expect(settings?["notifications"] as? Bool == true)
            }
        }
    }
}
