import Foundation

/// APNs: the headers of an HTTP/2 request to `/3/device/<token>`, and a body of `aps` and the app's keys.
extension PayloadTemplate {
    func renderAPNs(_ part: DevicePart, token: String, into out: inout JSONBytes) -> EncodedPayload {
        let headersStart = out.bytes.count
        out.append("{\":path\":\"/3/device/")
        out.appendEscaped(token)
        out.append("\",")
        appendAPNsHeaders(part, into: &out)
        out.append("}")
        let payloadStart = out.bytes.count
        out.append("{\"aps\":")
        appendAPS(part, into: &out)
        out.append(",")
        appendCustom(part, into: &out)
        out.append("}")
        return EncodedPayload(headers: headersStart..<payloadStart, payload: payloadStart..<out.bytes.count)
    }

    /// apns-collapse-id through apns-topic, in name order (FCM carries the same for iOS devices).
    func appendAPNsHeaders(_ part: DevicePart, into out: inout JSONBytes) {
        out.append("\"apns-collapse-id\":\"")
        appendCollapseID(part, into: &out)
        out.append("\",\"apns-expiration\":\"")
        out.append(part.expiration)
        // A visible alert at a time the user chose: sent at once (10), not grouped or delayed as 5 may be.
        out.append("\",\"apns-priority\":\"10\"")
        out.append(",\"apns-push-type\":\"alert\",\"apns-topic\":")
        out.append(apnsTopicJSON)
    }

    /// `aps`: rendered once per template with the whole body, written again only when the body was shortened.
    func appendAPS(_ part: DevicePart, into out: inout JSONBytes) {
        if part.isShortened {
            Self.appendAPS(&out, body: part.body, subtitle: subtitleJSON, title: titleJSON, configuration: configuration, isOccasion: isOccasion)
        } else {
            out.append(apsJSON)
        }
    }

    static func appendAPS(
        _ out: inout JSONBytes, body: [UInt8], subtitle: [UInt8], title: [UInt8], configuration: PushConfiguration, isOccasion: Bool
    ) {
        out.append("{\"alert\":{\"body\":")
        out.append(body)
        out.append(",\"subtitle\":")
        out.append(subtitle)
        out.append(",\"title\":")
        out.append(title)
        out.append("},\"category\":")
        out.appendQuoted(configuration.category)
        out.append(",\"interruption-level\":\"active\",\"mutable-content\":1,\"relevance-score\":")
        out.append(isOccasion ? "1" : "0.5")
        // Without a sound the alert arrives silently.
        if let sound = configuration.sound {
            out.append(",\"sound\":")
            out.appendQuoted(sound)
        }
        out.append(",\"thread-id\":")
        out.appendQuoted(PayloadBuilder.threadID)
        out.append("}")
    }
}
