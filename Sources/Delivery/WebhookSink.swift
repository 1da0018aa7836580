import Foundation
import NIOCore
import PushServices

/// POSTs batches of outbox records to a push gateway: `{"records": [<record>, …]}`, each record as in the spool.
///
/// 2xx: delivered. 429: retried after Retry-After (seconds or an HTTP date). 5xx, timeouts and connection
/// errors: retried with the deliverer's exponential backoff. Any other 4xx: a permanent failure, not retried.
/// Sent through `PushClient.shared`, AsyncHTTPClient's process-wide instance (the push senders have a client of their
/// own, which trusts `push_ca_file` too).
public struct WebhookSink: Sink {
    public let url: URL
    public let name: String
    let timeout: TimeInterval
    let client: PushClient

    /// Whether `text` is an http:// or https:// URL with a host: what the webhook and gorush sinks post to.
    public static func isHTTPURL(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else { return false }
        return (scheme == "http" || scheme == "https") && components.host?.isEmpty == false
    }

    /// Why a sink's URL is refused (the setting's line names the URL, without its credentials).
    public static let notAnHTTPURL = "expected an http:// or https:// URL"

    public init(url: URL, timeout: TimeInterval = 30) throws {
        guard Self.isHTTPURL(url.absoluteString) else {
            throw SinkError("invalid webhook URL '\(Self.redacted(url.absoluteString))': \(Self.notAnHTTPURL)")
        }
        self.url = url
        // The name goes into logs, `status` and the outbox's last_error: never the credentials a URL may carry.
        self.name = "webhook:\(Self.redacted(url.absoluteString))"
        self.timeout = timeout
        self.client = PushClient.shared(timeout: timeout)
    }

    public func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] {
        let body = "{\"records\":[" + records.map { $0.jsonLine() }.joined(separator: ",") + "]}"
        var headers = [("content-type", "application/json"), ("user-agent", "dailyverse")]
        // Credentials in the URL go as Basic authorization, as URLSession sent them.
        if let user = url.user(percentEncoded: false) {
            let pair = "\(user):\(url.password(percentEncoded: false) ?? "")"
            headers.append(("authorization", "Basic " + Data(pair.utf8).base64EncodedString()))
        }
        let response: Response
        do {
            let answer = try await client.send(Self.withoutUserInfo(url), headers: headers, body: ByteBuffer(string: body))
            response = Response(status: answer.status, retryAfter: answer.retryAfter, error: nil)
        } catch {
            // An error's text can quote the URL: redacted before it is kept in last_error or logged.
            let text = PushClient.describe(error).replacingOccurrences(of: url.absoluteString, with: Self.redacted(url.absoluteString))
            response = Response(status: nil, retryAfter: nil, error: text)
        }
        let outcome = Self.outcome(of: response)
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, outcome) })
    }

    static func withoutUserInfo(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }

    /// A URL as it may be shown: user info and query (where API keys travel) replaced by `***`.
    public static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.host != nil else {
            // Not a URL we can take apart: show the scheme and nothing that may be a secret.
            return text.contains("@") || text.contains("?") ? (text.split(separator: ":").first.map { "\($0):***" } ?? "***") : text
        }
        if components.user != nil || components.password != nil {
            components.user = "***"
            components.password = nil
        }
        if components.query != nil { components.percentEncodedQuery = "***" }
        if components.fragment != nil { components.fragment = nil }
        return components.string ?? "***"
    }

    struct Response: Sendable {
        let status: Int?
        let retryAfter: String?
        let error: String?
    }

    static func outcome(of response: Response, now: Date = Date()) -> DeliveryOutcome {
        guard let status = response.status else { return .retry(error: "webhook: \(response.error ?? "no response")", after: nil) }
        switch status {
        case 200..<300: return .delivered()
        case 429: return .retry(error: "webhook: HTTP 429", after: retryAfter(response.retryAfter, now: now))
        case 400..<500: return .failed(error: "webhook: HTTP \(status)")
        default: return .retry(error: "webhook: HTTP \(status)", after: retryAfter(response.retryAfter, now: now))
        }
    }

    /// `Retry-After` as every sender reads it: seconds or an HTTP date, at most a day.
    static func retryAfter(_ value: String?, now: Date) -> TimeInterval? { Answers.retryAfter(value, now: now) }
}
