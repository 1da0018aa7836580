import Foundation
import PushServices

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// POSTs batches of outbox records to a push gateway: `{"records": [<record>, …]}`, each record as in the spool.
///
/// 2xx: delivered. 429: retried after Retry-After (seconds or an HTTP date). 5xx, timeouts and connection
/// errors: retried with the deliverer's exponential backoff. Any other 4xx: a permanent failure, not retried.
public struct WebhookSink: Sink {
    public let url: URL
    public let name: String
    let timeout: TimeInterval
    let session: URLSession

    public init(url: URL, timeout: TimeInterval = 30) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host != nil else {
            throw SinkError("invalid webhook URL '\(Self.redacted(url.absoluteString))': expected http:// or https://")
        }
        self.url = url
        // The name goes into logs, `status` and the outbox's last_error: never the credentials a URL may carry.
        self.name = "webhook:\(Self.redacted(url.absoluteString))"
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpAdditionalHeaders = ["User-Agent": "dailyverse"]
        self.session = URLSession(configuration: configuration)
    }

    public func deliver(_ records: [OutboxRecord]) throws -> [Int64: DeliveryOutcome] {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(("{\"records\":[" + records.map { $0.jsonLine() }.joined(separator: ",") + "]}").utf8)
        let outcome = Self.outcome(of: send(request))
        return Dictionary(uniqueKeysWithValues: records.map { ($0.id, outcome) })
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

    func send(_ request: URLRequest) -> Response {
        let semaphore = DispatchSemaphore(value: 0)
        let box = ResponseBox()
        session.dataTask(with: request) { _, response, error in
            let http = response as? HTTPURLResponse
            // An error's text can quote the URL: redacted before it is kept in last_error or logged.
            let text = error.map { "\($0.localizedDescription)".replacingOccurrences(of: request.url?.absoluteString ?? "\u{0}", with: Self.redacted(request.url?.absoluteString ?? "")) }
            box.value = Response(status: http?.statusCode, retryAfter: http?.value(forHTTPHeaderField: "Retry-After"), error: text)
            semaphore.signal()
        }.resume()
        semaphore.wait()
        return box.value ?? Response(status: nil, retryAfter: nil, error: "no response")
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

private final class ResponseBox: @unchecked Sendable {
    var value: WebhookSink.Response?
}
