import Foundation

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), as JWTs, VAPID keys and Web Push subscriptions
/// write bytes.
public enum Base64URL {
    public static func encode(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of `text`, padded or not; nil for anything but the URL-safe alphabet (or the standard one, which
    /// some subscriptions carry).
    public static func decode(_ text: some StringProtocol) -> Data? {
        guard text.utf8.count <= 1 << 20 else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.hasSuffix("=") { standard.removeLast() }
        switch standard.utf8.count % 4 {
        case 1: return nil
        case 2: standard += "=="
        case 3: standard += "="
        default: break
        }
        return Data(base64Encoded: standard)
    }
}
