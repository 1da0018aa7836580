import Accounts
import ContentStore
import Delivery
import Engagement
import GRDB
import Storage

extension Schema {
    /// Every migration of the DailyVerse database, in the order they run: one list for SQLite, one for PostgreSQL. Each
    /// step is written by the domain that owns its tables; a migration that shipped with tables of several domains
    /// lists their steps in the order it ran them. Never edit or reorder a shipped migration: add a new one at the end
    /// of its list. PostgreSQL's list starts where SQLite's stood at v19 (a test checks that both end with the same
    /// tables and columns).
    public static let dailyVerse = Schema(
        [
            Migration("v1-content", ContentSchema.v1Content),
            Migration("v2-devices-outbox", ContentSchema.v2OccasionNames, DeliverySchema.v2DevicesAndOutbox),
            Migration("v3-accounts", AccountsSchema.v3UsersAndSessions, EngagementSchema.v3Onboarding, DeliverySchema.v3DeviceOwner),
            Migration("v4-schedule-queue", DeliverySchema.v4ScheduleQueue),
            Migration("v5-hints", EngagementSchema.v5Hints),
            Migration("v6-outbox-key", DeliverySchema.v6OutboxKey),
            Migration("v7-outbox-status-check", DeliverySchema.v7OutboxStatusCheck),
            Migration("v8-outbox-by-day", DeliverySchema.v8OutboxByDay),
            Migration("v9-push-services", DeliverySchema.v9PushServices),
            Migration("v10-occasions-and-nights", ContentSchema.v10OccasionsAndNights),
            Migration("v11-schedule-problems", DeliverySchema.v11ScheduleProblems),
            Migration("v12-normalized-emails", AccountsSchema.v12NormalizedEmails),
            Migration("v13-spool-marks", DeliverySchema.v13SpoolMarks),
            Migration("v14-events-follow-their-user", EngagementSchema.v14EventsFollowTheirUser),
            Migration("v15-predicted-calendar", ContentSchema.v15CrescentRegions, DeliverySchema.v15PredictedCalendar),
            Migration("v16-tafsir-editions", ContentSchema.v16TafsirEditions),
            Migration("v17-layer-sources", ContentSchema.v17LayerSources),
            Migration("v18-tafsir-excerpts", ContentSchema.v18TafsirExcerpts),
            Migration("v19-hadith", ContentSchema.v19Hadith),
            Migration("v20-outbox-leases", DeliverySchema.v20OutboxLeases),
        ],
        postgres: [
            PostgresMigration(
                "pg1-schema-of-v19", ContentSchema.postgresV1, AccountsSchema.postgresV1, EngagementSchema.postgresV1, DeliverySchema.postgresV1),
            PostgresMigration("pg2-outbox-leases", DeliverySchema.postgresV2OutboxLeases),
            PostgresMigration("pg3-shared-throttles", AccountsSchema.postgresV3Throttles),
            PostgresMigration("pg4-processes", DeliverySchema.postgresV4Processes),
            PostgresMigration("pg5-still-device-epoch", DeliverySchema.postgresV5StillEpoch),
            PostgresMigration("pg6-throttle-keys", DeliverySchema.postgresV6ThrottleKeys),
            PostgresMigration("pg7-process-content-imports", DeliverySchema.postgresV7ContentImports),
        ],
        // Attempt counts (SQLite's one process keeps them in memory) and the processes sharing the database.
        postgresOnlyTables: ["throttle_event", "dailyverse_process"])
}

extension AppDatabase {
    /// Opens (creating it when needed) the DailyVerse database at `path` and migrates it: see
    /// `open(path:schema:pool:createFolder:)`.
    public static func open(path: String, pool: Bool = false, createFolder: Bool = false) throws(StorageError) -> AppDatabase {
        try open(path: path, schema: .dailyVerse, pool: pool, createFolder: createFolder)
    }

    /// An empty in-memory DailyVerse database, migrated (for tests).
    public static func inMemory() throws -> AppDatabase { try inMemory(schema: .dailyVerse) }

    /// Migrates `writer` to the DailyVerse schema (tests pass a queue they migrated part of the way).
    public convenience init(_ writer: any DatabaseWriter) throws { try self.init(writer, schema: .dailyVerse) }
}
