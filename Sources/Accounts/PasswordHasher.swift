import Crypto
import CryptoExtras
import Diagnostics
import Foundation

/// Password hashing with a per-user salt, in a self-describing form so that the cost can be raised later:
/// `scrypt$ln=17,r=8,p=1$<salt>$<hash>` or `pbkdf2-sha256$i=600000$<salt>$<hash>` (base64url, no padding).
public struct PasswordHasher: Sendable {
    public enum Algorithm: Hashable, Sendable {
        /// N = 2^logN; OWASP: N = 2^17, r = 8, p = 1.
        case scrypt(logN: Int, r: Int, p: Int)
        /// OWASP: 600,000 rounds of HMAC-SHA256.
        case pbkdf2SHA256(rounds: Int)

        public static let owaspScrypt = Algorithm.scrypt(logN: 17, r: 8, p: 1)
        public static let owaspPBKDF2 = Algorithm.pbkdf2SHA256(rounds: 600_000)
    }

    public static let minimumPasswordLength = 8
    /// Long enough for any passphrase, short enough that hashing cannot be used to exhaust the server.
    public static let maximumPasswordLength = 1024
    static let saltBytes = 16
    static let hashBytes = 32

    public let algorithm: Algorithm

    public init(_ algorithm: Algorithm = .owaspScrypt) { self.algorithm = algorithm }

    public func hash(_ password: String) throws -> String {
        try Self.check(password)
        var salt = [UInt8](repeating: 0, count: Self.saltBytes)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = generator.next() }
        return try Self.encode(algorithm, salt: salt, hash: Self.derive(algorithm, password: password, salt: salt))
    }

    /// Whether `password` matches `encoded`, compared in constant time. Malformed input is simply no match.
    public static func verify(_ password: String, against encoded: String) -> Bool {
        guard password.utf8.count <= maximumPasswordLength, let (algorithm, salt, expected) = decode(encoded),
            let actual = try? derive(algorithm, password: password, salt: salt)
        else { return false }
        return constantTimeEqual(actual, expected)
    }

    /// Whether a stored hash was made with weaker settings than `algorithm` (to rehash on the next sign-in).
    public func needsRehash(_ encoded: String) -> Bool { Self.decode(encoded)?.0 != algorithm }

    static func check(_ password: String) throws {
        // Counted in Unicode scalars, as JSON Schema's minLength counts (a letter and its combining accent are two).
        let length = password.unicodeScalars.count
        guard length >= minimumPasswordLength else { throw AccountError.weakPassword("at least \(minimumPasswordLength) characters") }
        guard password.utf8.count <= maximumPasswordLength else { throw AccountError.weakPassword("at most \(maximumPasswordLength) bytes") }
    }

    static func derive(_ algorithm: Algorithm, password: String, salt: [UInt8]) throws -> [UInt8] {
        let key: SymmetricKey
        switch algorithm {
        case .scrypt(let logN, let r, let p):
            key = try KDF.Scrypt.deriveKey(
                from: Array(password.utf8), salt: salt, outputByteCount: hashBytes, rounds: 1 << logN, blockSize: r, parallelism: p,
                maxMemory: 129 * (1 << logN) * r * p + 1 << 20)
        case .pbkdf2SHA256(let rounds):
            key = try KDF.Insecure.PBKDF2.deriveKey(
                from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: hashBytes, unsafeUncheckedRounds: rounds)
        }
        return key.withUnsafeBytes { Array($0) }
    }

    static func encode(_ algorithm: Algorithm, salt: [UInt8], hash: [UInt8]) -> String {
        let parameters: String
        switch algorithm {
        case .scrypt(let logN, let r, let p): parameters = "scrypt$ln=\(logN),r=\(r),p=\(p)"
        case .pbkdf2SHA256(let rounds): parameters = "pbkdf2-sha256$i=\(rounds)"
        }
        return "\(parameters)$\(base64url(salt))$\(base64url(hash))"
    }

    static func decode(_ encoded: String) -> (Algorithm, [UInt8], [UInt8])? {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, let salt = unbase64url(parts[2]), let hash = unbase64url(parts[3]), hash.count == hashBytes, !salt.isEmpty
        else { return nil }
        var values: [String: Int] = [:]
        for pair in parts[1].split(separator: ",") {
            let kv = pair.split(separator: "=")
            guard kv.count == 2, let value = Int(kv[1]), value > 0 else { return nil }
            values[String(kv[0])] = value
        }
        switch parts[0] {
        case "scrypt":
            guard let logN = values["ln"], (1...20).contains(logN), let r = values["r"], (1...32).contains(r), let p = values["p"],
                (1...16).contains(p)
            else { return nil }
            return (.scrypt(logN: logN, r: r, p: p), salt, hash)
        case "pbkdf2-sha256":
            guard let rounds = values["i"], (1...10_000_000).contains(rounds) else { return nil }
            return (.pbkdf2SHA256(rounds: rounds), salt, hash)
        default: return nil
        }
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func unbase64url<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}

/// Equal length and equal bytes, in time that does not depend on where they differ.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}

public enum AccountError: UserFacingError, Equatable, Sendable {
    case weakPassword(String)
    case invalidEmail(String, reason: String = "expected NAME@DOMAIN")
    case invalidDisplayName

    public var description: String {
        switch self {
        case .weakPassword(let rule): "password too weak or too long: \(rule)"
        case .invalidEmail(let email, let reason): "invalid email '\(email)': \(reason)"
        case .invalidDisplayName: "invalid display name: expected 1 to 100 characters, no control or bidirectional control characters"
        }
    }
}
