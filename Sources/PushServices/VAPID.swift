import Crypto
import Encodings
import Foundation

/// Voluntary Application Server Identification (RFC 8292): the key pair a web app's subscriptions are bound to, and
/// the `Authorization: vapid t=…, k=…` header that proves a request comes from its holder.
public struct VAPIDKey: Sendable {
    public let privateKey: P256.Signing.PrivateKey
    /// `mailto:` or `https:`: how the push service's operator can reach this server's.
    public let subject: String

    public enum Failure: Error, CustomStringConvertible, Equatable {
        case malformedKey(String)
        case badSubject(String)

        public var description: String {
            switch self {
            case .malformedKey(let why): return "not a P-256 private key (\(why))"
            case .badSubject(let why): return "bad VAPID subject: \(why)"
            }
        }
    }

    public init(privateKey: P256.Signing.PrivateKey, subject: String) throws {
        try Self.checkSubject(subject)
        self.privateKey = privateKey
        self.subject = subject
    }

    /// A key file's text: a PEM private key (PKCS #8 or SEC 1, as `openssl ecparam -genkey` and `vapid generate`
    /// write it) or the 32-byte private scalar in base64url (as the web-push tools print it).
    public static func privateKey(fromFile text: String) throws -> P256.Signing.PrivateKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("-----BEGIN") {
            do { return try P256.Signing.PrivateKey(pemRepresentation: trimmed) } catch {
                throw Failure.malformedKey("the PEM block is not an EC P-256 private key")
            }
        }
        guard let raw = Base64URL.decode(trimmed), raw.count == 32 else {
            throw Failure.malformedKey("expected a PEM block or 32 bytes in base64url")
        }
        do { return try P256.Signing.PrivateKey(rawRepresentation: raw) } catch {
            throw Failure.malformedKey("the 32 bytes are not a valid scalar")
        }
    }

    /// The subject must be a `mailto:` address or an `https:` URL; Apple's push service refuses `localhost` and the
    /// special-use `.local` and `.invalid` names, so they are refused here, at start, rather than on every send.
    public static func checkSubject(_ subject: String) throws {
        let lower = subject.lowercased()
        let host: String
        if lower.hasPrefix("mailto:") {
            let address = lower.dropFirst("mailto:".count)
            guard let at = address.lastIndex(of: "@"), at != address.startIndex, address.index(after: at) != address.endIndex else {
                throw Failure.badSubject("not a mailto: address")
            }
            host = String(address[address.index(after: at)...])
        } else if lower.hasPrefix("https://") {
            guard let parsed = URLComponents(string: subject)?.host, !parsed.isEmpty else {
                throw Failure.badSubject("not an https: URL")
            }
            host = parsed.lowercased()
        } else {
            throw Failure.badSubject("expected mailto: or https:// at its start")
        }
        let name = host.hasSuffix(".") ? String(host.dropLast()) : host
        if name == "localhost" || name.hasSuffix(".localhost") || name.hasSuffix(".local") || name.hasSuffix(".invalid") || name == "local"
            || name == "invalid"
        {
            throw Failure.badSubject("it names '\(host)', which push services refuse (use a real address)")
        }
    }

    /// The public key in the form a browser's `applicationServerKey` takes: the uncompressed point, base64url.
    public var publicKeyBase64URL: String { Base64URL.encode(privateKey.publicKey.x963Representation) }

    /// `vapid t=<JWT>, k=<public key>`: the JWT's `aud` is the endpoint's origin, `exp` `lifetime` ahead (at most a
    /// day, RFC 8292 §2), `sub` the subject.
    public func authorization(audience: String, now: Date, lifetime: TimeInterval = 12 * 3600) throws -> String {
        let expiry = Int(now.timeIntervalSince1970) + Int(min(lifetime, 86_400))
        let token = try JWT.es256(
            header: JWTFields(strings: ["typ": "JWT"]), claims: JWTFields(strings: ["aud": audience, "sub": subject], numbers: ["exp": expiry]),
            key: privateKey)
        return "vapid t=\(token), k=\(publicKeyBase64URL)"
    }

    /// An endpoint's origin, the `aud` of its token: `https://host[:port]`; nil for anything but an http(s) URL.
    public static func origin(of endpoint: String) -> String? {
        guard let components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host, !host.isEmpty
        else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost.lowercased())\(port)"
    }

    /// A new key pair: the private key as a PEM block (for the key file) and the public key for the web app.
    public static func generate() -> (privateKeyPEM: String, publicKey: String) {
        let key = P256.Signing.PrivateKey()
        return (key.pemRepresentation, Base64URL.encode(key.publicKey.x963Representation))
    }
}
