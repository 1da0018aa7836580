import AppSchema
import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import Storage
import Testing
import VerseCalendar

@Suite struct SeedingTests {
    @Test func seedsTheWholeQuranAndCalendar() throws {
        let database = try seededDatabase()
        try database.read { db in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM surah") == 114)
            #expect(try Int.fetchOne(db, sql: "SELECT sum(ayah_count) FROM surah") == 6236)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM ayah_text WHERE edition_id = 'quran-simple'") == 6236)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM ayah_text WHERE edition_id = 'en.pickthall'") == 6236)
            #expect(try Int.fetchOne(db, sql: "SELECT ayah_count FROM surah WHERE number = 2") == 286)
            #expect(try Int.fetchOne(db, sql: "SELECT ayah_count FROM surah WHERE number = 9") == 129)
            #expect(try Int.fetchOne(db, sql: "SELECT ayah_count FROM surah WHERE number = 26") == 227)
            #expect(try String.fetchOne(db, sql: "SELECT revelation FROM surah WHERE number = 96") == "meccan")
            #expect(try String.fetchOne(db, sql: "SELECT revelation FROM surah WHERE number = 2") == "medinan")
            // The notice block is kept with the text it credits.
            let notice = try String.fetchOne(db, sql: "SELECT notice FROM edition WHERE id = 'quran-simple'") ?? ""
            #expect(notice.contains("Tanzil Quran Text (Simple, Version 1.1)"))
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM display_theme") == 4)
            #expect(try String.fetchAll(db, sql: "SELECT id FROM layer ORDER BY position") == Layer.ids)
        }
        let calendar = try database.verseCalendar()
        #expect(calendar.months.count == 12)
        #expect(calendar.months.allSatisfy { $0.verses.count >= 30 })
        #expect(calendar.occasions.count >= 17)
    }

    @Test func theStoredTextIsTheFileByteForByte() throws {
        let database = try seededDatabase()
        let lines = try String(contentsOf: dataDirectory.appendingPathComponent("quran/quran-arabic.txt"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        let stored = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT surah, ayah, text FROM ayah_text WHERE edition_id = 'quran-simple' ORDER BY surah, ayah")
                .map { "\($0["surah"] as Int)|\($0["ayah"] as Int)|\($0["text"] as String)" }
        }
        #expect(stored.count == lines.count)
        #expect(zip(stored, lines).allSatisfy { Array($0.utf8) == Array($1.utf8) })
    }

    @Test func seedingIsIdempotentAndKeepsImports() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-seed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: dataDirectory, to: data)
        let database = try AppDatabase.open(path: folder.appendingPathComponent("db.sqlite").path)
        #expect(try database.seedIfNeeded(from: data) == true)
        let line =
            #"{"verses": "2:255", "layer": "contemporary", "body": "Imported text.", "source": {"work": null, "author": null, "reference": null, "provenance": "editorial"}}"#
        try database.importCommentary(CommentaryFile(data: Data(line.utf8), name: "x.jsonl"), name: "x.jsonl")
        #expect(try database.seedIfNeeded(from: data) == false)

        // A file touched but unchanged: the content fingerprint says there is nothing to seed.
        let themes = data.appendingPathComponent("display-themes.json")
        try Data(contentsOf: themes).write(to: themes)
        #expect(try database.seedIfNeeded(from: data) == false)

        // A real change reseeds, and keeps the import.
        let occasions = data.appendingPathComponent("calendar/occasions.json")
        let edited = try String(contentsOf: occasions, encoding: .utf8).replacingOccurrences(of: "Eid al-Ghadir", with: "Eid al-Ghadir (edited)")
        try edited.write(to: occasions, atomically: true, encoding: .utf8)
        #expect(try database.seedIfNeeded(from: data) == true)
        #expect(try database.verseCalendar().occasions.first { $0.id == "ghadir" }?.name.hasSuffix("(edited)") == true)
        let layers = try database.verse(VerseRange(surah: 2, start: 255), translation: "en.pickthall").layers
        #expect(layers.first { $0.layer.id == "contemporary" }?.entry?.body == "Imported text.")
        #expect(try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ayah_text") } == 2 * 6236)
        #expect(try database.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
    }

    @Test func theStoreSourceSelectsAsTheDataDoes() throws {
        let database = try seededDatabase()
        let data = try database.verseCalendar()
        for year in [1445, 1446, 1447] {
            for month in 1...12 {
                for day in 1...30 {
                    let date = HijriDate(year: year, month: month, day: day)
                    for tomorrow in [HijriDate(year: year, month: month, day: day + 1), HijriDate(year: year, month: month % 12 + 1, day: 1), nil] {
                        #expect(
                            try VerseSelector.select(date, tomorrow: tomorrow, from: database.calendarSource)
                                == VerseSelector.select(date, tomorrow: tomorrow, in: data))
                    }
                }
            }
        }
    }

    /// Foundation and a contemporary reflection on every occasion; the layers that need named sources are filled where
    /// honest sources allow, and `content coverage` lists the rest.
    @Test func everyOccasionHasItsFoundationAndReflection() throws {
        let database = try seededDatabase()
        for occasion in try database.verseCalendar().occasions {
            let layers = try database.verse(occasion.verses, translation: "en.pickthall", occasion: occasion.id).layers
            #expect(layers.map(\.layer.id) == Layer.ids)
            let missing = layers.filter { $0.entry == nil }.map(\.layer.id).filter { ["foundation", "contemporary"].contains($0) }
            #expect(missing.isEmpty, "\(occasion.id) \(occasion.verses.key) lacks \(missing)")
        }
    }

    /// Every selection a month can show has its explanation and its reflection: the two layers this project writes
    /// itself, so nothing but time stands between a selection and them.
    @Test func everyPoolSelectionHasItsFoundationAndReflection() throws {
        let database = try seededDatabase()
        var lacking: [String] = []
        for month in try database.verseCalendar().months {
            for range in month.verses {
                let layers = try database.verse(range, translation: "en.pickthall").layers
                for layer in layers where ["foundation", "contemporary"].contains(layer.layer.id) && layer.entry == nil {
                    lacking.append("\(range.key) \(layer.layer.id)")
                }
                if let reflection = layers.first(where: { $0.layer.id == "contemporary" })?.entry, reflection.source.provenance == "editorial" {
                    #expect(reflection.body.hasPrefix("Editorial reflection: "), "\(range.key)")
                }
            }
        }
        #expect(lacking.isEmpty, "\(lacking.count) pool selections lack a layer: \(lacking.prefix(10))")
    }

    @Test func missingLayersAreNilNotPlaceholders() throws {
        let database = try seededDatabase()
        try database.write { db in try db.execute(sql: "DELETE FROM commentary") }
        let layers = try database.verse(VerseRange(surah: 1, start: 1), translation: "en.pickthall").layers
        #expect(layers.count == 5)
        #expect(layers.allSatisfy { $0.entry == nil })
    }

    @Test func versesThatDoNotExistAreRefused() throws {
        let database = try seededDatabase()
        for key in ["2:300", "1:8", "114:7", "96:1-20"] {
            #expect(throws: StoreError.verseNotFound(key)) { try database.verse(VerseRange(parsing: key), translation: "en.pickthall") }
        }
        #expect(throws: StoreError.unknownTranslation("xx.none")) { try database.verse(VerseRange(surah: 1, start: 1), translation: "xx.none") }
    }

    @Test func unwritableDatabasePathIsAClearError() throws {
        let error = #expect(throws: StorageError.self) { try AppDatabase.open(path: "/proc/dailyverse/db.sqlite") }
        #expect(error?.description.contains("/proc/dailyverse/db.sqlite") == true)
    }
}
