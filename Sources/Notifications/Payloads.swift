import Foundation
import HijriCalendar

/// Settings that shape every payload.
public struct PushConfiguration: Hashable, Sendable {
    /// The app's bundle id, sent as `apns-topic`.
    public var apnsTopic: String
    /// The URL scheme of the app's deep links.
    public var deepLinkScheme: String
    /// The APNs category the app's notification extension registers.
    public var category: String
    /// The Android notification channel.
    public var androidChannel: String
    /// Every platform caps a payload at 4096 bytes.
    public var maximumPayloadBytes: Int

    public init(
        apnsTopic: String, deepLinkScheme: String = "dailyverse", category: String = "DAILY_VERSE",
        androidChannel: String = "daily_verse", maximumPayloadBytes: Int = 4096
    ) {
        self.apnsTopic = apnsTopic
        self.deepLinkScheme = deepLinkScheme
        self.category = category
        self.androidChannel = androidChannel
        self.maximumPayloadBytes = maximumPayloadBytes
    }
}

/// A payload ready for a gateway: its headers and its JSON body.
public struct PushMessage: Hashable, Sendable {
    public let platform: Platform
    public let headers: [String: String]
    /// The JSON body.
    public let payload: String

    /// Its size as sent, in bytes.
    public var byteCount: Int { payload.utf8.count }
}

/// Builds each platform's payload in its own format. Pure: the device, the day's content, the fire instant and the
/// configuration come in as values.
///
/// The JSON is written directly, keys in sorted order, rather than through `JSONEncoder`: the structures are fixed,
/// and a scheduler emitting a million payloads a day spends its time here. The golden-file tests pin the output.
public enum PayloadBuilder {
    static let threadID = "daily-verse"

    public static func build(device: Device, content: DailyContent, fireAt: Date, configuration: PushConfiguration) -> PushMessage {
        let zone = TimeZone(identifier: device.timeZone) ?? TimeZone(identifier: "UTC")!
        return PayloadTemplate(content: content, locale: device.locale, configuration: configuration).message(for: device, fireAt: fireAt, zone: zone)
    }
}

/// Everything about a payload that is the same for every device sharing a day's content and a locale, rendered
/// once; `message(for:)` adds what belongs to one device.
public struct PayloadTemplate: Sendable {
    let content: DailyContent
    let configuration: PushConfiguration
    let text: NotificationText
    let isOccasion: Bool
    // Pre-escaped JSON fragments.
    let titleJSON: String
    let subtitleJSON: String
    let bodyJSON: String
    let localDate: String
    let topic: String

    public init(content: DailyContent, locale: DeviceLocale, configuration: PushConfiguration) {
        self.content = content
        self.configuration = configuration
        self.text = NotificationText(content, locale: locale)
        self.isOccasion = content.occasion != nil
        titleJSON = JSON.quoted(text.title)
        subtitleJSON = JSON.quoted(text.subtitle)
        bodyJSON = JSON.quoted(text.body)
        localDate = content.localDate.description
        topic = "dv" + localDate.replacingOccurrences(of: "-", with: "")
    }

    /// The payload for one device, its body shortened at a word if the platform's limit needs it.
    public func message(for device: Device, fireAt: Date, zone: TimeZone) -> PushMessage {
        // The verse is for one local day: it expires at the next local midnight.
        let endOfDay = Scheduler.fireInstant(date: content.localDate.adding(days: 1), time: .midnight, zone: zone)
        let full = render(device, fireAt: fireAt, endOfDay: endOfDay, body: bodyJSON)
        guard full.byteCount > configuration.maximumPayloadBytes else { return full }
        // A body may appear more than once (FCM repeats it for iOS), so search for the longest body that fits
        // rather than subtracting the excess.
        var low = 0
        var high = text.body.utf8.count - 1
        func shortened(_ bytes: Int) -> PushMessage {
            render(device, fireAt: fireAt, endOfDay: endOfDay, body: JSON.quoted(TextShortening.shorten(text.body, toAtMostBytes: bytes)))
        }
        var best = shortened(0)
        while low <= high {
            let middle = (low + high) / 2
            let candidate = shortened(middle)
            if candidate.byteCount <= configuration.maximumPayloadBytes {
                best = candidate
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return best
    }

    func render(_ device: Device, fireAt: Date, endOfDay: Date, body: String) -> PushMessage {
        let collapseID = "dv-\(device.id.prefix(40))-\(localDate)"
        let deepLink = "\(configuration.deepLinkScheme)://verse/\(content.verseKey)?date=\(localDate)&theme=\(device.displayTheme)"
        let expiration = String(Int(endOfDay.timeIntervalSince1970))
        let priority = isOccasion ? "10" : "5"
        let aps =
            "{\"alert\":{\"body\":\(body),\"subtitle\":\(subtitleJSON),\"title\":\(titleJSON)},\"category\":\(JSON.quoted(configuration.category)),"
            + "\"interruption-level\":\"active\",\"mutable-content\":1,\"relevance-score\":\(isOccasion ? "1" : "0.5"),"
            + "\"thread-id\":\"\(PayloadBuilder.threadID)\"}"
        let apnsHeaders = [
            "apns-collapse-id": collapseID, "apns-expiration": expiration, "apns-priority": priority, "apns-push-type": "alert",
            "apns-topic": configuration.apnsTopic,
        ]
        let occasion = content.occasion.map { JSON.quoted($0.id) }
        // The app's keys, in sorted order: deep_link, display_theme, hijri_date, local_date, occasion, theme, verse_key.
        // FCM's data holds strings only, so an absent occasion is left out there, and null elsewhere.
        func custom(nullOccasion: Bool) -> String {
            var fields = "\"deep_link\":\(JSON.quoted(deepLink)),\"display_theme\":\(JSON.quoted(device.displayTheme)),"
            fields += "\"hijri_date\":\"\(content.hijri.description)\",\"local_date\":\"\(localDate)\","
            if let occasion { fields += "\"occasion\":\(occasion)," } else if nullOccasion { fields += "\"occasion\":null," }
            fields += "\"theme\":\(JSON.quoted(content.themeID)),\"verse_key\":\(JSON.quoted(content.verseKey))"
            return fields
        }
        switch device.token {
        case .apns(let token):
            var headers = apnsHeaders
            headers[":path"] = "/3/device/\(token)"
            return PushMessage(platform: .apns, headers: headers, payload: "{\"aps\":\(aps),\(custom(nullOccasion: true))}")
        case .fcm(let token):
            let ttl = max(0, Int(endOfDay.timeIntervalSince(fireAt)))
            let android =
                "{\"collapse_key\":\"\(PayloadBuilder.threadID)\",\"notification\":{\"channel_id\":\(JSON.quoted(configuration.androidChannel)),"
                + "\"tag\":\(JSON.quoted(collapseID))},\"priority\":\"\(isOccasion ? "high" : "normal")\",\"ttl\":\"\(ttl)s\"}"
            let apns = "{\"headers\":\(JSON.object(apnsHeaders)),\"payload\":{\"aps\":\(aps)}}"
            let message =
                "{\"message\":{\"android\":\(android),\"apns\":\(apns),\"data\":{\(custom(nullOccasion: false))},"
                + "\"notification\":{\"body\":\(body),\"title\":\(titleJSON)},\"token\":\(JSON.quoted(token))}}"
            return PushMessage(platform: .fcm, headers: [:], payload: message)
        case .webpush(let endpoint, let p256dh, let auth):
            let ttl = max(0, Int(endOfDay.timeIntervalSince(fireAt)))
            let headers = [
                "TTL": String(ttl), "Urgency": isOccasion ? "high" : "normal", "Topic": topic, ":url": endpoint, "x-webpush-p256dh": p256dh,
                "x-webpush-auth": auth,
            ]
            let locale = device.locale
            let payload =
                "{\"body\":\(body),\"data\":{\(custom(nullOccasion: true))},\"dir\":\"\(locale == .ar ? "rtl" : "ltr")\",\"lang\":\"\(locale.rawValue)\","
                + "\"subtitle\":\(subtitleJSON),\"tag\":\(JSON.quoted(collapseID)),\"title\":\(titleJSON)}"
            return PushMessage(platform: .webpush, headers: headers, payload: payload)
        }
    }
}

/// JSON text written by hand: strings escaped as JSONEncoder does (quotes, backslashes and control characters;
/// slashes and non-ASCII left as they are).
public enum JSON {
    public static func quoted(_ text: String) -> String {
        var needsEscaping = false
        for byte in text.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscaping = true
            break
        }
        guard needsEscaping else { return "\"" + text + "\"" }
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A flat object of strings, keys sorted.
    public static func object(_ pairs: [String: String]) -> String {
        "{" + pairs.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + quoted($0.value) }.joined(separator: ",") + "}"
    }
}

/// Shortening text to fit a byte budget: at a word boundary, with an ellipsis, never inside a grapheme
/// (so never inside a UTF-8 sequence, and never between an Arabic letter and its marks).
public enum TextShortening {
    public static let ellipsis = "…"

    /// `text` cut to at most `limit` UTF-8 bytes including a closing ellipsis: after a whole word where one fits,
    /// otherwise after whole characters (grapheme clusters) of the first word. Text that fits is returned as it is.
    public static func shorten(_ text: String, toAtMostBytes limit: Int) -> String {
        if text.utf8.count <= limit { return text }
        let target = limit - ellipsis.utf8.count
        guard target > 0 else { return limit >= ellipsis.utf8.count ? ellipsis : "" }
        // Whole words while they fit …
        var kept = Substring("")
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = text[text.startIndex..<word.endIndex]
            if candidate.utf8.count > target { break }
            kept = candidate
        }
        // … or, when not even the first word fits, whole characters of it.
        if kept.isEmpty {
            kept = Substring(text)
            while kept.utf8.count > target { kept = kept.dropLast() }
        }
        var result = String(kept)
        while let last = result.last, last == " " || last == "," || last == ";" || last == ":" { result.removeLast() }
        return result + ellipsis
    }
}
