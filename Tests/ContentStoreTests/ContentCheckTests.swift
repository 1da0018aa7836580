import AppSchema
import DailyVerseTestSupport
import Foundation
import GRDB
import Storage
import Testing
import VerseCalendar

@testable import ContentStore

/// A line of a commentary file: an editorial entry for `verses` in `layer`, bound to `occasion` if given.
private func entry(_ verses: String, _ layer: String, occasion: String? = nil, _ body: String) -> String {
    let bound = occasion.map { #""occasion": "\#($0)", "# } ?? ""
    return
        #"{"verses": "\#(verses)", "layer": "\#(layer)", \#(bound)"body": "\#(body)", "source": {"work": null, "author": null, "reference": null, "provenance": "editorial"}}"#
}

@Suite struct OccasionCommentaryTests {
    /// An entry written for an occasion is shown on that occasion only: a verse inside its passage, shown on an
    /// ordinary day, gets its own entries or nothing, never the occasion's.
    @Test func commentaryBoundToAnOccasionStaysWithIt() throws {
        let database = try seededDatabase()
        let lines = [
            entry("87:14-15", "comparative", occasion: "eid-al-fitr", "For the Eid."),
            entry("87:14-15", "comparative", "For the passage on any day."),
            entry("87:14", "ahlul_bayt", occasion: "eid-al-fitr", "Bound, but for a verse the occasion does not show alone."),
        ]
        try database.importCommentary(CommentaryFile(data: Data(lines.joined(separator: "\n").utf8), name: "t.jsonl"), name: "t.jsonl")
        let range = try VerseRange(parsing: "87:14-15")
        let onTheEid = try database.verse(range, translation: "en.pickthall", occasion: "eid-al-fitr").layers
        #expect(onTheEid[4].entry?.body == "For the Eid." && onTheEid[4].entry?.occasion == "eid-al-fitr")
        let anyDay = try database.verse(range, translation: "en.pickthall").layers
        #expect(anyDay[4].entry?.body == "For the passage on any day." && anyDay[4].entry?.occasion == nil)
        // 87:14 on an ordinary day: nothing written for the Eid, bound entries included.
        let verse = try database.verse(VerseRange(surah: 87, start: 14), translation: "en.pickthall").layers
        for layer in verse { #expect(layer.entry?.occasion == nil, "\(layer.layer.id)") }
        #expect(verse[3].entry?.body != "Bound, but for a verse the occasion does not show alone.")
        // Another occasion does not see them either.
        let other = try database.verse(range, translation: "en.pickthall", occasion: "ashura").layers
        #expect(other[4].entry?.body == "For the passage on any day.")
        // Importing again replaces by (verses, layer, occasion), so the bound and the unbound entries stay two.
        try database.importCommentary(
            CommentaryFile(data: Data(entry("87:14-15", "comparative", occasion: "eid-al-fitr", "Changed.").utf8), name: "t.jsonl"),
            name: "t.jsonl")
        #expect(try database.verse(range, translation: "en.pickthall", occasion: "eid-al-fitr").layers[4].entry?.body == "Changed.")
        #expect(try database.verse(range, translation: "en.pickthall").layers[4].entry?.body == "For the passage on any day.")
    }

    @Test func anImportNamingAnUnknownOccasionIsRefused() throws {
        let database = try seededDatabase()
        for (occasion, words) in [("no-such-day", "t.jsonl:1: unknown occasion 'no-such-day'"), ("Bad Id", "t.jsonl:1: invalid occasion 'Bad Id'")] {
            let error = #expect(throws: StoreError.self) {
                try database.importCommentary(
                    CommentaryFile(data: Data(entry("2:255", "foundation", occasion: occasion, "x").utf8), name: "t.jsonl"), name: "t.jsonl")
            }
            #expect(error?.description.hasPrefix(words) == true, "\(error?.description ?? "")")
        }
        // The same verse and layer for two occasions, and for none, are three entries; a repeat of one is refused.
        let three = [
            entry("2:255", "foundation", "a"), entry("2:255", "foundation", occasion: "ashura", "b"),
            entry("2:255", "foundation", occasion: "ghadir", "c"),
        ]
        #expect(try CommentaryFile(data: Data(three.joined(separator: "\n").utf8), name: "t.jsonl").entries.count == 3)
        #expect(throws: StoreError.self) { try CommentaryFile(data: Data((three + [three[1]]).joined(separator: "\n").utf8), name: "t.jsonl") }
    }

    /// v10 rebuilds the occasion and commentary tables: imported commentary is kept with its ids; the bundled content is
    /// seeded again in the new shape.
    @Test func v10KeepsImportedCommentary() throws {
        let queue = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(queue, upTo: "v9-push-services")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO layer VALUES ('foundation', 1, 'i', 'Foundation', 'd')")
            try db.execute(
                sql: """
                    INSERT INTO commentary (id, surah, ayah_start, ayah_end, layer_id, body, provenance, origin)
                    VALUES (41, 2, 255, 255, 'foundation', 'Imported before v10.', 'editorial', 'import')
                    """)
            try db.execute(sql: "INSERT INTO verse_theme VALUES ('t', 'T', 'r')")
            try db.execute(
                sql: "INSERT INTO occasion (id, name, month, day, surah, ayah_start, ayah_end, theme_id) VALUES ('o', 'O', 1, 1, 1, 1, 1, 't')")
        }
        try Schema.dailyVerse.migrator.migrate(queue)
        try queue.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT * FROM commentary"))
            #expect(row["id"] == 41 && row["body"] == "Imported before v10." && row["occasion_id"] == nil as String?)
            let occasion = try #require(try Row.fetchOne(db, sql: "SELECT * FROM occasion"))
            #expect(occasion["observed"] == "day" && occasion["rank"] == 2)
        }
        let database = try AppDatabase(queue)
        try database.seed(bundledContent)
        #expect(try database.verse(VerseRange(surah: 2, start: 255), translation: "en.pickthall").layers[0].entry?.body == "Imported before v10.")
        #expect(try database.verseCalendar().occasions.contains { $0.observed == .night })
    }
}

@Suite struct ContentCheckTests {
    /// `swift test` runs the content check on data/: it must pass as the content team's CI would run it.
    @Test func theBundledDataPassesTheCheck() throws {
        let check = ContentCheck(directory: dataDirectory)
        #expect(check.errors.isEmpty, "\(check.errors.prefix(10).map { "\($0.subject): \($0.message)" })")
        // As `content check --strict` would: every foundation explains in 50-150 words, every title fits.
        #expect(check.warnings.isEmpty, "\(check.warnings.prefix(10).map { "\($0.subject): \($0.message)" })")
        #expect(check.selections > 400 && check.entries > 900)
    }

    /// The hint that teaches the verse card's layers calls each one by the title the app shows (data/layers.json).
    @Test func theLayersHintNamesEveryLayer() throws {
        func object(_ path: String) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(contentsOf: dataDirectory.appendingPathComponent(path))) as? [String: Any] ?? [:]
        }
        let titles = (try object("layers.json")["layers"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        let hint = (try object("hints/hints.json")["hints"] as? [[String: Any]] ?? []).first { $0["id"] as? String == "layers_swipe" }
        let body = try #require(hint?["body"] as? String)
        #expect(titles.count == 5)
        for title in titles { #expect(body.contains(title), "the layers hint does not name \(title)") }
    }

    /// A copy of data/ with one defect of each kind: every one is found, in one run.
    @Test func findsEveryKindOfDefectAtOnce() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-check-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: dataDirectory, to: folder)
        // Months: the first selection of Muharram also inside a passage one aya longer, in the same month; and 1:2 in
        // Rabi al-Thani, inside the test occasion's passage 1:1-3 below, whose unbound entry then leaks onto ordinary days.
        let monthsURL = folder.appendingPathComponent("calendar/months.json")
        var months = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: monthsURL)) as? [String: Any])
        var list = try #require(months["months"] as? [[String: Any]])
        var first = try #require(list[0]["verses"] as? [String])
        let range = try VerseRange(parsing: first[0])
        let longer = "\(range.surah):\(range.start)-\(range.end + 1)"
        first.append(longer)
        list[0]["verses"] = first
        list[3]["verses"] = (list[3]["verses"] as? [String] ?? []) + ["1:2"]
        months["months"] = list
        try JSONSerialization.data(withJSONObject: months).write(to: monthsURL)
        // Occasions: one on a 30th, without its Arabic name.
        let occasionsURL = folder.appendingPathComponent("calendar/occasions.json")
        var occasions = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: occasionsURL)) as? [String: Any])
        var items = try #require(occasions["occasions"] as? [[String: Any]])
        items.append([
            "id": "on-a-thirtieth", "name": "30 Shawwal: a test", "month": 10, "day": 30, "rank": 3, "verses": "1:1-3",
            "theme": ["id": "x", "name": "X", "relevance": "r"],
        ])
        occasions["occasions"] = items
        try JSONSerialization.data(withJSONObject: occasions).write(to: occasionsURL)
        // Commentary: never shown; editorial naming a source; a summary without its reference; a leak.
        let extra = [
            entry("2:255", "foundation", "Nobody's selection."),
            #"{"verses": "2:155", "layer": "comparative", "body": "x", "source": {"work": "W", "author": null, "reference": null, "provenance": "editorial"}}"#,
            #"{"verses": "2:155", "layer": "classical_shia", "body": "x", "source": {"work": "W", "author": "A", "reference": null, "provenance": "editorial-summary"}}"#,
            entry("1:1-3", "ahlul_bayt", "Written for the test occasion, left unbound."),
        ]
        try extra.joined(separator: "\n").write(to: folder.appendingPathComponent("commentary/zz-test.jsonl"), atomically: true, encoding: .utf8)

        let check = ContentCheck(directory: folder)
        let text = check.errors.map { "\($0.subject): \($0.message)" }
        func found(_ words: String) -> Bool { text.contains { $0.contains(words) } }
        #expect(found("month 1: \(range.surah):\(range.start) is in both \(range.key) and \(longer)"), "\(text)")
        #expect(found("occasion on-a-thirtieth: is on 30 Shawwal"), "\(text)")
        #expect(found("occasion on-a-thirtieth: has no name_arabic"), "\(text)")
        #expect(found("2:255 foundation: is never shown"), "\(text)")
        #expect(found("2:155 comparative: is editorial but names a source"), "\(text)")
        #expect(found("2:155 classical_shia: is editorial-summary without source.reference"), "\(text)")
        #expect(found("1:2 ahlul_bayt: on ordinary days shows the entry for 1:1-3, the passage of occasion on-a-thirtieth"), "\(text)")
        // A folder that cannot be read gives the one error that stopped it.
        try "{".write(to: occasionsURL, atomically: true, encoding: .utf8)
        let broken = ContentCheck(directory: folder)
        #expect(broken.errors.count == 1 && broken.errors[0].message.contains("occasions.json"))
    }
}
