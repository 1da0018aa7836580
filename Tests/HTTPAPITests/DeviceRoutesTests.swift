import DailyVerseTestSupport
import Encodings
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HTTPAPI

@Suite struct DeviceRoutesTests {
    let helper = JSONAPI()

    func apns(_ n: Int) -> String { String(format: "%064x", n) }

    @Test(arguments: StoreKind.available) func devicesAreRegisteredListedChangedAndRemovedByTheirOwner(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let (created, body) = try await helper.send(
                    client, .post, "/v1/devices",
                    ["platform": "apns", "token": apns(1), "timezone": "Asia/Baghdad", "reminder_time": "06:30", "adjustment": 1, "enabled": true],
                    token: a)
                #expect(created == 201)
                let device = try #require(body["device"] as? [String: Any])
                let id = try #require(device["id"] as? String)
                #expect(device["timezone"] as? String == "Asia/Baghdad")
                #expect(device["reminder_time"] as? String == "06:30")
                #expect(device["adjustment"] as? Int == 1)
                #expect(device["next_fire_at"] as? String == "2025-03-02T03:30:00Z")
                // The app registers at every launch: the same token is the same device.
                let (again, second) = try await helper.send(
                    client, .post, "/v1/devices", ["platform": "apns", "token": apns(1), "timezone": "Asia/Baghdad", "locale": "ar"], token: a)
                #expect(again == 200)
                #expect((second["device"] as? [String: Any])?["id"] as? String == id)
                #expect((second["device"] as? [String: Any])?["locale"] as? String == "ar")
                let (patched, changed) = try await helper.send(
                    client, .patch, "/v1/devices/\(id)", ["reminder_time": "21:15", "enabled": false], token: a)
                #expect(patched == 200)
                #expect((changed["device"] as? [String: Any])?["enabled"] as? Bool == false)
                #expect((changed["device"] as? [String: Any])?["next_fire_at"] is NSNull)
                let listed = try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [[String: Any]]
                #expect(listed?.map { $0["id"] as? String } == [id])
                #expect(try await helper.send(client, .delete, "/v1/devices/\(id)", token: a).0 == 204)
                #expect(try await helper.send(client, .delete, "/v1/devices/\(id)", token: a).0 == 404)
                #expect((try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [Any])?.isEmpty == true)
            }
        }
    }

    @Test(arguments: StoreKind.available) func noUserReadsOrChangesAnothersDevice(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let b = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let body = try await helper.send(
                    client, .post, "/v1/devices", ["platform": "fcm", "token": "fcm-token-of-a-0123456789", "timezone": "UTC"], token: a
                ).1
                let id = try #require((body["device"] as? [String: Any])?["id"] as? String)
                #expect((try await helper.send(client, .get, "/v1/devices", token: b).1["devices"] as? [Any])?.isEmpty == true)
                let (status, error) = try await helper.send(client, .patch, "/v1/devices/\(id)", ["timezone": "Asia/Tokyo"], token: b)
                #expect(status == 404)
                #expect((error["error"] as? [String: Any])?["code"] as? String == "device_not_found")
                #expect(try await helper.send(client, .delete, "/v1/devices/\(id)", token: b).0 == 404)
                #expect(try await helper.send(client, .get, "/v1/devices", token: "not-a-token").0 == 401)
                // A's device is as it was.
                let listed = try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [[String: Any]]
                #expect(listed?.first?["timezone"] as? String == "UTC")
            }
        }
    }

    @Test(arguments: StoreKind.available) func badDevicesAreRefusedWithACode(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let cases: [([String: Any], Int, String)] = [
                    (["platform": "apns", "token": "xyz", "timezone": "UTC"], 400, "bad_token"),
                    (["platform": "apns", "token": apns(2), "timezone": "Mars/Olympus"], 400, "bad_zone"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "reminder_time": "7:30"], 400, "bad_time"),
                    (["platform": "pager", "token": apns(2), "timezone": "UTC"], 400, "bad_platform"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "locale": "fr"], 400, "bad_locale"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "display_theme": "neon"], 400, "bad_theme"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "calendar": "lunar"], 400, "bad_calendar"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "adjustment": 9], 400, "bad_adjustment"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "adjustment": "one"], 400, "bad_device"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "adjustment": true], 400, "bad_device"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "adjustment": 1.5], 400, "bad_device"),
                    (["platform": "apns", "token": apns(2), "timezone": "UTC", "colour": "red"], 400, "bad_device"),
                    (["platform": "apns", "token": apns(2)], 400, "bad_device"),
                    (["platform": "webpush", "token": "https://push.example.org/x", "timezone": "UTC"], 400, "bad_device"),
                ]
                for (body, status, code) in cases {
                    let (got, error) = try await helper.send(client, .post, "/v1/devices", body, token: a)
                    #expect(got == status, "\(body)")
                    #expect((error["error"] as? [String: Any])?["code"] as? String == code, "\(body)")
                }
                let malformed = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: helper.bearer(a), body: ByteBuffer(string: "[1,2")
                ) {
                    $0.status.code
                }
                #expect(malformed == 400)
                let huge = try await client.execute(
                    uri: "/v1/devices", method: .post, headers: helper.bearer(a),
                    body: ByteBuffer(string: String(repeating: " ", count: 20_000) + "{}")
                ) { $0.status.code }
                #expect(huge == 413)
                // Nothing was registered, and a platform never changes.
                #expect((try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [Any])?.isEmpty == true)
                let id = try #require(
                    (try await helper.send(client, .post, "/v1/devices", ["platform": "apns", "token": apns(3), "timezone": "UTC"], token: a).1[
                        "device"]
                        as? [String: Any])?["id"] as? String)
                #expect(try await helper.send(client, .patch, "/v1/devices/\(id)", ["platform": "fcm"], token: a).0 == 400)
            }
        }
    }

    /// The longest token each platform's form takes is kept by both stores, incompressible as a real one is (an entry
    /// of PostgreSQL's index of tokens takes at most about 2,700 bytes: a longer token was a 500 there), and one
    /// character more is refused.
    @Test(arguments: StoreKind.available) func theLongestTokensEachPlatformTakesAreKept(_ store: StoreKind) async throws {
        // Characters no compression shortens, the same each run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ count: Int, of alphabet: String) -> String {
            let characters = Array(alphabet)
            return String(
                (0..<count).map { _ in
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    return characters[Int(state % UInt64(characters.count))]
                })
        }
        let letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        let prefix = "https://fcm.googleapis.com/fcm/send/"
        let endpoint = prefix + random(2048 - prefix.count, of: letters)
        let fcm = random(2048, of: letters + "-_:")
        let apns = random(200, of: "0123456789abcdef")
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                func subscription(_ endpoint: String) -> [String: Any] {
                    ["endpoint": endpoint, "p256dh": "B" + String(repeating: "A", count: 86), "auth": "AAAAAAAAAAAAAAAAAAAAAA"]
                }
                for (platform, token, taken) in [
                    ("fcm", fcm as Any, true), ("fcm", fcm + "a", false), ("webpush", subscription(endpoint), true),
                    ("webpush", subscription(endpoint + "a"), false),
                    ("apns", apns, true), ("apns", apns + "00", false),
                ] {
                    let (status, body) = try await helper.send(
                        client, .post, "/v1/devices", ["platform": platform, "token": token, "timezone": "UTC"], token: a)
                    #expect(status == (taken ? 201 : 400), "\(platform) \(taken): \(body)")
                    if !taken { #expect((body["error"] as? [String: Any])?["code"] as? String == "bad_token", "\(body)") }
                }
                #expect((try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [Any])?.count == 3)
            }
        }
    }

    /// A Web Push subscription with valid keys, on `endpoint`.
    static func subscription(_ endpoint: String) -> [String: Any] {
        ["endpoint": endpoint, "p256dh": "B" + String(repeating: "A", count: 86), "auth": "AAAAAAAAAAAAAAAAAAAAAA"]
    }

    /// A Web Push endpoint off the push services the server sends to (the browsers' own and its `web_push_hosts`) is
    /// refused when it is registered or changed to: 400 `push_service_not_allowed`, naming the host and never the
    /// endpoint (the subscription's secret). It was taken, and then failed at every send.
    @Test(arguments: StoreKind.available) func aWebPushEndpointOffThePushServicesIsRefused(_ store: StoreKind) async throws {
        let refused = [
            "https://169.254.169.254/latest/meta-data/capability-secret", "https://localhost/capability-secret",
            "https://127.0.0.1:8443/capability-secret", "https://fcm.googleapis.com.evil.example/capability-secret",
        ]
        try await store.run {
            // The server's hosts passed in as serve passes web_push_hosts.
            let environment = try makeEnvironment(clock: { fixedNow }, webPushHosts: WebPushHosts(adding: ["push.example.org"]))
            try await Application(router: buildRouter(environment)).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                for endpoint in refused {
                    let (status, body) = try await helper.send(
                        client, .post, "/v1/devices", ["platform": "webpush", "token": Self.subscription(endpoint), "timezone": "UTC"], token: a)
                    let error = body["error"] as? [String: Any]
                    #expect(status == 400 && error?["code"] as? String == "push_service_not_allowed", "\(endpoint): \(body)")
                    let message = error?["message"] as? String ?? ""
                    #expect(message.contains("'\(WebPushHosts.host(of: endpoint) ?? "?")'"), "\(message)")
                    #expect(!message.contains("capability-secret"), "\(message)")
                }
                #expect((try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [Any])?.isEmpty == true)
                // A known push service, and a host the server adds, are taken.
                let taken = ["https://fcm.googleapis.com/fcm/send/1", "https://push.example.org/send/2"]
                for endpoint in taken {
                    let (status, body) = try await helper.send(
                        client, .post, "/v1/devices", ["platform": "webpush", "token": Self.subscription(endpoint), "timezone": "UTC"], token: a)
                    #expect(status == 201, "\(endpoint): \(body)")
                }
                // A device's subscription changed to one elsewhere is refused too, and the device is as it was.
                let listed = try #require(try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [[String: Any]])
                let id = try #require(listed.first?["id"] as? String)
                let (patched, body) = try await helper.send(
                    client, .patch, "/v1/devices/\(id)", ["token": Self.subscription(refused[1])], token: a)
                #expect(patched == 400 && (body["error"] as? [String: Any])?["code"] as? String == "push_service_not_allowed", "\(body)")
                let after = try #require(try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [[String: Any]])
                #expect(after.compactMap { ($0["token"] as? [String: Any])?["endpoint"] as? String }.sorted() == taken)
            }
        }
        // Without web_push_hosts, the known services alone: the host the server above added is refused.
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                let (status, body) = try await helper.send(
                    client, .post, "/v1/devices",
                    ["platform": "webpush", "token": Self.subscription("https://push.example.org/send/3"), "timezone": "UTC"], token: a)
                #expect(status == 400 && (body["error"] as? [String: Any])?["code"] as? String == "push_service_not_allowed", "\(body)")
            }
        }
    }

    @Test(arguments: StoreKind.available) func settingsAndOnboardingReachTheDevices(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let a = helper.token(try await helper.post(client, "/v1/guests", [:]).1)
                _ = try await helper.send(client, .post, "/v1/devices", ["platform": "apns", "token": apns(4), "timezone": "UTC"], token: a)
                #expect(
                    try await helper.send(client, .patch, "/v1/me/settings", ["reminder_time": "05:10", "timezone": "Asia/Tokyo"], token: a).0 == 200)
                var device = (try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [[String: Any]])?.first
                #expect(device?["reminder_time"] as? String == "05:10")
                #expect(device?["timezone"] as? String == "Asia/Tokyo")
                // Declining notifications in the onboarding turns the devices off; the theme chosen reaches them too.
                for event in [
                    ["type": "advance"], ["type": "advance"], ["type": "advance"], ["type": "notification_permission", "state": "primed"],
                    ["type": "notification_permission", "state": "denied"], ["type": "advance"], ["type": "select_theme", "theme": "midnight"],
                    ["type": "choose_account", "mode": "guest"], ["type": "complete"],
                ] {
                    #expect(try await helper.post(client, "/v1/onboarding/events", event, token: a).0 == 200, "\(event)")
                }
                device = (try await helper.send(client, .get, "/v1/devices", token: a).1["devices"] as? [[String: Any]])?.first
                #expect(device?["display_theme"] as? String == "midnight")
                #expect(device?["enabled"] as? Bool == false)
            }
        }
    }
}
