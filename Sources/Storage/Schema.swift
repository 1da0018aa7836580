import GRDB

/// Part of a migration, written by the domain that owns the tables it touches.
///
/// A step is fixed SQL (or, where SQLite needs it, fixed code): it never reads a constant that runtime queries also
/// use, so that changing such a constant cannot change what a shipped migration did. GRDB's Migrations guide asks the
/// same: a migration does not depend on the application's types.
public struct MigrationStep: Sendable {
    let run: @Sendable (Database) throws -> Void

    /// Statements run as they are written.
    public init(sql: String) { run = { db in try db.execute(sql: sql) } }

    /// Code, for what SQL alone cannot do (editing a table's definition in place).
    public init(_ run: @escaping @Sendable (Database) throws -> Void) { self.run = run }
}

/// A shipped migration: an identifier that never changes, and its steps, run in order in one transaction.
///
/// An early migration may create tables of several domains (accounts and onboarding came in one release); each
/// domain then writes its own step, and the migration lists them in the order they ran.
public struct Migration: Sendable {
    public let identifier: String
    let steps: [MigrationStep]

    public init(_ identifier: String, _ steps: MigrationStep...) {
        self.identifier = identifier
        self.steps = steps
    }
}

/// Part of a PostgreSQL migration, written by the domain that owns the tables it touches: statements run one at a time
/// (the protocol postgres-nio speaks takes one statement per query), in the migration's transaction.
public struct PostgresStep: Sendable {
    public let statements: [String]

    public init(_ statements: String...) { self.statements = statements }
}

/// A shipped PostgreSQL migration: an identifier that never changes, and its steps, run in order in one transaction.
public struct PostgresMigration: Sendable {
    public let identifier: String
    public let steps: [PostgresStep]

    public init(_ identifier: String, _ steps: PostgresStep...) {
        self.identifier = identifier
        self.steps = steps
    }
}

/// Every migration of a database, in the order they run, one list per dialect: SQLite's (`migrations`) and
/// PostgreSQL's (`postgres`). PostgreSQL's list begins at the schema SQLite's had reached when PostgreSQL came, so the
/// two lists differ in length and history, never in the tables and columns they end with (a test compares them).
/// Migrations are never edited once shipped: the schema changes by a new one at the end of each list.
public struct Schema: Sendable {
    public let migrations: [Migration]
    public let postgres: [PostgresMigration]
    /// The tables PostgreSQL has and SQLite has not: what many processes share and one process keeps in memory.
    /// `migrate-store` leaves them as they are; every other table is in both.
    public let postgresOnlyTables: Set<String>

    public init(_ migrations: [Migration], postgres: [PostgresMigration] = [], postgresOnlyTables: Set<String> = []) {
        precondition(Set(migrations.map(\.identifier)).count == migrations.count, "migration identifiers are unique")
        precondition(Set(postgres.map(\.identifier)).count == postgres.count, "migration identifiers are unique")
        self.migrations = migrations
        self.postgres = postgres
        self.postgresOnlyTables = postgresOnlyTables
    }

    public var identifiers: [String] { migrations.map(\.identifier) }

    /// GRDB's migrator for these migrations (tests migrate part of the way with `migrate(_:upTo:)`).
    public var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            let steps = migration.steps
            migrator.registerMigration(migration.identifier) { db in
                for step in steps { try step.run(db) }
            }
        }
        return migrator
    }
}
