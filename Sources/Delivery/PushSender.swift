import Foundation
import NIOCore
import Notifications
import PushServices

/// One push service as `PushSink` sends to it: the platform whose outbox rows it takes, and sending one row, read off
/// its rendered headers and payload (`PushRequest`), with what depends on the moment computed then. The sink holds one
/// sender a platform; a platform with none keeps its rows pending. CONTRIBUTING ("Adding a push service, a calendar or
/// a store") lists what else a new service touches.
public protocol PushSender: Sendable {
    var platform: Platform { get }
    /// Sends `push`, whose local day ends `secondsLeft` from `now` (more than zero: the sink does not send a row whose
    /// day has ended); the service's answer as an outcome.
    func send(_ push: PushRequest, secondsLeft: Int, now: Date) async -> PushOutcome
}

extension PushSender {
    /// The answer to a row of another platform handed to this sender: the sink never does, so a failure that says so.
    func misrouted(_ push: PushRequest) -> PushOutcome {
        .failed(reason: "a \(push.platform.serviceName) row was handed to the \(platform.serviceName) sender")
    }
}

extension APNsSender: PushSender {
    public var platform: Platform { .apns }

    public func send(_ push: PushRequest, secondsLeft: Int, now: Date) async -> PushOutcome {
        guard case .apns(let token, let headers) = push.kind else { return misrouted(push) }
        return await send(deviceToken: token, headers: headers, payload: ByteBuffer(string: push.payload), now: now)
    }
}

extension FCMSender: PushSender {
    public var platform: Platform { .fcm }

    public func send(_ push: PushRequest, secondsLeft: Int, now: Date) async -> PushOutcome {
        guard case .fcm(let bytes, let ttl) = push.kind else { return misrouted(push) }
        return await send(message: PushRequest.replacingTTL(in: bytes, ttl: ttl, seconds: secondsLeft), now: now)
    }
}

extension WebPushSender: PushSender {
    public var platform: Platform { .webpush }

    public func send(_ push: PushRequest, secondsLeft: Int, now: Date) async -> PushOutcome {
        guard case .webPush(let endpoint, let p256dh, let auth, let urgency, let topic) = push.kind else { return misrouted(push) }
        return await send(
            endpoint: endpoint, p256dh: p256dh, auth: auth, ttl: secondsLeft, urgency: urgency, topic: topic, plaintext: Data(push.payload.utf8),
            now: now)
    }
}
