import Foundation
import GRDB
import PostgresNIO
import Storage

/// What an installation imported (`import quran|translation|commentary|tafsir|hadith`), as slices of the content
/// tables, parents first: Quran texts and translations other than the bundled two, commentary and tafsir editions
/// marked as imported, and every hadith book. Seeding from data/ keeps these; on PostgreSQL they live in the shared
/// database, and every process's content copy follows them, as it follows the published month starts.
public enum ImportedContent {
    static let bundledEditions = "('\(BundledContent.arabicEdition.id)', '\(BundledContent.pickthall.id)')"
    static let importedTafsir = "edition_id IN (SELECT id FROM tafsir_edition WHERE origin = 'import')"

    public static let slices: [RowSlice] = [
        RowSlice("edition", where: "id NOT IN \(bundledEditions)", key: "id"),
        RowSlice("ayah_text", where: "edition_id NOT IN \(bundledEditions)"),
        RowSlice(
            "commentary", where: "origin = 'import'", identity: "id",
            conflict: (
                sqlite: "(surah, ayah_start, ayah_end, layer_id, ifnull(occasion_id, ''))",
                postgres: "(surah, ayah_start, ayah_end, layer_id, coalesce(occasion_id, ''))"
            )),
        RowSlice("tafsir_edition", where: "origin = 'import'", key: "id"),
        RowSlice("tafsir_block", where: importedTafsir, identity: "id"),
        RowSlice("tafsir_verse", where: importedTafsir, references: ["block_id": "tafsir_block"]),
        RowSlice("hadith_book", where: "1 = 1", key: "id"),
        RowSlice("hadith", where: "1 = 1", identity: "id"),
        RowSlice("hadith_verse", where: "1 = 1", references: ["hadith_id": "hadith"]),
    ]

    /// What an import publishes: the slices, after the layers their commentary names (added to the database's, or
    /// updated, never taken out: a database `serve` made holds no content of its own).
    public static let published: [RowSlice] =
        [RowSlice("layer", where: "1 = 1", conflict: (sqlite: "(id)", postgres: "(id)"), addsOnly: true)] + slices

    /// The bundled editions' ids: an import under one of them replaces the bundled text on one copy only, which the
    /// shared database cannot carry (seeding puts the bundled text back), so on PostgreSQL it is refused.
    public static let bundledEditionIDs: Set<String> = [BundledContent.arabicEdition.id, BundledContent.pickthall.id]
}

extension AppDatabase {
    /// The revision of the shared imports this copy last followed (nil: never).
    public func followedImports() throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'imports_followed'") }
    }

    /// Makes this copy's imported content the shared database's, read in `transaction` (at `revision`) a chunk at a
    /// time and put in in one transaction of the copy. When the copy held imports that may have stood in the place
    /// of a bundled edition or entry, `bundled` is seeded again in it, so that one taken out gives back what it stood
    /// for.
    public func replaceImports(from transaction: PostgresTransaction, revision: String, bundled: () throws -> BundledContent) async throws {
        try await SliceCopy.replace(ImportedContent.slices, in: self, from: transaction) { db, replace in
            let displacing = try ImportedContent.slices.contains { slice in
                try (slice.key != nil || slice.conflict != nil)
                    && Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \"\(slice.table)\" WHERE \(slice.filter))") == true
            }
            try replace()
            if displacing { try Self.seed(db, try bundled(), force: true) }
            try Self.setMeta(db, "imports_followed", revision)
        }
    }

    /// Forgets which revision this copy follows, so that the next follow reads the shared imports again: before an
    /// import into the copy that is then to be published, which might not get there.
    func forgetFollowedImports() throws {
        try write { db in try db.execute(sql: "DELETE FROM meta WHERE key = 'imports_followed'") }
    }
}

/// The imported content on PostgreSQL: written by `import` given the shared database (through the importing
/// machine's content copy, where the import's checks run), followed by each process's copy.
extension PostgresStore {
    /// The revision of the imported content, changed by each import; "" before the first (a copy made by
    /// `migrate-store` has its installation's imports, and no revision).
    public func importsRevision() async throws -> String {
        try await withoutTransaction { try await $0.importsRevision() }
    }

    /// Makes `copy`'s imported content the database's when the database's has changed since `copy` last followed it
    /// (or `copy` never did), with the bundled content (`bundled`, read only if needed) seeded again; whether it did.
    /// Not while an import is being published (through this copy or another): the follow waits for the next call.
    @discardableResult
    public func followImports(into copy: AppDatabase, bundled: @escaping @Sendable () throws -> BundledContent) async throws -> Bool {
        // Asked outside a transaction first: each minute, a round trip rather than three.
        guard try await importsRevision() != copy.followedImports() else { return false }
        // In one snapshot: the revision and every slice as one import left them, though another commits meanwhile
        // (read statement by statement, a follow could take one import's blocks with the next one's verses).
        return try await snapshot { transaction in
            // An import under way may be writing this very copy (`import` on a machine whose `serve` shares its content
            // copy): a follow now would put the database's imports back in the copy under it, and the import would
            // publish them, not itself. Publishing holds the lock alone; follows share it.
            guard try await transaction.tryLockShared(Self.importsLock) else { return false }
            try await transaction.liftTimeLimits()
            return try await transaction.bringImports(into: copy, bundled: bundled)
        }
    }

    /// The lock an import holds while it is published, and a follow shares.
    static let importsLock = "content imports"

    /// An import into the shared content: under a lock (one import at a time), `copy` first follows the database,
    /// then `body` imports into `copy` (with every check the import makes), then `copy`'s imported content replaces
    /// the database's, under a new revision that every process's copy then follows. `body` failing, or the database,
    /// leaves the database as it was.
    public func publishImport<T: Sendable>(
        through copy: AppDatabase, bundled: @escaping @Sendable () throws -> BundledContent, _ body: @escaping @Sendable (AppDatabase) throws -> T
    ) async throws -> T {
        let (result, revision) = try await transaction { transaction in
            // The import runs inside this transaction (seconds to minutes for a large edition), after waiting for
            // the follows under way to let the lock go.
            try await transaction.liftTimeLimits()
            try await transaction.lock(Self.importsLock)
            try await transaction.bringImports(into: copy, bundled: bundled)
            try copy.forgetFollowedImports()
            let result = try body(copy)
            try await SliceCopy.replace(ImportedContent.published, in: transaction, from: copy)
            let revision = UUID().uuidString.lowercased()
            try await transaction.rows(
                """
                INSERT INTO meta (key, value) VALUES ('imports_revision', \(revision))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
            return (result, revision)
        }
        try await copy.write { db in try AppDatabase.setMeta(db, "imports_followed", revision) }
        return result
    }
}

extension PostgresTransaction {
    func importsRevision() async throws -> String {
        try await value("SELECT value FROM meta WHERE key = 'imports_revision'", as: String.self) ?? ""
    }

    /// `copy` takes the database's imports, read in this transaction, unless it holds their revision; whether it did.
    @discardableResult
    func bringImports(into copy: AppDatabase, bundled: () throws -> BundledContent) async throws -> Bool {
        let revision = try await importsRevision()
        guard try copy.followedImports() != revision else { return false }
        try await copy.replaceImports(from: self, revision: revision, bundled: bundled)
        return true
    }
}
