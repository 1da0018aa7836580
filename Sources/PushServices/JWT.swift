import Crypto
import CryptoExtras
import Encodings
import Foundation

/// A JSON Web Token's claims or header: strings and whole numbers, written with sorted keys.
public struct JWTFields: Equatable, Sendable {
    public var strings: [String: String]
    public var numbers: [String: Int]

    public init(strings: [String: String] = [:], numbers: [String: Int] = [:]) {
        self.strings = strings
        self.numbers = numbers
    }

    var json: Data {
        var object: [String: Any] = strings
        for (key, value) in numbers { object[key] = value }
        // Sorted keys: the same fields always make the same token (the tests compare them).
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }
}

public enum JWTError: Error, CustomStringConvertible, Equatable {
    case malformed(String)
    case badSignature
    case signing(String)

    public var description: String {
        switch self {
        case .malformed(let what): return "malformed token: \(what)"
        case .badSignature: return "token signature does not verify"
        case .signing(let why): return "cannot sign a token: \(why)"
        }
    }
}

/// Compact JWS tokens (RFC 7515/7519) signed with ES256 (APNs provider tokens, VAPID) or RS256 with PKCS #1 v1.5
/// padding (Google's service-account assertions; RS256 is never PSS). Verification is here too, for the stand-ins
/// that the tests and the benchmark run.
public enum JWT {
    public static func es256(header: JWTFields, claims: JWTFields, key: P256.Signing.PrivateKey) throws -> String {
        var header = header
        header.strings["alg"] = "ES256"
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        // JWS wants r ‖ s (64 bytes), not DER.
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    public static func rs256(header: JWTFields, claims: JWTFields, key: _RSA.Signing.PrivateKey) throws -> String {
        var header = header
        header.strings["alg"] = "RS256"
        let input = signingInput(header: header, claims: claims)
        do {
            let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
            return input + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw JWTError.signing("\(error)")
        }
    }

    static func signingInput(header: JWTFields, claims: JWTFields) -> String {
        Base64URL.encode(header.json) + "." + Base64URL.encode(claims.json)
    }

    /// A token's three parts: header and claims as JSON objects, and the bytes signed and the signature.
    public struct Parts: @unchecked Sendable {
        public let header: [String: Any]
        public let claims: [String: Any]
        public let signingInput: Data
        public let signature: Data
    }

    public static func parse(_ token: String) throws -> Parts {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3 else { throw JWTError.malformed("expected three parts, found \(pieces.count)") }
        guard let headerData = Base64URL.decode(pieces[0]), let claimsData = Base64URL.decode(pieces[1]),
            let signature = Base64URL.decode(pieces[2])
        else { throw JWTError.malformed("a part is not base64url") }
        guard let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { throw JWTError.malformed("header or claims are not a JSON object") }
        return Parts(header: header, claims: claims, signingInput: Data((pieces[0] + "." + pieces[1]).utf8), signature: signature)
    }

    /// The token's parts if its ES256 signature verifies with `key`.
    public static func verifyES256(_ token: String, key: P256.Signing.PublicKey) throws -> Parts {
        let parts = try parse(token)
        guard parts.header["alg"] as? String == "ES256",
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature),
            key.isValidSignature(signature, for: parts.signingInput)
        else { throw JWTError.badSignature }
        return parts
    }

    /// The token's parts if its RS256 (PKCS #1 v1.5) signature verifies with `key`.
    public static func verifyRS256(_ token: String, key: _RSA.Signing.PublicKey) throws -> Parts {
        let parts = try parse(token)
        guard parts.header["alg"] as? String == "RS256",
            key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: parts.signature), for: parts.signingInput, padding: .insecurePKCS1v1_5)
        else { throw JWTError.badSignature }
        return parts
    }
}
