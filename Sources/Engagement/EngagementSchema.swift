import Storage

/// The engagement tables: each user's onboarding progress, the onboarding and app events, contextual hints and
/// the app-event counts their rules read, and tutorial mode on a session. Shipped steps are never edited;
/// `Schema.dailyVerse` lists every domain's steps in the order they run.
public enum EngagementSchema {
    /// v3 (with the accounts): onboarding progress and its events.
    public static let v3Onboarding = MigrationStep(
        sql: """
            CREATE TABLE onboarding (
                user_id TEXT PRIMARY KEY NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                state TEXT NOT NULL, updated_at REAL NOT NULL);
            CREATE TABLE analytics_event (
                id INTEGER PRIMARY KEY,
                user_id TEXT, name TEXT NOT NULL, screen TEXT, properties TEXT NOT NULL, at REAL NOT NULL);
            CREATE INDEX analytics_by_time ON analytics_event (at);
            """)

    /// v5: contextual hints: each user's history with each hint, the app events their rules count, and tutorial mode,
    /// which belongs to one session (one signed-in app), not to the user.
    public static let v5Hints = MigrationStep(
        sql: """
            CREATE TABLE hint_state (
                user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE, hint_id TEXT NOT NULL,
                shown_at REAL, dismissed_at REAL, shown_in_tutorial INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (user_id, hint_id)) WITHOUT ROWID;
            CREATE TABLE app_event_count (
                user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE, name TEXT NOT NULL,
                count INTEGER NOT NULL, last_at REAL NOT NULL,
                PRIMARY KEY (user_id, name)) WITHOUT ROWID;
            ALTER TABLE session ADD COLUMN tutorial INTEGER NOT NULL DEFAULT 0;
            """)

    /// v14: a user's analytics events go with the user (a purged guest's, an account removed; a guest merged into an
    /// account gives its events to the account first), found by an index on the user, which the funnel's "went on to
    /// complete" also looks them up by.
    public static let v14EventsFollowTheirUser = MigrationStep(
        sql: """
            CREATE INDEX analytics_by_user ON analytics_event (user_id, name, at);
            CREATE TRIGGER analytics_event_of_removed_user AFTER DELETE ON user
            BEGIN
                DELETE FROM analytics_event WHERE user_id = OLD.id;
            END;
            """)
}
