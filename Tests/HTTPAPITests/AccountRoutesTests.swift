import Accounts
import DailyVerseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HTTPAPI

@Suite struct AccountRoutesTests: JSONRequests {
    @Test(arguments: StoreKind.available) func guestsAccountsAndSessions(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let (status, guest) = try await post(client, "/v1/guests", [:])
                #expect(status == 201)
                #expect(user(guest)["mode"] as? String == "guest")
                #expect(token(guest).count == 43)
                #expect(try await get(client, "/v1/me", token: token(guest)).1["user"] as? [String: String] == user(guest) as? [String: String])

                let (created, account) = try await post(client, "/v1/accounts", ["email": "Amina@Example.org", "password": "a long passphrase"])
                #expect(created == 201)
                #expect(user(account)["email"] as? String == "amina@example.org")
                #expect(try await post(client, "/v1/accounts", ["email": "amina@example.org", "password": "another passphrase"]).0 == 409)
                #expect(try await post(client, "/v1/accounts", ["email": "x@example.org", "password": "short"]).0 == 400)
                #expect(try await post(client, "/v1/accounts", ["email": "not-an-email", "password": "a long passphrase"]).0 == 400)

                let (signedIn, session) = try await post(client, "/v1/sessions", ["email": "amina@example.org", "password": "a long passphrase"])
                #expect(signedIn == 200)
                #expect(user(session)["id"] as? String == user(account)["id"] as? String)
                // Unknown email and wrong password get the same answer.
                let wrong = try await post(client, "/v1/sessions", ["email": "amina@example.org", "password": "not the passphrase"])
                let unknown = try await post(client, "/v1/sessions", ["email": "nobody@example.org", "password": "not the passphrase"])
                #expect(wrong.0 == 401 && unknown.0 == 401)
                #expect(wrong.1["error"] as? [String: String] == unknown.1["error"] as? [String: String])

                // Signing out revokes that token only.
                let status204 = try await client.execute(uri: "/v1/sessions", method: .delete, headers: bearer(token(session))) { $0.status.code }
                #expect(status204 == 204)
                #expect(try await get(client, "/v1/me", token: token(session)).0 == 401)
                #expect(try await get(client, "/v1/me", token: token(account)).0 == 200)
                #expect(try await get(client, "/v1/me", token: "not-a-token").0 == 401)
                #expect(try await get(client, "/v1/me", token: nil).0 == 401)
            }
        }
    }

    @Test(arguments: StoreKind.available) func newAccountsAreLimitedPerClient(_ store: StoreKind) async throws {
        try await store.run {
            let clock = SettableClock()
            try await makeApp(clock: { clock.now }).test(.router) { client in
                for n in 0..<5 {
                    #expect(try await post(client, "/v1/accounts", ["email": "n\(n)@example.org", "password": "a long passphrase"]).0 == 201)
                }
                let refused = try await client.execute(
                    uri: "/v1/accounts", method: .post, headers: [.contentType: "application/json"],
                    body: try body(["email": "n5@example.org", "password": "a long passphrase"])
                ) { ($0.status.code, $0.headers[.retryAfter]) }
                #expect(refused.0 == 429)
                #expect(refused.1 == "3600")
                clock.now = clock.now.addingTimeInterval(3600)
                #expect(try await post(client, "/v1/accounts", ["email": "n5@example.org", "password": "a long passphrase"]).0 == 201)
            }
        }
    }

    @Test(arguments: StoreKind.available) func passwordHashingIsBoundedAndRefusesWhenTooManyWait(_ store: StoreKind) async throws {
        try await store.run {
            let gate = HashingGate(limit: 1, waiting: 0)
            let latch = Latch()
            // Another sign-up holds the only place.
            let holder = Task { try await gate.run { latch.hold() } }
            await latch.waitUntilStarted()
            try await makeApp(clock: { fixedNow }, hashing: gate).test(.router) { client in
                let refused = try await client.execute(
                    uri: "/v1/sessions", method: .post, headers: [.contentType: "application/json"],
                    body: try body(["email": "nobody@example.org", "password": "a long passphrase"])
                ) { ($0.status.code, $0.headers[.retryAfter], try object($0.body)) }
                #expect(refused.0 == 503)
                #expect(refused.1 == "1")
                #expect((refused.2["error"] as? [String: Any])?["code"] as? String == "busy")
                latch.letGo()
                try await holder.value
                #expect(try await post(client, "/v1/sessions", ["email": "nobody@example.org", "password": "a long passphrase"]).0 == 401)
            }
        }
    }

    @Test(arguments: StoreKind.available) func repeatedFailedSignInsAreThrottledThenForgiven(_ store: StoreKind) async throws {
        try await store.run {
            let clock = SettableClock()
            try await makeApp(clock: { clock.now }).test(.router) { client in
                _ = try await post(client, "/v1/accounts", ["email": "amina@example.org", "password": "a long passphrase"])
                for _ in 0..<5 {
                    #expect(try await post(client, "/v1/sessions", ["email": "amina@example.org", "password": "wrong guess!"]).0 == 401)
                }
                // Now even the right password waits, with Retry-After.
                let refused = try await client.execute(
                    uri: "/v1/sessions", method: .post, headers: [.contentType: "application/json"],
                    body: try body(["email": "amina@example.org", "password": "a long passphrase"])
                ) { response in (response.status.code, response.headers[.retryAfter]) }
                #expect(refused.0 == 429)
                #expect(refused.1 == "900")
                clock.now = clock.now.addingTimeInterval(901)
                #expect(try await post(client, "/v1/sessions", ["email": "amina@example.org", "password": "a long passphrase"]).0 == 200)
            }
        }
    }

    /// The probe's look-alikes: each is the first account, or refused, never a second account that reads the same.
    @Test(arguments: StoreKind.available) func emailsThatReadAlikeAreOneAccount(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let password = "a long passphrase"
                #expect(try await post(client, "/v1/accounts", ["email": "jos\u{E9}@example.org", "password": password]).0 == 201)
                #expect(try await post(client, "/v1/accounts", ["email": "jose\u{301}@example.org", "password": password]).0 == 409)
                #expect(try await post(client, "/v1/sessions", ["email": "JOSE\u{301}@example.org", "password": password]).0 == 200)
                #expect(try await post(client, "/v1/accounts", ["email": "bob@example.com", "password": password]).0 == 201)
                #expect(try await post(client, "/v1/accounts", ["email": "ｂｏｂ@example.com", "password": password]).0 == 409)
                for hidden in ["\u{200B}", "\u{AD}", "\u{200E}"] {
                    let (status, reply) = try await post(client, "/v1/accounts", ["email": "bo\(hidden)b@example.com", "password": password])
                    #expect(status == 400)
                    #expect((reply["error"] as? [String: Any])?["code"] as? String == "bad_email")
                }
            }
            try await makeApp(now: fixedNow).test(.router) { client in
                let (status, reply) = try await post(
                    client, "/v1/accounts", ["email": "amina@example.org", "password": "a long passphrase", "display_name": "amina\u{202E}gpj.exe"])
                #expect(status == 400)
                #expect((reply["error"] as? [String: Any])?["code"] as? String == "bad_display_name")
            }
        }
    }

    @Test(arguments: StoreKind.available) func guestCreationIsLimitedPerClient(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                for _ in 0..<10 { #expect(try await post(client, "/v1/guests", [:]).0 == 201) }
                let (status, error) = try await post(client, "/v1/guests", [:])
                #expect(status == 429)
                #expect((error["error"] as? [String: Any])?["code"] as? String == "too_many_requests")
            }
        }
    }

    @Test(arguments: StoreKind.available) func aGuestUpgradesInPlaceAndKeepsItsOnboarding(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let (_, guest) = try await post(client, "/v1/guests", [:])
                let guestToken = token(guest)
                _ = try await post(client, "/v1/onboarding/events", ["type": "view"], token: guestToken)
                _ = try await post(client, "/v1/onboarding/events", ["type": "advance"], token: guestToken)
                let (status, account) = try await post(
                    client, "/v1/accounts", ["email": "yusuf@example.org", "password": "a long passphrase"], token: guestToken)
                #expect(status == 201)
                #expect(user(account)["id"] as? String == user(guest)["id"] as? String)
                #expect(user(account)["mode"] as? String == "account")
                let state = try await get(client, "/v1/onboarding", token: token(account)).1
                #expect(state["current_screen"] as? String == "mission")
                // An account cannot upgrade again.
                #expect(
                    try await post(client, "/v1/accounts", ["email": "other@example.org", "password": "a long passphrase"], token: token(account)).0
                        == 409)
            }
        }
    }

    @Test(arguments: StoreKind.available) func onboardingOverHTTP(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = token(try await post(client, "/v1/guests", [:]).1)
                let b = token(try await post(client, "/v1/guests", [:]).1)
                let initial = try await get(client, "/v1/onboarding", token: a).1
                #expect(initial["current_screen"] as? String == "hadith")
                #expect(initial["flow_version"] as? Int == 1)
                for event in [
                    ["type": "view"], ["type": "skip"], ["type": "select_theme", "theme": "emerald"], ["type": "choose_account", "mode": "guest"],
                    ["type": "complete"],
                ] {
                    let (status, _) = try await post(client, "/v1/onboarding/events", event, token: a)
                    #expect(status == 200, "\(event)")
                }
                let done = try await get(client, "/v1/onboarding", token: a).1
                #expect(done["completed_at"] is String)
                #expect(done["skipped_from"] as? String == "hadith")
                #expect(done["theme"] as? String == "emerald")
                // Another user's state is untouched.
                #expect(try await get(client, "/v1/onboarding", token: b).1["current_screen"] as? String == "hadith")
                // A transition the flow does not allow: 409 and no change.
                let (refused, error) = try await post(client, "/v1/onboarding/events", ["type": "back"], token: b)
                #expect(refused == 409)
                #expect((error["error"] as? [String: Any])?["code"] as? String == "invalid_transition")
                #expect(try await get(client, "/v1/onboarding", token: b).1["current_screen"] as? String == "hadith")
                // Bad events and bad bodies are 4xx.
                #expect(try await post(client, "/v1/onboarding/events", ["type": "dance"], token: b).0 == 400)
                #expect(try await post(client, "/v1/onboarding/events", ["type": "preview_layer"], token: b).0 == 400)
                #expect(try await post(client, "/v1/onboarding/events", ["type": "view"], token: nil).0 == 401)
                // Each says what was wrong, with the code the device routes use for a body that is not JSON.
                func refusal(_ body: String) async throws -> (Int, String?, String) {
                    try await client.execute(uri: "/v1/onboarding/events", method: .post, headers: bearer(b), body: ByteBuffer(string: body)) {
                        response in
                        let error =
                            (try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["error"] as? [String: Any]
                        return (Int(response.status.code), error?["code"] as? String, error?["message"] as? String ?? "")
                    }
                }
                let malformed = try await refusal("{not json")
                #expect(malformed.0 == 400 && malformed.1 == "bad_json")
                #expect(malformed.2.hasPrefix("the body is not the JSON this route takes: "), "\(malformed.2)")
                let mistyped = try await refusal(#"{"type":7}"#)
                #expect(mistyped.0 == 400 && mistyped.1 == "bad_json" && mistyped.2.contains("`type`"), "\(mistyped.2)")
                let huge = try await refusal(#"{"type":"view","layer":""# + String(repeating: "x", count: 40_000) + "\"}")
                #expect(huge.0 == 413 && huge.1 == "body_too_large" && huge.2 == "the body is over the limit of 16384 bytes")
                let nowhere = try await client.execute(uri: "/v1/nowhere", method: .get) { response in
                    (try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["error"] as? [String: String]
                }
                #expect(nowhere == ["code": "not_found", "message": "no route GET /v1/nowhere"])
            }
        }
    }
}

@Suite struct MergeTests {
    let helper = JSONAPI()

    @Test(arguments: StoreKind.available) func signingInAsAGuestMergesTheGuestIntoTheAccount(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                // An account with a bookmark and its own settings, and no onboarding progress.
                let account = helper.token(
                    try await helper.post(client, "/v1/accounts", ["email": "amina@example.org", "password": "a long passphrase"]).1)
                _ = try await client.execute(uri: "/v1/bookmarks/2:255", method: .put, headers: helper.bearer(account)) { $0.status }
                _ = try await client.execute(
                    uri: "/v1/me/settings", method: .patch, headers: helper.bearer(account), body: try helper.body(["reminder_time": "05:30"])
                ) { $0.status }
                // A guest on another phone, further along in onboarding, with its own bookmarks and settings.
                let guestReply = try await helper.post(client, "/v1/guests", [:]).1
                let guest = helper.token(guestReply)
                for key in ["2:255", "96:1-5"] {
                    _ = try await client.execute(uri: "/v1/bookmarks/\(key)", method: .put, headers: helper.bearer(guest)) { $0.status }
                }
                _ = try await client.execute(
                    uri: "/v1/me/settings", method: .patch, headers: helper.bearer(guest), body: try helper.body(["reminder_time": "07:00"])
                ) { $0.status }
                for event in [["type": "view"], ["type": "advance"], ["type": "view"]] {
                    _ = try await helper.post(client, "/v1/onboarding/events", event, token: guest)
                }

                let (status, signedIn) = try await helper.post(
                    client, "/v1/sessions", ["email": "amina@example.org", "password": "a long passphrase"], token: guest)
                #expect(status == 200)
                let merged = helper.token(signedIn)
                #expect(helper.user(signedIn)["mode"] as? String == "account")
                // Bookmarks united, progress from the guest, the account's own settings kept.
                let bookmarks = try await helper.get(client, "/v1/bookmarks", token: merged).1["bookmarks"] as? [[String: Any]]
                #expect(Set(bookmarks?.compactMap { $0["verse_key"] as? String } ?? []) == ["2:255", "96:1-5"])
                #expect(try await helper.get(client, "/v1/onboarding", token: merged).1["current_screen"] as? String == "mission")
                #expect(
                    (try await helper.get(client, "/v1/me", token: merged).1["settings"] as? [String: Any])?["reminder_time"] as? String == "05:30")
                // The guest is retired: its token no longer works.
                #expect(try await helper.get(client, "/v1/me", token: guest).0 == 401)
            }
        }
    }
}
