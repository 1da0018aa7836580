import Foundation

/// Web Push: the push service's URL and headers, the subscription's keys for the encryption, and a body that a
/// service worker hands to `showNotification(title, options)` as it is.
extension PayloadTemplate {
    func renderWebPush(_ part: DevicePart, endpoint: String, p256dh: String, auth: String, into out: inout JSONBytes) -> EncodedPayload {
        let headersStart = out.bytes.count
        // Header names in order: ":url", "TTL", "Topic", "Urgency", "x-webpush-auth", "x-webpush-p256dh".
        out.append("{\":url\":")
        out.appendQuoted(endpoint)
        out.append(",\"TTL\":\"")
        out.append(part.ttl)
        out.append("\",\"Topic\":\"")
        out.append(topic)
        out.append(isOccasion ? "\",\"Urgency\":\"high\",\"x-webpush-auth\":" : "\",\"Urgency\":\"normal\",\"x-webpush-auth\":")
        out.appendQuoted(auth)
        out.append(",\"x-webpush-p256dh\":")
        out.appendQuoted(p256dh)
        out.append("}")
        // The subtitle (theme and reference), which has no place among the options, travels in data.
        let payloadStart = out.bytes.count
        out.append("{\"options\":{\"body\":")
        out.append(part.body)
        out.append(",\"data\":{")
        appendCustom(part, into: &out)
        out.append(",\"subtitle\":")
        out.append(subtitleJSON)
        out.append(part.device.locale == .ar ? "},\"dir\":\"rtl\",\"lang\":\"ar\",\"tag\":\"" : "},\"dir\":\"ltr\",\"lang\":\"en\",\"tag\":\"")
        appendCollapseID(part, into: &out)
        out.append("\"},\"title\":")
        out.append(titleJSON)
        out.append("}")
        return EncodedPayload(headers: headersStart..<payloadStart, payload: payloadStart..<out.bytes.count)
    }
}
