import Foundation

/// What one push request came to, as the delivery records it.
public enum PushOutcome: Equatable, Sendable {
    /// Accepted; the service's id for the message (`apns-id`, FCM's message name, Web Push's `Location`).
    case delivered(id: String?)
    /// Try again later: the service is busy or down, or the connection failed. `after`: the service's Retry-After.
    case retry(reason: String, after: TimeInterval?)
    /// This message will never be accepted: recorded as failed.
    case failed(reason: String)
    /// The token or subscription is gone: the device is disabled with this reason, and the row failed.
    case unregistered(reason: String)
    /// Our credentials or settings are wrong: sending to this service pauses, its rows stay pending.
    case configuration(reason: String)
    /// The provider token or access token was refused as expired: make a new one and send once more.
    case renewCredentials(reason: String)
}

/// A service's answer: status, the headers that matter and the body.
public struct ServiceAnswer: Sendable, Equatable {
    public var status: Int
    public var body: Data
    public var retryAfter: String?
    /// `apns-id` or `Location`.
    public var id: String?
    /// The HTTP version the answer came in (2 where the server offered HTTP/2).
    public var httpMajorVersion: Int

    public init(status: Int, body: Data = Data(), retryAfter: String? = nil, id: String? = nil, httpMajorVersion: Int = 2) {
        self.status = status
        self.body = body
        self.retryAfter = retryAfter
        self.id = id
        self.httpMajorVersion = httpMajorVersion
    }

    var json: [String: Any]? {
        guard !body.isEmpty, body.count <= 64 * 1024 else { return nil }
        return try? JSONSerialization.jsonObject(with: body) as? [String: Any]
    }
}

/// The tables of Apple's, Google's and RFC 8030's answers: a status and reason in, an outcome out. Pure: the senders
/// and the tests go through the same functions.
public enum Answers {
    /// APNs (Apple's "Handling notification responses from APNs"): `{"reason": "BadDeviceToken"}` on errors.
    public static func apns(_ answer: ServiceAnswer, now: Date) -> PushOutcome {
        if answer.status == 200 { return .delivered(id: answer.id) }
        let reason = (answer.json?["reason"] as? String).map(clean) ?? "HTTP \(answer.status)"
        let text = "APNs \(answer.status) \(reason)"
        switch (answer.status, reason) {
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .unregistered(reason: text)
        case (403, "ExpiredProviderToken"): return .renewCredentials(reason: text)
        // Tokens are reused for 50 minutes; if Apple still thinks they change too often, wait rather than make more.
        case (429, "TooManyProviderTokenUpdates"): return .retry(reason: text, after: 20 * 60)
        case (403, _), (400, "BadTopic"), (400, "MissingTopic"), (400, "TopicDisallowed"), (400, "MissingProviderToken"):
            return .configuration(reason: text)
        case (429, _), (500..., _): return .retry(reason: text, after: retryAfter(answer.retryAfter, now: now))
        default: return .failed(reason: text)
        }
    }

    /// FCM HTTP v1: `{"name": "projects/…/messages/…"}`, or `{"error": {"code", "status", "message", "details":
    /// [{"@type": "…FcmError", "errorCode": "UNREGISTERED"}]}}`.
    public static func fcm(_ answer: ServiceAnswer, now: Date) -> PushOutcome {
        let json = answer.json
        if (200..<300).contains(answer.status) { return .delivered(id: (json?["name"] as? String).map(clean) ?? answer.id) }
        let error = json?["error"] as? [String: Any]
        let details = error?["details"] as? [[String: Any]] ?? []
        let code = details.lazy.compactMap { $0["errorCode"] as? String }.first.map(clean)
        let status = (error?["status"] as? String).map(clean)
        let reason = code ?? status ?? "HTTP \(answer.status)"
        let text = "FCM \(answer.status) \(reason)"
        switch (answer.status, reason) {
        case (_, "UNREGISTERED"), (_, "SENDER_ID_MISMATCH"): return .unregistered(reason: text)
        case (_, "THIRD_PARTY_AUTH_ERROR"): return .configuration(reason: text)
        // An access token that lapsed: a new one, once.
        case (401, _): return .renewCredentials(reason: text)
        // The service account may not send for this project, or the project is not there.
        case (403, _), (404, _): return .configuration(reason: text)
        case (429, _), (500..., _), (_, "QUOTA_EXCEEDED"), (_, "UNAVAILABLE"), (_, "INTERNAL"):
            return .retry(reason: text, after: retryAfter(answer.retryAfter, now: now))
        default: return .failed(reason: text)
        }
    }

    /// Web Push (RFC 8030 §5, RFC 8292 §4): a status only, perhaps a text body.
    public static func webPush(_ answer: ServiceAnswer, now: Date) -> PushOutcome {
        let detail = String(decoding: answer.body.prefix(200), as: UTF8.self).split(whereSeparator: \.isNewline).first.map { clean(String($0)) }
        let text = "Web Push \(answer.status)" + (detail.map { $0.isEmpty ? "" : " \($0)" } ?? "")
        switch answer.status {
        case 200..<300: return .delivered(id: answer.id)
        case 404, 410: return .unregistered(reason: text)
        case 429, 500...: return .retry(reason: text, after: retryAfter(answer.retryAfter, now: now))
        default: return .failed(reason: text)
        }
    }

    /// A service's words as they may be logged and stored: printable ASCII, at most 120 characters.
    static func clean(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(120).map(Character.init))
    }

    /// The longest wait a service's `Retry-After` is taken for.
    public static let maximumRetryAfter: TimeInterval = 86_400

    /// `Retry-After: 120` or an HTTP date, at most `maximumRetryAfter`.
    public static func retryAfter(_ value: String?, now: Date) -> TimeInterval? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty, value.count <= 64 else { return nil }
        if value.allSatisfy({ $0.isASCII && $0.isNumber }) {
            // Digits only; more than fit in an Int are "a very long time".
            return min(Int(value).map(TimeInterval.init) ?? maximumRetryAfter, maximumRetryAfter)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { min(max(0, $0.timeIntervalSince(now)), maximumRetryAfter) }
    }
}
