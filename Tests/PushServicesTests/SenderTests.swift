import Crypto
import CryptoExtras
import DailyVerseTestSupport
import Encodings
import Foundation
import NIOCore
import PushStandIns
import Testing

@testable import PushServices

/// Each sender against its stand-in on loopback (HTTP/2 over TLS with a certificate made for the test, trusted
/// through the CA file): every answer of Apple's, Google's and RFC 8030's tables goes through the real request path.
@Suite(.serialized) struct SenderTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    struct Harness: Sendable {
        let standIn: PushStandIn
        let port: Int
        let client: PushClient
        let clock: SettableClock
        var script: StandInScript { standIn.script }
    }

    func withStandIn(_ body: @Sendable (Harness) async throws -> Void) async throws {
        let clock = SettableClock(Self.start)
        let standIn = try PushStandIn(clock: { clock.now })
        try await standIn.runWithClient(on: OwnThreadExecutor.servers) { port, client in
            try await body(Harness(standIn: standIn, port: port, client: client, clock: clock))
        }
    }

    func apns(_ h: Harness, key: P256.Signing.PrivateKey? = nil, store: any CredentialStore = MemoryCredentialStore()) -> APNsSender {
        APNsSender(
            client: h.client, keyID: h.standIn.apnsKeyID, teamID: h.standIn.teamID, key: key ?? h.standIn.apnsKey, environment: .sandbox,
            baseURL: "https://127.0.0.1:\(h.port)", store: store)
    }

    func apnsHeaders(_ h: Harness, topic: String? = nil) -> [(String, String)] {
        [
            ("apns-collapse-id", "dv-1-2027-01-15"), ("apns-expiration", String(Int(h.clock.now.timeIntervalSince1970) + 3600)),
            ("apns-priority", "10"), ("apns-push-type", "alert"), ("apns-topic", topic ?? h.standIn.topic),
        ]
    }

    static let payload = ByteBuffer(string: #"{"aps":{"alert":{"title":"t","body":"b"}}}"#)

    @Test func theClientSpeaksHTTP2OverTLSTrustingOnlyTheAddedAuthority() async throws {
        try await withStandIn { h in
            let answer = try await h.client.send("https://127.0.0.1:\(h.port)/push/sub-0", headers: [], body: ByteBuffer(string: "x"))
            #expect(answer.httpMajorVersion == 2)
            // Without the CA file the stand-in's certificate is refused: checks are never switched off.
            let plain = try PushClient(timeout: 1)
            await #expect(throws: (any Error).self) {
                _ = try await plain.send("https://127.0.0.1:\(h.port)/push/sub-0", headers: [], body: ByteBuffer(string: "x"))
            }
            try await plain.shutdown()
        }
        #expect(throws: PushConfigurationError.self) { try PushClient(caFile: "/nonexistent/ca.pem") }
    }

    @Test func apnsAnswersEachAsItsTableSays() async throws {
        try await withStandIn { h in
            let sender = apns(h)
            let token = String(repeating: "ab", count: 32)
            #expect(
                await sender.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)
                    == .delivered(id: "apns-abababab"))
            let cases: [(StandInScript.Answer, PushOutcome)] = [
                (.apns(410, "Unregistered"), .unregistered(reason: "APNs 410 Unregistered")),
                (.apns(400, "BadDeviceToken"), .unregistered(reason: "APNs 400 BadDeviceToken")),
                (.apns(403, "InvalidProviderToken"), .configuration(reason: "APNs 403 InvalidProviderToken")),
                (.apns(429, "TooManyRequests", retryAfter: "17"), .retry(reason: "APNs 429 TooManyRequests", after: 17)),
                (.apns(503, "ServiceUnavailable"), .retry(reason: "APNs 503 ServiceUnavailable", after: nil)),
                (.apns(500, "InternalServerError"), .retry(reason: "APNs 500 InternalServerError", after: nil)),
                (.apns(400, "BadCollapseId"), .failed(reason: "APNs 400 BadCollapseId")),
            ]
            for (answer, expected) in cases {
                await h.script.answer(token, with: answer)
                #expect(await sender.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now) == expected)
            }
            // The stand-in checks the topic as Apple does.
            #expect(
                await sender.send(deviceToken: token, headers: apnsHeaders(h, topic: "org.other.app"), payload: Self.payload, now: h.clock.now)
                    == .unregistered(reason: "APNs 400 DeviceTokenNotForTopic"))
            // A key Apple does not know: paused, not retried.
            let stranger = apns(h, key: P256.Signing.PrivateKey())
            #expect(
                await stranger.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)
                    == .configuration(reason: "APNs 403 InvalidProviderToken"))
            // Every request above used one provider token.
            #expect(await h.script.providerTokens.count == 1)
            #expect(await h.script.problems == ["APNs: a provider token that does not verify"])
        }
    }

    @Test func apnsProviderTokensAreReusedFor50MinutesAndRenewedAtMostEvery20() async throws {
        try await withStandIn { h in
            let store = MemoryCredentialStore()
            let sender = apns(h, store: store)
            let token = String(repeating: "cd", count: 32)
            for _ in 0..<5 { _ = await sender.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now) }
            #expect(await h.script.providerTokens.count == 1)
            // A second process of the installation shares the stored token.
            let other = apns(h, store: store)
            #expect(
                await other.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)
                    == .delivered(id: "apns-cdcdcdcd"))
            #expect(await h.script.providerTokens.count == 1)
            // Apple calls it expired 10 minutes in: too soon for a new one, so the row waits the remaining 10 minutes.
            h.clock.advance(by: 600)
            await h.script.expireProviderTokens(before: h.clock.now)
            #expect(
                await sender.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)
                    == .retry(reason: "APNs 403 ExpiredProviderToken (a new token is allowed in 600 s)", after: 600))
            // 20 minutes in: a new token, and the same request once more.
            h.clock.advance(by: 600)
            #expect(
                await sender.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)
                    == .delivered(id: "apns-cdcdcdcd"))
            #expect(await h.script.providerTokens.count == 2)
            // 50 minutes after that one, a new one without being asked.
            h.clock.advance(by: 50 * 60)
            _ = await sender.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)
            #expect(await h.script.providerTokens.count == 3)
            #expect(await h.script.problems.isEmpty)
        }
    }

    /// A store that waits before it answers a load, as a database does, each call longer than the one before: calls
    /// for a token overlap there, and finish after others have made one.
    actor SlowStore: CredentialStore {
        let inner = MemoryCredentialStore()
        private(set) var saves = 0
        private var loads = 0

        func load(_ name: String) async throws -> StoredCredential? {
            loads += 1
            let value = try await inner.load(name)
            for _ in 0..<(loads * 10) { await Task.yield() }
            return value
        }

        func save(_ credential: StoredCredential, unlessNewerThan bound: Date?) async throws -> StoredCredential {
            saves += 1
            return try await inner.save(credential, unlessNewerThan: bound)
        }
    }

    /// Many sends at once from a process with no token yet (a batch's first requests) all go with one token: a call
    /// that waited for the store while another made one uses that one rather than replacing it, which Apple would
    /// answer with TooManyProviderTokenUpdates. (Found by `dailyverse-bench chaos`.)
    @Test func sendsThatOverlapTheFirstTokenShareIt() async throws {
        try await withStandIn { h in
            let store = SlowStore()
            let sender = apns(h, store: store)
            try await withThrowingTaskGroup(of: PushOutcome.self) { group in
                for n in 0..<32 {
                    let token = String(format: "%064x", n)
                    group.addTask { await sender.send(deviceToken: token, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now) }
                }
                for try await outcome in group {
                    if case .delivered = outcome { continue }
                    Issue.record("not delivered: \(outcome)")
                }
            }
            #expect(await h.script.providerTokens.count == 1)
            let problems = await h.script.problems
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    @Test func aClosedConnectionOrATimeoutIsARetry() async throws {
        let client = try PushClient(timeout: 1)
        let sender = APNsSender(
            client: client, keyID: "K", teamID: "T", key: P256.Signing.PrivateKey(), environment: .sandbox, baseURL: "https://127.0.0.1:9",
            store: MemoryCredentialStore())
        let outcome = await sender.send(deviceToken: "00", headers: [], payload: Self.payload, now: Self.start)
        guard case .retry(let reason, nil) = outcome else {
            Issue.record("expected a retry, got \(outcome)")
            return
        }
        #expect(reason.hasPrefix("APNs: "))
        try await client.shutdown()
    }

    func fcm(_ h: Harness, store: any CredentialStore = MemoryCredentialStore()) throws -> FCMSender {
        let account = try ServiceAccount.parse(Data(h.standIn.serviceAccountJSON(port: h.port).utf8))
        return FCMSender(client: h.client, account: account, baseURL: "https://127.0.0.1:\(h.port)", store: store)
    }

    /// The FCM access token is shared as the APNs provider token is: a second process of the installation uses the
    /// stored one; a request refused after another request (or process) already replaced the token uses the new one
    /// rather than exchanging again (a burst of requests refused together made an exchange each).
    @Test func fcmAccessTokensAreSharedAndRenewedOncePerRefusal() async throws {
        try await withStandIn { h in
            let store = MemoryCredentialStore()
            let (sender, other) = (try fcm(h, store: store), try fcm(h, store: store))
            let token = "fcm-token:APA91bStandIn_0001"
            #expect(
                await sender.send(message: Self.fcmMessage(token), now: h.clock.now) == .delivered(id: "projects/stand-in-project/messages/0:n_0001"))
            #expect(
                await other.send(message: Self.fcmMessage(token), now: h.clock.now) == .delivered(id: "projects/stand-in-project/messages/0:n_0001"))
            #expect(await h.script.tokenExchanges == 1)
            let first = try await sender.tokens.token(now: h.clock.now)
            #expect(try await other.tokens.token(now: h.clock.now) == first)
            // Refused: one exchange, whichever asks first; the late ones refused with the old token take the new one.
            let renewed = try await sender.tokens.renew(refused: first, now: h.clock.now)
            #expect(renewed != first)
            #expect(try await sender.tokens.renew(refused: first, now: h.clock.now) == renewed)
            #expect(try await other.tokens.renew(refused: first, now: h.clock.now) == renewed)
            #expect(await h.script.tokenExchanges == 2)
            // The new one refused in turn: a new exchange.
            #expect(try await other.tokens.renew(refused: renewed, now: h.clock.now) != renewed)
            #expect(await h.script.tokenExchanges == 3)
            #expect(await h.script.problems.isEmpty)
        }
    }

    /// A token at rest is sealed under the key that made it: the store holds neither the APNs provider token nor the
    /// FCM access token the services saw, a store read with another key (or with its times changed) gives nothing. It
    /// is kept under a name of its own: a process of an earlier version (a rolling upgrade, a rollback) never reads a
    /// sealed token and sends it, and the sealed store never reads an earlier one's unsealed token (the APNs tokens take
    /// it up, newer, while it lasts: `aRollingUpgradeKeepsOneProviderToken`).
    @Test func tokensAreSealedAtRest() async throws {
        try await withStandIn { h in
            let store = MemoryCredentialStore()
            _ = await apns(h, store: store).send(
                deviceToken: String(repeating: "cd", count: 32), headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)
            let fcmSender = try fcm(h, store: store)
            _ = await fcmSender.send(message: Self.fcmMessage("fcm-token:APA91bStandIn_0001"), now: h.clock.now)
            let apnsName = apns(h, store: store).tokens.name
            #expect(await store.load(apnsName) == nil)
            #expect(await store.load(fcmSender.tokens.name) == nil)
            let stored = try #require(await store.load(apnsName + SealedCredentialStore.suffix))
            let fcmStored = try #require(await store.load(fcmSender.tokens.name + SealedCredentialStore.suffix))
            let seen = await h.script.providerTokens.map(\.token)
            #expect(seen.count == 1)
            #expect(!seen.contains(stored.value) && stored.value.hasPrefix(SealedCredentialStore.prefix))
            let fcmToken = try await fcmSender.tokens.token(now: h.clock.now)
            #expect(!fcmStored.value.contains(fcmToken) && fcmStored.value.hasPrefix(SealedCredentialStore.prefix))
            // Opened with the right key, as it was; with another key, or its expiry moved, nothing.
            let sealed = SealedCredentialStore(store: store, secret: h.standIn.apnsKey.rawRepresentation, purpose: "apns")
            #expect(try await sealed.load(apnsName).map { seen.contains($0.value) } == true)
            let stranger = SealedCredentialStore(store: store, secret: P256.Signing.PrivateKey().rawRepresentation, purpose: "apns")
            #expect(try await stranger.load(apnsName) == nil)
            let moved = StoredCredential(
                name: stored.name, value: stored.value, issuedAt: stored.issuedAt, expiresAt: stored.expiresAt.addingTimeInterval(86_400))
            #expect(sealed.open(moved) == nil)
            // An unreadable token is replaced by a readable one when this process makes its own.
            let own = StoredCredential(name: apnsName, value: "own", issuedAt: stored.issuedAt, expiresAt: stored.expiresAt)
            #expect(try await stranger.save(own, unlessNewerThan: nil) == own)
            #expect(try await stranger.load(apnsName) == own)
            // An earlier version's token, unsealed under the plain name, is that version's alone.
            let plain = StoredCredential(name: "old", value: "plain-token", issuedAt: Self.start, expiresAt: Self.start.addingTimeInterval(60))
            _ = await store.save(plain, unlessNewerThan: nil)
            #expect(try await sealed.load("old") == nil)
        }
    }

    /// A rolling upgrade keeps the installation at one APNs token: a process of this version that starts while one of an
    /// earlier version sends with its token (kept unsealed, under the plain name) uses that token, since one of its own
    /// made then would be a second within 20 minutes, which Apple refuses for 20; it makes its own, sealed, once that
    /// one is old, and the next process of this version takes that.
    @Test func aRollingUpgradeKeepsOneProviderToken() async throws {
        try await withStandIn { h in
            let device = String(repeating: "cd", count: 32)
            let delivered = { (outcome: PushOutcome) -> Bool in
                if case .delivered = outcome { return true }
                return false
            }
            let earlier = apns(h, store: MemoryCredentialStore())
            #expect(delivered(await earlier.send(deviceToken: device, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)))
            let token = try await earlier.tokens.token(now: h.clock.now)
            let store = MemoryCredentialStore()
            _ = await store.save(
                StoredCredential(name: earlier.tokens.name, value: token, issuedAt: h.clock.now, expiresAt: h.clock.now.addingTimeInterval(3600)),
                unlessNewerThan: nil)
            h.clock.advance(by: 600)
            let upgraded = apns(h, store: store)
            #expect(delivered(await upgraded.send(deviceToken: device, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)))
            #expect(await h.script.providerTokens.map(\.token) == [token])
            #expect(await store.load(upgraded.tokens.name + SealedCredentialStore.suffix) == nil, "taken up, not stored again")
            h.clock.advance(by: 41 * 60)
            #expect(delivered(await upgraded.send(deviceToken: device, headers: apnsHeaders(h), payload: Self.payload, now: h.clock.now)))
            let own = try await upgraded.tokens.token(now: h.clock.now)
            let seen = await h.script.providerTokens.map(\.token)
            #expect(own != token && seen == [token, own])
            #expect(await store.load(upgraded.tokens.name + SealedCredentialStore.suffix) != nil)
            #expect(try await apns(h, store: store).tokens.token(now: h.clock.now) == own)
            #expect(await h.script.problems.isEmpty)
            // A row under the plain name that this key did not make (planted, or another key's) is passed over: not
            // sent, and it does not hold the next token back.
            let stranger = apns(h, key: P256.Signing.PrivateKey(), store: MemoryCredentialStore())
            let forged = try await stranger.tokens.token(now: h.clock.now)
            let fresh = MemoryCredentialStore()
            for value in [forged, "not-a-token", own + "x"] {
                _ = await fresh.save(
                    StoredCredential(
                        name: upgraded.tokens.name, value: value, issuedAt: h.clock.now, expiresAt: h.clock.now.addingTimeInterval(3600)),
                    unlessNewerThan: nil)
                let tokens = apns(h, store: fresh).tokens
                #expect(try await tokens.loadStored(now: h.clock.now) == nil, "\(value.prefix(20))")
            }
        }
    }

    static func fcmMessage(_ token: String) -> ByteBuffer {
        ByteBuffer(string: #"{"message":{"token":"\#(token)","notification":{"title":"t","body":"b"}}}"#)
    }

    @Test func fcmAnswersEachAsItsTableSays() async throws {
        try await withStandIn { h in
            let sender = try fcm(h)
            let token = "fcm-token:APA91bStandIn_0001"
            #expect(
                await sender.send(message: Self.fcmMessage(token), now: h.clock.now) == .delivered(id: "projects/stand-in-project/messages/0:n_0001"))
            let cases: [(StandInScript.Answer, PushOutcome)] = [
                (.fcm(404, status: "NOT_FOUND", code: "UNREGISTERED"), .unregistered(reason: "FCM 404 UNREGISTERED")),
                (.fcm(403, status: "PERMISSION_DENIED", code: "SENDER_ID_MISMATCH"), .unregistered(reason: "FCM 403 SENDER_ID_MISMATCH")),
                (.fcm(400, status: "INVALID_ARGUMENT", code: "INVALID_ARGUMENT"), .failed(reason: "FCM 400 INVALID_ARGUMENT")),
                (
                    .fcm(429, status: "RESOURCE_EXHAUSTED", code: "QUOTA_EXCEEDED", retryAfter: "30"),
                    .retry(reason: "FCM 429 QUOTA_EXCEEDED", after: 30)
                ),
                (.fcm(503, status: "UNAVAILABLE", code: "UNAVAILABLE"), .retry(reason: "FCM 503 UNAVAILABLE", after: nil)),
                (.fcm(500, status: "INTERNAL", code: "INTERNAL"), .retry(reason: "FCM 500 INTERNAL", after: nil)),
                (.fcm(401, status: "UNAUTHENTICATED", code: "THIRD_PARTY_AUTH_ERROR"), .configuration(reason: "FCM 401 THIRD_PARTY_AUTH_ERROR")),
            ]
            for (answer, expected) in cases {
                await h.script.answer(token, with: answer)
                #expect(await sender.send(message: Self.fcmMessage(token), now: h.clock.now) == expected)
            }
            // One access token for all of them …
            #expect(await h.script.tokenExchanges == 1)
            // … until it is refused: a new one, once, and the message goes.
            await h.script.revokeAccessTokens()
            #expect(
                await sender.send(message: Self.fcmMessage(token), now: h.clock.now) == .delivered(id: "projects/stand-in-project/messages/0:n_0001"))
            #expect(await h.script.tokenExchanges == 2)
            // Five minutes before it lapses, a new one.
            h.clock.advance(by: 3599 - 299)
            _ = await sender.send(message: Self.fcmMessage(token), now: h.clock.now)
            #expect(await h.script.tokenExchanges == 3)
            // The token endpoint refusing the assertion is a configuration error.
            await h.script.revokeAccessTokens()
            await h.script.answer("token", with: .init(status: 400, body: #"{"error":"invalid_grant"}"#))
            #expect(
                await sender.send(message: Self.fcmMessage(token), now: h.clock.now) == .configuration(reason: "FCM token endpoint 400 invalid_grant")
            )
            #expect(await h.script.problems.isEmpty)
        }
    }

    func webPush(_ h: Harness, key: P256.Signing.PrivateKey? = nil, store: any CredentialStore = MemoryCredentialStore()) throws -> WebPushSender {
        WebPushSender(
            client: h.client, vapid: try VAPIDKey(privateKey: key ?? h.standIn.vapidKey, subject: "mailto:ops@example.org"),
            allowedHosts: ["127.0.0.1"], store: store)
    }

    @Test func webPushEncryptsSignsAndAnswersEachAsRFC8030Says() async throws {
        try await withStandIn { h in
            let sender = try webPush(h)
            let sub = h.standIn.subscription(0, port: h.port)
            let plaintext = Data(#"{"title":"1 Ramadan 1446","body":"بِسْمِ اللَّهِ"}"#.utf8)
            func send() async -> PushOutcome {
                await sender.send(
                    endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth, ttl: 3600, urgency: "normal", topic: "dv20250301",
                    plaintext: plaintext,
                    now: h.clock.now)
            }
            #expect(await send() == .delivered(id: "https://127.0.0.1/message/sub-0"))
            let received = try #require(await h.script.received.last)
            #expect(received.plaintext == plaintext)
            #expect(received.headers["ttl"] == "3600" && received.headers["urgency"] == "normal" && received.headers["topic"] == "dv20250301")
            let cases: [(Int, PushOutcome)] = [
                (404, .unregistered(reason: "Web Push 404")), (410, .unregistered(reason: "Web Push 410")), (413, .failed(reason: "Web Push 413")),
                (400, .failed(reason: "Web Push 400")), (403, .failed(reason: "Web Push 403")), (429, .retry(reason: "Web Push 429", after: nil)),
                (500, .retry(reason: "Web Push 500", after: nil)), (503, .retry(reason: "Web Push 503", after: nil)),
            ]
            for (status, expected) in cases {
                await h.script.answer("sub-0", with: .init(status: status))
                #expect(await send() == expected)
            }
            #expect(await h.script.problems.isEmpty)
            // A subscription gone from the service.
            let gone = (endpoint: "https://127.0.0.1:\(h.port)/push/unknown", p256dh: sub.p256dh, auth: sub.auth)
            #expect(
                await sender.send(
                    endpoint: gone.endpoint, p256dh: gone.p256dh, auth: gone.auth, ttl: 60, urgency: "high", topic: "t", plaintext: plaintext,
                    now: h.clock.now)
                    == .unregistered(reason: "Web Push 410"))
            // An endpoint on a host that is not a push service is never posted to.
            let before = await h.script.received.count
            #expect(
                await sender.send(
                    endpoint: "https://169.254.169.254/latest", p256dh: sub.p256dh, auth: sub.auth, ttl: 60, urgency: "high", topic: "t",
                    plaintext: plaintext, now: h.clock.now)
                    == .failed(reason: "Web Push endpoint is not on an allowed push service (web_push_hosts)"))
            #expect(await h.script.received.count == before)
        }
    }

    /// The oracle's Python (from `.ci/run`'s virtual environment), when it is there.
    static let oracle = ProcessInfo.processInfo.environment["DAILYVERSE_WEBPUSH_ORACLE"].flatMap { $0.isEmpty ? nil : $0 }

    @Test(.enabled(if: oracle != nil, "set DAILYVERSE_WEBPUSH_ORACLE to a Python with scripts/webpush-oracle-requirements.txt"))
    func webPushBodiesDecryptAndVAPIDVerifiesWithAnIndependentImplementation() async throws {
        try await withStandIn { h in
            let sender = try webPush(h)
            let texts = [
                #"{"title":"1 Ramadan 1446","body":"Whereon every wise command is made clear"}"#,
                #"{"title":"١ رمضان ١٤٤٦","body":"فِيهَا يُفْرَقُ كُلُّ أَمْرٍ حَكِيمٍ","dir":"rtl"}"#,
                String(repeating: "x", count: WebPushEncryption.maximumPlaintextBytes), "",
            ]
            for (n, text) in texts.enumerated() {
                let sub = h.standIn.subscription(n, port: h.port)
                let outcome = await sender.send(
                    endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth, ttl: 60, urgency: "normal", topic: "t", plaintext: Data(text.utf8),
                    now: h.clock.now)
                #expect(outcome == .delivered(id: "https://127.0.0.1/message/sub-\(n)"))
            }
            let received = await h.script.received
            var input = ""
            for (n, item) in received.enumerated() {
                let secrets = h.standIn.subscriptionSecrets(n)
                let line: [String: String] = [
                    "body": Base64URL.encode(item.body), "receiver_private": Base64URL.encode(secrets.privateKey),
                    "auth": Base64URL.encode(secrets.auth),
                    "authorization": item.headers["authorization"] ?? "",
                ]
                input += String(decoding: try JSONSerialization.data(withJSONObject: line), as: UTF8.self) + "\n"
            }
            let output = try Self.runOracle(input)
            #expect(output.count == texts.count)
            for (n, result) in output.enumerated() {
                #expect(result["error"] is NSNull, "\(result["error"] ?? "")")
                #expect((result["plaintext"] as? String).flatMap { Base64URL.decode($0) } == Data(texts[n].utf8))
                #expect(result["vapid"] as? Bool == true)
                let claims = result["claims"] as? [String: Any]
                #expect(claims?["aud"] as? String == "https://127.0.0.1:\(h.port)" && claims?["sub"] as? String == "mailto:ops@example.org")
            }
        }
    }

    /// Runs scripts/webpush-oracle.py with the lines given; its answers, one object per line.
    static func runOracle(_ input: String) throws -> [[String: Any]] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/webpush-oracle.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(oracle))
        process.arguments = [script.path]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func aVAPIDKeyThePushServiceRefusesEverywherePauses() async throws {
        try await withStandIn { h in
            let sender = try webPush(h, key: P256.Signing.PrivateKey())
            var outcomes: [PushOutcome] = []
            for n in 0..<WebPushSender.forbiddenInARow {
                let sub = h.standIn.subscription(n, port: h.port)
                outcomes.append(
                    await sender.send(
                        endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth, ttl: 60, urgency: "normal", topic: "t", plaintext: Data("x".utf8),
                        now: h.clock.now))
            }
            #expect(outcomes.dropLast().allSatisfy { $0 == .failed(reason: "Web Push 403") })
            #expect(outcomes.last == .configuration(reason: "Web Push 403 on every request: check the VAPID key and subject"))
        }
    }

    /// A store that cannot be read, as a database that is away.
    struct UnreadableStore: CredentialStore {
        struct Away: Error {}
        func load(_ name: String) async throws -> StoredCredential? { throw Away() }
        func save(_ credential: StoredCredential, unlessNewerThan: Date?) async throws -> StoredCredential { throw Away() }
    }

    /// Once a key has worked, a run of 403s pauses Web Push only if a subscription that accepted the key is in it:
    /// subscriptions made with another server's key (which anyone can register, and which are sent one after another
    /// when they share a reminder time) are refused each on its own, and did pause Web Push for every device. Another
    /// process of the installation knows what this one learnt.
    @Test func subscriptionsMadeWithAnotherKeyDoNotPauseWebPush() async throws {
        try await withStandIn { h in
            let store = MemoryCredentialStore()
            let sender = try webPush(h, store: store)
            func send(_ n: Int, by sender: WebPushSender) async -> PushOutcome {
                let sub = h.standIn.subscription(n, port: h.port)
                return await sender.send(
                    endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth, ttl: 60, urgency: "normal", topic: "t", plaintext: Data("x".utf8),
                    now: h.clock.now)
            }
            #expect(await send(0, by: sender) == .delivered(id: "https://127.0.0.1/message/sub-0"))
            // Fourteen strangers refused in a row, twice as many as would pause: each fails alone.
            for n in 1...14 {
                await h.script.answer("sub-\(n)", with: .init(status: 403))
                #expect(await send(n, by: sender) == .failed(reason: "Web Push 403"))
            }
            // A subscription that accepted the key refusing it now: the key is wrong.
            await h.script.answer("sub-0", with: .init(status: 403))
            #expect(await send(0, by: sender) == .configuration(reason: "Web Push 403 on every request: check the VAPID key and subject"))
            // A second process, started later, reads what the first learnt.
            let other = try webPush(h, store: store)
            for n in 1...14 {
                await h.script.answer("sub-\(n)", with: .init(status: 403))
                #expect(await send(n, by: other) == .failed(reason: "Web Push 403"))
            }
            // While the known subscriptions cannot be read (the database is away), a run of refusals says nothing.
            let unreadable = try webPush(h, store: UnreadableStore())
            for n in 1...14 {
                await h.script.answer("sub-\(n)", with: .init(status: 403))
                #expect(await send(n, by: unreadable) == .failed(reason: "Web Push 403"))
            }
            // A known subscription its service no longer has (410) is let go: with none left, the key is as new again.
            let fresh = MemoryCredentialStore()
            let forgetting = try webPush(h, store: fresh)
            #expect(await send(0, by: forgetting) == .delivered(id: "https://127.0.0.1/message/sub-0"))
            await h.script.answer("sub-0", with: .init(status: 410))
            #expect(await send(0, by: forgetting) == .unregistered(reason: "Web Push 410"))
            #expect(try await fresh.load(try #require(await forgetting.state.name)).map(\.value) == "")
            // The same store under a new key knows nothing of it: ten refusals pause.
            let replaced = try webPush(h, key: P256.Signing.PrivateKey(), store: store)
            var outcomes: [PushOutcome] = []
            for n in 1...WebPushSender.forbiddenInARow { outcomes.append(await send(n, by: replaced)) }
            #expect(outcomes.last == .configuration(reason: "Web Push 403 on every request: check the VAPID key and subject"))
        }
    }

    @Test func serviceAccountFilesAreCheckedKeyByKey() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        func json(_ object: [String: String]) -> Data { try! JSONSerialization.data(withJSONObject: object) }
        let good = ["type": "service_account", "project_id": "p-1", "client_email": "a@b.iam.gserviceaccount.com", "private_key": key]
        #expect(try ServiceAccount.parse(json(good)).tokenURI == "https://oauth2.googleapis.com/token")
        for (missing, message) in [
            ("project_id", "missing project_id"), ("client_email", "missing client_email"), ("private_key", "missing private_key"),
        ] {
            var object = good
            object[missing] = nil
            #expect(throws: PushConfigurationError("\(message) in the service-account file")) { try ServiceAccount.parse(json(object)) }
        }
        var badKey = good
        badKey["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"
        #expect(throws: PushConfigurationError.self) { try ServiceAccount.parse(json(badKey)) }
        #expect(throws: PushConfigurationError("not a service-account JSON object")) { try ServiceAccount.parse(Data("[1]".utf8)) }
        var user = good
        user["type"] = "authorized_user"
        #expect(throws: PushConfigurationError("the file's type is 'authorized_user', not service_account")) { try ServiceAccount.parse(json(user)) }
        #expect(throws: PushConfigurationError.self) { try APNsSender.key(fromP8: "not a key") }
    }
}
