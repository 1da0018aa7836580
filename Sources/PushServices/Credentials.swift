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
