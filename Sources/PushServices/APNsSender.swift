import Crypto
import Encodings
import Foundation
import NIOCore

/// Apple's provider API over HTTP/2 with a token (ES256 JWT from a .p8 key).
public struct APNsSender: Sendable {
    public enum Environment: String, Sendable, CaseIterable {
        case production, sandbox
        public var baseURL: String { self == .production ? "https://api.push.apple.com" : "https://api.sandbox.push.apple.com" }
    }

    public let client: PushClient
    public let baseURL: String
    public let tokens: APNsProviderTokens

    public init(
        client: PushClient, keyID: String, teamID: String, key: P256.Signing.PrivateKey, environment: Environment, baseURL: String? = nil,
        store: any CredentialStore
    ) {
        self.client = client
        self.baseURL = Self.trimmed(baseURL ?? environment.baseURL)
        self.tokens = APNsProviderTokens(keyID: keyID, teamID: teamID, key: key, store: store)
    }

    static func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }

    /// A .p8 file's text: the PKCS #8 PEM block Apple hands out once.
    public static func key(fromP8 text: String) throws -> P256.Signing.PrivateKey {
        do { return try P256.Signing.PrivateKey(pemRepresentation: text.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
            throw PushConfigurationError("not an APNs .p8 key (a PEM block with an EC P-256 private key)")
        }
    }

    /// Sends one notification: the rendered `apns-*` headers as HTTP/2 headers, the payload as the body. A token Apple
    /// calls expired is replaced (at most every 20 minutes) and the request sent once more.
    public func send(deviceToken: String, headers: [(String, String)], payload: ByteBuffer, now: Date) async -> PushOutcome {
        var refused: String? = nil
        for _ in 0..<2 {
            let token: String
            do {
                if let previous = refused {
                    guard let renewed = try await tokens.renew(refused: previous, now: now) else {
                        let wait = await tokens.secondsUntilRenewable(now: now)
                        return .retry(reason: "APNs 403 ExpiredProviderToken (a new token is allowed in \(Int(wait)) s)", after: wait)
                    }
                    token = renewed
                } else {
                    token = try await tokens.token(now: now)
                }
            } catch {
                return .configuration(reason: "APNs provider token: \(error)")
            }
            let answer: ServiceAnswer
            do {
                answer = try await client.send(
                    "\(baseURL)/3/device/\(deviceToken)",
                    headers: headers + [("authorization", "bearer \(token)"), ("content-type", "application/json")], body: payload)
            } catch {
                return .retry(reason: "APNs: \(PushClient.describe(error))", after: nil)
            }
            let outcome = Answers.apns(answer, now: now)
            guard case .renewCredentials(let reason) = outcome else { return outcome }
            // Refused twice: the clock or the key is wrong, not the token's age.
            if refused != nil { return .configuration(reason: reason + " (again with a new token: check the clock and the key)") }
            refused = token
        }
        return .retry(reason: "APNs: no answer", after: nil)
    }
}

/// APNs provider tokens: one per key, reused for 50 minutes, never renewed sooner than 20 minutes after the last (or
/// Apple answers TooManyProviderTokenUpdates), kept in the store so that every process uses the same.
public actor APNsProviderTokens {
    public let keyID: String
    public let teamID: String
    let key: P256.Signing.PrivateKey
    /// The installation's store, tokens sealed; `store.store` is the store as it is, where a process of an earlier
    /// version keeps its token unsealed under `name`.
    let store: SealedCredentialStore
    /// The store's name for this key's token: team, key id and a digest of the public key (a replaced key file
    /// under the same id gets its own token).
    public nonisolated let name: String
    var current: StoredCredential?

    public static let reuse: TimeInterval = 50 * 60
    public static let minimumInterval: TimeInterval = 20 * 60

    init(keyID: String, teamID: String, key: P256.Signing.PrivateKey, store: any CredentialStore) {
        self.keyID = keyID
        self.teamID = teamID
        self.key = key
        // Sealed under the key itself: the database alone cannot send as the installation.
        self.store = SealedCredentialStore(store: store, secret: key.rawRepresentation, purpose: "apns")
        let digest = Hex.encode(SHA256.hash(data: key.publicKey.x963Representation).prefix(6))
        self.name = "apns/\(teamID)/\(keyID)/\(digest)"
    }

    /// The token to send with: this process's, another process's from the store, or a new one.
    public func token(now: Date) async throws -> String {
        if let current, Self.usable(current, now: now) { return current.value }
        let stored = try await loadStored(now: now)
        // Another call of this actor may have made or loaded one while this one waited for the store: use it. (Making
        // another with it as `previous` would replace it, and the service would see two new tokens at once.)
        if let current, Self.usable(current, now: now) { return current.value }
        if let stored, Self.usable(stored, now: now) {
            current = stored
            return stored.value
        }
        return try await make(now: now, previous: stored ?? current)
    }

    /// A new token after Apple refused `refused` as expired; nil when the last was made less than 20 minutes ago.
    public func renew(refused: String, now: Date) async throws -> String? {
        let stored = try await loadStored(now: now)
        // Another call of this actor may have renewed it while this one waited for the store.
        if let current, current.value != refused, Self.usable(current, now: now) { return current.value }
        // Another process may have renewed it already.
        if let stored, stored.value != refused, Self.usable(stored, now: now) {
            current = stored
            return stored.value
        }
        let last = stored ?? current
        if let last, now.timeIntervalSince(last.issuedAt) < Self.minimumInterval, now >= last.issuedAt { return nil }
        return try await make(now: now, previous: last)
    }

    /// The token the installation's processes use: the sealed one, or, while a rolling upgrade runs, the one a process
    /// of an earlier version made and keeps unsealed, when it is the newer. Taking it up keeps the installation at one
    /// token: this process making its own as it starts would be a second within 20 minutes, which Apple refuses
    /// (TooManyProviderTokenUpdates) for 20 minutes. It is used, never stored again: what this process makes is sealed.
    ///
    /// The unsealed token is taken only if it is one this key made: its ES256 signature verifies with the key, its
    /// `kid` and `iss` are this key's and team's, and its age is its own `iat`, not the row's (a row planted by
    /// whoever can write the database is passed over, and cannot hold the next token back).
    func loadStored(now: Date) async throws -> StoredCredential? {
        let sealed = try await store.load(name)
        if let sealed, Self.usable(sealed, now: now) { return sealed }
        guard let unsealed = try await store.store.load(name), let made = made(unsealed.value),
            made.issuedAt > sealed?.issuedAt ?? .distantPast
        else { return sealed }
        return made
    }

    /// `token` as this key made it, with its own issuing time; nil when it is not one of this key's.
    func made(_ token: String) -> StoredCredential? {
        guard let parts = try? JWT.verifyES256(token, key: key.publicKey), parts.header["kid"] as? String == keyID,
            parts.claims["iss"] as? String == teamID, let iat = parts.claims["iat"] as? Int
        else { return nil }
        let issued = Date(timeIntervalSince1970: TimeInterval(iat))
        return StoredCredential(name: name, value: token, issuedAt: issued, expiresAt: issued.addingTimeInterval(3600))
    }

    public func secondsUntilRenewable(now: Date) -> TimeInterval {
        guard let current else { return 0 }
        return max(0, min(Self.minimumInterval, Self.minimumInterval - now.timeIntervalSince(current.issuedAt)))
    }

    /// How old the token in use is, for `status`.
    public func age(now: Date) -> TimeInterval? { current.map { now.timeIntervalSince($0.issuedAt) } }

    static func usable(_ credential: StoredCredential, now: Date) -> Bool {
        // A token from a clock ahead of ours is not trusted either.
        credential.issuedAt <= now.addingTimeInterval(60) && now.timeIntervalSince(credential.issuedAt) < reuse
    }

    func make(now: Date, previous: StoredCredential?) async throws -> String {
        let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let jwt = try JWT.es256(
            header: JWTFields(strings: ["kid": keyID]),
            claims: JWTFields(strings: ["iss": teamID], numbers: ["iat": Int(issued.timeIntervalSince1970)]),
            key: key)
        let stored = try await store.save(
            StoredCredential(name: name, value: jwt, issuedAt: issued, expiresAt: issued.addingTimeInterval(3600)),
            unlessNewerThan: previous?.issuedAt)
        current = stored
        return stored.value
    }
}
