import Diagnostics
import Encodings
import Foundation
import HijriCalendar

public enum Platform: String, CaseIterable, Codable, Sendable {
    case apns, fcm, webpush

    /// The push service's name as people write it, for logs and messages.
    public var serviceName: String {
        switch self {
        case .apns: "APNs"
        case .fcm: "FCM"
        case .webpush: "Web Push"
        }
    }
}

public enum DeviceLocale: String, CaseIterable, Codable, Sendable {
    case en, ar
}

/// Where a push goes: an APNs device token, an FCM registration token, or a Web Push subscription.
public enum PushToken: Hashable, Sendable {
    case apns(String)
    case fcm(String)
    case webpush(endpoint: String, p256dh: String, auth: String)

    public var platform: Platform {
        switch self {
        case .apns: .apns
        case .fcm: .fcm
        case .webpush: .webpush
        }
    }

    /// Checks a token's form for its platform; the error names the value.
    public static func apns(validating hex: String) throws(DeviceError) -> PushToken {
        // 32 bytes today; Apple asks servers to accept longer tokens, so any even hex length from 64 to 200 is taken.
        let token = hex.lowercased()
        guard (64...200).contains(token.count), token.count % 2 == 0, token.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            throw .invalidToken(platform: .apns, value: hex)
        }
        return .apns(token)
    }

    /// FCM's tokens are about 160 characters; 2,048 leaves room for their growth and keeps a token (as a Web Push
    /// endpoint) within what PostgreSQL's index of tokens takes in an entry, about 2,700 bytes.
    public static func fcm(validating token: String) throws(DeviceError) -> PushToken {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:")
        guard (20...2048).contains(token.utf8.count), token.unicodeScalars.allSatisfy(allowed.contains) else {
            throw .invalidToken(platform: .fcm, value: token)
        }
        return .fcm(token)
    }

    public static func webpush(validatingEndpoint endpoint: String, p256dh: String, auth: String) throws(DeviceError) -> PushToken {
        // No user or password in it (a push service's endpoint has none, and one would change what the host means).
        // Printable ASCII alone, as a URI is: a parser may percent-encode a space or a NUL and pass the string, which
        // is what would be stored and sent.
        guard endpoint.utf8.count <= 2048, endpoint.utf8.allSatisfy({ (0x21...0x7E).contains($0) }), let url = URL(string: endpoint),
            url.scheme == "https", let host = url.host, !host.isEmpty,
            url.user == nil,
            url.password == nil
        else {
            throw .invalidToken(platform: .webpush, value: endpoint)
        }
        // p256dh: an uncompressed P-256 point (65 bytes, first 0x04); auth: a 16-byte secret; both base64url.
        guard let key = Base64URL.decode(p256dh), key.count == 65, key.first == 4 else {
            throw .invalidToken(platform: .webpush, value: p256dh)
        }
        guard let secret = Base64URL.decode(auth), secret.count == 16 else {
            throw .invalidToken(platform: .webpush, value: auth)
        }
        // Kept in one spelling: the endpoint's host in lower case without the default port (one subscription is one
        // device however its host was written), the keys re-encoded (the decoder takes padding and the standard
        // alphabet, so a key could arrive kilobytes long).
        return .webpush(endpoint: canonicalEndpoint(endpoint), p256dh: Base64URL.encode(key), auth: Base64URL.encode(secret))
    }

    /// This token, if it may be sent to: a Web Push endpoint must be on a push service `hosts` allows (the rule the
    /// sender follows, `WebPushHosts.allows`), or every send would refuse it. The error names the endpoint's host,
    /// never the endpoint, which is the subscription's secret. APNs and FCM tokens go to their one service.
    public func checked(against hosts: WebPushHosts) throws(DeviceError) -> PushToken {
        guard case .webpush(let endpoint, _, _) = self, !hosts.allows(endpoint) else { return self }
        throw .pushServiceNotAllowed(host: WebPushHosts.host(of: endpoint) ?? "(none)")
    }

    /// `https://Host:443/path` as `https://host/path`: the authority in lower case, the default port dropped, the rest
    /// as it was.
    static func canonicalEndpoint(_ endpoint: String) -> String {
        let scheme = "https://"
        guard endpoint.hasPrefix(scheme) else { return endpoint }
        let rest = endpoint.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd].lowercased()
        if authority.hasSuffix(":443") { authority.removeLast(4) }
        return scheme + authority + rest[authorityEnd...]
    }
}

/// A subscribed device and its reminder settings.
public struct Device: Hashable, Sendable {
    public var id: String
    public var token: PushToken
    public var timeZone: String
    public var reminderTime: ReminderTime
    public var locale: DeviceLocale
    public var calendar: CalendarKind
    public var adjustment: Adjustment
    public var displayTheme: String
    public var enabled: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, token: PushToken, timeZone: String, reminderTime: ReminderTime = .default, locale: DeviceLocale = .en,
        calendar: CalendarKind = .installationDefault, adjustment: Adjustment = .zero, displayTheme: String = "parchment",
        enabled: Bool = true, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.token = token
        self.timeZone = timeZone
        self.reminderTime = reminderTime
        self.locale = locale
        self.calendar = calendar
        self.adjustment = adjustment
        self.displayTheme = displayTheme
        self.enabled = enabled
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public var platform: Platform { token.platform }

    /// A zone name that Foundation knows by exactly that name.
    public static func validateTimeZone(_ name: String) throws(DeviceError) -> TimeZone {
        guard let zone = TimeZone.iana(name) else { throw .invalidTimeZone(name) }
        return zone
    }
}

public enum DeviceError: UserFacingError, Equatable, Sendable {
    case invalidToken(platform: Platform, value: String)
    case invalidTime(String)
    case invalidTimeZone(String)
    case invalidPlatform(String)
    case invalidLocale(String)
    case invalidDisplayTheme(String)
    case notFound(String)
    case duplicateToken(String)
    /// A Web Push endpoint on a host that is not a push service this server sends to: its host alone.
    case pushServiceNotAllowed(host: String)
    case missing(String)
    /// A user already has the most devices allowed.
    case tooMany(Int)
    /// A guest's devices would take the account it signs into past the most allowed.
    case tooManyToMerge(own: Int, guest: Int, maximum: Int)

    public var description: String {
        switch self {
        case .invalidToken(let platform, let value):
            let shown = value.count > 80 ? String(value.prefix(77)) + "..." : value
            return switch platform {
            case .apns: "invalid APNs token '\(shown)': expected 64 to 200 hex digits"
            case .fcm: "invalid FCM token '\(shown)': expected 20 to 2048 characters of A-Z a-z 0-9 - _ :"
            case .webpush:
                "invalid Web Push subscription value '\(shown)': expected an https endpoint, a base64url P-256 key (p256dh) and a 16-byte base64url auth secret"
            }
        case .pushServiceNotAllowed(let host):
            let shown = host.count > 80 ? String(host.prefix(77)) + "..." : host
            return
                "Web Push endpoint refused: its host '\(shown)' is not a push service this server sends to (the browsers' own, at Google, Mozilla, Apple and Microsoft, or one its web_push_hosts setting adds)"
        case .invalidTime(let text): return "invalid reminder time '\(text)': expected HH:MM on a 24-hour clock"
        case .invalidTimeZone(let name): return "unknown time zone '\(name)': expected an IANA name such as Asia/Baghdad"
        case .invalidPlatform(let name): return "unknown platform '\(name)': expected apns, fcm or webpush"
        case .invalidLocale(let name): return "unknown locale '\(name)': expected en or ar"
        case .invalidDisplayTheme(let name): return "unknown display theme '\(name)'"
        case .notFound(let id): return "no device '\(id)'"
        case .missing(let field): return "missing \(field)"
        case .tooMany(let limit): return "this user already has \(limit) devices, the most allowed: remove one first"
        case .tooManyToMerge(let own, let guest, let maximum):
            return
                "signing in would give the account \(own + guest) devices (\(own) of its own and \(guest) of this guest's), more than the \(maximum) allowed: remove \(own + guest - maximum) of the account's devices first, or sign in without the guest's session"
        case .duplicateToken(let token):
            return "a device with token '\(token.count > 80 ? String(token.prefix(77)) + "..." : token)' is already registered"
        }
    }
}
