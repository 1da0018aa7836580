import Crypto
import Foundation

/// Bearer tokens: 256 random bits, shown to the client once and stored only as their SHA-256.
public enum SessionToken {
    public static let randomBytes = 32

    /// A new token (base64url) and the hash to store.
    public static func generate() -> (token: String, hash: String) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<randomBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = PasswordHasher.base64url(bytes)
        return (token, hash(token))
    }

    /// The stored form: SHA-256, hex. Looking a token up by this hash reveals nothing about the token.
    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a presented token matches a stored hash, in constant time.
    public static func matches(_ token: String, storedHash: String) -> Bool {
        constantTimeEqual(Array(hash(token).utf8), Array(storedHash.utf8))
    }

    /// A well-formed token: 43 base64url characters. Anything else is refused before any lookup.
    public static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F
            }
    }
}

/// Email addresses as accounts use them: trimmed, lowercased, and of a plausible form.
public enum Email {
    public static func normalize(_ text: String) throws(AccountError) -> String {
        let email = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        // Lengths in Unicode scalars, as the API document's maxLength counts them.
        guard email.unicodeScalars.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].unicodeScalars.count <= 64, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !email.contains(where: { $0.isWhitespace || $0.isNewline }),
            // No control characters (C0, DEL, C1): they would be stored and shown as they are.
            !email.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else { throw .invalidEmail(text) }
        return email
    }
}
