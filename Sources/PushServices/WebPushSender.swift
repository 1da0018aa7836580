import Encodings
import Foundation
import NIOCore

/// Web Push (RFC 8030) with aes128gcm encryption (RFC 8291) and VAPID (RFC 8292).
public struct WebPushSender: Sendable {
    /// The push services of the browsers people use; a subscription's endpoint must be on one of them (or on a host
    /// the operator adds), so that a registered "endpoint" cannot make this server post to anywhere else.
    public static let knownServices = [
        "fcm.googleapis.com", "updates.push.services.mozilla.com", "push.services.mozilla.com", "web.push.apple.com", "notify.windows.com",
    ]

    public let client: PushClient
    public let vapid: VAPIDKey
    /// Host names (or their parent domains) an endpoint may be on.
    public let allowedHosts: [String]
    let state: WebPushState

    public init(client: PushClient, vapid: VAPIDKey, allowedHosts: [String] = WebPushSender.knownServices) {
        self.client = client
        self.vapid = vapid
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
        self.state = WebPushState(vapid: vapid)
    }

    /// After this many 403s in a row, with none accepted between, the VAPID key is taken to be wrong: paused.
    public static let forbiddenInARow = 10

    /// Whether `endpoint` is an https URL on an allowed host.
    public func allows(_ endpoint: String) -> Bool {
        guard let components = URLComponents(string: endpoint), components.scheme?.lowercased() == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return false }
        return allowedHosts.contains { host == $0 || host.hasSuffix("." + $0) }
    }

    /// Encrypts `plaintext` for the subscription and posts it. `ttl`, `urgency` and `topic` as rendered.
    public func send(
        endpoint: String, p256dh: String, auth: String, ttl: Int, urgency: String, topic: String, plaintext: Data, now: Date
    ) async -> PushOutcome {
        guard allows(endpoint), let origin = VAPIDKey.origin(of: endpoint) else {
            return .failed(reason: "Web Push endpoint is not on an allowed push service (web_push_hosts)")
        }
        guard let key = Base64URL.decode(p256dh), let secret = Base64URL.decode(auth) else {
            return .unregistered(reason: "Web Push subscription keys are not base64url")
        }
        let body: Data
        do { body = try WebPushEncryption.encrypt(plaintext, p256dh: key, auth: secret) } catch let failure as WebPushEncryption.Failure {
            if case .tooLarge = failure { return .failed(reason: "Web Push: \(failure)") }
            return .unregistered(reason: "Web Push subscription: \(failure)")
        } catch {
            return .failed(reason: "Web Push encryption: \(error)")
        }
        let authorization: String
        do { authorization = try await state.authorization(origin: origin, now: now) } catch {
            return .configuration(reason: "VAPID: \(error)")
        }
        let answer: ServiceAnswer
        do {
            answer = try await client.send(
                endpoint,
                headers: [
                    ("authorization", authorization), ("ttl", String(max(0, ttl))), ("urgency", urgency), ("topic", topic),
                    ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"),
                ], body: ByteBuffer(bytes: body))
        } catch {
            return .retry(reason: "Web Push: \(PushClient.describe(error))", after: nil)
        }
        let outcome = Answers.webPush(answer, now: now)
        if await state.record(status: answer.status) >= Self.forbiddenInARow, case .failed(let reason) = outcome {
            return .configuration(reason: reason + " on every request: check the VAPID key and subject")
        }
        return outcome
    }
}

/// VAPID tokens per origin (12 hours, renewed with an hour left) and the run of 403s.
actor WebPushState {
    let vapid: VAPIDKey
    var tokens: [String: (header: String, expires: Date)] = [:]
    var forbidden = 0

    init(vapid: VAPIDKey) { self.vapid = vapid }

    func authorization(origin: String, now: Date) throws -> String {
        if let cached = tokens[origin], now < cached.expires.addingTimeInterval(-3600) { return cached.header }
        let header = try vapid.authorization(audience: origin, now: now)
        if tokens.count > 1000 { tokens.removeAll() }
        tokens[origin] = (header, now.addingTimeInterval(12 * 3600))
        return header
    }

    /// Counts 403s in a row; any other answer ends the run.
    func record(status: Int) -> Int {
        forbidden = status == 403 ? forbidden + 1 : 0
        return forbidden
    }
}
