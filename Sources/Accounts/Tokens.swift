import Crypto
import Encodings
import Foundation

/// Bearer tokens: 256 random bits, shown to the client once and stored only as their SHA-256.
/// The most sessions a user keeps: a new one past it signs out the least recently used. (Without a bound, every sign-in
/// added a session for good, each with its own allowance of changes.)
public let maximumSessions = 100

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
        Hex.encode(SHA256.hash(data: Array(token.utf8)))
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

/// Email addresses as accounts use them: one spelling for what reads the same. Trimmed, composed (NFC) and
/// lowercased, so that "José" typed composed or decomposed, or in capitals, is one account; refused when it holds
/// what a reader cannot see — format controls and other default-ignorable characters (a zero-width space, a soft
/// hyphen, a left-to-right mark) and bidirectional controls — or is not of a plausible form; and compared by a key
/// that also folds compatibility characters (fullwidth letters, ligatures), so that "ｂｏｂ@example.com" is the
/// account of "bob@example.com".
public enum Email {
    public static func normalize(_ text: String) throws(AccountError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // Composed, lowercased, and composed again: lowercasing can decompose (İ becomes i and a combining dot).
        let email = trimmed.precomposedStringWithCanonicalMapping.lowercased().precomposedStringWithCanonicalMapping
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        // Lengths in Unicode scalars, as the API document's maxLength counts them.
        guard email.unicodeScalars.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].unicodeScalars.count <= 64, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !email.contains(where: { $0.isWhitespace || $0.isNewline }),
            // No control characters (C0, DEL, C1): they would be stored and shown as they are.
            !email.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else { throw .invalidEmail(visible(text)) }
        if let hidden = email.unicodeScalars.first(where: isInvisible) {
            throw .invalidEmail(visible(text), reason: "it holds an invisible character (\(codePoint(hidden)))")
        }
        return email
    }

    /// What two emails are compared by: the normalized email with compatibility characters folded too (NFKC), so
    /// that fullwidth letters, ligatures and the like are the letters they stand for.
    public static func key(_ normalized: String) -> String {
        normalized.precomposedStringWithCompatibilityMapping.lowercased().precomposedStringWithCompatibilityMapping
    }

    /// The spellings a sign-in looks an account up by: the normalized one, then the one accounts were stored under
    /// before emails were normalized (trimmed and lowercased only), for an account made then that the migration to
    /// the new spelling could not rename (another account already had it) or whose email the new rule refuses.
    public static func signInForms(_ text: String) -> [String] {
        let old = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let normal = try? normalize(text) else { return [old] }
        return normal == old ? [normal] : [normal, old]
    }

    /// What a reader cannot see: format controls, default-ignorable code points, bidirectional controls.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .format || scalar.properties.isDefaultIgnorableCodePoint || scalar.properties.isBidiControl
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String { "U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) }

    /// The text with every invisible character written as its code point, so that a message shows what was sent.
    static func visible(_ text: String) -> String {
        String(text.unicodeScalars.prefix(300).map { isInvisible($0) ? "<\(codePoint($0))>" : String($0) }.joined())
    }
}

/// What a display name must not hold: bidirectional controls (U+202E would turn the rest of a line around wherever the
/// name is shown) and control characters; 1 to 100 characters.
public enum DisplayName {
    public static func check(_ name: String) throws(AccountError) {
        guard (1...100).contains(name.unicodeScalars.count),
            !name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.isBidiControl })
        else { throw .invalidDisplayName }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
