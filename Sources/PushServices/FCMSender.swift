import Crypto
import CryptoExtras
import Encodings
import Foundation
import NIOCore

/// A Google service account, from the JSON file the Firebase console hands out.
public struct ServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    public let privateKey: _RSA.Signing.PrivateKey
    public let tokenURI: String

    public init(projectID: String, clientEmail: String, privateKey: _RSA.Signing.PrivateKey, tokenURI: String) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKey = privateKey
        self.tokenURI = tokenURI
    }

    /// Reads `project_id`, `client_email`, `private_key` and `token_uri`; the first that is missing or malformed is
    /// named (never the key's content).
    public static func parse(_ data: Data) throws -> ServiceAccount {
        guard data.count <= 64 * 1024, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw PushConfigurationError("not a service-account JSON object")
        }
        func field(_ key: String) throws -> String {
            guard let value = object[key] as? String, !value.isEmpty else {
                throw PushConfigurationError("missing \(key) in the service-account file")
            }
            return value
        }
        if let type = object["type"] as? String, type != "service_account" {
            throw PushConfigurationError("the file's type is '\(Answers.clean(type))', not service_account")
        }
        let project = try field("project_id")
        guard project.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ":" || $0 == ".") }) else {
            throw PushConfigurationError("project_id '\(Answers.clean(project))' is not a Firebase project id")
        }
        let email = try field("client_email")
        let pem = try field("private_key")
        let key: _RSA.Signing.PrivateKey
        do { key = try _RSA.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw PushConfigurationError("private_key in the service-account file is not an RSA private key of 2048 bits or more")
        }
        let tokenURI = (object["token_uri"] as? String) ?? "https://oauth2.googleapis.com/token"
        guard let scheme = URLComponents(string: tokenURI)?.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            throw PushConfigurationError("token_uri '\(Answers.clean(tokenURI))' is not an https URL")
        }
        return ServiceAccount(projectID: project, clientEmail: email, privateKey: key, tokenURI: tokenURI)
    }
}

/// Firebase Cloud Messaging's HTTP v1 API, with an OAuth 2 access token from the service account.
public struct FCMSender: Sendable {
    public static let defaultBaseURL = "https://fcm.googleapis.com"
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    public let client: PushClient
    public let account: ServiceAccount
    public let baseURL: String
    public let tokens: FCMAccessTokens

    /// `store` keeps the access token, so that every process of the installation uses the same one.
    public init(client: PushClient, account: ServiceAccount, baseURL: String? = nil, tokenURI: String? = nil, store: any CredentialStore) {
        self.client = client
        self.account = account
        self.baseURL = APNsSender.trimmed(baseURL ?? Self.defaultBaseURL)
        self.tokens = FCMAccessTokens(client: client, account: account, tokenURI: tokenURI ?? account.tokenURI, store: store)
    }

    /// Sends one rendered `{"message": …}`; a 401 gets a new access token (unless another request or process got one
    /// since this one was refused) and one more try.
    public func send(message: ByteBuffer, now: Date) async -> PushOutcome {
        var refused: String? = nil
        for _ in 0..<2 {
            let token: String
            do {
                if let refused { token = try await tokens.renew(refused: refused, now: now) } else { token = try await tokens.token(now: now) }
            } catch let failure as FCMAccessTokens.Failure {
                switch failure {
                case .configuration(let reason): return .configuration(reason: reason)
                case .transient(let reason): return .retry(reason: reason, after: nil)
                }
            } catch {
                return .retry(reason: "FCM token: \(PushClient.describe(error))", after: nil)
            }
            let answer: ServiceAnswer
            do {
                answer = try await client.send(
                    "\(baseURL)/v1/projects/\(account.projectID)/messages:send",
                    headers: [("authorization", "Bearer \(token)"), ("content-type", "application/json; charset=utf-8")], body: message)
            } catch {
                return .retry(reason: "FCM: \(PushClient.describe(error))", after: nil)
            }
            let outcome = Answers.fcm(answer, now: now)
            guard case .renewCredentials(let reason) = outcome else { return outcome }
            if refused != nil { return .configuration(reason: reason + " (again with a new access token)") }
            refused = token
        }
        return .retry(reason: "FCM: no answer", after: nil)
    }
}

/// The OAuth 2 access token: an RS256 assertion exchanged at the token URI, kept until five minutes before it
/// lapses, in the store every process of the installation shares (sealed under the service account's key); one
/// exchange at a time in a process.
public actor FCMAccessTokens {
    public enum Failure: Error, CustomStringConvertible {
        case configuration(String)
        case transient(String)
        public var description: String {
            switch self {
            case .configuration(let text), .transient(let text): return text
            }
        }
    }

    let client: PushClient
    let account: ServiceAccount
    let tokenURI: String
    let store: any CredentialStore
    /// The store's name for the token: the account and a digest of its public key (a replaced key gets its own).
    public nonisolated let name: String
    var current: StoredCredential?
    var exchange: Task<StoredCredential, any Error>?
    /// Tokens FCM refused lately, never taken from the store again (another process may not have replaced it yet).
    var refused: [String] = []
    public private(set) var exchanges = 0

    init(client: PushClient, account: ServiceAccount, tokenURI: String, store: any CredentialStore) {
        self.client = client
        self.account = account
        self.tokenURI = tokenURI
        self.store = SealedCredentialStore(store: store, secret: account.privateKey.derRepresentation, purpose: "fcm")
        let digest = Hex.encode(SHA256.hash(data: account.privateKey.publicKey.derRepresentation).prefix(6))
        self.name = "fcm/\(account.clientEmail)/\(digest)"
    }

    public func age(now: Date) -> TimeInterval? { current.map { now.timeIntervalSince($0.issuedAt) } }

    /// The token to send with: this process's, another process's from the store, or a new one.
    public func token(now: Date) async throws -> String {
        if let current, Self.usable(current, now: now) { return current.value }
        let stored = try await loadStored()
        // Another call may have got one while this one waited for the store.
        if let current, Self.usable(current, now: now) { return current.value }
        if let stored, Self.usable(stored, now: now), !refused.contains(stored.value) {
            current = stored
            return stored.value
        }
        return try await exchanged(now: now, previous: stored ?? current)
    }

    /// A token after FCM refused `refused`: the one another request or process got since, or else a new one. A burst
    /// of requests refused together makes one exchange, not one each.
    public func renew(refused: String, now: Date) async throws -> String {
        // The refused token is not used again, here or by a request that comes after.
        if current?.value == refused { current = nil }
        if !self.refused.contains(refused) { self.refused = Array((self.refused + [refused]).suffix(8)) }
        if let current, Self.usable(current, now: now) { return current.value }
        let stored = try await loadStored()
        if let current, current.value != refused, Self.usable(current, now: now) { return current.value }
        if let stored, !self.refused.contains(stored.value), Self.usable(stored, now: now) {
            current = stored
            return stored.value
        }
        // An exchange already under way (begun before the refusal) may bring back the refused token, stored by another
        // process: then one more, past it.
        let renewed = try await exchanged(now: now, previous: stored ?? current)
        if renewed != refused { return renewed }
        if current?.value == refused { current = nil }
        return try await exchanged(now: now, previous: try await loadStored(), joining: false)
    }

    func loadStored() async throws -> StoredCredential? {
        do { return try await store.load(name) } catch { throw Failure.transient("FCM token store: \(error)") }
    }

    /// Kept until five minutes before it lapses; one from a clock ahead of ours is not trusted.
    static func usable(_ credential: StoredCredential, now: Date) -> Bool {
        now < credential.expiresAt.addingTimeInterval(-300) && credential.issuedAt <= now.addingTimeInterval(60)
    }

    /// One exchange at a time: a call that comes while one runs waits for its token. The token is stored unless another
    /// process stored one after `previous`, and then that one is used.
    /// `joining`: an exchange already under way gives its token (false: one of its own, past a token just refused).
    func exchanged(now: Date, previous: StoredCredential?, joining: Bool = true) async throws -> String {
        if joining, let exchange { return try await exchange.value.value }
        let task = Task { () -> StoredCredential in
            let fresh = try await self.exchangeAssertion(now: now)
            do { return try await self.store.save(fresh, unlessNewerThan: previous?.issuedAt) } catch { return fresh }
        }
        exchange = task
        defer { exchange = nil }
        let fresh = try await task.value
        current = fresh
        return fresh.value
    }

    /// The signed assertion: `iss` the client email, `scope` FCM's, `aud` the token URI, an hour at most.
    public nonisolated func assertion(now: Date) throws -> String {
        let iat = Int(now.timeIntervalSince1970)
        return try JWT.rs256(
            header: JWTFields(strings: ["typ": "JWT"]),
            claims: JWTFields(
                strings: ["iss": account.clientEmail, "scope": FCMSender.scope, "aud": account.tokenURI], numbers: ["iat": iat, "exp": iat + 3600]),
            key: account.privateKey)
    }

    func exchangeAssertion(now: Date) async throws -> StoredCredential {
        exchanges += 1
        let jwt: String
        do { jwt = try assertion(now: now) } catch { throw Failure.configuration("FCM service account: \(error)") }
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(jwt)"
        let answer: ServiceAnswer
        do {
            answer = try await client.send(
                tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")], body: ByteBuffer(string: form))
        } catch {
            throw Failure.transient("FCM token: \(PushClient.describe(error))")
        }
        let json = answer.json
        guard (200..<300).contains(answer.status) else {
            let reason = (json?["error"] as? String).map(Answers.clean) ?? "HTTP \(answer.status)"
            // invalid_grant (a revoked key, a clock far off) and invalid_client need the operator; 5xx and 429 pass.
            if answer.status == 429 || answer.status >= 500 { throw Failure.transient("FCM token endpoint \(answer.status) \(reason)") }
            throw Failure.configuration("FCM token endpoint \(answer.status) \(reason)")
        }
        guard let token = json?["access_token"] as? String, !token.isEmpty else {
            throw Failure.transient("FCM token endpoint answered without an access_token")
        }
        let lifetime = min(max((json?["expires_in"] as? Int) ?? 3600, 60), 86_400)
        return StoredCredential(
            name: name, value: token, issuedAt: now, expiresAt: now.addingTimeInterval(TimeInterval(lifetime)))
    }
}
