import ContentStore
import Crypto
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import MetricsTestKit
import Notifications
import PushServices
import PushStandIns
import Storage
import Testing

@testable import Delivery

/// The push sink end to end: devices, a pass of the emitter, the deliverer with the sink, the stand-ins on loopback;
/// the outbox and the devices checked after each answer.
@Suite(.serialized) struct PushSinkTests {
    /// The fire of 08:00 UTC on 1 March 2025, and a minute after it.
    static let fire = instant("2025-03-01T08:00:00Z")

    struct Harness: Sendable {
        let standIn: PushStandIn
        let port: Int
        let client: PushClient
        let clock: SettableClock
        let database: AppDatabase
        var script: StandInScript { standIn.script }

        func sink(apnsKey: P256.Signing.PrivateKey? = nil, fcm: Bool = true, webPush: Bool = true, metrics: TestMetrics? = nil) throws -> PushSink {
            let apns = APNsSender(
                client: client, keyID: standIn.apnsKeyID, teamID: standIn.teamID, key: apnsKey ?? standIn.apnsKey, environment: .sandbox,
                baseURL: "https://127.0.0.1:\(port)", store: DatabaseCredentialStore(database: database))
            let fcmSender = try FCMSender(
                client: client, account: ServiceAccount.parse(Data(standIn.serviceAccountJSON(port: port).utf8)),
                baseURL: "https://127.0.0.1:\(port)",
                store: DatabaseCredentialStore(database: database))
            let webPushSender = WebPushSender(
                client: client, vapid: try VAPIDKey(privateKey: standIn.vapidKey, subject: "mailto:ops@example.org"), allowedHosts: ["127.0.0.1"],
                store: DatabaseCredentialStore(database: database))
            let clock = clock
            let senders: [any PushSender] = [apns] + (fcm ? [fcmSender] : []) + (webPush ? [webPushSender] : [])
            return PushSink(pauses: database, client: client, senders: senders, concurrency: 8, clock: { clock.now }, metrics: metrics)
        }

        func deliverer(_ sink: any Sink) -> Deliverer {
            var deliverer = Deliverer(database: database, sink: sink)
            deliverer.random = { 1.0 }
            return deliverer
        }
    }

    static let apnsToken = String(repeating: "a1", count: 32)
    static let fcmToken = "fcm-token:APA91bStandInDevice_01"

    /// Three devices (one per platform) in UTC at 08:00, emitted for 1 March.
    func withHarness(_ body: @Sendable (Harness) async throws -> Void) async throws {
        let clock = SettableClock(Self.fire.addingTimeInterval(60))
        let standIn = try PushStandIn(clock: { clock.now })
        try await standIn.runWithClient(on: OwnThreadExecutor.servers) { port, client in
            let database = try seededDatabase()
            let created = instant("2025-02-28T00:00:00Z")
            let sub = standIn.subscription(0, port: port)
            _ = try database.addDevice(DeviceSettings(token: try .apns(validating: Self.apnsToken), timeZone: "UTC"), id: "ios", now: created)
            _ = try database.addDevice(DeviceSettings(token: try .fcm(validating: Self.fcmToken), timeZone: "UTC"), id: "android", now: created)
            _ = try database.addDevice(
                DeviceSettings(token: try .webpush(validatingEndpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth), timeZone: "UTC"), id: "web",
                now: created)
            let emit = EmitConfiguration(grace: 7200, push: PushConfiguration(apnsTopic: standIn.topic), batchSize: 10)
            #expect(try Emitter(database: database, configuration: emit).run(now: Self.fire.addingTimeInterval(30)).queued == 3)
            try await body(Harness(standIn: standIn, port: port, client: client, clock: clock, database: database))
        }
    }

    func row(_ h: Harness, _ device: String) throws -> OutboxRecord {
        try #require(try h.database.outbox(date: try CivilDate(parsing: "2025-03-01")).first { $0.deviceID == device })
    }

    @Test func eachPlatformGoesToItsServiceWithItsTimesCountedFromTheSend() async throws {
        try await withHarness { h in
            let summary = try await h.deliverer(try h.sink()).run(now: h.clock.now)
            #expect(summary.delivered == 3 && summary.failed == 0)
            #expect(try row(h, "ios").serviceID == "apns-a1a1a1a1")
            #expect(try row(h, "android").serviceID == "projects/stand-in-project/messages/0:ice_01")
            #expect(try row(h, "web").serviceID == "https://127.0.0.1/message/sub-0")
            let received = await h.script.received
            // The end of 1 March in UTC is 16 hours after the fire; sent a minute after it, 57540 s are left.
            let apns = try #require(received.first { $0.service == "apns" })
            #expect(apns.key == Self.apnsToken && apns.headers["apns-expiration"] == "1740873600" && apns.headers["apns-priority"] == "10")
            #expect(apns.body == Data(try row(h, "ios").payload.utf8))
            let fcm = try #require(received.first { $0.service == "fcm" })
            let message = try #require((try JSONSerialization.jsonObject(with: fcm.body) as? [String: Any])?["message"] as? [String: Any])
            #expect((message["android"] as? [String: Any])?["ttl"] as? String == "57540s")
            let web = try #require(received.first { $0.service == "webpush" })
            #expect(web.headers["ttl"] == "57540")
            #expect(web.plaintext == Data(try row(h, "web").payload.utf8))
            #expect(await h.script.problems.isEmpty)
        }
    }

    @Test func eachAnswerLeavesTheOutboxAndTheDeviceAsItShould() async throws {
        try await withHarness { h in
            await h.script.answer(Self.apnsToken, with: .apns(410, "Unregistered"))
            await h.script.answer(Self.fcmToken, with: .fcm(503, status: "UNAVAILABLE", code: "UNAVAILABLE", retryAfter: "120"))
            await h.script.answer("sub-0", with: .init(status: 413))
            let metrics = TestMetrics()
            let deliverer = h.deliverer(try h.sink(metrics: metrics))
            let summary = try await deliverer.run(now: h.clock.now)
            #expect(summary.failed == 2 && summary.retrying == 1 && summary.disabled == 1)
            #expect(try metrics.expectCounter("dailyverse_push_total", [("platform", "apns"), ("outcome", "unregistered")]).totalValue == 1)
            #expect(try metrics.expectCounter("dailyverse_push_total", [("platform", "fcm"), ("outcome", "retry")]).totalValue == 1)
            #expect(try metrics.expectCounter("dailyverse_push_total", [("platform", "webpush"), ("outcome", "failed")]).totalValue == 1)
            #expect(try metrics.expectCounter("dailyverse_push_devices_disabled_total", [("platform", "apns")]).totalValue == 1)
            #expect(try metrics.expectTimer("dailyverse_push_duration_seconds", [("platform", "fcm")]).values.count == 1)
            #expect(try row(h, "ios").status == .failed && row(h, "ios").lastError == "APNs 410 Unregistered")
            let ios = try #require(try h.database.deviceState(id: "ios", now: h.clock.now))
            #expect(!ios.device.enabled && ios.disabledReason == "APNs 410 Unregistered")
            let android = try row(h, "android")
            #expect(android.status == .pending && android.attempts == 1 && android.lastError == "FCM 503 UNAVAILABLE")
            #expect(try row(h, "web").status == .failed && row(h, "web").lastError == "Web Push 413")
            #expect(try h.database.deviceState(id: "web", now: h.clock.now)?.device.enabled == true)
            // Retry-After is honoured: not before 120 s, then delivered.
            h.clock.advance(by: 119)
            #expect(try await deliverer.run(now: h.clock.now) == DeliverySummary())
            h.clock.advance(by: 1)
            #expect(try await deliverer.run(now: h.clock.now).delivered == 1)
        }
    }

    /// Every answer of Apple's, Google's and RFC 8030's tables, through the real sink and deliverer, with what it leaves
    /// in the outbox and on the device.
    struct Case: Sendable, CustomStringConvertible {
        let device: String
        let key: String
        let answer: StandInScript.Answer
        let status: OutboxStatus
        let attempts: Int
        let enabled: Bool
        var description: String { "\(device) \(answer.status) \(answer.body.prefix(60))" }
    }

    static let cases: [Case] = [
        Case(device: "ios", key: apnsToken, answer: .init(status: 200), status: .delivered, attempts: 1, enabled: true),
        Case(device: "ios", key: apnsToken, answer: .apns(410, "Unregistered"), status: .failed, attempts: 1, enabled: false),
        Case(device: "ios", key: apnsToken, answer: .apns(400, "BadDeviceToken"), status: .failed, attempts: 1, enabled: false),
        Case(device: "ios", key: apnsToken, answer: .apns(400, "DeviceTokenNotForTopic"), status: .failed, attempts: 1, enabled: false),
        Case(device: "ios", key: apnsToken, answer: .apns(403, "InvalidProviderToken"), status: .pending, attempts: 0, enabled: true),
        Case(device: "ios", key: apnsToken, answer: .apns(429, "TooManyRequests"), status: .pending, attempts: 1, enabled: true),
        Case(device: "ios", key: apnsToken, answer: .apns(503, "ServiceUnavailable"), status: .pending, attempts: 1, enabled: true),
        Case(device: "ios", key: apnsToken, answer: .apns(413, "PayloadTooLarge"), status: .failed, attempts: 1, enabled: true),
        Case(
            device: "android", key: fcmToken, answer: .init(status: 200, body: #"{"name":"projects/p/messages/1"}"#), status: .delivered, attempts: 1,
            enabled: true),
        Case(
            device: "android", key: fcmToken, answer: .fcm(404, status: "NOT_FOUND", code: "UNREGISTERED"), status: .failed, attempts: 1,
            enabled: false),
        Case(
            device: "android", key: fcmToken, answer: .fcm(403, status: "PERMISSION_DENIED", code: "SENDER_ID_MISMATCH"), status: .failed,
            attempts: 1, enabled: false),
        Case(
            device: "android", key: fcmToken, answer: .fcm(400, status: "INVALID_ARGUMENT", code: "INVALID_ARGUMENT"), status: .failed, attempts: 1,
            enabled: true),
        Case(
            device: "android", key: fcmToken, answer: .fcm(429, status: "RESOURCE_EXHAUSTED", code: "QUOTA_EXCEEDED"), status: .pending, attempts: 1,
            enabled: true),
        Case(
            device: "android", key: fcmToken, answer: .fcm(503, status: "UNAVAILABLE", code: "UNAVAILABLE"), status: .pending, attempts: 1,
            enabled: true),
        Case(device: "android", key: fcmToken, answer: .fcm(500, status: "INTERNAL", code: "INTERNAL"), status: .pending, attempts: 1, enabled: true),
        Case(
            device: "android", key: fcmToken, answer: .fcm(401, status: "UNAUTHENTICATED", code: "THIRD_PARTY_AUTH_ERROR"), status: .pending,
            attempts: 0, enabled: true),
        Case(device: "web", key: "sub-0", answer: .init(status: 201), status: .delivered, attempts: 1, enabled: true),
        Case(device: "web", key: "sub-0", answer: .init(status: 202), status: .delivered, attempts: 1, enabled: true),
        Case(device: "web", key: "sub-0", answer: .init(status: 404), status: .failed, attempts: 1, enabled: false),
        Case(device: "web", key: "sub-0", answer: .init(status: 410), status: .failed, attempts: 1, enabled: false),
        Case(device: "web", key: "sub-0", answer: .init(status: 413), status: .failed, attempts: 1, enabled: true),
        Case(device: "web", key: "sub-0", answer: .init(status: 400), status: .failed, attempts: 1, enabled: true),
        Case(device: "web", key: "sub-0", answer: .init(status: 403), status: .failed, attempts: 1, enabled: true),
        Case(device: "web", key: "sub-0", answer: .init(status: 429), status: .pending, attempts: 1, enabled: true),
        Case(device: "web", key: "sub-0", answer: .init(status: 502), status: .pending, attempts: 1, enabled: true),
    ]

    @Test(arguments: cases)
    func everyAnswerThroughTheSink(_ item: Case) async throws {
        try await withHarness { h in
            await h.script.answer(item.key, with: item.answer)
            _ = try await h.deliverer(try h.sink()).run(now: h.clock.now)
            let row = try row(h, item.device)
            #expect(row.status == item.status && row.attempts == item.attempts, "\(item): \(row.status) \(row.attempts) \(row.lastError ?? "")")
            let state = try #require(try h.database.deviceState(id: item.device, now: h.clock.now))
            #expect(state.device.enabled == item.enabled && (state.disabledReason != nil) == !item.enabled, "\(item)")
        }
    }

    @Test func aRefusedKeyPausesItsPlatformOnlyAndStatusCanSayWhy() async throws {
        try await withHarness { h in
            let sink = try h.sink(apnsKey: P256.Signing.PrivateKey())
            let deliverer = h.deliverer(sink)
            let summary = try await deliverer.run(now: h.clock.now)
            #expect(summary.delivered == 2 && summary.deferred == 1 && summary.pausedError == "APNs 403 InvalidProviderToken")
            let ios = try row(h, "ios")
            #expect(ios.status == .pending && ios.attempts == 0)
            let pause = try await h.database.read { db in try Row.fetchOne(db, sql: "SELECT reason, until FROM push_pause WHERE platform = 'apns'") }
            #expect(pause?["reason"] as String? == "APNs 403 InvalidProviderToken")
            // Paused: nothing is sent to APNs until the pause ends, however often the deliverer runs.
            let asked = await h.script.received.filter { $0.service == "apns" }.count
            h.clock.advance(by: 299)
            _ = try await deliverer.run(now: h.clock.now)
            #expect(await h.script.received.filter { $0.service == "apns" }.count == asked)
            // The key mended (a new process with the right one): the row goes and the pause is gone from the database.
            h.clock.advance(by: 1)
            #expect(try await h.deliverer(try h.sink()).run(now: h.clock.now).delivered == 1)
            #expect(try await h.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM push_pause") } == 0)
        }
    }

    @Test func batchesSentWhileTheOneBeforeIsRecordedAreAllRecordedOnce() async throws {
        try await withHarness { h in
            await h.script.answer(Self.fcmToken, with: .fcm(500, status: "INTERNAL", code: "INTERNAL"))
            var deliverer = h.deliverer(try h.sink())
            deliverer.batchSize = 1
            let summary = try await deliverer.run(now: h.clock.now)
            #expect(summary.delivered == 2 && summary.retrying == 1)
            #expect(try row(h, "ios").status == .delivered && row(h, "web").status == .delivered)
            #expect(try row(h, "android").attempts == 1 && row(h, "android").status == .pending)
            // Each row went once in the pass: the next batch starts after the last id, not again at a row due again.
            #expect(await h.script.received.count == 3)
        }
    }

    @Test func aRowWhoseLocalDayHasEndedIsMissedNotSent() async throws {
        try await withHarness { h in
            h.clock.now = instant("2025-03-02T00:00:00Z")
            var deliverer = h.deliverer(try h.sink())
            deliverer.grace = nil
            let summary = try await deliverer.run(now: h.clock.now)
            #expect(summary.missed == 3 && summary.delivered == 0)
            #expect(await h.script.received.isEmpty)
            #expect(try row(h, "ios").status == .missed)
        }
    }

    @Test func aPlatformWithoutASenderKeepsItsRowsPending() async throws {
        try await withHarness { h in
            let sink = try h.sink(fcm: false, webPush: false)
            #expect(sink.platforms == ["apns"])
            #expect(try await h.deliverer(sink).run(now: h.clock.now).delivered == 1)
            #expect(try row(h, "android").status == .pending && row(h, "android").attempts == 0)
            #expect(try row(h, "web").status == .pending && row(h, "web").lastError == nil)
        }
    }

    /// A sender the sink knows only through `PushSender`: what it is handed, and what it answers.
    actor RecordingSender: PushSender {
        nonisolated let platform: Platform
        nonisolated let answer: PushOutcome
        var received: [(token: String, secondsLeft: Int, payload: String)] = []

        init(_ platform: Platform, answer: PushOutcome) { (self.platform, self.answer) = (platform, answer) }

        func send(_ push: PushRequest, secondsLeft: Int, now: Date) async -> PushOutcome {
            received.append((push.token, secondsLeft, push.payload))
            return push.platform == platform ? answer : misrouted(push)
        }
    }

    @Test func eachPlatformsRowsGoToTheSenderHeldForItThroughTheProtocolAlone() async throws {
        try await withHarness { h in
            let fcm = RecordingSender(.fcm, answer: .delivered(id: "stand-in"))
            let webPush = RecordingSender(.webpush, answer: .failed(reason: "refused by the test"))
            let clock = h.clock
            let sink = PushSink(pauses: h.database, client: h.client, senders: [fcm, webPush], clock: { clock.now })
            #expect(sink.platforms == ["fcm", "webpush"])
            let summary = try await h.deliverer(sink).run(now: h.clock.now)
            #expect(summary.delivered == 1)
            // Each got its own platform's row once, with the seconds to the end of the device's day (UTC: from 08:01).
            let toMidnight = Int(instant("2025-03-02T00:00:00Z").timeIntervalSince(h.clock.now))
            #expect(await fcm.received.map(\.token) == [Self.fcmToken])
            #expect(await fcm.received.map(\.secondsLeft) == [toMidnight])
            #expect(await webPush.received.count == 1)
            #expect(try row(h, "android").status == .delivered)
            #expect(try row(h, "web").status == .failed && row(h, "web").lastError == "refused by the test")
            // APNs has no sender: its row waits, untried, and the stand-in saw nothing.
            #expect(try row(h, "ios").status == .pending && row(h, "ios").attempts == 0)
            #expect(await h.script.received.isEmpty)
        }
    }

    @Test func aRowHandedToAnotherPlatformsSenderFailsSayingSo() async throws {
        try await withHarness { h in
            let apns = APNsSender(
                client: h.client, keyID: h.standIn.apnsKeyID, teamID: h.standIn.teamID, key: h.standIn.apnsKey, environment: .sandbox,
                baseURL: "https://127.0.0.1:\(h.port)", store: DatabaseCredentialStore(database: h.database))
            let web = try PushRequest(try row(h, "web"))
            guard case .failed(let reason) = await apns.send(web, secondsLeft: 60, now: h.clock.now) else {
                Issue.record("a Web Push row was not refused by the APNs sender")
                return
            }
            #expect(reason == "a Web Push row was handed to the APNs sender")
            #expect(await h.script.received.isEmpty)
        }
    }

    @Test func gorushGetsIOSAndAndroidRowsInItsOwnFormatAndWebPushWaits() async throws {
        try await withHarness { h in
            let clock = h.clock
            let sink = try GorushSink(url: "https://127.0.0.1:\(h.port)", client: h.client, clock: { clock.now })
            #expect(sink.url.hasSuffix("/api/push") && sink.platforms == ["apns", "fcm"])
            await h.script.answer("gorush", with: .init(status: 503))
            let deliverer = h.deliverer(sink)
            #expect(try await deliverer.run(now: h.clock.now).retrying == 2)
            h.clock.advance(by: 5)
            #expect(try await deliverer.run(now: h.clock.now).delivered == 2)
            #expect(try row(h, "web").status == .pending && row(h, "web").attempts == 0)
            let batch = try #require(await h.script.received.last { $0.service == "gorush" })
            let list = try #require((try JSONSerialization.jsonObject(with: batch.body) as? [String: Any])?["notifications"] as? [[String: Any]])
            let ios = try #require(list.first { $0["platform"] as? Int == 1 })
            #expect(ios["tokens"] as? [String] == [Self.apnsToken] && ios["topic"] as? String == h.standIn.topic)
            #expect(ios["collapse_id"] as? String == "dv-ios-2025-03-01" && ios["expiration"] as? Int == 1_740_873_600)
            #expect((ios["title"] as? String)?.isEmpty == false && (ios["message"] as? String)?.isEmpty == false)
            #expect((ios["data"] as? [String: Any])?["verse_key"] != nil && (ios["data"] as? [String: Any])?["aps"] == nil)
            let android = try #require(list.first { $0["platform"] as? Int == 2 })
            #expect(android["tokens"] as? [String] == [Self.fcmToken] && android["collapse_key"] as? String == "daily-verse")
            #expect(android["time_to_live"] as? Int == 57_535 && android["priority"] as? String == "high")
            // A batch gorush refuses is failed, not retried.
            let other = try seededDatabase()
            _ = try other.addDevice(
                DeviceSettings(token: try .apns(validating: Self.apnsToken), timeZone: "UTC"), id: "ios", now: instant("2025-02-28T00:00:00Z"))
            _ = try Emitter(database: other, configuration: EmitConfiguration(grace: 7200, push: PushConfiguration(apnsTopic: "t"), batchSize: 10))
                .run(now: Self.fire.addingTimeInterval(30))
            await h.script.answer("gorush", with: .init(status: 400, body: "Number of notifications(2) over limit(1)"))
            #expect(try await Deliverer(database: other, sink: sink).run(now: h.clock.now).failed == 1)
            #expect(try other.outbox(status: .failed).first?.lastError == "gorush: HTTP 400 Number of notifications(2) over limit(1)")
        }
    }

    @Test func aCrashBetweenAcceptanceAndRecordSendsAgainUnderTheSameCollapseID() async throws {
        try await withHarness { h in
            let sink = try h.sink()
            // The services accept, and the process dies before the outbox records it: the rows are still pending.
            let pending = try h.database.outbox(status: .pending)
            _ = try await sink.deliver(pending)
            #expect(try h.database.outbox(status: .pending).count == 3)
            // After the restart they are sent again, with the same collapse ids, so the second replaces the first.
            #expect(try await h.deliverer(try h.sink()).run(now: h.clock.now).delivered == 3)
            let received = await h.script.received
            let apns = received.filter { $0.service == "apns" }
            #expect(apns.count == 2 && Set(apns.map { $0.headers["apns-collapse-id"] }).count == 1)
            let web = received.filter { $0.service == "webpush" }
            #expect(web.count == 2 && Set(web.map { $0.headers["topic"] }).count == 1)
            let tags = try received.filter { $0.service == "fcm" }.map { received -> String? in
                let message = (try JSONSerialization.jsonObject(with: received.body) as? [String: Any])?["message"] as? [String: Any]
                return ((message?["android"] as? [String: Any])?["notification"] as? [String: Any])?["tag"] as? String
            }
            #expect(tags.count == 2 && Set(tags).count == 1 && tags[0] != nil)
        }
    }
}

@Suite struct FlatJSONTests {
    @Test func readsWhatTheRendererWritesAsFoundationDoes() throws {
        let samples = [
            #"{":path":"/3/device/ab","apns-collapse-id":"dv-1-2025-03-01","apns-expiration":"1740873600","apns-topic":"org.example.quran"}"#,
            #"{}"#, #" { "a" : "b" , "c":"\"q\" \\ \n \t \u00e9 \u0001" } "#,
            #"{":url":"https://push.example/x?y=1&z=2","TTL":"60","x-webpush-p256dh":"BAcH"}"#,
        ]
        for sample in samples {
            let ours = try #require(FlatJSON.strings(sample))
            let theirs = try #require(try JSONSerialization.jsonObject(with: Data(sample.utf8)) as? [String: String])
            #expect(Dictionary(ours, uniquingKeysWith: { a, _ in a }) == theirs)
        }
        // Order is kept (the APNs headers go in the order rendered).
        #expect(FlatJSON.strings(#"{"b":"1","a":"2"}"#)?.map(\.0) == ["b", "a"])
        for bad in ["", "[]", "{", #"{"a":1}"#, #"{"a":"b""#, #"{"a":"b",}"#, #"{"a" "b"}"#, #"{"a":"\u12"}"#, #"{"a":"b"} x"#, #"{"a":"\"#] {
            #expect(FlatJSON.strings(bad) == nil, "\(bad)")
        }
    }
}
