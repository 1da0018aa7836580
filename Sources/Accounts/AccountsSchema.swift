import Foundation
import GRDB
import Storage

/// The accounts' tables: users (guests and accounts), sessions (tokens kept as hashes), bookmarks and settings.
/// Shipped steps are never edited; `Schema.dailyVerse` lists every domain's steps in the order they run.
public enum AccountsSchema {
    /// v3 (with Engagement's onboarding and events, and the device's owner): users, sessions, bookmarks, settings.
    public static let v3UsersAndSessions = MigrationStep(
        sql: """
            CREATE TABLE user (
                id TEXT PRIMARY KEY NOT NULL,
                mode TEXT NOT NULL CHECK (mode IN ('guest', 'account')),
                email TEXT UNIQUE, password_hash TEXT, display_name TEXT,
                created_at REAL NOT NULL, last_active_at REAL NOT NULL);
            CREATE TABLE session (
                token_hash TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                created_at REAL NOT NULL, last_used_at REAL NOT NULL);
            CREATE INDEX session_by_user ON session (user_id);
            CREATE TABLE bookmark (
                user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE, verse_key TEXT NOT NULL, created_at REAL NOT NULL,
                PRIMARY KEY (user_id, verse_key)) WITHOUT ROWID;
            CREATE TABLE settings (
                user_id TEXT PRIMARY KEY NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                reminder_time TEXT NOT NULL, timezone TEXT NOT NULL, calendar TEXT NOT NULL, adjustment INTEGER NOT NULL,
                display_theme TEXT NOT NULL, notifications INTEGER NOT NULL, locale TEXT NOT NULL, updated_at REAL NOT NULL);
            """)

    /// v12: emails in one spelling, compared by a key. Accounts made before were stored trimmed and lowercased only,
    /// so "josé" composed and decomposed were two accounts, and one made decomposed could not sign in composed. Each
    /// stored email is rewritten composed (NFC), lowercased and composed again, unless another account already has
    /// that spelling; such an account, and one whose email the new rule refuses (a zero-width space in it), still signs
    /// in under its old spelling (`Email.signInForms`). `email_key` also folds compatibility characters (NFKC), and a
    /// new account whose key another has is refused; accounts that already share one keep their emails. Both rules are
    /// written out here as they stood at v12.
    public static let v12NormalizedEmails = MigrationStep { db in
        try db.execute(sql: "ALTER TABLE user ADD COLUMN email_key TEXT; CREATE INDEX user_by_email_key ON user (email_key)")
        let rows = try Row.fetchAll(db, sql: "SELECT id, email FROM user WHERE email IS NOT NULL ORDER BY created_at, id")
        var taken = Set(rows.map { $0["email"] as String })
        for row in rows {
            var email: String = row["email"]
            let normal = email.precomposedStringWithCanonicalMapping.lowercased().precomposedStringWithCanonicalMapping
            if normal != email, !taken.contains(normal) {
                taken.insert(normal)
                email = normal
            }
            let key = email.precomposedStringWithCompatibilityMapping.lowercased().precomposedStringWithCompatibilityMapping
            try db.execute(sql: "UPDATE user SET email = ?, email_key = ? WHERE id = ?", arguments: [email, key, row["id"] as String])
        }
    }
}

extension AccountsSchema {
    /// PostgreSQL, first migration: the accounts' tables as SQLite's v3 and v12 left them, column for column (times as
    /// seconds since 1970 in double precision). `user` is a reserved word in PostgreSQL, so the table is always
    /// written `"user"`, which SQLite reads too.
    public static let postgresV1 = PostgresStep(
        """
        CREATE TABLE "user" (
            id text PRIMARY KEY,
            mode text NOT NULL CHECK (mode IN ('guest', 'account')),
            email text UNIQUE, password_hash text, display_name text,
            created_at double precision NOT NULL, last_active_at double precision NOT NULL, email_key text)
        """,
        #"CREATE INDEX user_by_email_key ON "user" (email_key)"#,
        """
        CREATE TABLE session (
            token_hash text PRIMARY KEY,
            user_id text NOT NULL REFERENCES "user"(id) ON DELETE CASCADE,
            created_at double precision NOT NULL, last_used_at double precision NOT NULL)
        """,
        "CREATE INDEX session_by_user ON session (user_id)",
        """
        CREATE TABLE bookmark (
            user_id text NOT NULL REFERENCES "user"(id) ON DELETE CASCADE, verse_key text NOT NULL, created_at double precision NOT NULL,
            PRIMARY KEY (user_id, verse_key))
        """,
        """
        CREATE TABLE settings (
            user_id text PRIMARY KEY REFERENCES "user"(id) ON DELETE CASCADE,
            reminder_time text NOT NULL, timezone text NOT NULL, calendar text NOT NULL, adjustment integer NOT NULL,
            display_theme text NOT NULL, notifications integer NOT NULL, locale text NOT NULL, updated_at double precision NOT NULL)
        """
    )
}
