import Crypto
import Encodings
import Foundation

/// A provider or access token, with when it was made and when it lapses.
public struct StoredCredential: Sendable, Equatable {
    public let name: String
    public let value: String
    public let issuedAt: Date
    public let expiresAt: Date

    public init(name: String, value: String, issuedAt: Date, expiresAt: Date) {
        self.name = name
        self.value = value
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

/// Where tokens are kept so that every process of one installation uses the same one (APNs refuses a new provider
/// token more often than every 20 minutes): the database, in the daemon.
public protocol CredentialStore: Sendable {
    func load(_ name: String) async throws -> StoredCredential?
    /// Stores `credential` unless another process stored one issued after `unlessNewerThan`; returns what is stored.
    func save(_ credential: StoredCredential, unlessNewerThan: Date?) async throws -> StoredCredential
}

/// A store in memory, for one process (tests, `push test` without a database).
public actor MemoryCredentialStore: CredentialStore {
    var values: [String: StoredCredential] = [:]
    public init() {}
    public func load(_ name: String) -> StoredCredential? { values[name] }
    public func save(_ credential: StoredCredential, unlessNewerThan: Date?) -> StoredCredential {
        if let current = values[credential.name], current.issuedAt > (unlessNewerThan ?? .distantPast) { return current }
        values[credential.name] = credential
        return credential
    }
}

/// A store that keeps each token sealed (AES-GCM) under a key derived from the signing key that made it, so that a
/// copy of the database, or its backups, cannot send as the installation: only a process that holds the key file
/// reads the token back. The name and the token's times are bound to the sealed value, so neither can be swapped.
/// Sealed tokens are kept under their own names (`…/sealed`): a process of an earlier version, during a rolling
/// upgrade or after a rollback, reads its own unsealed token and never sends a sealed one; one that does not open under
/// this key is taken as absent, and replaced.
public struct SealedCredentialStore: CredentialStore {
    public let store: any CredentialStore
    let key: SymmetricKey

    static let prefix = "sealed1:"
    /// What is added to a token's name where it is kept sealed.
    static let suffix = "/sealed"

    /// `secret` is the private key's bytes; `purpose` keeps the keys derived for different services apart.
    public init(store: any CredentialStore, secret: Data, purpose: String) {
        self.store = store
        self.key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), info: Data("dailyverse stored credential: \(purpose)".utf8), outputByteCount: 32)
    }

    public func load(_ name: String) async throws -> StoredCredential? {
        try await store.load(name + Self.suffix).flatMap(open)
    }

    public func save(_ credential: StoredCredential, unlessNewerThan bound: Date?) async throws -> StoredCredential {
        let sealed = try seal(credential)
        let stored = try await store.save(sealed, unlessNewerThan: bound)
        if stored == sealed { return credential }
        if let opened = open(stored) { return opened }
        // What is stored is newer but unreadable under this key: replace it, unless a newer one still came meanwhile.
        let replaced = try await store.save(sealed, unlessNewerThan: stored.issuedAt)
        return replaced == sealed ? credential : open(replaced) ?? credential
    }

    func seal(_ credential: StoredCredential) throws -> StoredCredential {
        let box = try AES.GCM.seal(Data(credential.value.utf8), using: key, authenticating: Self.context(credential))
        guard let combined = box.combined else { throw PushConfigurationError("could not seal a token") }
        return StoredCredential(
            name: credential.name + Self.suffix, value: Self.prefix + Base64URL.encode(combined), issuedAt: credential.issuedAt,
            expiresAt: credential.expiresAt)
    }

    func open(_ stored: StoredCredential) -> StoredCredential? {
        guard stored.name.hasSuffix(Self.suffix), stored.value.hasPrefix(Self.prefix),
            let combined = Base64URL.decode(String(stored.value.dropFirst(Self.prefix.count))),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Self.context(stored)),
            let value = String(bytes: plain, encoding: .utf8)
        else { return nil }
        return StoredCredential(
            name: String(stored.name.dropLast(Self.suffix.count)), value: value, issuedAt: stored.issuedAt, expiresAt: stored.expiresAt)
    }

    /// What the seal vouches for besides the token: its name (as the caller knows it) and its times, to the
    /// millisecond (as stored).
    static func context(_ credential: StoredCredential) -> Data {
        let name = credential.name.hasSuffix(suffix) ? String(credential.name.dropLast(suffix.count)) : credential.name
        let times = [credential.issuedAt, credential.expiresAt].map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded())) }
        return Data(([name] + times).joined(separator: "\n").utf8)
    }
}
