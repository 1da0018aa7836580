import Accounts
import DailyVerseTestSupport
import Engagement
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HTTPAPI

/// What an attacker tries first: integers past every range, encoded paths, bodies and methods no route expects,
/// requests at once, another user's push token.
@Suite struct HardeningRoutesTests {
    let helper = JSONAPI()

    func status(
        _ client: some TestClientProtocol, _ uri: String, method: HTTPRequest.Method = .get, headers: HTTPFields = [:], body: ByteBuffer? = nil
    )
        async throws -> (Int, String?, HTTPFields, ByteBuffer)
    {
        try await client.execute(uri: uri, method: method, headers: headers, body: body) { response in
            let code =
                response.body.readableBytes > 0
                ? ((try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any]).flatMap {
                    ($0["error"] as? [String: Any])?["code"] as? String
                }
                : nil
            return (Int(response.status.code), code, response.headers, response.body)
        }
    }

    // MARK: - Integers from outside

    @Test func everyIntegerInAPathOrQueryIsRangeChecked() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let huge = ["768614336404565951", "\(Int.max)", "\(Int.min)", "99999999999999999999999", "-1", "0", "10000", "1e3", "0x10", "%2D1"]
            for year in huge {
                let (code, error, _, _) = try await status(client, "/v1/calendar/\(year)")
                #expect(code == 400, "year \(year)")
                #expect(error == "bad_year", "year \(year)")
            }
            // Inside 1–9999 but outside the calendar: out_of_range; at its edges: served.
            for (year, expected) in [("1299", 400), ("1300", 200), ("1500", 200), ("1501", 400), ("9999", 400)] {
                #expect(try await status(client, "/v1/calendar/\(year)").0 == expected, "year \(year)")
            }
            for (year, expected) in [("1299", 400), ("1300", 200), ("1600", 200), ("1601", 400)] {
                #expect(try await status(client, "/v1/calendar/\(year)?calendar=umm-al-qura").0 == expected, "year \(year)")
            }
            #expect(try await status(client, "/v1/calendar/9999?calendar=tabular").0 == 400)
            #expect(try await status(client, "/v1/calendar/9000?calendar=tabular").0 == 200)
            for adjust in ["\(Int.max)", "\(Int.min)", "-3", "3", "1.5", "", "9223372036854775808"] {
                let (code, error, _, _) = try await status(client, "/v1/today?adjust=\(adjust)")
                #expect(code == 400 && error == "bad_calendar", "adjust \(adjust)")
            }
            for adjust in ["-2", "2"] { #expect(try await status(client, "/v1/today?adjust=\(adjust)").0 == 200) }
            for date in ["0000-01-01", "10000-01-01", "9223372036854775807-01-01", "2025-02-29"] {
                #expect(try await status(client, "/v1/today?date=\(date)").1 == "bad_date", "date \(date)")
            }
            // The first and last days some calendar covers are answered; past them, out_of_range.
            #expect(try await status(client, "/v1/today?date=0001-01-01").1 == "out_of_range")
            #expect(try await status(client, "/v1/today?date=0700-01-01&calendar=tabular").0 == 200)
            #expect(try await status(client, "/v1/today?date=9999-12-31&calendar=tabular&adjust=2").1 == "out_of_range")
        }
    }

    @Test func devicesAndSettingsRefuseIntegersPastTheirRange() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            for value in [Int.max, Int.min, 3, -3] {
                let device: [String: Any] = ["platform": "apns", "token": String(format: "%064x", 7), "timezone": "UTC", "adjustment": value]
                #expect(try await helper.send(client, .post, "/v1/devices", device, token: a).0 == 400, "adjustment \(value)")
                #expect(try await helper.send(client, .patch, "/v1/me/settings", ["adjustment": value], token: a).0 == 400, "adjustment \(value)")
            }
            // A number JSON cannot hold in 64 bits.
            let raw = ByteBuffer(string: #"{"adjustment": 1e400}"#)
            #expect(try await status(client, "/v1/me/settings", method: .patch, headers: helper.bearer(a), body: raw).0 == 400)
            let big = ByteBuffer(
                string: #"{"platform": "apns", "token": "\#(String(format: "%064x", 8))", "timezone": "UTC", "adjustment": 18446744073709551616}"#)
            #expect(try await status(client, "/v1/devices", method: .post, headers: helper.bearer(a), body: big).0 == 400)
        }
    }

    // MARK: - Paths, methods, bodies

    @Test func pathParametersArePercentDecoded() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let (code, _, _, body) = try await status(client, "/v1/verses/2%3A255")
            #expect(code == 200)
            #expect(String(buffer: body).contains(#""key":"2:255""#))
            #expect(try await status(client, "/v1/verses/2%3a255-257").0 == 200)
            #expect(try await status(client, "/v1/verses/%FF").1 == "bad_path")
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            #expect(try await helper.send(client, .put, "/v1/bookmarks/2%3A255", token: a).0 == 201)
            let listed = try await helper.send(client, .get, "/v1/bookmarks", token: a).1["bookmarks"] as? [[String: Any]]
            #expect(listed?.first?["verse_key"] as? String == "2:255")
            #expect(try await helper.send(client, .delete, "/v1/bookmarks/2%3A255", token: a).0 == 204)
        }
    }

    @Test func aPassageFromAya1HasItsBasmalaAsAHeading() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let (_, _, _, body) = try await status(client, "/v1/verses/96:1-5")
            let verse = try #require((try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["verse"] as? [String: Any])
            let basmala = try #require(verse["basmala"] as? String)
            #expect(basmala.split(separator: " ").count == 4)
            #expect(basmala.unicodeScalars.first == "\u{0628}")
            #expect(!(verse["arabic"] as? String ?? "").hasPrefix(basmala), "a heading, not part of the aya")
            // Al-Fatiha's first aya is the basmala itself, and At-Tawbah has none: no heading for either.
            for key in ["1:1", "9:1", "96:2"] {
                let (_, _, _, other) = try await status(client, "/v1/verses/\(key)")
                let json = try #require((try JSONSerialization.jsonObject(with: Data(buffer: other)) as? [String: Any])?["verse"] as? [String: Any])
                #expect(json["basmala"] is NSNull, "\(key)")
            }
        }
    }

    @Test func everyRouteRefusesABodyOverTheLimit() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let twoMiB = ByteBuffer(repeating: UInt8(ascii: " "), count: 2 << 20)
            // Routes that read no body at all, and one that does.
            for (method, uri) in [(HTTPRequest.Method.post, "/v1/guests"), (.post, "/v1/hints/reset"), (.get, "/health"), (.post, "/v1/sessions")] {
                let (code, error, _, _) = try await status(client, uri, method: method, headers: [.contentType: "application/json"], body: twoMiB)
                #expect(code == 413, "\(method) \(uri)")
                #expect(error == "body_too_large", "\(method) \(uri)")
            }
            // Exactly at the limit is read; one byte more is not.
            let atLimit = ByteBuffer(string: "{}" + String(repeating: " ", count: 16 * 1024 - 2))
            #expect(try await status(client, "/v1/guests", method: .post, body: atLimit).0 == 201)
            let over = ByteBuffer(string: "{}" + String(repeating: " ", count: 16 * 1024 - 1))
            #expect(try await status(client, "/v1/guests", method: .post, body: over).0 == 413)
        }
    }

    @Test func undeclaredMethodsGet405WithAllowAndHeadWorksWhereGetDoes() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let (code, error, headers, _) = try await status(client, "/v1/themes", method: .delete)
            #expect(code == 405)
            #expect(error == "method_not_allowed")
            #expect(headers[.allow] == "GET, HEAD")
            let devices = try await status(client, "/v1/devices/some-id", method: .get)
            #expect(devices.0 == 405)
            #expect(devices.2[.allow] == "DELETE, PATCH")
            #expect(try await status(client, "/v1/nothing-here", method: .delete).1 == "not_found")
            for uri in ["/health", "/v1/today?tz=Asia/Tokyo", "/v1/verses/2:255", "/v1/themes", "/openapi.yaml"] {
                let get = try await status(client, uri)
                let head = try await status(client, uri, method: .head)
                #expect(head.0 == 200, "HEAD \(uri)")
                #expect(head.3.readableBytes == 0, "HEAD \(uri)")
                #expect(head.2[.contentType] == get.2[.contentType], "HEAD \(uri)")
            }
        }
    }

    @Test func ifNoneMatchComparesWeakly() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let tag = try #require(try await status(client, "/v1/verses/2:255").2[.eTag])
            for header in [tag, "W/\(tag)", "*", "\"other\", W/\(tag)", " \(tag) "] {
                #expect(try await status(client, "/v1/verses/2:255", headers: [.ifNoneMatch: header]).0 == 304, "\(header)")
            }
            for header in ["\"other\"", "W/\"other\"", String(tag.dropLast())] {
                #expect(try await status(client, "/v1/verses/2:255", headers: [.ifNoneMatch: header]).0 == 200, "\(header)")
            }
        }
    }

    // MARK: - Throttles under concurrency

    @Test func noMoreSignInsAreVerifiedThanTheLimitWhenTheyArriveAtOnce() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            #expect(try await helper.post(client, "/v1/accounts", ["email": "amina@example.org", "password": "a long passphrase"]).0 == 201)
            let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<30 {
                    group.addTask { try await helper.post(client, "/v1/sessions", ["email": "amina@example.org", "password": "wrong guess 123"]).0 }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // A 401 is a verified password; the throttle allows 5 per email in 15 minutes.
            #expect(codes.filter { $0 == 401 }.count == 5, "\(codes.sorted())")
            #expect(codes.filter { $0 == 429 }.count == 25, "\(codes.sorted())")
            // The right password is refused too while the email is throttled.
            #expect(try await helper.post(client, "/v1/sessions", ["email": "amina@example.org", "password": "a long passphrase"]).0 == 429)
        }
    }

    @Test func guestsAndAccountsAtOnceStayWithinTheirLimits() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let guests = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<30 { group.addTask { try await helper.post(client, "/v1/guests", [:]).0 } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(guests.filter { $0 == 201 }.count == 10)
            #expect(guests.filter { $0 == 429 }.count == 20)
            let accounts = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        try await helper.post(client, "/v1/accounts", ["email": "user\(index)@example.org", "password": "a long passphrase"]).0
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(accounts.filter { $0 == 201 }.count == 5)
            #expect(accounts.filter { $0 == 429 }.count == 25)
        }
    }

    // MARK: - What the fuzzer found

    @Test func numbersAreNotBooleans() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            for value in [0, 1] as [Any] {
                let device: [String: Any] = ["platform": "apns", "token": String(format: "%064x", 50), "timezone": "UTC", "enabled": value]
                let (code, body) = try await helper.send(client, .post, "/v1/devices", device, token: a)
                #expect(code == 400 && (body["error"] as? [String: Any])?["code"] as? String == "bad_device", "enabled: \(value)")
                #expect(try await helper.post(client, "/v1/hints/tutorial", ["enabled": value], token: a).0 == 400, "enabled: \(value)")
            }
            #expect(try await helper.post(client, "/v1/hints/tutorial", ["enabled": false], token: a).0 == 200)
            // And a flag is not a number.
            let flagged: [String: Any] = ["platform": "apns", "token": String(format: "%064x", 51), "timezone": "UTC", "adjustment": true]
            #expect(try await helper.send(client, .post, "/v1/devices", flagged, token: a).0 == 400)
        }
    }

    /// A NUL character, which no id, key or email holds and PostgreSQL cannot take, is answered as on SQLite, never
    /// 500: a sign-in with it is the usual 401, a path parameter with it a 400 naming it.
    @Test(arguments: StoreKind.available) func aNulCharacterIsAnsweredAlikeOnBothStores(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let (status, body) = try await helper.post(client, "/v1/sessions", ["email": "a\u{0}@example.org", "password": "a long passphrase"])
                #expect(status == 401 && (body["error"] as? [String: Any])?["code"] as? String == "invalid_credentials", "\(body)")
                for method in [HTTPRequest.Method.patch, .delete] {
                    let (status, body) = try await helper.send(client, method, "/v1/devices/%00", ["enabled": false], token: a)
                    #expect(status == 400 && (body["error"] as? [String: Any])?["code"] as? String == "bad_path", "\(method) \(body)")
                }
                #expect(try await helper.send(client, .put, "/v1/bookmarks/2%3A255%00", token: a).0 == 400)
            }
        }
    }

    @Test func accountFieldsAreCheckedAsTheDocumentSays() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let cases: [([String: Any], Int, String?)] = [
                (["email": "a\u{0}b@example.org", "password": "a long passphrase"], 400, "bad_email"),
                (["email": "a\u{85}b@example.org", "password": "a long passphrase"], 400, "bad_email"),
                (
                    ["email": "ok1@example.org", "password": "a long passphrase", "display_name": String(repeating: "n", count: 101)], 400,
                    "bad_display_name"
                ),
                (["email": "ok2@example.org", "password": "a long passphrase", "display_name": ""], 400, "bad_display_name"),
                (["email": "ok3@example.org", "password": "a long passphrase", "display_name": "tab\there"], 400, "bad_display_name"),
                // Eight scalars (four letters with combining accents) make a password of eight, as the document counts.
                (["email": "ok4@example.org", "password": String(repeating: "e\u{301}", count: 4)], 201, nil),
                (["email": "ok5@example.org", "password": "a long passphrase", "display_name": String(repeating: "n", count: 100)], 201, nil),
            ]
            for (body, status, code) in cases {
                let (got, json) = try await helper.post(client, "/v1/accounts", body)
                #expect(got == status, "\(body)")
                if let code { #expect((json["error"] as? [String: Any])?["code"] as? String == code, "\(body)") }
            }
        }
    }

    @Test func theBearerSchemeIsCaseInsensitive() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            for scheme in ["Bearer", "bearer", "BEARER"] {
                #expect(try await status(client, "/v1/me", headers: [.authorization: "\(scheme) \(a)"]).0 == 200, "\(scheme)")
            }
            #expect(try await status(client, "/v1/me", headers: [.authorization: "Basic \(a)"]).0 == 401)
        }
    }

    @Test func changingADevicesTokenToAnotherUsersIsAFreshRegistrationToo() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            let b = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            let token = String(format: "%064x", 60)
            #expect(try await helper.send(client, .post, "/v1/devices", ["platform": "apns", "token": token, "timezone": "UTC"], token: a).0 == 201)
            let mine = try await helper.send(
                client, .post, "/v1/devices", ["platform": "apns", "token": String(format: "%064x", 61), "timezone": "UTC"], token: b)
            let id = try #require((mine.1["device"] as? [String: Any])?["id"] as? String)
            // Not 409: that would tell B the token is registered.
            #expect(try await helper.send(client, .patch, "/v1/devices/\(id)", ["token": token], token: b).0 == 200)
            #expect((try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [Any])?.isEmpty == true)
        }
    }

    // MARK: - The funnel

    /// The funnel's statements are one list on both stores: the events the API records on each count the same.
    @Test(arguments: StoreKind.available) func aScreenReachedWithoutAViewIsCountedInTheFunnel(_ store: StoreKind) async throws {
        try await store.run {
            let environment = try makeEnvironment(clock: { fixedNow })
            try await funnelCounts(environment)
        }
    }

    func funnelCounts(_ environment: APIEnvironment) async throws {
        try await Application(router: buildRouter(environment)).test(.router) { client in
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            // Through every screen with advance alone (no view event), then complete.
            for event in [
                ["type": "advance"], ["type": "advance"], ["type": "advance"], ["type": "advance"], ["type": "select_theme", "theme": "midnight"],
                ["type": "choose_account", "mode": "guest"], ["type": "complete"],
            ] {
                #expect(try await helper.post(client, "/v1/onboarding/events", event, token: a).0 == 200, "\(event)")
            }
            // A second guest views the first screen and stops there.
            let b = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            #expect(try await helper.post(client, "/v1/onboarding/events", ["type": "view"], token: b).0 == 200)
        }
        let flow = environment.onboarding.flow
        let (from, to) = (fixedNow.addingTimeInterval(-60), fixedNow.addingTimeInterval(60))
        let funnel =
            try await StoreKind.postgres?.onboardingFunnel(flow: flow, from: from, to: to)
            ?? environment.database.onboardingFunnel(flow: flow, from: from, to: to)
        #expect(funnel.screens.map(\.screen) == flow.screens.map(\.id))
        #expect(funnel.screens.first?.reached == 2, "both started there, though a sent no view")
        #expect(funnel.screens.first?.completed == 1)
        #expect(funnel.screens.dropFirst().map(\.reached) == Array(repeating: 1, count: flow.screens.count - 1), "\(funnel.screens)")
        #expect(funnel.screens.dropFirst().map(\.completed) == Array(repeating: 1, count: flow.screens.count - 1))
        #expect(funnel.completed == 1)
    }

    // MARK: - Device tokens

    @Test func anotherUsersTokenIsAFreshRegistration() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            let b = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            let token = String(format: "%064x", 42)
            let first = try await helper.send(
                client, .post, "/v1/devices",
                [
                    "platform": "apns", "token": token, "timezone": "Asia/Baghdad", "locale": "ar", "display_theme": "midnight",
                    "reminder_time": "05:00",
                ],
                token: a)
            #expect(first.0 == 201)
            let firstID = (first.1["device"] as? [String: Any])?["id"] as? String
            let (code, body) = try await helper.send(client, .post, "/v1/devices", ["platform": "apns", "token": token, "timezone": "UTC"], token: b)
            // The same answer as for a token never seen: 201, a new id, nothing of A's settings.
            #expect(code == 201)
            let device = try #require(body["device"] as? [String: Any])
            #expect(device["id"] as? String != firstID)
            #expect(device["locale"] as? String == "en")
            #expect(device["display_theme"] as? String == "parchment")
            #expect(device["reminder_time"] as? String == "08:00")
            #expect(device["last_local_date"] is NSNull)
            #expect((try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [Any])?.isEmpty == true)
            #expect((try await helper.send(client, .get, "/v1/devices", token: b).1["devices"] as? [Any])?.count == 1)

            // Web Push: knowing the endpoint gives a new subscription of one's own, never a change to A's keys.
            let key = "B" + String(repeating: "A", count: 86)
            let subscription: [String: Any] = [
                "endpoint": "https://fcm.googleapis.com/fcm/send/abc", "p256dh": key, "auth": "AAAAAAAAAAAAAAAAAAAAAA",
            ]
            #expect(
                try await helper.send(client, .post, "/v1/devices", ["platform": "webpush", "token": subscription, "timezone": "UTC"], token: a).0
                    == 201)
            var other = subscription
            other["auth"] = "BBBBBBBBBBBBBBBBBBBBBB"
            #expect(
                try await helper.send(client, .post, "/v1/devices", ["platform": "webpush", "token": other, "timezone": "UTC"], token: b).0 == 201)
            #expect((try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func aNewDeviceTakesTheUsersSettings() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
            let settings: [String: Any] = ["reminder_time": "06:45", "notifications": false, "locale": "ar", "adjustment": -1, "calendar": "tabular"]
            #expect(try await helper.send(client, .patch, "/v1/me/settings", settings, token: a).0 == 200)
            let (code, body) = try await helper.send(
                client, .post, "/v1/devices", ["platform": "apns", "token": String(format: "%064x", 43), "timezone": "Asia/Tokyo"], token: a)
            #expect(code == 201)
            let device = try #require(body["device"] as? [String: Any])
            #expect(device["reminder_time"] as? String == "06:45")
            #expect(device["enabled"] as? Bool == false)
            #expect(device["locale"] as? String == "ar")
            #expect(device["adjustment"] as? Int == -1)
            #expect(device["calendar"] as? String == "tabular")
            #expect(device["timezone"] as? String == "Asia/Tokyo", "the request's own value wins")
            // A field the request names wins over the user's setting.
            let named = try await helper.send(
                client, .post, "/v1/devices", ["platform": "apns", "token": String(format: "%064x", 44), "timezone": "UTC", "enabled": true], token: a
            )
            #expect((named.1["device"] as? [String: Any])?["enabled"] as? Bool == true)
        }
    }
}
