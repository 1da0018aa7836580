import Foundation
import PostgresNIO
import PushServices
import Storage

/// The push services' state every process shares on PostgreSQL: the provider tokens (APNs allows a new one every 20
/// minutes at most, so all processes use the one stored first) and the pauses `status` shows.
extension PostgresStore: SharedPauseStore {
    public func activePauses(now: Date) async throws -> [String: (reason: String, until: Date)] {
        var pauses: [String: (reason: String, until: Date)] = [:]
        for row in try await rows("SELECT platform, reason, until FROM push_pause WHERE until > \(now.timeIntervalSince1970)") {
            let (platform, reason, until) = try row.decode((String, String, Double).self)
            pauses[platform] = (reason, Date(timeIntervalSince1970: until))
        }
        return pauses
    }

    public func savePause(platform: String, reason: String, since: Date, until: Date) async throws {
        try await rows(
            """
            INSERT INTO push_pause (platform, reason, since, until) VALUES (\(platform), \(reason), \(since.timeIntervalSince1970), \(until.timeIntervalSince1970))
            ON CONFLICT (platform) DO UPDATE SET reason = excluded.reason, until = excluded.until
            """)
    }

    public func clearPause(platform: String) async throws {
        try await rows("DELETE FROM push_pause WHERE platform = \(platform)")
    }
}

/// Provider tokens in PostgreSQL, shared by every process of an installation.
public struct PostgresCredentialStore: CredentialStore {
    public let store: PostgresStore

    public init(store: PostgresStore) { self.store = store }

    public func load(_ name: String) async throws -> StoredCredential? {
        try await store.rows("SELECT name, value, issued_at, expires_at FROM push_credential WHERE name = \(name)").first.map(
            Self.credential)
    }

    /// One statement decides: the token is stored unless the stored one was issued after `bound` (another process
    /// made one since we looked), and then the stored one is what both use.
    public func save(_ credential: StoredCredential, unlessNewerThan bound: Date?) async throws -> StoredCredential {
        let limit = (bound ?? .distantPast).timeIntervalSince1970
        let stored = try await store.rows(
            """
            INSERT INTO push_credential (name, value, issued_at, expires_at)
            VALUES (\(credential.name), \(credential.value), \(credential.issuedAt.timeIntervalSince1970), \(credential.expiresAt.timeIntervalSince1970))
            ON CONFLICT (name) DO UPDATE SET value = excluded.value, issued_at = excluded.issued_at, expires_at = excluded.expires_at
                WHERE push_credential.issued_at <= \(limit)
            RETURNING 1
            """
        ).count
        if stored > 0 { return credential }
        return try await load(credential.name) ?? credential
    }

    static func credential(_ row: PostgresRow) throws -> StoredCredential {
        let (name, value, issued, expires) = try row.decode((String, String, Double, Double).self)
        return StoredCredential(
            name: name, value: value, issuedAt: Date(timeIntervalSince1970: issued), expiresAt: Date(timeIntervalSince1970: expires))
    }
}
