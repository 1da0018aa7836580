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
    /// The request headers, in name order.
    public let headerFields: [HeaderField]
    /// The JSON body.
    public let payload: String

    /// The headers as one JSON object, names in order.
    public let headersJSON: String

    /// `headerFields` come in name order (the builders write them so, rather than sorting a million arrays a day).
    init(platform: Platform, headerFields: [HeaderField], payload: String) {
        assert(zip(headerFields, headerFields.dropFirst()).allSatisfy { $0.name < $1.name }, "headers out of order")
        self.platform = platform
        self.headerFields = headerFields
        self.payload = payload
        self.headersJSON = JSON.object(self.headerFields)
    }

    public var headers: [String: String] { Dictionary(uniqueKeysWithValues: headerFields.map { ($0.name, $0.value) }) }

    /// Its size as sent, in bytes.
    public var byteCount: Int { payload.utf8.count }
}

public struct HeaderField: Hashable, Sendable {
    public let name: String
    public let value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
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
    let categoryJSON: String
    /// `aps` with the whole body.
    let apsJSON: String
    let customTailWithNull: String
    let customTailWithoutNull: String
    /// The deep link up to its theme, escaped for inside a JSON string.
    let deepLinkPrefixJSON: String

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
        categoryJSON = JSON.quoted(configuration.category)
        var prefix = ""
        JSON.appendEscaped("\(configuration.deepLinkScheme)://verse/\(content.verseKey)?date=\(localDate)&theme=", to: &prefix)
        deepLinkPrefixJSON = prefix
        apsJSON = Self.aps(body: bodyJSON, subtitle: subtitleJSON, title: titleJSON, category: categoryJSON, isOccasion: isOccasion)
        func tail(nullOccasion: Bool, content: DailyContent, localDate: String) -> String {
            var fields = ",\"hijri_date\":\"\(content.hijri.description)\",\"local_date\":\"\(localDate)\","
            if let occasion = content.occasion {
                fields += "\"occasion\":\(JSON.quoted(occasion.id)),"
            } else if nullOccasion {
                fields += "\"occasion\":null,"
            }
            return fields + "\"theme\":\(JSON.quoted(content.themeID)),\"verse_key\":\(JSON.quoted(content.verseKey))"
        }
        customTailWithNull = tail(nullOccasion: true, content: content, localDate: localDate)
        customTailWithoutNull = tail(nullOccasion: false, content: content, localDate: localDate)
    }

    /// The payload for one device, its body shortened at a word if the platform's limit needs it.
    public func message(for device: Device, fireAt: Date, zone: some UTCOffsets) -> PushMessage {
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
        let expiration = String(Int(endOfDay.timeIntervalSince1970))
        let priority = isOccasion ? "10" : "5"
        let aps = body == bodyJSON ? apsJSON : Self.aps(body: body, subtitle: subtitleJSON, title: titleJSON, category: categoryJSON, isOccasion: isOccasion)
        let apnsHeaders = [
            HeaderField("apns-collapse-id", collapseID), HeaderField("apns-expiration", expiration), HeaderField("apns-priority", priority),
            HeaderField("apns-push-type", "alert"), HeaderField("apns-topic", configuration.apnsTopic),
        ]
        // The app's keys, in sorted order: deep_link, display_theme, hijri_date, local_date, occasion, theme, verse_key.
        // FCM's data holds strings only, so an absent occasion is left out there, and null elsewhere.
        func appendCustom(_ out: inout String, nullOccasion: Bool) {
            out += "\"deep_link\":\""
            out += deepLinkPrefixJSON
            JSON.appendEscaped(device.displayTheme, to: &out)
            out += "\",\"display_theme\":"
            JSON.appendQuoted(device.displayTheme, to: &out)
            out += customTail(nullOccasion: nullOccasion)
        }
        var out = ""
        out.reserveCapacity(aps.utf8.count * 2 + 600)
        switch device.token {
        case .apns(let token):
            out += "{\"aps\":"
            out += aps
            out += ","
            appendCustom(&out, nullOccasion: true)
            out += "}"
            return PushMessage(platform: .apns, headerFields: [HeaderField(":path", "/3/device/\(token)")] + apnsHeaders, payload: out)
        case .fcm(let token):
            let ttl = max(0, Int(endOfDay.timeIntervalSince(fireAt)))
            out += "{\"message\":{\"android\":{\"collapse_key\":\"\(PayloadBuilder.threadID)\",\"notification\":{\"channel_id\":"
            out += JSON.quoted(configuration.androidChannel)
            out += ",\"tag\":"
            JSON.appendQuoted(collapseID, to: &out)
            out += "},\"priority\":\"\(isOccasion ? "high" : "normal")\",\"ttl\":\"\(ttl)s\"},\"apns\":{\"headers\":"
            out += JSON.object(apnsHeaders)
            out += ",\"payload\":{\"aps\":"
            out += aps
            out += "}},\"data\":{"
            appendCustom(&out, nullOccasion: false)
            out += "},\"notification\":{\"body\":"
            out += body
            out += ",\"title\":"
            out += titleJSON
            out += "},\"token\":"
            JSON.appendQuoted(token, to: &out)
            out += "}}"
            return PushMessage(platform: .fcm, headerFields: [], payload: out)
        case .webpush(let endpoint, let p256dh, let auth):
            let ttl = max(0, Int(endOfDay.timeIntervalSince(fireAt)))
            let headers = [
                HeaderField(":url", endpoint), HeaderField("TTL", String(ttl)), HeaderField("Topic", topic),
                HeaderField("Urgency", isOccasion ? "high" : "normal"), HeaderField("x-webpush-auth", auth), HeaderField("x-webpush-p256dh", p256dh),
            ]
            let locale = device.locale
            out += "{\"body\":"
            out += body
            out += ",\"data\":{"
            appendCustom(&out, nullOccasion: true)
            out += "},\"dir\":\"\(locale == .ar ? "rtl" : "ltr")\",\"lang\":\"\(locale.rawValue)\",\"subtitle\":"
            out += subtitleJSON
            out += ",\"tag\":"
            JSON.appendQuoted(collapseID, to: &out)
            out += ",\"title\":"
            out += titleJSON
            out += "}"
            return PushMessage(platform: .webpush, headerFields: headers, payload: out)
        }
    }

    /// The custom keys after `display_theme`, the same for every device.
    func customTail(nullOccasion: Bool) -> String { nullOccasion ? customTailWithNull : customTailWithoutNull }

    static func aps(body: String, subtitle: String, title: String, category: String, isOccasion: Bool) -> String {
        "{\"alert\":{\"body\":\(body),\"subtitle\":\(subtitle),\"title\":\(title)},\"category\":\(category),"
            + "\"interruption-level\":\"active\",\"mutable-content\":1,\"relevance-score\":\(isOccasion ? "1" : "0.5"),"
            + "\"thread-id\":\"\(PayloadBuilder.threadID)\"}"
    }
}

/// JSON text written by hand: strings escaped as JSONEncoder does (quotes, backslashes and control characters;
/// slashes and non-ASCII left as they are).
public enum JSON {
    public static func quoted(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &result)
        return result
    }

    /// Appends `text` as a JSON string, in quotes.
    public static func appendQuoted(_ text: String, to out: inout String) {
        out += "\""
        appendEscaped(text, to: &out)
        out += "\""
    }

    /// Appends `text` escaped for the inside of a JSON string (escaping works character by character, so the
    /// pieces of one string may be appended one after another).
    public static func appendEscaped(_ text: String, to out: inout String) {
        var needsEscaping = false
        for byte in text.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscaping = true
            break
        }
        guard needsEscaping else {
            out += text
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
    }

    /// A flat object of strings, keys sorted.
    public static func object(_ pairs: [String: String]) -> String {
        object(pairs.map { HeaderField($0.key, $0.value) }.sorted { $0.name < $1.name })
    }

    /// A flat object of strings, in the fields' order.
    public static func object(_ fields: [HeaderField]) -> String {
        var out = "{"
        for (index, field) in fields.enumerated() {
            if index > 0 { out += "," }
            appendQuoted(field.name, to: &out)
            out += ":"
            appendQuoted(field.value, to: &out)
        }
        return out + "}"
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
