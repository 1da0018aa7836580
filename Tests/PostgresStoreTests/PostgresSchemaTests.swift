import AppSchema
import DailyVerseTestSupport
import Foundation
import GRDB
import PostgresNIO
import Storage
import Testing

/// The PostgreSQL store's schema on a real server: every domain's tables, migrated once however many processes open
/// the database together, a newer version's database refused, and the triggers doing what SQLite's do.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct PostgresSchemaTests {
    let logger = PostgresTesting.logger

    func open(_ address: PostgresAddress) async throws -> PostgresStore {
        try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
    }

    /// Both dialects end with the same tables, the same columns, and the same columns allowing NULL: a domain that
    /// adds a SQLite migration without its PostgreSQL one (or the reverse) fails here.
    @Test func bothDialectsEndWithTheSameTablesAndColumns() async throws {
        let sqlite = try await AppDatabase.inMemory().read { db -> [String: [String: Bool]] in
            var tables: [String: [String: Bool]] = [:]
            let names = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('grdb_migrations', 'sqlite_sequence')")
            for name in names {
                for row in try Row.fetchAll(db, sql: "SELECT name, \"notnull\", pk FROM pragma_table_info(?)", arguments: [name]) {
                    let nullable = (row["notnull"] as Int) == 0 && (row["pk"] as Int) == 0
                    tables[name, default: [:]][row["name"] as String] = nullable
                }
            }
            return tables
        }
        let postgres = try await PostgresTesting.withDatabase { address in
            let database = try await open(address)
            var tables: [String: [String: Bool]] = [:]
            let rows = try await database.rows(
                """
                SELECT table_name::text, column_name::text, is_nullable::text FROM information_schema.columns
                WHERE table_schema = 'public' AND table_name <> 'dailyverse_migration'
                """)
            for row in rows {
                let (table, column, nullable) = try row.decode((String, String, String).self)
                tables[table, default: [:]][column] = nullable == "YES"
            }
            await database.close()
            return tables
        }
        let only = Schema.dailyVerse.postgresOnlyTables
        #expect(only.isSubset(of: postgres.keys))
        #expect(postgres.keys.filter { !only.contains($0) }.sorted() == sqlite.keys.sorted())
        for (table, columns) in sqlite {
            #expect(postgres[table] == columns, "table \(table)")
        }
    }

    /// Processes started together wait for one another's migration (an advisory lock): each opens, the migrations run
    /// once. Without the lock, the second CREATE TABLE fails.
    @Test func processesOpeningTogetherMigrateOnce() async throws {
        try await PostgresTesting.withDatabase { address in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let database = try await open(address)
                        await database.close()
                    }
                }
                try await group.waitForAll()
            }
            let database = try await open(address)
            let count = try await database.rows("SELECT count(*) FROM dailyverse_migration").first?.decode(Int.self)
            await database.close()
            #expect(count == Schema.dailyVerse.postgres.count)
        }
    }

    /// Work that may rightly take long (publishing or following an import, copying an installation) lifts the time
    /// limits an operator set on the role or the database for the API's short requests, for its own transaction only.
    @Test func longWorkLiftsTheRolesTimeLimitsForItsTransactionOnly() async throws {
        try await PostgresTesting.withDatabase { address in
            try await PostgresTesting.administer(
                address, "ALTER DATABASE \"\(address.database)\" SET statement_timeout = '7s'",
                "ALTER DATABASE \"\(address.database)\" SET idle_in_transaction_session_timeout = '7s'")
            let database = try await open(address)
            let lifted = try await database.transaction { transaction in
                try await transaction.liftTimeLimits()
                return try await [
                    transaction.value("SHOW statement_timeout", as: String.self),
                    transaction.value("SHOW idle_in_transaction_session_timeout", as: String.self),
                ]
            }
            #expect(lifted == ["0", "0"])
            let after = try await database.transaction { try await $0.value("SHOW statement_timeout", as: String.self) }
            #expect(after == "7s", "lifted for that transaction only")
            await database.close()
        }
    }

    @Test func aDatabaseANewerVersionMigratedIsRefused() async throws {
        try await PostgresTesting.withDatabase { address in
            let first = try await open(address)
            await first.close()
            try await PostgresTesting.administer(address, "INSERT INTO dailyverse_migration (identifier) VALUES ('pg99-from-the-future')")
            let error = await #expect(throws: StorageError.self) { try await open(address) }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("newer version of dailyverse") && text.contains("pg99-from-the-future"), "\(text)")
        }
    }

    /// The PL/pgSQL triggers do what SQLite's do: a removed device's pending rows of the outbox's newest days go with
    /// it (older and settled rows stay), and a removed user's events go. The device epoch, which only SQLite's emitter
    /// reads, stays still (pg5): one row every device change locked.
    @Test func triggersDoWhatSQLitesDo() async throws {
        try await PostgresTesting.withDatabase { address in
            let database = try await open(address)
            try await PostgresTesting.administer(
                address,
                #"INSERT INTO "user" (id, mode, created_at, last_active_at) VALUES ('u1', 'guest', 0, 0)"#,
                """
                INSERT INTO device (seq, id, platform, token, timezone, reminder_time, locale, calendar, adjustment, display_theme, enabled,
                    created_at, updated_at, user_id)
                VALUES (7, 'd7', 'fcm', 't7', 'UTC', '08:00', 'en', 'predicted', 0, 'light', 1, 0, 0, 'u1'),
                       (8, 'd8', 'fcm', 't8', 'UTC', '08:00', 'en', 'predicted', 0, 'light', 1, 0, 0, NULL)
                """,
                """
                INSERT INTO outbox (device_seq, device_id, platform, local_date, fire_at, headers, payload, status, created_at) VALUES
                    (7, 'd7', 'fcm', '2026-11-20', 0, '{}', '{}', 'pending', 0),
                    (7, 'd7', 'fcm', '2026-11-26', 0, '{}', '{}', 'pending', 0),
                    (7, 'd7', 'fcm', '2026-11-27', 0, '{}', '{}', 'delivered', 0),
                    (8, 'd8', 'fcm', '2026-11-27', 0, '{}', '{}', 'pending', 0)
                """,
                "INSERT INTO analytics_event (user_id, name, properties, at) VALUES ('u1', 'opened', '{}', 0), (NULL, 'opened', '{}', 0)")
            let epochBefore = try await scalar(database, "SELECT value FROM device_epoch")
            try await PostgresTesting.administer(address, "DELETE FROM device WHERE seq = 7")
            #expect(try await scalar(database, "SELECT value FROM device_epoch") == epochBefore)
            // 2026-11-20 is more than four days before the newest day (11-27): a row pending that long is never sent
            // and stays for the record, as on SQLite.
            #expect(
                try await strings(database, "SELECT local_date::text || ' ' || status FROM outbox WHERE device_seq = 7 ORDER BY local_date")
                    == ["2026-11-20 pending", "2026-11-27 delivered"])
            #expect(try await scalar(database, "SELECT count(*) FROM outbox WHERE device_seq = 8") == 1)
            try await PostgresTesting.administer(address, #"DELETE FROM "user" WHERE id = 'u1'"#)
            #expect(try await scalar(database, "SELECT count(*) FROM analytics_event") == 1)
            await database.close()
        }
    }

    @Test func aWrongPasswordIsOneLineThatDoesNotCarryIt() async throws {
        guard let address = PostgresTesting.address else { return }
        let password = "not-the-password-\(UUID().uuidString)"
        let error = await #expect(throws: StorageError.self) {
            try await PostgresStore.open(address, password: password, schema: .dailyVerse, logger: logger)
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("password authentication failed") && text.contains("\(address)"), "\(text)")
        #expect(!text.contains(password) && !text.contains("\n"))
    }

    func scalar(_ database: PostgresStore, _ sql: String) async throws -> Int {
        try await database.rows(PostgresQuery(unsafeSQL: sql)).first?.decode(Int.self) ?? -1
    }

    func strings(_ database: PostgresStore, _ sql: String) async throws -> [String] {
        try await database.rows(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self) }
    }
}
