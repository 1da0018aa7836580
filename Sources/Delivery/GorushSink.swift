import Foundation
import NIOCore
import PushServices

/// Posts iOS and Android rows to a gorush server's `/api/push`, in gorush's own format, in batches of at most
/// `batchSize` notifications (gorush's `max_notification`, 100 by default). Web Push rows are not taken: they stay
/// pending for another sink.
///
/// gorush only queues what it accepts, so a 2xx means handed over, not delivered to a phone; its failures reach
/// its own logs (or its feedback hook), not the outbox. 400 is a failure of the batch; 429, 5xx, a timeout or a
/// closed connection are retried with the deliverer's backoff.
public final class GorushSink: Sink, Sendable {
    public let name: String
    public let url: String
    public let client: PushClient
    public let batchSize: Int
    public let clock: @Sendable () -> Date

    public init(url: String, client: PushClient, batchSize: Int = 100, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        guard WebhookSink.isHTTPURL(url) else { throw SinkError("invalid gorush URL '\(WebhookSink.redacted(url))': \(WebhookSink.notAnHTTPURL)") }
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.url = base.hasSuffix("/api/push") ? base : base + "/api/push"
        self.name = "gorush:\(WebhookSink.redacted(url))"
        self.client = client
        self.batchSize = min(max(1, batchSize), 1000)
        self.clock = clock
    }

    public var platforms: Set<String>? { ["apns", "fcm"] }

    public func shutdown() async { try? await client.shutdown() }

    /// A batch is seconds of network: the one before is recorded meanwhile.
    public var overlapsRecording: Bool { true }

    public func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] {
        let now = clock()
        var outcomes: [Int64: DeliveryOutcome] = [:]
        var sendable: [(OutboxRecord, [String: Any])] = []
        for record in records {
            do {
                let request = try PushRequest(record)
                let left = Int(request.endOfDay.timeIntervalSince(now).rounded(.down))
                if left <= 0 {
                    outcomes[record.id] = .missed(error: "its local day ended at \(request.endOfDay.iso8601UTC), before it could be sent")
                } else {
                    sendable.append((record, try Self.notification(record, secondsLeft: left)))
                }
            } catch {
                outcomes[record.id] = .failed(error: "\(error)")
            }
        }
        for start in stride(from: 0, to: sendable.count, by: batchSize) {
            let batch = Array(sendable[start..<min(start + batchSize, sendable.count)])
            let body = try JSONSerialization.data(withJSONObject: ["notifications": batch.map(\.1)], options: [.sortedKeys, .withoutEscapingSlashes])
            let outcome: DeliveryOutcome
            do {
                let answer = try await client.send(url, headers: [("content-type", "application/json")], body: ByteBuffer(bytes: body))
                switch answer.status {
                case 200..<300: outcome = .delivered()
                case 429, 500...: outcome = .retry(error: "gorush: HTTP \(answer.status)", after: Answers.retryAfter(answer.retryAfter, now: now))
                default:
                    let detail =
                        String(decoding: answer.body.prefix(120), as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
                    outcome = .failed(error: "gorush: HTTP \(answer.status)" + (detail.isEmpty ? "" : " \(detail)"))
                }
            } catch {
                outcome = .retry(error: "gorush: \(PushClient.describe(error))", after: nil)
            }
            for (record, _) in batch { outcomes[record.id] = outcome }
        }
        return outcomes
    }

    /// One row as a gorush notification: platform 1 (iOS) or 2 (Android), the alert's title and body, the app's keys
    /// as `data`, and the collapse id, priority and expiry the row was rendered with.
    static func notification(_ record: OutboxRecord, secondsLeft: Int) throws -> [String: Any] {
        guard let payload = try JSONSerialization.jsonObject(with: Data(record.payload.utf8)) as? [String: Any],
            let headers = try JSONSerialization.jsonObject(with: Data(record.headers.utf8)) as? [String: String]
        else { throw PushRequest.Malformed(description: "outbox row \(record.id): not a JSON payload") }
        if record.platform == "apns" {
            var data = payload
            let aps = data.removeValue(forKey: "aps") as? [String: Any] ?? [:]
            let alert = aps["alert"] as? [String: Any] ?? [:]
            var notification: [String: Any] = [
                "tokens": [String(headers[":path"]?.dropFirst("/3/device/".count) ?? "")], "platform": 1, "title": alert["title"] ?? "",
                "message": alert["body"] ?? "", "alert": alert, "data": data, "priority": headers["apns-priority"] == "5" ? "normal" : "high",
                "push_type": headers["apns-push-type"] ?? "alert", "mutable_content": (aps["mutable-content"] as? Int) == 1,
            ]
            for (key, header) in [("topic", "apns-topic"), ("collapse_id", "apns-collapse-id")] { notification[key] = headers[header] }
            if let expiration = headers["apns-expiration"].flatMap(Int.init) { notification["expiration"] = expiration }
            for (key, field) in [("category", "category"), ("thread_id", "thread-id"), ("sound", "sound")] where aps[field] != nil {
                notification[key] = aps[field]
            }
            return notification
        }
        let message = payload["message"] as? [String: Any] ?? [:]
        let android = message["android"] as? [String: Any] ?? [:]
        let shown = message["notification"] as? [String: Any] ?? [:]
        var notification: [String: Any] = [
            "tokens": [message["token"] as? String ?? ""], "platform": 2, "title": shown["title"] ?? "", "message": shown["body"] ?? "",
            "data": message["data"] ?? [:], "priority": android["priority"] as? String ?? "high", "time_to_live": max(0, secondsLeft),
        ]
        if let key = android["collapse_key"] { notification["collapse_key"] = key }
        if let extra = android["notification"] as? [String: Any] { notification["notification"] = extra }
        return notification
    }
}
