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
}
