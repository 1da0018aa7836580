import Crypto
import CryptoExtras
import Encodings
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import PushServices
import ServiceLifecycle
import Synchronization

/// What a stand-in answers for one key (a device token, an FCM token, a subscription id), and what it received.
public actor StandInScript {
    public struct Answer: Sendable {
        public var status: Int
        public var body: String
        public var headers: [String: String]
        public init(status: Int, body: String = "", headers: [String: String] = [:]) {
            self.status = status
            self.body = body
            self.headers = headers
        }
        /// APNs' error body.
        public static func apns(_ status: Int, _ reason: String, retryAfter: String? = nil) -> Answer {
            Answer(status: status, body: #"{"reason":"\#(reason)"}"#, headers: retryAfter.map { ["retry-after": $0] } ?? [:])
        }
        /// FCM's error body.
        public static func fcm(_ status: Int, status text: String, code: String? = nil, retryAfter: String? = nil) -> Answer {
            let details = code.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
            return Answer(
                status: status, body: #"{"error":{"code":\#(status),"message":"stand-in","status":"\#(text)"\#(details)}}"#,
                headers: retryAfter.map { ["retry-after": $0] } ?? [:])
        }
    }

    public struct Received: Sendable {
        public let service: String
        public let key: String
        public let headers: [String: String]
        public let body: Data
        /// Web Push: the body decrypted with the subscription's private key.
        public let plaintext: Data?
    }

    var queued: [String: [Answer]] = [:]
    public private(set) var received: [Received] = []
    /// What a stand-in found wrong with a request (a bad signature, a missing header): the tests expect none.
    public private(set) var problems: [String] = []
    /// APNs: provider tokens issued before this are answered 403 ExpiredProviderToken.
    public var expireProviderTokensIssuedBefore: Date?
    /// FCM: access tokens handed out, and whether they still count.
    var accessTokens: Set<String> = []
    public private(set) var tokenExchanges = 0
    public private(set) var providerTokens: [(iat: Int, token: String)] = []

    public init() {}

    /// Answers the next requests for `key` with these, in order; then the default again.
    public func answer(_ key: String, with answers: Answer...) { queued[key, default: []] += answers }
    public func expireProviderTokens(before date: Date) { expireProviderTokensIssuedBefore = date }
    public func revokeAccessTokens() { accessTokens.removeAll() }

    func next(_ key: String) -> Answer? {
        guard var list = queued[key], !list.isEmpty else { return nil }
        let first = list.removeFirst()
        queued[key] = list
        return first
    }
    func record(_ item: Received) { received.append(item) }
    func problem(_ text: String) { problems.append(text) }
    func issueAccessToken() -> String {
        tokenExchanges += 1
        let token = "ya29.stand-in-\(tokenExchanges)"
        accessTokens.insert(token)
        return token
    }
    func isLive(_ token: String) -> Bool { accessTokens.contains(token) }
    /// Records a provider token the first time it is seen; a second new token within 20 minutes is Apple's
    /// TooManyProviderTokenUpdates.
    func sawProviderToken(_ token: String, iat: Int) -> Bool {
        if providerTokens.contains(where: { $0.token == token }) { return true }
        if let last = providerTokens.last, iat - last.iat < 20 * 60 { return false }
        providerTokens.append((iat, token))
        return true
    }
}

/// Local stand-ins for APNs, FCM (its token endpoint and send endpoint) and a Web Push service, on one loopback
/// port over TLS with HTTP/2: they check what the real services check (the provider token's signature and claims,
/// the RS256 assertion, the VAPID JWT) and decrypt Web Push bodies, and answer as scripted.
public final class PushStandIn: Sendable {
    public let certificates: TestCertificates
    public let clock: @Sendable () -> Date
    public let script = StandInScript()
    // APNs
    public let apnsKey = P256.Signing.PrivateKey()
    public let apnsKeyID = "STANDIN001"
    public let teamID = "TEAMSTAND1"
    public let topic = "org.example.quran"
    // FCM
    public let fcmKey: _RSA.Signing.PrivateKey
    public let clientEmail = "sender@stand-in.iam.gserviceaccount.com"
    public let projectID = "stand-in-project"
    // Web Push: the application server's key (subscriptions are bound to it) and each subscription's keys.
    public let vapidKey = P256.Signing.PrivateKey()
    let subscriptions: [String: (key: P256.KeyAgreement.PrivateKey, auth: Data)]

    public init(subscriptions count: Int = 16, clock: @escaping @Sendable () -> Date) throws {
        self.certificates = try TestCertificates()
        self.clock = clock
        self.fcmKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        var subscriptions: [String: (P256.KeyAgreement.PrivateKey, Data)] = [:]
        for n in 0..<count { subscriptions["sub-\(n)"] = (P256.KeyAgreement.PrivateKey(), Data((0..<16).map { _ in UInt8.random(in: 0...255) })) }
        self.subscriptions = subscriptions
    }

    /// The subscription `n` as a browser would hand it over, on the stand-in at `port`.
    public func subscription(_ n: Int, port: Int) -> (endpoint: String, p256dh: String, auth: String) {
        let item = subscriptions["sub-\(n)"]!
        return ("https://127.0.0.1:\(port)/push/sub-\(n)", Base64URL.encode(item.key.publicKey.x963Representation), Base64URL.encode(item.auth))
    }

    /// Subscription `n`'s private key (raw, 32 bytes) and auth secret: what the browser keeps, for an independent
    /// decryption.
    public func subscriptionSecrets(_ n: Int) -> (privateKey: Data, auth: Data) {
        let item = subscriptions["sub-\(n)"]!
        return (item.key.rawRepresentation, item.auth)
    }

    public var p8: String { apnsKey.pemRepresentation }

    /// A service-account file whose token URI is the stand-in's.
    public func serviceAccountJSON(port: Int) -> String {
        let object: [String: String] = [
            "type": "service_account", "project_id": projectID, "private_key_id": "stand-in", "private_key": fcmKey.pemRepresentation,
            "client_email": clientEmail, "token_uri": "https://127.0.0.1:\(port)/token",
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Runs the stand-ins on an ephemeral loopback port for the duration of `body`; their tasks on `executor` if given
    /// (a test's own thread, so that its answers never wait for other suites' work), else on the shared pool.
    public func run<T: Sendable>(on executor: (any TaskExecutor)? = nil, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let router = Router()
        router.post("/3/device/:token") { request, context in try await self.apns(request, context) }
        router.post("/token") { request, context in try await self.token(request, context) }
        router.post("/v1/projects/:project/messages:send") { request, context in try await self.fcm(request, context) }
        router.post("/push/:id") { request, context in try await self.webPush(request, context) }
        router.post("/api/push") { request, context in try await self.gorush(request, context) }
        let port = PortWaiter()
        let logger = Logger(label: "stand-in") { _ in SwiftLogNoOpLogHandler() }
        let application = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: certificates.serverTLS),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "stand-in"),
            onServerRunning: { channel in port.set(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        async let running: Void = withTaskExecutorPreference(executor) { try await group.run() }
        let result: T
        do { result = try await body(try await port.wait()) } catch {
            await group.triggerGracefulShutdown()
            try? await running
            throw error
        }
        await group.triggerGracefulShutdown()
        try await running
        return result
    }

    /// Runs the stand-ins and hands `body` their port and a push client that trusts their certificate authority
    /// (through a CA file, as an operator would), shut down after. `timeout` bounds a request against a hang; it is no
    /// figure: with every suite running at once on two cores, a request's TLS handshake once took more than 10 s, and
    /// the deadline, not the stand-in's answer, decided the outcome under test.
    public func runWithClient<T: Sendable>(
        timeout: TimeInterval = 60, on executor: (any TaskExecutor)? = nil, _ body: @Sendable (Int, PushClient) async throws -> T
    ) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-stand-in-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let caFile = try certificates.writeAuthority(in: folder)
        return try await run(on: executor) { port in
            let client = try PushClient(caFile: caFile, timeout: timeout)
            do {
                let result = try await body(port, client)
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    static func headers(_ request: Request) -> [String: String] {
        var out: [String: String] = [:]
        for field in request.headers { out[field.name.canonicalName] = field.value }
        return out
    }

    static func respond(_ answer: StandInScript.Answer, extra: [String: String] = [:]) -> Response {
        var headers = HTTPFields()
        for (name, value) in answer.headers.merging(extra, uniquingKeysWith: { first, _ in first }) {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        headers[.contentType] = "application/json"
        return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
    }

    func apns(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let token = context.parameters.get("token") ?? ""
        let headers = Self.headers(request)
        let body = Data((try await request.body.collect(upTo: 1 << 20)).readableBytesView)
        await script.record(.init(service: "apns", key: token, headers: headers, body: body, plaintext: nil))
        guard let bearer = headers["authorization"], bearer.hasPrefix("bearer ") else {
            return Self.respond(.apns(403, "MissingProviderToken"))
        }
        let jwt = String(bearer.dropFirst(7))
        guard let parts = try? JWT.verifyES256(jwt, key: apnsKey.publicKey), parts.header["kid"] as? String == apnsKeyID,
            parts.claims["iss"] as? String == teamID, let iat = parts.claims["iat"] as? Int
        else {
            await script.problem("APNs: a provider token that does not verify")
            return Self.respond(.apns(403, "InvalidProviderToken"))
        }
        if let before = await script.expireProviderTokensIssuedBefore, Double(iat) < before.timeIntervalSince1970 {
            return Self.respond(.apns(403, "ExpiredProviderToken"))
        }
        guard await script.sawProviderToken(jwt, iat: iat) else {
            await script.problem("APNs: a new provider token within 20 minutes of the last (iat \(iat))")
            return Self.respond(.apns(429, "TooManyProviderTokenUpdates"))
        }
        for name in ["apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id"] where headers[name] == nil {
            await script.problem("APNs: no \(name) header")
        }
        if let expiration = headers["apns-expiration"].flatMap(Int.init), Double(expiration) < clock().timeIntervalSince1970 {
            await script.problem("APNs: apns-expiration \(expiration) already past")
        }
        if headers["apns-topic"] != topic { return Self.respond(.apns(400, "DeviceTokenNotForTopic")) }
        if body.count > 4096 { return Self.respond(.apns(413, "PayloadTooLarge")) }
        if let answer = await script.next(token) { return Self.respond(answer, extra: ["apns-id": UUID().uuidString]) }
        return Self.respond(.init(status: 200), extra: ["apns-id": "apns-\(token.prefix(8))"])
    }

    func token(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let form = String(buffer: try await request.body.collect(upTo: 1 << 16))
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = fields["assertion"] else {
            await script.problem("FCM token: not a jwt-bearer grant")
            return Self.respond(.init(status: 400, body: #"{"error":"unsupported_grant_type"}"#))
        }
        guard let parts = try? JWT.verifyRS256(assertion, key: fcmKey.publicKey), parts.claims["iss"] as? String == clientEmail,
            parts.claims["scope"] as? String == FCMSender.scope, let aud = parts.claims["aud"] as? String, aud.hasSuffix("/token"),
            let iat = parts.claims["iat"] as? Int, let exp = parts.claims["exp"] as? Int, exp > iat, exp - iat <= 3600
        else {
            await script.problem("FCM token: an assertion that does not verify or has the wrong claims")
            return Self.respond(.init(status: 400, body: #"{"error":"invalid_grant"}"#))
        }
        if let answer = await script.next("token") { return Self.respond(answer) }
        let token = await script.issueAccessToken()
        return Self.respond(.init(status: 200, body: #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#))
    }

    func fcm(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let headers = Self.headers(request)
        let body = Data((try await request.body.collect(upTo: 1 << 20)).readableBytesView)
        let message = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["message"] as? [String: Any]
        let token = message?["token"] as? String ?? ""
        await script.record(.init(service: "fcm", key: token, headers: headers, body: body, plaintext: nil))
        guard context.parameters.get("project") == projectID else { return Self.respond(.fcm(404, status: "NOT_FOUND")) }
        guard let bearer = headers["authorization"], bearer.hasPrefix("Bearer "), await script.isLive(String(bearer.dropFirst(7))) else {
            return Self.respond(.fcm(401, status: "UNAUTHENTICATED"))
        }
        guard message != nil, !token.isEmpty else { return Self.respond(.fcm(400, status: "INVALID_ARGUMENT", code: "INVALID_ARGUMENT")) }
        if let answer = await script.next(token) { return Self.respond(answer) }
        return Self.respond(.init(status: 200, body: #"{"name":"projects/\#(projectID)/messages/0:\#(token.suffix(6))"}"#))
    }

    func webPush(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let headers = Self.headers(request)
        let body = Data((try await request.body.collect(upTo: 1 << 16)).readableBytesView)
        var plaintext: Data? = nil
        if let subscription = subscriptions[id] {
            plaintext = try? WebPushEncryption.decrypt(body, receiverKey: subscription.key, auth: subscription.auth)
            if plaintext == nil { await script.problem("Web Push: a body that does not decrypt") }
        }
        await script.record(.init(service: "webpush", key: id, headers: headers, body: body, plaintext: plaintext))
        // RFC 8292: "vapid t=<JWT>, k=<key>", the key the subscription was made with, the JWT for this origin.
        let authorization = headers["authorization"] ?? ""
        guard let match = authorization.wholeMatch(of: /vapid t=([^,\s]+),\s*k=([A-Za-z0-9_\-]+)/),
            String(match.2) == Base64URL.encode(vapidKey.publicKey.x963Representation),
            let parts = try? JWT.verifyES256(String(match.1), key: vapidKey.publicKey),
            let aud = parts.claims["aud"] as? String, aud == "https://127.0.0.1:\(request.head.authority?.split(separator: ":").last ?? "")",
            let exp = parts.claims["exp"] as? Int, Double(exp) > clock().timeIntervalSince1970,
            Double(exp) <= clock().timeIntervalSince1970 + 86_400, let sub = parts.claims["sub"] as? String,
            sub.hasPrefix("mailto:") || sub.hasPrefix("https:")
        else {
            await script.problem("Web Push: a VAPID authorization that does not verify: \(authorization.prefix(40))")
            return Self.respond(.init(status: 403))
        }
        if headers["content-encoding"] != "aes128gcm" || headers["ttl"].flatMap(Int.init) == nil {
            await script.problem("Web Push: content-encoding or TTL missing")
            return Self.respond(.init(status: 400))
        }
        if body.count > 4096 { return Self.respond(.init(status: 413)) }
        if subscriptions[id] == nil { return Self.respond(.init(status: 410)) }
        if let answer = await script.next(id) { return Self.respond(answer) }
        return Self.respond(.init(status: 201), extra: ["location": "https://127.0.0.1/message/\(id)"])
    }
}

extension PushStandIn {
    /// gorush's `/api/push`: a batch of notifications, queued (answered as scripted under the key "gorush").
    func gorush(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let body = Data((try await request.body.collect(upTo: 1 << 22)).readableBytesView)
        await script.record(.init(service: "gorush", key: "gorush", headers: Self.headers(request), body: body, plaintext: nil))
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let list = object["notifications"] as? [[String: Any]],
            !list.isEmpty
        else { return Self.respond(.init(status: 400, body: #"{"message":"Missing notifications field."}"#)) }
        if let answer = await script.next("gorush") { return Self.respond(answer) }
        return Self.respond(.init(status: 200, body: #"{"counts":\#(list.count),"logs":[],"success":"ok"}"#))
    }
}

/// The port a server came up on, for whoever waits for it.
final class PortWaiter: Sendable {
    private struct State {
        var port: Int?
        var waiters: [CheckedContinuation<Int, Never>] = []
    }
    private let state = Mutex(State())

    func set(_ value: Int) {
        let waiting = state.withLock { state -> [CheckedContinuation<Int, Never>] in
            state.port = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.resume(returning: value) }
    }

    func wait() async throws -> Int {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Int? in
                if let port = state.port { return port }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
