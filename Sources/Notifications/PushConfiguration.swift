import Encodings
import Foundation

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
        platform == .webpush ? min(maximumPayloadBytes, AES128GCMRecord.maximumPlaintextBytes) : maximumPayloadBytes
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
