import AppSchema
import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import PostgresNIO
import Storage
import Testing
import VerseCalendar

/// Imports on PostgreSQL: made through one machine's content copy, published to the database, followed by every other
/// copy (as `serve` follows them each minute); an installation's imports copied by `migrate-store` are followed too.
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct SharedImportsTests {
    let logger = PostgresTesting.logger
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    func open(_ address: PostgresAddress) async throws -> PostgresStore {
        try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: logger)
    }

    /// What a copy shows of its imports, as the domain's own queries read them (ids aside, which each copy gives).
    struct Shown: Equatable {
        let editions: [String]
        let tafsir: [StoredTafsirEdition]
        let qadr: [String]
        let hadith: [String]
        let ahlulBayt: String?
        let commentary: [String]
    }

    func shown(_ database: AppDatabase) throws -> Shown {
        database.useLayerSources(try LayerSources(parsing: "ahlul_bayt=hadith:al-kafi"))
        defer { database.useLayerSources(nil) }
        let verse = try database.verse(VerseRange(surah: 2, start: 255, end: 255), translation: "en.pickthall")
        return Shown(
            editions: try database.read { db in try String.fetchAll(db, sql: "SELECT id || ':' || name FROM edition ORDER BY id") },
            tafsir: try database.tafsirEditions(),
            qadr: try database.tafsirBlocks(edition: "en.noor", surah: 97, ayahs: 1...5),
            hadith: try database.hadithBooks().map { "\($0.id) \($0.citing)" },
            ahlulBayt: verse.layers.first { $0.layer.id == "ahlul_bayt" }?.entry?.source.reference,
            commentary: try database.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT surah || ':' || ayah_start || '-' || ayah_end || ' ' || layer_id || ' ' || origin || ' ' || body FROM commentary
                        ORDER BY surah, ayah_start, ayah_end, layer_id, ifnull(occasion_id, '')
                        """)
            })
    }

    /// The first bundled commentary entry: an import of its verses and layer takes its place.
    func bundledKey(_ database: AppDatabase) throws -> (verses: String, layer: String) {
        try database.read { db in
            let row = try #require(
                try Row.fetchOne(
                    db,
                    sql:
                        "SELECT surah, ayah_start, ayah_end, layer_id FROM commentary WHERE origin = 'bundled' AND occasion_id IS NULL ORDER BY id LIMIT 1"
                ))
            let (surah, start, end): (Int, Int, Int) = (row[0], row[1], row[2])
            return (start == end ? "\(surah):\(start)" : "\(surah):\(start)-\(end)", row[3])
        }
    }

    func commentary(_ lines: [String]) throws -> CommentaryFile {
        try CommentaryFile(data: Data(lines.joined(separator: "\n").utf8), name: "test.jsonl")
    }

    @Test func anImportThroughOneCopyIsFollowedByEveryOther() async throws {
        try await PostgresTesting.withDatabase { address in
            let store = try await open(address)
            let first = try seededDatabase()
            let second = try seededDatabase()
            let untouched = try shown(second)
            // A copy that never followed follows once, though nothing was imported yet; then not until an import.
            #expect(try await store.followImports(into: second) { bundledContent })
            #expect(try await !store.followImports(into: second) { bundledContent })
            #expect(try shown(second) == untouched)

            let tafsir = try TafsirFolder(directory: Self.fixtures.appendingPathComponent("thaqalayn-tafsir"))
            let catalog = try TafsirEditionCatalog(dataDirectory: dataDirectory)
            let counts = try first.ayahCounts()
            for id in ["en.noor", "en.safi"] {
                let edition = try tafsir.read(id, ayahCounts: counts)
                try await store.publishImport(through: first, bundled: { bundledContent }) {
                    try $0.importTafsir(edition, terms: catalog.terms(for: edition.info), at: fixedNow)
                }
            }
            let hadith = try HadithFolder(directory: Self.fixtures.appendingPathComponent("hadith"))
            let books = try hadith.books.map { try hadith.read($0, ayahCounts: counts) }
            try await store.publishImport(through: first, bundled: { bundledContent }) { database in
                for book in books { try database.importHadith(book, at: fixedNow) }
            }
            let key = try bundledKey(first)
            let file = try commentary([
                #"{"verses": "\#(key.verses)", "layer": "\#(key.layer)", "body": "In the bundled entry's place.", "source": {"provenance": "editorial"}}"#,
                #"{"verses": "2:255", "layer": "comparative", "body": "Imported.", "source": {"provenance": "editorial"}}"#,
            ])
            try await store.publishImport(through: first, bundled: { bundledContent }) { try $0.importCommentary(file, name: "test.jsonl") }
            // A translation under an id of its own: the bundled one's lines, under another name.
            let lines = try await first.read { db in
                try String.fetchAll(
                    db, sql: "SELECT surah || '|' || ayah || '|' || text FROM ayah_text WHERE edition_id = 'en.pickthall' ORDER BY surah, ayah")
            }
            let tanzil = try TanzilFile(data: Data(lines.joined(separator: "\n").utf8), name: "en.test", expectedCounts: counts)
            try await store.publishImport(through: first, bundled: { bundledContent }) {
                try $0.importTranslation(tanzil, edition: Edition(id: "en.test", kind: "translation", language: "en", name: "Test", credit: "Test"))
            }

            let published = try shown(first)
            #expect(published.tafsir.map(\.id).contains("en.noor") && published.hadith.count == 2 && published.qadr.count == 4)
            #expect(published.ahlulBayt?.hasPrefix("al-Kafi, vol. 1") == true)
            #expect(published.editions.contains("en.test:Test"))
            #expect(published.commentary.contains { $0.hasSuffix("import In the bundled entry's place.") })
            #expect(published != untouched)
            // The other copy follows all of it, once; its bundled content is as it was, but for the entry replaced.
            #expect(try await store.followImports(into: second) { bundledContent })
            #expect(try shown(second) == published)
            #expect(try await !store.followImports(into: second) { bundledContent })
            // Following again after another import replaces, never doubles.
            try await store.publishImport(through: first, bundled: { bundledContent }) { try $0.importCommentary(file, name: "test.jsonl") }
            #expect(try await store.followImports(into: second) { bundledContent })
            #expect(try shown(second) == published)

            // An import that fails leaves the database as it was: the same revision, the same rows for a new copy.
            let revision = try await store.importsRevision()
            let bad = try commentary([#"{"verses": "2:255", "layer": "comparative", "body": "Changed.", "source": {"provenance": "editorial"}}"#])
            await #expect(throws: StoreError.self) {
                try await store.publishImport(through: first, bundled: { bundledContent }) { database in
                    try database.importCommentary(bad, name: "bad.jsonl")
                    throw StoreError.notSeeded("a test's failure after the import")
                }
            }
            #expect(try await store.importsRevision() == revision)
            let third = try seededDatabase()
            #expect(try await store.followImports(into: third) { bundledContent })
            #expect(try shown(third) == published)
            // The copy it failed on reads the database's again at its next follow.
            #expect(try await store.followImports(into: first) { bundledContent })
            #expect(try shown(first) == published)
            await store.close()
        }
    }

    /// The database at `address`, opened, with the fixtures' hadith books published through a new copy (returned).
    func storeWithHadithPublished(_ address: PostgresAddress) async throws -> (PostgresStore, AppDatabase) {
        let store = try await open(address)
        let copy = try seededDatabase()
        let hadith = try HadithFolder(directory: Self.fixtures.appendingPathComponent("hadith"))
        let books = try hadith.books.map { try hadith.read($0, ayahCounts: try copy.ayahCounts()) }
        try await store.publishImport(through: copy, bundled: { bundledContent }) { database in
            for book in books { try database.importHadith(book, at: fixedNow) }
        }
        return (store, copy)
    }

    /// A follow reads the revision and each slice in one snapshot: an import committed while it reads (here, one
    /// that took every hadith away, committed as the follow waits to read the verses they cite) leaves it with the
    /// revision it began with, whole, and the next follow takes the new one whole.
    @Test func aFollowTakesOneImportWholeThoughAnotherCommitsDuringIt() async throws {
        try await PostgresTesting.withDatabase { address in
            let (store, first) = try await storeWithHadithPublished(address)
            let revision = try await store.importsRevision()
            let published = try shown(first)
            try #require(published.hadith.count == 2 && published.ahlulBayt != nil)
            let second = try seededDatabase()
            try await PostgresTesting.withHeldTransaction(address) { held, watcher in
                _ = try await held.rows("LOCK TABLE hadith_verse IN ACCESS EXCLUSIVE MODE")
                let follow = Task { try await store.followImports(into: second) { bundledContent } }
                try await PostgresTesting.untilALockIsAwaited(watching: watcher)
                for statement in [
                    "DELETE FROM hadith_verse", "DELETE FROM hadith", "DELETE FROM hadith_book",
                    "UPDATE meta SET value = 'later' WHERE key = 'imports_revision'", "COMMIT",
                ] {
                    _ = try await held.rows(PostgresQuery(unsafeSQL: statement))
                }
                #expect(try await follow.value)
            }
            #expect(try second.followedImports() == revision)
            #expect(try shown(second) == published)
            #expect(try await store.followImports(into: second) { bundledContent })
            #expect(try second.followedImports() == "later")
            #expect(try shown(second).hadith.isEmpty)
            await store.close()
        }
    }

    /// Rows on the database that do not hold together (a verse link to a hadith that is not there, as a hand edit
    /// could leave) stop a follow with one line naming them: the copy keeps what it had, and its scratch database is
    /// gone; once they are mended, it follows again.
    @Test func aFollowOfRowsThatDoNotHoldTogetherStopsAndLeavesTheCopyAsItWas() async throws {
        try await PostgresTesting.withDatabase { address in
            let (store, _) = try await storeWithHadithPublished(address)
            let second = try seededDatabase()
            #expect(try await store.followImports(into: second) { bundledContent })
            let (before, revision) = (try shown(second), try await store.importsRevision())
            try await PostgresTesting.administer(
                address, "SET session_replication_role = replica", "INSERT INTO hadith_verse (surah, ayah, hadith_id) VALUES (1, 1, 987654321)",
                "UPDATE meta SET value = 'broken' WHERE key = 'imports_revision'")
            let error = await #expect(throws: SliceCopyError.self) { try await store.followImports(into: second) { bundledContent } }
            #expect(error?.description == "a row of hadith_verse refers to hadith 987654321, which was not copied")
            #expect(try second.followedImports() == revision)
            #expect(try shown(second) == before)
            let attached = try await second.read { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_database_list") }
            #expect(attached == ["main"] || attached == ["main", "temp"], "\(attached)")
            try await PostgresTesting.administer(address, "DELETE FROM hadith_verse WHERE hadith_id = 987654321")
            #expect(try await store.followImports(into: second) { bundledContent })
            #expect(try second.followedImports() == "broken")
            #expect(try shown(second) == before)
            await store.close()
        }
    }

    /// While an import is published (its lock held alone), a follow leaves the copy as it is and says it did not
    /// follow: on a machine whose `serve` shares the importing command's content copy, a follow then would put the
    /// database's imports back under the import, which would publish them in its place. The next follow after takes
    /// the import.
    @Test func noFollowWritesACopyWhileAnImportIsPublished() async throws {
        try await PostgresTesting.withDatabase { address in
            let (store, _) = try await storeWithHadithPublished(address)
            let copy = try seededDatabase()
            #expect(try await store.followImports(into: copy) { bundledContent })
            let (before, revision) = (try shown(copy), try await store.importsRevision())
            try await PostgresTesting.administer(
                address, "DELETE FROM hadith_verse", "DELETE FROM hadith", "DELETE FROM hadith_book",
                "UPDATE meta SET value = 'later' WHERE key = 'imports_revision'")
            let followed = try await PostgresTesting.holding(address, "SELECT pg_advisory_xact_lock(hashtext('dailyverse: content imports'))") {
                try await store.followImports(into: copy) { bundledContent }
            }
            #expect(!followed)
            #expect(try copy.followedImports() == revision)
            #expect(try shown(copy) == before)
            #expect(try await store.followImports(into: copy) { bundledContent })
            #expect(try copy.followedImports() == "later")
            #expect(try shown(copy).hadith.isEmpty)
            await store.close()
        }
    }

    /// Each published slice's row count on the database.
    func publishedCounts(_ store: PostgresStore) async throws -> [String: Int] {
        try await store.transaction { transaction in
            var counts: [String: Int] = [:]
            for slice in ImportedContent.published {
                counts[slice.table] = try await transaction.value(
                    PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(slice.table)\" WHERE \(slice.filter)"), as: Int.self)
            }
            return counts
        }
    }

    /// A publish reads the copy a chunk of rows at a time, each chunk a read of its own, in each table's key's order
    /// (its rowid, or the primary key of a table without one, as `hadith_verse`'s of three columns): in chunks of
    /// one row, every row arrives, once, and a copy following shows what the publishing copy shows.
    @Test func aPublishReadOneRowAtATimeArrivesWhole() async throws {
        try await PostgresTesting.withDatabase { address in
            let (store, first) = try await storeWithHadithPublished(address)
            let published = try shown(first)
            let before = try await publishedCounts(store)
            try #require((before["hadith"] ?? 0) > 2 && (before["hadith_verse"] ?? 0) > 2, "\(before)")
            try await store.transaction { transaction in
                try await SliceCopy.replace(ImportedContent.published, in: transaction, from: first, chunk: 1)
                try await transaction.rows("UPDATE meta SET value = 'one row at a time' WHERE key = 'imports_revision'")
            }
            #expect(try await publishedCounts(store) == before)
            let second = try seededDatabase()
            #expect(try await store.followImports(into: second) { bundledContent })
            #expect(try shown(second) == published)
            await store.close()
        }
    }

    /// Rows in the publishing copy that do not hold together (a verse link to a hadith that is not there) stop the
    /// publish with one line naming them, and the database keeps what it had, under the same revision.
    @Test func aPublishOfRowsThatDoNotHoldTogetherStopsAndLeavesTheDatabaseAsItWas() async throws {
        try await PostgresTesting.withDatabase { address in
            let (store, first) = try await storeWithHadithPublished(address)
            let (before, revision) = (try await publishedCounts(store), try await store.importsRevision())
            let error = await #expect(throws: SliceCopyError.self) {
                try await store.publishImport(through: first, bundled: { bundledContent }) { database in
                    try database.writeWithoutTransaction { db in
                        try db.execute(sql: "PRAGMA foreign_keys = OFF")
                        try db.execute(sql: "INSERT INTO hadith_verse (surah, ayah, hadith_id) VALUES (1, 1, 987654321)")
                        try db.execute(sql: "PRAGMA foreign_keys = ON")
                    }
                }
            }
            #expect(error?.description == "a row of hadith_verse refers to hadith 987654321, which was not copied")
            #expect(try await store.importsRevision() == revision)
            #expect(try await publishedCounts(store) == before)
            await store.close()
        }
    }

    @Test func anInstallationsImportsCopiedByMigrateStoreAreFollowed() async throws {
        // An installation that imported an edition before it had the bundled ones (as one made before they were):
        // its imported blocks have the first ids, which every copy's bundled blocks have too.
        let installation = try seededDatabase()
        try await installation.write { db in try db.execute(sql: "DELETE FROM tafsir_edition") }
        let counts = try installation.ayahCounts()
        let tafsir = try TafsirFolder(directory: Self.fixtures.appendingPathComponent("thaqalayn-tafsir"))
        let edition = try tafsir.read("ar.mizan", ayahCounts: counts)
        try installation.importTafsir(edition, terms: try TafsirEditionCatalog(dataDirectory: dataDirectory).terms(for: edition.info), at: fixedNow)
        let hadith = try HadithFolder(directory: Self.fixtures.appendingPathComponent("hadith"))
        try installation.importHadith(try hadith.read("al-kafi", ayahCounts: counts), at: fixedNow)
        // Reseeded after the imports, as an upgrade does: the bundled rows come back, with ids after the imported ones.
        try await installation.write { db in try db.execute(sql: "DELETE FROM meta WHERE key = 'seed_fingerprint'") }
        try installation.seed(bundledContent)
        try await PostgresTesting.withDatabase { address in
            let store = try await open(address)
            await store.close()
            let connection = try await PostgresStore.connect(address, password: PostgresTesting.password, logger: logger)
            _ = try await StoreCopy.copy(from: installation, into: connection, address: address, schema: .dailyVerse, logger: logger)
            try await connection.close()
            // A copy whose bundled blocks hold ids the installation's imported blocks had (so each copied block gets a
            // new one), with an import of its own in the place of a bundled edition: replaced by the database's, and
            // the bundled edition it stood for comes back.
            let copy = try seededDatabase()
            let own = try tafsir.read("en.nemooneh", ayahCounts: counts)
            try copy.importTafsir(own, terms: try TafsirEditionCatalog(dataDirectory: dataDirectory).terms(for: own.info), at: fixedNow)
            let taken = try await copy.read { db in try Set(Int64.fetchAll(db, sql: "SELECT id FROM tafsir_block")) }
            let imported = try await installation.read { db in
                try Set(Int64.fetchAll(db, sql: "SELECT id FROM tafsir_block WHERE edition_id = 'ar.mizan'"))
            }
            try #require(!taken.isDisjoint(with: imported), "the test needs ids in both")
            let reopened = try await open(address)
            #expect(try await reopened.importsRevision() == "")
            #expect(try await reopened.followImports(into: copy) { bundledContent })
            #expect(try shown(copy) == shown(installation))
            // An import published through that copy: its imported blocks' ids are the database's bundled ones', so
            // the database gives them new ones too. Another copy follows the result.
            let book = try hadith.read("test-book", ayahCounts: counts)
            try await reopened.publishImport(through: copy, bundled: { bundledContent }) { try $0.importHadith(book, at: fixedNow) }
            let other = try seededDatabase()
            #expect(try await reopened.followImports(into: other) { bundledContent })
            #expect(try shown(other) == shown(copy))
            #expect(try shown(other).hadith.count == 2)
            await reopened.close()
        }
    }
}
