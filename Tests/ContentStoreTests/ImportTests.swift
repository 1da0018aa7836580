import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import Testing
import VerseCalendar

@Suite struct ImportTests {
    func tanzil(_ lines: [String]) -> Data { Data(lines.joined(separator: "\n").utf8) }

    /// A complete, valid Tanzil file with the given text for every aya, built from the real sura lengths.
    func completeFile(_ counts: [Int], text: (Int, Int) -> String) -> [String] {
        var lines: [String] = []
        for (index, count) in counts.enumerated() { for ayah in 1...count { lines.append("\(index + 1)|\(ayah)|\(text(index + 1, ayah))") } }
        return lines + ["", "# notice"]
    }

    @Test func malformedTanzilLinesNameFileLineAndReason() throws {
        let counts = try seededDatabase().ayahCounts()
        var lines = completeFile(counts) { "t \($0) \($1)" }
        lines[9] = "2|3"  // line 10: one '|'
        #expect(throws: StoreError.malformedLine(file: "t.txt", line: 10, reason: "expected 'sura|aya|text', found one '|'")) {
            try TanzilFile(data: tanzil(lines), name: "t.txt", expectedCounts: counts)
        }
        lines = completeFile(counts) { "t \($0) \($1)" }
        lines.remove(at: 20)  // a gap
        let gap = #expect(throws: StoreError.self) { try TanzilFile(data: tanzil(lines), name: "t.txt", expectedCounts: counts) }
        #expect(gap?.description.hasPrefix("t.txt:21: expected") == true)
        lines = completeFile(counts) { "t \($0) \($1)" }
        lines[0] = "1|1|bad \u{FFFD}"
        #expect(throws: StoreError.self) { try TanzilFile(data: tanzil(lines), name: "t.txt") }
        #expect(throws: StoreError.self) { try TanzilFile(data: tanzil(Array(lines.prefix(100))), name: "t.txt") }
        // A '|' inside the text is kept: only the first two split.
        lines = completeFile(counts) { $0 == 30 && $1 == 10 ? "a | b" : "t" }
        let file = try TanzilFile(data: tanzil(lines), name: "t.txt", expectedCounts: counts)
        #expect(file.ayat.first { $0.surah == 30 && $0.ayah == 10 }?.text == "a | b")
        #expect(file.notice == ["# notice"])
    }

    @Test func translationRoundTrip() throws {
        let database = try seededDatabase()
        let counts = try database.ayahCounts()
        let file = try TanzilFile(data: tanzil(completeFile(counts) { "Test \($0):\($1)" }), name: "x.txt", expectedCounts: counts)
        var reported = 0
        try database.importTranslation(
            file, edition: Edition(id: "en.test", kind: "translation", language: "en", name: "Test", credit: "Test"),
            progress: { done, _ in reported = done })
        #expect(reported == 6236)
        let verse = try database.verse(VerseRange(parsing: "96:1-5"), translation: "en.test")
        #expect(verse.translation.ayat.map(\.text) == (1...5).map { "Test 96:\($0)" })
    }

    @Test func commentaryRoundTripAndAllOrNothing() throws {
        let database = try seededDatabase()
        let good = [
            #"{"verses": "2:255", "layer": "foundation", "body": "One.", "source": {"work": null, "author": null, "reference": null, "provenance": "editorial"}}"#,
            #"# a comment"#,
            #"{"verses": "2:255-257", "layer": "comparative", "body": "Two.", "source": {"work": "W", "author": "A", "reference": "2:255", "provenance": "editorial-summary"}}"#,
        ]
        try database.importCommentary(CommentaryFile(data: Data(good.joined(separator: "\n").utf8), name: "good.jsonl"), name: "good.jsonl")
        let layers = try database.verse(VerseRange(surah: 2, start: 255), translation: "en.pickthall").layers
        #expect(layers[0].entry?.body == "One.")
        // The passage entry serves a verse inside it.
        #expect(layers[4].entry?.body == "Two.")
        #expect(layers[4].entry?.source.work == "W")

        let cases: [(String, String)] = [
            (#"{"verses": "2:300", "layer": "foundation", "body": "x", "source": {"provenance": "editorial"}}"#, "does not exist"),
            (#"{"verses": "2:1", "layer": "tafsir", "body": "x", "source": {"provenance": "editorial"}}"#, "unknown layer 'tafsir'"),
            (#"{"verses": "2:1", "layer": "foundation", "body": "x", "source": {"provenance": "invented"}}"#, "unknown provenance 'invented'"),
            (#"{"verses": "2:1", "layer": "foundation", "body": "x", "sauce": 1, "source": {"provenance": "editorial"}}"#, "unknown key 'sauce'"),
            (#"{"verses": "2:1", "layer": "foundation", "source": {"provenance": "editorial"}}"#, "missing key 'body'"),
            (#"{"verses": 2, "layer": "foundation", "body": "x", "source": {"provenance": "editorial"}}"#, "wrong type"),
            (#"{"verses": "2:1", "#, "invalid JSON"),
        ]
        for (bad, reason) in cases {
            let text = good[0].replacingOccurrences(of: "One.", with: "Changed.") + "\n" + bad
            let error = #expect(throws: StoreError.self) {
                try database.importCommentary(CommentaryFile(data: Data(text.utf8), name: "bad.jsonl"), name: "bad.jsonl")
            }
            #expect(error?.description.contains(reason) == true, "\(error?.description ?? "") should say \(reason)")
            // Every refusal names the file and the line, the bad verse found after parsing included.
            #expect(error?.description.hasPrefix("bad.jsonl:2: ") == true, "\(error?.description ?? "")")
            // Nothing from the bad file was stored, not even its good first line.
            let body = try database.verse(VerseRange(surah: 2, start: 255), translation: "en.pickthall").layers[0].entry?.body
            #expect(body == "One.")
        }
    }
}
