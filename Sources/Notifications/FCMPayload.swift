import Foundation

/// FCM (HTTP v1): one `message` carrying the Android notification and the app's keys as data, and for iOS devices
/// the APNs headers and `aps`. What FCM counts against its limit is the larger of the two platforms' parts.
extension PayloadTemplate {
    func renderFCM(_ part: DevicePart, token: String, into out: inout JSONBytes) -> EncodedPayload {
        let headersStart = out.bytes.count
        out.append("{}")
        let payloadStart = out.bytes.count
        out.append("{\"message\":{\"android\":{\"collapse_key\":")
        out.appendQuoted(PayloadBuilder.threadID)
        out.append(",\"notification\":{\"channel_id\":")
        out.append(androidChannelJSON)
        out.append(",\"tag\":\"")
        appendCollapseID(part, into: &out)
        // As for APNs: a visible notification at the user's time goes with high priority.
        out.append("\"},\"priority\":\"high\",\"ttl\":\"")
        out.append(part.ttl)
        out.append("s\"},\"apns\":{\"headers\":{")
        appendAPNsHeaders(part, into: &out)
        out.append("},\"payload\":")
        let apnsStart = out.bytes.count
        out.append("{\"aps\":")
        appendAPS(part, into: &out)
        out.append("}")
        let apnsBytes = out.bytes.count - apnsStart
        out.append("},\"data\":")
        let androidStart = out.bytes.count
        out.append("{")
        appendCustom(part, into: &out)
        out.append("},\"notification\":{\"body\":")
        out.append(part.body)
        out.append(",\"title\":")
        out.append(titleJSON)
        out.append("}")
        let androidBytes = out.bytes.count - androidStart
        out.append(",\"token\":")
        out.appendQuoted(token)
        out.append("}}")
        return EncodedPayload(headers: headersStart..<payloadStart, payload: payloadStart..<out.bytes.count, counted: max(apnsBytes, androidBytes))
    }
}
