import Foundation
import HijriCalendar
import PushServices

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
    /// Every platform caps a payload at 4096 bytes (Web Push's plaintext at less: see `limit(for:)`).
    public var maximumPayloadBytes: Int
    /// `aps.sound`: "default", a sound file in the app's bundle, or nil for a silent alert.
    public var sound: String?

    public init(
        apnsTopic: String, deepLinkScheme: String = "dailyverse", category: String = "DAILY_VERSE",
        androidChannel: String = "daily_verse", maximumPayloadBytes: Int = 4096, sound: String? = "default"
    ) {
        self.sound = sound
        self.apnsTopic = apnsTopic
        self.deepLinkScheme = deepLinkScheme
        self.category = category
        self.androidChannel = androidChannel
        self.maximumPayloadBytes = maximumPayloadBytes
    }
}

extension PushConfiguration {
    /// The most bytes a platform's payload may count. Web Push's plaintext must leave room in one 4096-byte record
    /// for the encryption's header, tag and delimiter (RFC 8291: 3993 bytes).
    public func limit(for platform: Platform) -> Int {
        platform == .webpush ? min(maximumPayloadBytes, WebPushEncryption.maximumPlaintextBytes) : maximumPayloadBytes
    }
}

/// A payload ready for a gateway: its headers and its JSON body.
public struct PushMessage: Hashable, Sendable {
    public let platform: Platform
    /// The request headers as one flat JSON object of strings, names in order.
    public let headersJSON: String
    /// The JSON body.
    public let payload: String

    /// The bytes the service counts against its limit (`EncodedPayload.counted`).
    public let countedBytes: Int

    public init(platform: Platform, headersJSON: String, payload: String, countedBytes: Int? = nil) {
        self.platform = platform
        self.headersJSON = headersJSON
        self.payload = payload
        self.countedBytes = countedBytes ?? payload.utf8.count
    }

    /// The request headers by name.
    public var headers: [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(headersJSON.utf8)) as? [String: String]) ?? [:]
    }

    /// Its size as sent, in bytes.
    public var byteCount: Int { payload.utf8.count }
}

/// Builds each platform's payload in its own format. Pure: the device, the day's content, the fire instant and the
/// configuration come in as values.
///
/// The JSON is written directly as bytes, keys in sorted order, rather than through `JSONEncoder`: the structures
/// are fixed, and a scheduler emitting a million payloads a day spends its time here. The golden-file tests pin the
/// output.
public enum PayloadBuilder {
    static let threadID = "daily-verse"

    public static func build(device: Device, content: DailyContent, fireAt: Date, configuration: PushConfiguration) -> PushMessage {
        let zone = TimeZone(identifier: device.timeZone) ?? TimeZone(identifier: "UTC")!
        return PayloadTemplate(content: content, locale: device.locale, configuration: configuration).message(for: device, fireAt: fireAt, zone: zone)
    }
}

/// Where a payload's headers and body were written in a `JSONBytes` buffer.
public struct EncodedPayload: Sendable {
    public let headers: Range<Int>
    public let payload: Range<Int>
    /// The bytes the service counts against its limit: the whole body for APNs and Web Push; for FCM, the larger of
    /// what reaches an Android device (`notification` and `data`) and what reaches APNs (`apns.payload`), not the
    /// token, the options or the headers around them.
    public let counted: Int

    init(headers: Range<Int>, payload: Range<Int>, counted: Int? = nil) {
        self.headers = headers
        self.payload = payload
        self.counted = counted ?? payload.count
    }
}

/// Everything about a payload that is the same for every device sharing a day's content and a locale, rendered
/// once as JSON bytes; `write(for:…)` adds what belongs to one device.
public struct PayloadTemplate: Sendable {
    let content: DailyContent
    let configuration: PushConfiguration
    let text: NotificationText
    let isOccasion: Bool
    // Pre-rendered JSON fragments.
    let titleJSON: [UInt8]
    let subtitleJSON: [UInt8]
    let bodyJSON: [UInt8]
    /// `aps` with the whole body.
    let apsJSON: [UInt8]
    let localDate: [UInt8]
    /// Web Push's `Topic`: the date, at most 32 URL-safe characters.
    let topic: [UInt8]
    /// `apns-topic`'s value and the Android channel, quoted.
    let apnsTopicJSON: [UInt8]
    let androidChannelJSON: [UInt8]
    /// The custom keys after `display_theme`, with `occasion` null when there is none, and (for FCM) without it.
    /// The app's keys after `display_theme`; an absent occasion is left out, on every platform.
    let customTail: [UInt8]
    /// The deep link up to its theme, escaped for inside a JSON string.
    let deepLinkPrefixJSON: [UInt8]

    public init(content: DailyContent, locale: DeviceLocale, configuration: PushConfiguration) {
        self.content = content
        self.configuration = configuration
        self.text = NotificationText(content, locale: locale)
        self.isOccasion = content.occasion != nil
        func json(_ build: (inout JSONBytes) -> Void) -> [UInt8] {
            var out = JSONBytes()
            build(&out)
            return out.bytes
        }
        let text = self.text
        titleJSON = json { $0.appendQuoted(text.title) }
        subtitleJSON = json { $0.appendQuoted(text.subtitle) }
        bodyJSON = json { $0.appendQuoted(text.body) }
        let date = content.localDate.description
        localDate = Array(date.utf8)
        topic = Array(("dv" + date.replacingOccurrences(of: "-", with: "")).utf8)
        apnsTopicJSON = json { $0.appendQuoted(configuration.apnsTopic) }
        androidChannelJSON = json { $0.appendQuoted(configuration.androidChannel) }
        deepLinkPrefixJSON = json { $0.appendEscaped("\(configuration.deepLinkScheme)://verse/\(content.verseKey)?date=\(date)&theme=") }
        let isOccasion = self.isOccasion
        let (titleJSON, subtitleJSON, bodyJSON) = (self.titleJSON, self.subtitleJSON, self.bodyJSON)
        apsJSON = json {
            Self.appendAPS(&$0, body: bodyJSON, subtitle: subtitleJSON, title: titleJSON, configuration: configuration, isOccasion: isOccasion)
        }
        customTail = json { out in
                out.append(",\"hijri_date\":\"")
                out.appendEscaped(content.hijri.description)
                out.append("\",\"local_date\":\"")
                out.appendEscaped(date)
                out.append("\",")
                if let occasion = content.occasion {
                    out.append("\"occasion\":")
                    out.appendQuoted(occasion.id)
                    out.append(",")
                    // Strings only, for FCM's data: "true" on the evening a night begins.
                    if occasion.tonight { out.append("\"occasion_tonight\":\"true\",") }
                }
                if !content.otherOccasions.isEmpty {
                    // The other occasions of the day, by id, comma-separated, tonight's marked "@tonight".
                    out.append("\"other_occasions\":")
                    out.appendQuoted(content.otherOccasions.map { $0.id + ($0.tonight ? "@tonight" : "") }.joined(separator: ","))
                    out.append(",")
                }
                out.append("\"theme\":")
                out.appendQuoted(content.themeID)
                out.append(",\"verse_key\":")
                out.appendQuoted(content.verseKey)
        }
    }

    /// The payload for one device, its body shortened at a word if the platform's limit needs it.
    public func message(for device: Device, fireAt: Date, zone: some UTCOffsets) -> PushMessage {
        var out = JSONBytes()
        let written = write(for: device, fireAt: fireAt, zone: zone, into: &out)
        return PushMessage(
            platform: device.platform, headersJSON: String(decoding: out.bytes[written.headers], as: UTF8.self),
            payload: String(decoding: out.bytes[written.payload], as: UTF8.self), countedBytes: written.counted)
    }

    /// Appends the headers and then the payload for one device to `out` (a scheduler pass writes a whole batch into
    /// one buffer), the body shortened at a word if the platform's limit needs it.
    public func write(for device: Device, fireAt: Date, zone: some UTCOffsets, into out: inout JSONBytes) -> EncodedPayload {
        // The verse is for one local day: it expires at the next local midnight.
        let endOfDay = Scheduler.fireInstant(date: content.localDate.adding(days: 1), time: .midnight, zone: zone)
        let start = out.bytes.count
        let limit = configuration.limit(for: device.platform)
        let full = render(device, fireAt: fireAt, endOfDay: endOfDay, body: nil, into: &out)
        guard full.counted > limit else { return full }
        out.bytes.removeSubrange(start...)
        // A body may appear more than once (FCM repeats it for iOS), so search for the longest body that fits
        // rather than subtracting the excess.
        func body(_ bytes: Int) -> [UInt8] { JSONBytes.quoted(TextShortening.shorten(text.body, toAtMostBytes: bytes)) }
        var scratch = JSONBytes()
        func fits(_ bytes: Int) -> Bool {
            scratch.bytes.removeAll(keepingCapacity: true)
            return render(device, fireAt: fireAt, endOfDay: endOfDay, body: body(bytes), into: &scratch).counted <= limit
        }
        var best = 0
        var low = 0
        var high = text.body.utf8.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if fits(middle) {
                best = middle
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return render(device, fireAt: fireAt, endOfDay: endOfDay, body: body(best), into: &out)
    }

    /// Writes the headers, then the payload; `body` replaces the whole body when it is shortened.
    func render(_ device: Device, fireAt: Date, endOfDay: Date, body shortened: [UInt8]?, into out: inout JSONBytes) -> EncodedPayload {
        let body = shortened ?? bodyJSON
        let expiration = Int(endOfDay.timeIntervalSince1970)
        let ttl = max(0, Int(endOfDay.timeIntervalSince(fireAt)))
        func appendCollapseID() {
            out.append("dv-")
            out.appendEscaped(device.id.prefix(40))
            out.append("-")
            out.append(localDate)
        }
        // apns-collapse-id through apns-topic, in name order.
        func appendAPNsHeaders() {
            out.append("\"apns-collapse-id\":\"")
            appendCollapseID()
            out.append("\",\"apns-expiration\":\"")
            out.append(expiration)
            // A visible alert at a time the user chose: sent at once (10), not grouped or delayed as 5 may be.
            out.append("\",\"apns-priority\":\"10\"")
            out.append(",\"apns-push-type\":\"alert\",\"apns-topic\":")
            out.append(apnsTopicJSON)
        }
        func appendAPS() {
            if shortened == nil {
                out.append(apsJSON)
            } else {
                Self.appendAPS(&out, body: body, subtitle: subtitleJSON, title: titleJSON, configuration: configuration, isOccasion: isOccasion)
            }
        }
        // The app's keys, in sorted order: deep_link, display_theme, hijri_date, local_date, occasion, occasion_tonight,
        // other_occasions, theme, verse_key.
        // An absent occasion is left out (FCM's data holds strings only, and the others follow it).
        func appendCustom() {
            out.append("\"deep_link\":\"")
            out.append(deepLinkPrefixJSON)
            out.appendEscaped(device.displayTheme)
            out.append("\",\"display_theme\":")
            out.appendQuoted(device.displayTheme)
            out.append(customTail)
        }
        let headersStart = out.bytes.count
        switch device.token {
        case .apns(let token):
            out.append("{\":path\":\"/3/device/")
            out.appendEscaped(token)
            out.append("\",")
            appendAPNsHeaders()
            out.append("}")
            let payloadStart = out.bytes.count
            out.append("{\"aps\":")
            appendAPS()
            out.append(",")
            appendCustom()
            out.append("}")
            return EncodedPayload(headers: headersStart..<payloadStart, payload: payloadStart..<out.bytes.count)
        case .fcm(let token):
            out.append("{}")
            let payloadStart = out.bytes.count
            out.append("{\"message\":{\"android\":{\"collapse_key\":")
            out.appendQuoted(PayloadBuilder.threadID)
            out.append(",\"notification\":{\"channel_id\":")
            out.append(androidChannelJSON)
            out.append(",\"tag\":\"")
            appendCollapseID()
            // As for APNs: a visible notification at the user's time goes with high priority.
            out.append("\"},\"priority\":\"high\",\"ttl\":\"")
            out.append(ttl)
            out.append("s\"},\"apns\":{\"headers\":{")
            appendAPNsHeaders()
            out.append("},\"payload\":")
            let apnsStart = out.bytes.count
            out.append("{\"aps\":")
            appendAPS()
            out.append("}")
            let apnsBytes = out.bytes.count - apnsStart
            out.append("},\"data\":")
            let androidStart = out.bytes.count
            out.append("{")
            appendCustom()
            out.append("},\"notification\":{\"body\":")
            out.append(body)
            out.append(",\"title\":")
            out.append(titleJSON)
            out.append("}")
            let androidBytes = out.bytes.count - androidStart
            out.append(",\"token\":")
            out.appendQuoted(token)
            out.append("}}")
            return EncodedPayload(headers: headersStart..<payloadStart, payload: payloadStart..<out.bytes.count, counted: max(apnsBytes, androidBytes))
        case .webpush(let endpoint, let p256dh, let auth):
            // Header names in order: ":url", "TTL", "Topic", "Urgency", "x-webpush-auth", "x-webpush-p256dh".
            out.append("{\":url\":")
            out.appendQuoted(endpoint)
            out.append(",\"TTL\":\"")
            out.append(ttl)
            out.append("\",\"Topic\":\"")
            out.append(topic)
            out.append(isOccasion ? "\",\"Urgency\":\"high\",\"x-webpush-auth\":" : "\",\"Urgency\":\"normal\",\"x-webpush-auth\":")
            out.appendQuoted(auth)
            out.append(",\"x-webpush-p256dh\":")
            out.appendQuoted(p256dh)
            out.append("}")
            // What a service worker passes to showNotification(title, options) as it is; the subtitle (theme and
            // reference), which has no place among the options, travels in data.
            let payloadStart = out.bytes.count
            out.append("{\"options\":{\"body\":")
            out.append(body)
            out.append(",\"data\":{")
            appendCustom()
            out.append(",\"subtitle\":")
            out.append(subtitleJSON)
            out.append(device.locale == .ar ? "},\"dir\":\"rtl\",\"lang\":\"ar\",\"tag\":\"" : "},\"dir\":\"ltr\",\"lang\":\"en\",\"tag\":\"")
            appendCollapseID()
            out.append("\"},\"title\":")
            out.append(titleJSON)
            out.append("}")
            return EncodedPayload(headers: headersStart..<payloadStart, payload: payloadStart..<out.bytes.count)
        }
    }

    static func appendAPS(_ out: inout JSONBytes, body: [UInt8], subtitle: [UInt8], title: [UInt8], configuration: PushConfiguration, isOccasion: Bool) {
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

/// JSON text written by hand into a byte buffer: strings escaped as JSONEncoder does (quotes, backslashes and
/// control characters; slashes and non-ASCII left as they are).
public struct JSONBytes: Sendable {
    public var bytes: [UInt8] = []

    public init() {}

    public mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func append(_ fragment: [UInt8]) { bytes.append(contentsOf: fragment) }

    /// A whole number in decimal.
    public mutating func append(_ number: Int) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }

    /// Appends `text` as a JSON string, in quotes.
    public mutating func appendQuoted(_ text: some StringProtocol) {
        bytes.append(UInt8(ascii: "\""))
        appendEscaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `text` escaped for the inside of a JSON string (escaping works byte by byte, since no byte of a
    /// multi-byte UTF-8 sequence is below 0x80, so the pieces of one string may be appended one after another).
    public mutating func appendEscaped(_ text: some StringProtocol) {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            bytes.append(contentsOf: utf8)
            return
        }
        for byte in utf8 {
            switch byte {
            case 0x22: append("\\\"")
            case 0x5C: append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                append("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
    }

    static func quoted(_ text: String) -> [UInt8] {
        var out = JSONBytes()
        out.appendQuoted(text)
        return out.bytes
    }
}

/// JSON strings for text output.
public enum JSON {
    public static func quoted(_ text: String) -> String {
        var out = JSONBytes()
        out.appendQuoted(text)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

/// Shortening text to fit a byte budget: at a word boundary, with an ellipsis, never inside a grapheme
/// (so never inside a UTF-8 sequence, and never between an Arabic letter and its marks).
public enum TextShortening {
    public static let ellipsis = "…"
    /// What a shortened text never ends on before its ellipsis.
    static let trailing: Set<Character> = [",", ";", ":", ".", "!", "?", "(", "[", "{", "\"", "'", "“", "‘", "«", "-", "—", "–", "،", "؛", "؟", "۔"]

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
        // No "writing.…" or "in (terms…": closing punctuation, open brackets and quotes go before the ellipsis.
        var result = String(kept)
        while let last = result.last, trailing.contains(last) || last.isWhitespace { result.removeLast() }
        return result + ellipsis
    }
}
