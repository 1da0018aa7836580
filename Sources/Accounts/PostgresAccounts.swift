import Foundation
import PostgresNIO
import Storage

/// Users, sessions, settings and bookmarks on PostgreSQL: the queries of `UserStore.swift` and `UserData.swift` in
/// PostgreSQL's words, each run inside the caller's transaction. Where SQLite's one writer made a check and the write
/// it allows one step, a lock does here: the user's row (`lockUser`) for what one user changes, a named advisory lock
/// for what spans users (an email being taken).
extension PostgresTransaction {
    static func user(_ row: PostgresRow) throws -> User {
        let (id, mode, email, name) = try row.decode((String, String, String?, String?).self)
        return User(id: id, storedMode: mode, email: email, displayName: name)
    }

    /// Locks a user's row until the transaction ends, so that one user's changes (their devices, settings, hints)
    /// happen one after another whichever process takes them; false when there is no such user.
    public func lockUser(_ id: String) async throws -> Bool {
        try await value("SELECT 1 FROM \"user\" WHERE id = \(id) FOR UPDATE", as: Int32.self) != nil
    }

    public func createGuest(now: Date) async throws -> (User, token: String) {
        let id = UUID().uuidString.lowercased()
        let at = now.timeIntervalSince1970
        try await rows("INSERT INTO \"user\" (id, mode, created_at, last_active_at) VALUES (\(id), 'guest', \(at), \(at))")
        return (User(id: id, mode: .guest, email: nil, displayName: nil), try await insertSession(userID: id, now: now))
    }

    public func createAccount(
        email: String, passwordHash: String, displayName: String?, upgrading guest: String?, now: Date
    ) async throws -> (User, token: String) {
        let key = Email.key(email)
        // Two sign-ups with emails that read the same wait for each other here; the second finds the first's.
        try await lock("email " + key)
        if try await value("SELECT 1 FROM \"user\" WHERE email = \(email) OR email_key = \(key)", as: Int32.self) != nil {
            throw SignInError.emailTaken
        }
        let at = now.timeIntervalSince1970
        let id: String
        if let guest {
            guard try await value("SELECT mode FROM \"user\" WHERE id = \(guest) FOR UPDATE", as: String.self) == "guest" else {
                throw SignInError.notAGuest
            }
            id = guest
            try await rows(
                """
                UPDATE "user" SET mode = 'account', email = \(email), email_key = \(key), password_hash = \(passwordHash),
                    display_name = \(displayName), last_active_at = \(at)
                WHERE id = \(id)
                """)
        } else {
            id = UUID().uuidString.lowercased()
            try await rows(
                """
                INSERT INTO "user" (id, mode, email, email_key, password_hash, display_name, created_at, last_active_at)
                VALUES (\(id), 'account', \(email), \(key), \(passwordHash), \(displayName), \(at), \(at))
                """)
        }
        return (User(id: id, mode: .account, email: email, displayName: displayName), try await insertSession(userID: id, now: now))
    }

    /// As `AppDatabase.passwordHash(emails:)`.
    public func passwordHash(emails: [String]) async throws -> (userID: String, hash: String)? {
        for email in emails {
            let row = try await rows("SELECT id, password_hash FROM \"user\" WHERE email = \(email) AND mode = 'account'").first
            if let (id, hash) = try row?.decode((String, String?).self), let hash { return (id, hash) }
        }
        guard let first = emails.first else { return nil }
        let found = try await rows("SELECT id, password_hash FROM \"user\" WHERE email_key = \(Email.key(first)) AND mode = 'account' LIMIT 2")
        guard found.count == 1, case let (id, hash?) = try found[0].decode((String, String?).self) else { return nil }
        return (id, hash)
    }

    public func openSession(userID: String, now: Date) async throws -> (User, token: String) {
        // The user's row locked first: sessions opened at once for one user are kept to `maximumSessions` one after
        // the other (each trims the others it sees), as SQLite's one writer keeps them.
        guard let row = try await rows("SELECT id, mode, email, display_name FROM \"user\" WHERE id = \(userID) FOR UPDATE").first else {
            throw SignInError.invalidCredentials
        }
        try await rows("UPDATE \"user\" SET last_active_at = \(now.timeIntervalSince1970) WHERE id = \(userID)")
        return (try Self.user(row), try await insertSession(userID: userID, now: now))
    }

    func insertSession(userID: String, now: Date) async throws -> String {
        let (token, hash) = SessionToken.generate()
        let at = now.timeIntervalSince1970
        try await rows("INSERT INTO session (token_hash, user_id, created_at, last_used_at) VALUES (\(hash), \(userID), \(at), \(at))")
        try await rows(
            """
            DELETE FROM session WHERE user_id = \(userID) AND token_hash <> \(hash) AND token_hash NOT IN (
                SELECT token_hash FROM session WHERE user_id = \(userID) AND token_hash <> \(hash)
                ORDER BY last_used_at DESC, created_at DESC LIMIT \(maximumSessions - 1))
            """)
        return token
    }

    /// As `AppDatabase.authenticate`: the last-used times written only when more than a minute old.
    public func authenticate(token: String, now: Date, policy: SessionPolicy) async throws -> User? {
        guard SessionToken.isWellFormed(token) else { return nil }
        let hash = SessionToken.hash(token)
        guard let (id, mode, email, name, stored, lastUsed, created) = try await session(hash: hash), SessionToken.matches(token, storedHash: stored)
        else { return nil }
        let user = User(id: id, storedMode: mode, email: email, displayName: name)
        let expired = policy.isExpired(
            mode: user.mode, createdAt: Date(timeIntervalSince1970: created), lastUsedAt: Date(timeIntervalSince1970: lastUsed), now: now)
        guard !expired else { return nil }
        let at = now.timeIntervalSince1970
        if at - lastUsed > 60 {
            try await rows("UPDATE session SET last_used_at = \(at) WHERE token_hash = \(hash)")
            try await rows("UPDATE \"user\" SET last_active_at = \(at) WHERE id = \(user.id)")
        }
        return user
    }

    /// The session with this hash and its user: by the prepared statement, or, when preparing it failed on this
    /// connection, by the same query unprepared. postgres-nio remembers a failed preparation for the life of the
    /// connection and answers every later use with that error, so one failure (a lock timeout during a migration, a
    /// cancelled statement, a name already taken behind a pooler) would otherwise refuse every bearer token that
    /// connection serves until it closes. A connection lost is not retried here: the request answers 503.
    func session(hash: String) async throws -> SessionLookup.Row? {
        do {
            return try await execute(SessionLookup(hash: hash)).last
        } catch {
            guard !PostgresStore.isUnavailable(error) else { throw error }
            return try await rows(PostgresQuery(unsafeSQL: SessionLookup.sql, binds: SessionLookup(hash: hash).makeBindings())).first?.decode(
                SessionLookup.Row.self)
        }
    }

    public func closeSession(token: String) async throws {
        try await rows("DELETE FROM session WHERE token_hash = \(SessionToken.hash(token))")
    }

    // MARK: - Settings and bookmarks

    public func settings(userID: String) async throws -> UserSettings { try await storedSettings(userID: userID) ?? UserSettings() }

    public func storedSettings(userID: String) async throws -> UserSettings? {
        guard
            let row = try await rows(
                """
                SELECT reminder_time, timezone, calendar, adjustment, display_theme, notifications, locale FROM settings
                WHERE user_id = \(userID)
                """
            ).first
        else { return nil }
        let (time, zone, calendar, adjustment, theme, notifications, locale) = try row.decode((String, String, String, Int, String, Int, String).self)
        return UserSettings(
            storedTime: time, timezone: zone, calendar: calendar, adjustment: adjustment, displayTheme: theme, notifications: notifications != 0,
            locale: locale)
    }

    /// As `AppDatabase.updateSettings`; the caller holds the user's lock.
    public func updateSettings(userID: String, now: Date, _ change: (inout UserSettings) throws -> Void) async throws -> UserSettings {
        var settings = try await settings(userID: userID)
        try change(&settings)
        let (time, calendar, adjustment, locale) = settings.storedColumns
        try await rows(
            """
            INSERT INTO settings (user_id, reminder_time, timezone, calendar, adjustment, display_theme, notifications, locale, updated_at)
            VALUES (\(userID), \(time), \(settings.timezone), \(calendar), \(adjustment),
                \(settings.displayTheme), \(settings.notifications ? 1 : 0), \(locale), \(now.timeIntervalSince1970))
            ON CONFLICT (user_id) DO UPDATE SET reminder_time = excluded.reminder_time, timezone = excluded.timezone,
                calendar = excluded.calendar, adjustment = excluded.adjustment, display_theme = excluded.display_theme,
                notifications = excluded.notifications, locale = excluded.locale, updated_at = excluded.updated_at
            """)
        return settings
    }

    public func bookmarks(userID: String) async throws -> [Bookmark] {
        try await rows("SELECT verse_key, created_at FROM bookmark WHERE user_id = \(userID) ORDER BY created_at, verse_key").map { row in
            let (key, at) = try row.decode((String, Double).self)
            return Bookmark(verseKey: key, createdAt: at)
        }
    }

    /// As SQLite's: a new bookmark past `maximumBookmarks` is refused. Run with the user locked, so that bookmarks
    /// added at once cannot each count the others out.
    public func addBookmark(userID: String, verseKey: String, now: Date) async throws -> Bool {
        let added =
            try await changes(
                """
                INSERT INTO bookmark (user_id, verse_key, created_at) VALUES (\(userID), \(verseKey), \(now.timeIntervalSince1970))
                ON CONFLICT DO NOTHING RETURNING 1
                """) > 0
        guard added else { return false }
        if try await value("SELECT count(*) FROM bookmark WHERE user_id = \(userID)", as: Int.self) ?? 0 > maximumBookmarks {
            throw BookmarkError.tooMany(maximumBookmarks)
        }
        return true
    }

    public func removeBookmark(userID: String, verseKey: String) async throws -> Bool {
        try await changes("DELETE FROM bookmark WHERE user_id = \(userID) AND verse_key = \(verseKey) RETURNING 1") > 0
    }

    // MARK: - A guest merged into an account

    public func isGuest(userID: String) async throws -> Bool {
        try await value("SELECT mode FROM \"user\" WHERE id = \(userID)", as: String.self) == "guest"
    }

    /// As SQLite's: refused when the account and the guest together would have more than `maximumBookmarks`.
    public func mergeGuestBookmarks(from guestID: String, into accountID: String) async throws {
        if let row = try await rows(
            """
            SELECT (SELECT count(*) FROM bookmark WHERE user_id = \(accountID)),
                (SELECT count(*) FROM bookmark g WHERE g.user_id = \(guestID)
                    AND NOT EXISTS (SELECT 1 FROM bookmark a WHERE a.user_id = \(accountID) AND a.verse_key = g.verse_key))
            """
        ).first {
            let (own, guest) = try row.decode((Int, Int).self)
            if guest > 0, own + guest > maximumBookmarks { throw BookmarkError.tooManyToMerge(own: own, guest: guest, maximum: maximumBookmarks) }
        }
        try await rows(
            """
            INSERT INTO bookmark (user_id, verse_key, created_at)
            SELECT \(accountID), verse_key, created_at FROM bookmark WHERE user_id = \(guestID) ON CONFLICT DO NOTHING
            """)
    }

    public func mergeGuestSettings(from guestID: String, into accountID: String, now: Date) async throws {
        try await rows(
            """
            INSERT INTO settings (user_id, reminder_time, timezone, calendar, adjustment, display_theme, notifications, locale, updated_at)
            SELECT \(accountID), reminder_time, timezone, calendar, adjustment, display_theme, notifications, locale, \(now.timeIntervalSince1970)
            FROM settings WHERE user_id = \(guestID) ON CONFLICT (user_id) DO NOTHING
            """)
    }

    public func removeUser(id: String) async throws { try await rows("DELETE FROM \"user\" WHERE id = \(id)") }
}

/// The bearer token's lookup, which every authenticated request makes: prepared once on each connection, so the server
/// neither parses nor plans it again (it had been most of the server's time on `GET /v1/today`).
struct SessionLookup: PostgresPreparedStatement {
    static let name = "dailyverse_session_lookup"
    static let sql = """
        SELECT u.id, u.mode, u.email, u.display_name, s.token_hash, s.last_used_at, s.created_at
        FROM session s JOIN "user" u ON u.id = s.user_id WHERE s.token_hash = $1
        """
    typealias Row = (String, String, String?, String?, String, Double, Double)

    let hash: String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(hash)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
