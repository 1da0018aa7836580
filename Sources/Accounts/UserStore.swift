import Foundation
import GRDB
import Storage

/// A user as the API shows it.
public struct User: Hashable, Sendable, Codable {
    public enum Mode: String, Hashable, Sendable, Codable { case guest, account }
    public let id: String
    public let mode: Mode
    public let email: String?
    public let displayName: String?

    enum CodingKeys: String, CodingKey { case id, mode, email, displayName = "display_name" }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(mode, forKey: .mode)
        try container.encodeIfPresent(email, forKey: .email)
        try container.encodeIfPresent(displayName, forKey: .displayName)
    }
}

extension User {
    /// A user as either store's row holds it: the mode as text, a value it no longer names read as a guest.
    init(id: String, storedMode: String, email: String?, displayName: String?) {
        self.init(id: id, mode: Mode(rawValue: storedMode) ?? .guest, email: email, displayName: displayName)
    }
}

public enum SignInError: Error, Equatable, Sendable {
    /// The same answer for an unknown email and a wrong password.
    case invalidCredentials
    case emailTaken
    case notAGuest
}

extension AppDatabase {
    static func user(_ row: Row) -> User {
        User(id: row["id"], storedMode: row["mode"], email: row["email"], displayName: row["display_name"])
    }

    /// Removes the guests not seen since `cutoff`, with everything that is theirs (sessions, onboarding, hints,
    /// bookmarks, settings, devices: the foreign keys cascade). Accounts are never purged. How many went.
    @discardableResult
    public func purgeGuests(inactiveBefore cutoff: Date) throws -> Int {
        try write { db in
            try db.execute(sql: "DELETE FROM user WHERE mode = 'guest' AND last_active_at < ?", arguments: [cutoff.timeIntervalSince1970])
            return db.changesCount
        }
    }

    /// A new guest and its first token.
    public func createGuest(now: Date) throws -> (User, token: String) {
        try write { db in
            let id = UUID().uuidString.lowercased()
            try db.execute(
                sql: "INSERT INTO user (id, mode, created_at, last_active_at) VALUES (?, 'guest', ?, ?)",
                arguments: [id, now.timeIntervalSince1970, now.timeIntervalSince1970])
            let token = try Self.openSession(db, userID: id, now: now)
            return (User(id: id, mode: .guest, email: nil, displayName: nil), token)
        }
    }

    /// A new account, or — when `upgrading` names a guest — that guest turned into an account in place: same id,
    /// everything it has kept.
    public func createAccount(
        email: String, passwordHash: String, displayName: String?, upgrading guest: String?, now: Date
    ) throws -> (User, token: String) {
        try write { db in try Self.createAccount(db, email: email, passwordHash: passwordHash, displayName: displayName, upgrading: guest, now: now) }
    }

    /// `createAccount` in `db`'s transaction, for a caller that writes more in it.
    public static func createAccount(
        _ db: Database, email: String, passwordHash: String, displayName: String?, upgrading guest: String?, now: Date
    ) throws -> (User, token: String) {
        // Taken when another account has this email, or one that reads the same (`Email.key`).
        let key = Email.key(email)
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ? OR email_key = ?", arguments: [email, key]) == true {
            throw SignInError.emailTaken
        }
        let id: String
        if let guest {
            guard try String.fetchOne(db, sql: "SELECT mode FROM user WHERE id = ?", arguments: [guest]) == "guest" else {
                throw SignInError.notAGuest
            }
            id = guest
            try db.execute(
                sql: """
                    UPDATE user SET mode = 'account', email = ?, email_key = ?, password_hash = ?, display_name = ?, last_active_at = ?
                    WHERE id = ?
                    """,
                arguments: [email, key, passwordHash, displayName, now.timeIntervalSince1970, id])
        } else {
            id = UUID().uuidString.lowercased()
            try db.execute(
                sql: """
                    INSERT INTO user (id, mode, email, email_key, password_hash, display_name, created_at, last_active_at)
                    VALUES (?, 'account', ?, ?, ?, ?, ?, ?)
                    """, arguments: [id, email, key, passwordHash, displayName, now.timeIntervalSince1970, now.timeIntervalSince1970])
        }
        let token = try Self.openSession(db, userID: id, now: now)
        return (User(id: id, mode: .account, email: email, displayName: displayName), token)
    }

    /// The stored password hash of an account, to verify outside any transaction (hashing is slow).
    public func passwordHash(email: String) throws -> (userID: String, hash: String)? { try passwordHash(emails: [email]) }

    /// The account stored under the first of these spellings that one is (`Email.signInForms`), else the one
    /// account whose email reads the same as the first (`Email.key`: typed with fullwidth letters, say).
    public func passwordHash(emails: [String]) throws -> (userID: String, hash: String)? {
        try read { db in
            for email in emails {
                let row = try Row.fetchOne(db, sql: "SELECT id, password_hash FROM user WHERE email = ? AND mode = 'account'", arguments: [email])
                if let row, let hash = row["password_hash"] as String? { return (row["id"] as String, hash) }
            }
            guard let first = emails.first else { return nil }
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, password_hash FROM user WHERE email_key = ? AND mode = 'account' LIMIT 2", arguments: [Email.key(first)])
            guard rows.count == 1, let hash = rows[0]["password_hash"] as String? else { return nil }
            return (rows[0]["id"] as String, hash)
        }
    }

    public func openSession(userID: String, now: Date) throws -> (User, token: String) {
        try write { db in try Self.openUserSession(db, userID: userID, now: now) }
    }

    /// `openSession`, inside the caller's transaction: the user and a new session's token.
    public static func openUserSession(_ db: Database, userID: String, now: Date) throws -> (User, token: String) {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM user WHERE id = ?", arguments: [userID]) else {
            throw SignInError.invalidCredentials
        }
        try db.execute(sql: "UPDATE user SET last_active_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, userID])
        return (Self.user(row), try Self.openSession(db, userID: userID, now: now))
    }

    static func openSession(_ db: Database, userID: String, now: Date) throws -> String {
        let (token, hash) = SessionToken.generate()
        try db.execute(
            sql: "INSERT INTO session (token_hash, user_id, created_at, last_used_at) VALUES (?, ?, ?, ?)",
            arguments: [hash, userID, now.timeIntervalSince1970, now.timeIntervalSince1970])
        // The user's other sessions past `maximumSessions` with this one, least recently used first, are signed out
        // (never this one: a session stamped by a clock that ran ahead would rank above it).
        try db.execute(
            sql: """
                DELETE FROM session WHERE user_id = ? AND token_hash <> ? AND token_hash NOT IN (
                    SELECT token_hash FROM session WHERE user_id = ? AND token_hash <> ? ORDER BY last_used_at DESC, created_at DESC LIMIT ?)
                """, arguments: [userID, hash, userID, hash, maximumSessions - 1])
        return token
    }

    /// The user a bearer token belongs to; nil for a malformed, unknown or revoked token.
    ///
    /// A read; the session's and the user's last-used times are written only when they are more than a minute old,
    /// so an active client does not turn every request into a write.
    /// The user a bearer token signs in, unless the token is unknown, signed out or expired by `policy`.
    public func authenticate(token: String, now: Date, policy: SessionPolicy = SessionPolicy()) throws -> User? {
        guard SessionToken.isWellFormed(token) else { return nil }
        let hash = SessionToken.hash(token)
        let found = try read { db in
            try Row.fetchOne(
                db,
                sql:
                    "SELECT u.*, s.token_hash, s.last_used_at, s.created_at AS session_created_at FROM session s JOIN user u ON u.id = s.user_id WHERE s.token_hash = ?",
                arguments: [hash])
        }
        guard let row = found, SessionToken.matches(token, storedHash: row["token_hash"]) else { return nil }
        let user = Self.user(row)
        guard
            !policy.isExpired(
                mode: user.mode, createdAt: Date(timeIntervalSince1970: row["session_created_at"]),
                lastUsedAt: Date(timeIntervalSince1970: row["last_used_at"]), now: now)
        else { return nil }
        if now.timeIntervalSince1970 - (row["last_used_at"] as Double) > 60 {
            try write { db in
                try db.execute(sql: "UPDATE session SET last_used_at = ? WHERE token_hash = ?", arguments: [now.timeIntervalSince1970, hash])
                try db.execute(sql: "UPDATE user SET last_active_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, row["id"] as String])
            }
        }
        return Self.user(row)
    }

    /// Removes the sessions `policy` has expired, a batch at a time; how many went.
    @discardableResult
    public func purgeExpiredSessions(now: Date, policy: SessionPolicy) throws -> Int {
        try deleteInChunks(
            sql: """
                DELETE FROM session WHERE token_hash IN (
                    SELECT s.token_hash FROM session s JOIN user u ON u.id = s.user_id
                    WHERE s.last_used_at < ? OR (u.mode = 'account' AND s.created_at < ?) LIMIT ?)
                """, arguments: [now.timeIntervalSince1970 - policy.idle, now.timeIntervalSince1970 - policy.lifetime])
    }

    public func closeSession(token: String) throws {
        try write { db in try db.execute(sql: "DELETE FROM session WHERE token_hash = ?", arguments: [SessionToken.hash(token)]) }
    }
}

/// When a bearer token stops working: unused for `idle` (any session), or older than `lifetime` (an account's: a
/// guest has no password to sign in again with, so its token lasts as long as the guest, whom `guest_retention`
/// purges when inactive). Expired sessions answer 401 as signed-out ones do, and are removed hourly.
public struct SessionPolicy: Sendable, Equatable {
    public var idle: TimeInterval
    public var lifetime: TimeInterval

    public init(idle: TimeInterval = 90 * 86_400, lifetime: TimeInterval = 365 * 86_400) {
        self.idle = idle
        self.lifetime = lifetime
    }

    public func isExpired(mode: User.Mode, createdAt: Date, lastUsedAt: Date, now: Date) -> Bool {
        now.timeIntervalSince(lastUsedAt) > idle || (mode == .account && now.timeIntervalSince(createdAt) > lifetime)
    }
}

extension PostgresStore {
    /// As `AppDatabase.purgeGuests`, in chunks; nil when another process is purging.
    public func purgeGuests(inactiveBefore cutoff: Date, chunk: Int = 10_000) async throws -> Int? {
        try await deleteInChunks(
            job: "guest purge", from: #""user""#, key: "id", where: "mode = 'guest' AND last_active_at < $1",
            arguments: [cutoff.timeIntervalSince1970], chunk: chunk)
    }

    /// As `AppDatabase.purgeExpiredSessions`; nil when another process is removing them.
    public func purgeExpiredSessions(now: Date, policy: SessionPolicy, chunk: Int = 10_000) async throws -> Int? {
        try await deleteInChunks(
            job: "session expiry", from: "session", key: "token_hash",
            where: #"last_used_at < $1 OR (created_at < $2 AND user_id IN (SELECT id FROM "user" WHERE mode = 'account'))"#,
            arguments: [now.timeIntervalSince1970 - policy.idle, now.timeIntervalSince1970 - policy.lifetime], chunk: chunk)
    }
}
