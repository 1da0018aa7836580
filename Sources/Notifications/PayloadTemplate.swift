import Foundation
import HijriCalendar

/// Builds each platform's payload in its own format. Pure: the device, the day's content, the fire instant and the
/// configuration come in as values.
///
/// The JSON is written directly as bytes, keys in sorted order (but for Web Push's `data.subtitle`, written last),
/// rather than through `JSONEncoder`: the structures are fixed, and a scheduler emitting a million payloads a day
/// spends its time here. The golden-file tests pin the output.
public enum PayloadBuilder {
    static let threadID = "daily-verse"

    public static func build(device: Device, content: DailyContent, fireAt: Date, configuration: PushConfiguration) -> PushMessage {
        let zone = TimeZone.iana(device.timeZone) ?? TimeZone(identifier: "UTC")!
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

    /// Writes the headers, then the payload, in the device's platform's format; `body` replaces the whole body when
    /// it is shortened.
    func render(_ device: Device, fireAt: Date, endOfDay: Date, body shortened: [UInt8]?, into out: inout JSONBytes) -> EncodedPayload {
        let part = DevicePart(
            device: device, body: shortened ?? bodyJSON, isShortened: shortened != nil, expiration: Int(endOfDay.timeIntervalSince1970),
            ttl: max(0, Int(endOfDay.timeIntervalSince(fireAt))))
        switch device.token {
        case .apns(let token): return renderAPNs(part, token: token, into: &out)
        case .fcm(let token): return renderFCM(part, token: token, into: &out)
        case .webpush(let endpoint, let p256dh, let auth): return renderWebPush(part, endpoint: endpoint, p256dh: p256dh, auth: auth, into: &out)
        }
    }

    /// `dv-<device id, at most 40 characters>-<local date>`: the notification each platform replaces rather than
    /// stacks (APNs' collapse id, Android's tag, Web Push's tag).
    func appendCollapseID(_ part: DevicePart, into out: inout JSONBytes) {
        out.append("dv-")
        out.appendEscaped(part.device.id.prefix(40))
        out.append("-")
        out.append(localDate)
    }

    /// The app's keys, in sorted order: deep_link, display_theme, hijri_date, local_date, occasion, occasion_tonight,
    /// other_occasions, theme, verse_key. An absent occasion is left out (FCM's data holds strings only, and the
    /// others follow it).
    func appendCustom(_ part: DevicePart, into out: inout JSONBytes) {
        out.append("\"deep_link\":\"")
        out.append(deepLinkPrefixJSON)
        out.appendEscaped(part.device.displayTheme)
        out.append("\",\"display_theme\":")
        out.appendQuoted(part.device.displayTheme)
        out.append(customTail)
    }
}

/// What one device adds to a template: itself, the body (whole or shortened), and the times its payload expires.
struct DevicePart {
    let device: Device
    let body: [UInt8]
    let isShortened: Bool
    /// The next local midnight, in seconds since 1970 (APNs' `apns-expiration`).
    let expiration: Int
    /// Seconds from the fire to the next local midnight (FCM's and Web Push's TTL).
    let ttl: Int
}
