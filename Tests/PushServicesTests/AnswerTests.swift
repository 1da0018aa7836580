import Foundation
import Testing

@testable import PushServices

@Suite("Each service's answers, mapped")
struct AnswerTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func apns(_ status: Int, _ reason: String? = nil, retryAfter: String? = nil) -> PushOutcome {
        Answers.apns(
            ServiceAnswer(status: status, body: reason.map { Data(#"{"reason":"\#($0)"}"#.utf8) } ?? Data(), retryAfter: retryAfter, id: "apns-id-1"),
            now: now)
    }

    @Test func apnsTable() {
        #expect(apns(200) == .delivered(id: "apns-id-1"))
        #expect(apns(410, "Unregistered") == .unregistered(reason: "APNs 410 Unregistered"))
        #expect(apns(400, "BadDeviceToken") == .unregistered(reason: "APNs 400 BadDeviceToken"))
        #expect(apns(400, "DeviceTokenNotForTopic") == .unregistered(reason: "APNs 400 DeviceTokenNotForTopic"))
        #expect(apns(403, "ExpiredProviderToken") == .renewCredentials(reason: "APNs 403 ExpiredProviderToken"))
        #expect(apns(403, "InvalidProviderToken") == .configuration(reason: "APNs 403 InvalidProviderToken"))
        #expect(apns(403, "BadCertificateEnvironment") == .configuration(reason: "APNs 403 BadCertificateEnvironment"))
        #expect(apns(400, "TopicDisallowed") == .configuration(reason: "APNs 400 TopicDisallowed"))
        #expect(apns(429, "TooManyProviderTokenUpdates") == .retry(reason: "APNs 429 TooManyProviderTokenUpdates", after: 1200))
        #expect(apns(429, "TooManyRequests", retryAfter: "30") == .retry(reason: "APNs 429 TooManyRequests", after: 30))
        #expect(apns(503, "ServiceUnavailable") == .retry(reason: "APNs 503 ServiceUnavailable", after: nil))
        #expect(apns(500, "InternalServerError") == .retry(reason: "APNs 500 InternalServerError", after: nil))
        #expect(apns(413, "PayloadTooLarge") == .failed(reason: "APNs 413 PayloadTooLarge"))
        #expect(apns(400, "BadExpirationDate") == .failed(reason: "APNs 400 BadExpirationDate"))
        #expect(apns(400) == .failed(reason: "APNs 400 HTTP 400"))
        // A reason is cleaned before it is stored or logged.
        #expect(apns(400, "Bad\\u0000\\nThing") == .failed(reason: "APNs 400 BadThing"))
    }

    func fcm(_ status: Int, status text: String? = nil, code: String? = nil, retryAfter: String? = nil) -> PushOutcome {
        var error: [String: Any] = ["code": status, "message": "m"]
        if let text { error["status"] = text }
        if let code { error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code]] }
        let body = try! JSONSerialization.data(withJSONObject: ["error": error])
        return Answers.fcm(ServiceAnswer(status: status, body: body, retryAfter: retryAfter), now: now)
    }

    @Test func fcmTable() {
        #expect(
            Answers.fcm(ServiceAnswer(status: 200, body: Data(#"{"name":"projects/p/messages/0:1"}"#.utf8)), now: now)
                == .delivered(id: "projects/p/messages/0:1"))
        #expect(fcm(404, status: "NOT_FOUND", code: "UNREGISTERED") == .unregistered(reason: "FCM 404 UNREGISTERED"))
        #expect(fcm(403, status: "PERMISSION_DENIED", code: "SENDER_ID_MISMATCH") == .unregistered(reason: "FCM 403 SENDER_ID_MISMATCH"))
        #expect(fcm(400, status: "INVALID_ARGUMENT", code: "INVALID_ARGUMENT") == .failed(reason: "FCM 400 INVALID_ARGUMENT"))
        #expect(
            fcm(429, status: "RESOURCE_EXHAUSTED", code: "QUOTA_EXCEEDED", retryAfter: "60") == .retry(reason: "FCM 429 QUOTA_EXCEEDED", after: 60))
        #expect(fcm(503, status: "UNAVAILABLE", code: "UNAVAILABLE") == .retry(reason: "FCM 503 UNAVAILABLE", after: nil))
        #expect(fcm(500, status: "INTERNAL", code: "INTERNAL") == .retry(reason: "FCM 500 INTERNAL", after: nil))
        #expect(fcm(401, status: "UNAUTHENTICATED", code: "THIRD_PARTY_AUTH_ERROR") == .configuration(reason: "FCM 401 THIRD_PARTY_AUTH_ERROR"))
        #expect(fcm(401, status: "UNAUTHENTICATED") == .renewCredentials(reason: "FCM 401 UNAUTHENTICATED"))
        #expect(fcm(403, status: "PERMISSION_DENIED") == .configuration(reason: "FCM 403 PERMISSION_DENIED"))
        #expect(Answers.fcm(ServiceAnswer(status: 502, body: Data("<html>".utf8)), now: now) == .retry(reason: "FCM 502 HTTP 502", after: nil))
    }

    @Test func webPushTable() {
        #expect(Answers.webPush(ServiceAnswer(status: 201, id: "https://push.example/m/1"), now: now) == .delivered(id: "https://push.example/m/1"))
        #expect(Answers.webPush(ServiceAnswer(status: 202), now: now) == .delivered(id: nil))
        #expect(Answers.webPush(ServiceAnswer(status: 410), now: now) == .unregistered(reason: "Web Push 410"))
        #expect(Answers.webPush(ServiceAnswer(status: 404, body: Data("gone\nmore".utf8)), now: now) == .unregistered(reason: "Web Push 404 gone"))
        #expect(Answers.webPush(ServiceAnswer(status: 413), now: now) == .failed(reason: "Web Push 413"))
        #expect(Answers.webPush(ServiceAnswer(status: 400), now: now) == .failed(reason: "Web Push 400"))
        #expect(Answers.webPush(ServiceAnswer(status: 403), now: now) == .failed(reason: "Web Push 403"))
        #expect(Answers.webPush(ServiceAnswer(status: 429, retryAfter: "5"), now: now) == .retry(reason: "Web Push 429", after: 5))
        #expect(Answers.webPush(ServiceAnswer(status: 500), now: now) == .retry(reason: "Web Push 500", after: nil))
    }

    @Test func retryAfterIsBounded() {
        #expect(Answers.retryAfter("120", now: now) == 120)
        #expect(Answers.retryAfter("\(Int.max)", now: now) == 86_400)
        #expect(Answers.retryAfter("99999999999999999999999", now: now) == 86_400)
        #expect(Answers.retryAfter("-5", now: now) == nil)
        #expect(Answers.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == 86_400)
        #expect(Answers.retryAfter(String(repeating: "9", count: 65), now: now) == nil)
    }
}
