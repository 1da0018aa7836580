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
    public let payload: Data

    public var payloadString: String { String(decoding: payload, as: UTF8.self) }
}

/// Builds each platform's payload in its own format. Pure: the device, the day's content, the fire instant and the
/// configuration come in as values.
public enum PayloadBuilder {
    static let threadID = "daily-verse"

    public static func build(device: Device, content: DailyContent, fireAt: Date, configuration: PushConfiguration) -> PushMessage {
        let zone = TimeZone(identifier: device.timeZone) ?? TimeZone(identifier: "UTC")!
        // The verse is for one local day: it expires at the next local midnight.
        let endOfDay = Scheduler.fireInstant(date: content.localDate.adding(days: 1), time: try! ReminderTime(hour: 0, minute: 0), zone: zone)
        let context = Context(
            device: device, content: content, text: NotificationText(content, locale: device.locale), endOfDay: endOfDay,
            ttl: max(0, Int(endOfDay.timeIntervalSince(fireAt))), configuration: configuration)
        let full = build(context, body: context.text.body)
        guard full.payload.count > configuration.maximumPayloadBytes else { return full }
        // Shorten the body only as much as the limit needs. A body may appear more than once (FCM repeats it for
        // iOS), so search for the longest body that fits rather than subtracting the excess.
        var low = 0, high = context.text.body.utf8.count - 1
        var best = build(context, body: TextShortening.shorten(context.text.body, toAtMostBytes: 0))
        while low <= high {
            let middle = (low + high) / 2
            let candidate = build(context, body: TextShortening.shorten(context.text.body, toAtMostBytes: middle))
            if candidate.payload.count <= configuration.maximumPayloadBytes {
                best = candidate
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return best
    }

    struct Context {
        let device: Device
        let content: DailyContent
        let text: NotificationText
        let endOfDay: Date
        let ttl: Int
        let configuration: PushConfiguration

        var isOccasion: Bool { content.occasion != nil }
        var collapseID: String { "dv-\(device.id.prefix(40))-\(content.localDate)" }
        var deepLink: String {
            "\(configuration.deepLinkScheme)://verse/\(content.verseKey)?date=\(content.localDate)&theme=\(device.displayTheme)"
        }
        var custom: CustomKeys {
            CustomKeys(
                verseKey: content.verseKey, hijriDate: content.hijri.description, localDate: content.localDate.description,
                theme: content.themeID, occasion: content.occasion?.id, displayTheme: device.displayTheme, deepLink: deepLink)
        }

        func aps(body: String) -> APNsPayload.APS {
            APNsPayload.APS(
                alert: .init(title: text.title, subtitle: text.subtitle, body: body), threadID: PayloadBuilder.threadID,
                category: configuration.category, mutableContent: 1, interruptionLevel: "active",
                relevanceScore: isOccasion ? 1.0 : 0.5)
        }

        var apnsHeaders: [String: String] {
            [
                "apns-push-type": "alert", "apns-priority": isOccasion ? "10" : "5",
                "apns-expiration": String(Int(endOfDay.timeIntervalSince1970)), "apns-collapse-id": collapseID,
                "apns-topic": configuration.apnsTopic,
            ]
        }
    }

    static func build(_ context: Context, body: String) -> PushMessage {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch context.device.token {
        case .apns(let token):
            let payload = APNsPayload(aps: context.aps(body: body), custom: context.custom)
            var headers = context.apnsHeaders
            headers[":path"] = "/3/device/\(token)"
            return PushMessage(platform: .apns, headers: headers, payload: try! encoder.encode(payload))
        case .fcm(let token):
            let message = FCMRequest.Message(
                token: token, notification: .init(title: context.text.title, body: body), data: context.custom.stringDictionary,
                android: .init(
                    ttl: "\(context.ttl)s", collapseKey: PayloadBuilder.threadID, priority: context.isOccasion ? "high" : "normal",
                    notification: .init(channelID: context.configuration.androidChannel, tag: context.collapseID)),
                apns: .init(headers: context.apnsHeaders, payload: .init(aps: context.aps(body: body))))
            return PushMessage(platform: .fcm, headers: [:], payload: try! encoder.encode(FCMRequest(message: message)))
        case .webpush(let endpoint, let p256dh, let auth):
            let payload = WebPushPayload(
                title: context.text.title, subtitle: context.text.subtitle, body: body, tag: context.collapseID,
                lang: context.device.locale.rawValue, dir: context.device.locale == .ar ? "rtl" : "ltr", data: context.custom)
            let headers = [
                "TTL": String(context.ttl), "Urgency": context.isOccasion ? "high" : "normal",
                "Topic": "dv\(context.content.localDate.description.replacingOccurrences(of: "-", with: ""))",
                ":url": endpoint, "x-webpush-p256dh": p256dh, "x-webpush-auth": auth,
            ]
            return PushMessage(platform: .webpush, headers: headers, payload: try! encoder.encode(payload))
        }
    }
}

// MARK: - Wire formats

/// The app's own keys, beside `aps` (APNs), in `data` (FCM, strings only) and in `data` (Web Push).
struct CustomKeys: Encodable {
    let verseKey: String
    let hijriDate: String
    let localDate: String
    let theme: String
    let occasion: String?
    let displayTheme: String
    let deepLink: String

    enum CodingKeys: String, CodingKey {
        case verseKey = "verse_key", hijriDate = "hijri_date", localDate = "local_date", theme, occasion
        case displayTheme = "display_theme", deepLink = "deep_link"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(verseKey, forKey: .verseKey)
        try container.encode(hijriDate, forKey: .hijriDate)
        try container.encode(localDate, forKey: .localDate)
        try container.encode(theme, forKey: .theme)
        try container.encode(occasion, forKey: .occasion)
        try container.encode(displayTheme, forKey: .displayTheme)
        try container.encode(deepLink, forKey: .deepLink)
    }

    /// FCM's `data` holds string values only; an absent occasion is left out.
    var stringDictionary: [String: String] {
        var data = [
            "verse_key": verseKey, "hijri_date": hijriDate, "local_date": localDate, "theme": theme, "display_theme": displayTheme,
            "deep_link": deepLink,
        ]
        data["occasion"] = occasion
        return data
    }
}

/// `{"aps": {...}, "verse_key": ..., ...}`
struct APNsPayload: Encodable {
    let aps: APS
    let custom: CustomKeys

    struct APS: Encodable {
        let alert: Alert
        let threadID: String
        let category: String
        let mutableContent: Int
        let interruptionLevel: String
        let relevanceScore: Double

        struct Alert: Encodable {
            let title: String
            let subtitle: String
            let body: String
        }

        enum CodingKeys: String, CodingKey {
            case alert, threadID = "thread-id", category, mutableContent = "mutable-content"
            case interruptionLevel = "interruption-level", relevanceScore = "relevance-score"
        }
    }

    func encode(to encoder: Encoder) throws {
        try custom.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(aps, forKey: .aps)
    }
    enum Key: String, CodingKey { case aps }
}

/// FCM HTTP v1: `{"message": {...}}`.
struct FCMRequest: Encodable {
    let message: Message

    struct Message: Encodable {
        let token: String
        let notification: Notification
        let data: [String: String]
        let android: Android
        let apns: APNs

        struct Notification: Encodable {
            let title: String
            let body: String
        }

        struct Android: Encodable {
            let ttl: String
            let collapseKey: String
            let priority: String
            let notification: AndroidNotification
            enum CodingKeys: String, CodingKey { case ttl, collapseKey = "collapse_key", priority, notification }
        }

        struct AndroidNotification: Encodable {
            let channelID: String
            let tag: String
            enum CodingKeys: String, CodingKey { case channelID = "channel_id", tag }
        }

        struct APNs: Encodable {
            let headers: [String: String]
            let payload: Payload
            struct Payload: Encodable { let aps: APNsPayload.APS }
        }
    }
}

/// The JSON a service worker receives (encrypted by the gateway per RFC 8291).
struct WebPushPayload: Encodable {
    let title: String
    let subtitle: String
    let body: String
    let tag: String
    let lang: String
    let dir: String
    let data: CustomKeys
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
