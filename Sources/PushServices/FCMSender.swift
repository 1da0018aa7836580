import CryptoExtras
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

    public init(client: PushClient, account: ServiceAccount, baseURL: String? = nil, tokenURI: String? = nil) {
        self.client = client
        self.account = account
        self.baseURL = APNsSender.trimmed(baseURL ?? Self.defaultBaseURL)
        self.tokens = FCMAccessTokens(client: client, account: account, tokenURI: tokenURI ?? account.tokenURI)
    }

    /// Sends one rendered `{"message": …}`; a 401 gets a new access token and one more try.
    public func send(message: ByteBuffer, now: Date) async -> PushOutcome {
        var refused = false
        for _ in 0..<2 {
            let token: String
            do { token = try await tokens.token(now: now, forceNew: refused) } catch let failure as FCMAccessTokens.Failure {
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
            if refused { return .configuration(reason: reason + " (again with a new access token)") }
            refused = true
        }
        return .retry(reason: "FCM: no answer", after: nil)
    }
}

/// The OAuth 2 access token: an RS256 assertion exchanged at the token URI, kept until five minutes before it
/// lapses; one exchange at a time.
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
    var current: StoredCredential?
    var exchange: Task<StoredCredential, any Error>?
    public private(set) var exchanges = 0

    init(client: PushClient, account: ServiceAccount, tokenURI: String) {
        self.client = client
        self.account = account
        self.tokenURI = tokenURI
    }

    public func age(now: Date) -> TimeInterval? { current.map { now.timeIntervalSince($0.issuedAt) } }

    public func token(now: Date, forceNew: Bool = false) async throws -> String {
        if !forceNew, let current, now < current.expiresAt.addingTimeInterval(-300) { return current.value }
        if forceNew { current = nil }
        if let exchange { return try await exchange.value.value }
        let task = Task { try await self.exchangeAssertion(now: now) }
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
            name: "fcm/\(account.clientEmail)", value: token, issuedAt: now, expiresAt: now.addingTimeInterval(TimeInterval(lifetime)))
    }
}
