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
        // A third '|' is a column more, never the verse's text: `1|5|x|…` stored "x|…".
        lines = completeFile(counts) { "t \($0) \($1)" }
        lines[4] = "1|5|x|t 1 5"
        #expect(throws: StoreError.malformedLine(file: "t.txt", line: 5, reason: "a third '|' in the text of 1:5: expected 'sura|aya|text'")) {
            try TanzilFile(data: tanzil(lines), name: "t.txt", expectedCounts: counts)
        }
        let file = try TanzilFile(data: tanzil(completeFile(counts) { "t \($0) \($1)" }), name: "t.txt", expectedCounts: counts)
        #expect(file.notice == ["# notice"])
    }

    /// Windows line ends: "\r\n" is one Character in Swift, so a file split on "\n" was one line, "ending at sura 1, aya 1".
    @Test func tanzilAndCommentaryReadWindowsLineEnds() throws {
        let counts = try seededDatabase().ayahCounts()
        let lines = completeFile(counts) { "t \($0) \($1)" }
        let file = try TanzilFile(data: Data(lines.joined(separator: "\r\n").utf8), name: "t.txt", expectedCounts: counts)
        #expect(file.ayat.count == counts.reduce(0, +))
        #expect(file.ayat.allSatisfy { !$0.text.contains("\r") && $0.text == "t \($0.surah) \($0.ayah)" })
        #expect(file.notice == ["# notice"])
        let entries = [
            #"{"verses": "2:255", "layer": "foundation", "body": "One.", "source": {"provenance": "editorial"}}"#,
            #"{"verses": "2:256", "layer": "foundation", "body": "Two.", "source": {"provenance": "editorial"}}"#,
        ]
        let commentary = try CommentaryFile(data: Data(entries.joined(separator: "\r\n").utf8), name: "c.jsonl")
        #expect(commentary.entries.map(\.body) == ["One.", "Two."] && commentary.lineNumbers == [1, 2])
    }

    /// What no text meant to be read holds: a NUL (SQLite kept the text before it), the other C0 controls, DEL, C1
    /// controls and the bidirectional overrides and isolates. Refused in a verse's text, a notice, a commentary body and
    /// its source, naming the file, the line and the character; a tab, and a body's line breaks, are text.
    static let forbidden: [(Character, String)] = [
        ("\u{0}", "U+0000"), ("\u{7}", "U+0007"), ("\u{1B}", "U+001B"), ("\r", "U+000D"), ("\u{7F}", "U+007F"), ("\u{85}", "U+0085"),
        ("\u{9B}", "U+009B"), ("\u{202D}", "U+202D"), ("\u{202E}", "U+202E"), ("\u{2066}", "U+2066"), ("\u{2069}", "U+2069"),
    ]

    @Test func controlCharactersAndOverridesAreRefusedInEveryText() throws {
        let counts = try seededDatabase().ayahCounts()
        for (character, named) in Self.forbidden {
            var lines = completeFile(counts) { "t \($0) \($1)" }
            lines[2] = "1|3|before\(character)after"
            let text = #expect(throws: StoreError.self) { try TanzilFile(data: tanzil(lines), name: "t.txt", expectedCounts: counts) }
            #expect(text?.description.hasPrefix("t.txt:3: the text of 1:3 holds \(named)") == true, "\(text?.description ?? "")")
            lines = completeFile(counts) { "t \($0) \($1)" } + ["# a notice \(character) in the middle"]
            let notice = #expect(throws: StoreError.self) { try TanzilFile(data: tanzil(lines), name: "t.txt", expectedCounts: counts) }
            #expect(notice?.description.contains("the notice holds \(named)") == true, "\(notice?.description ?? "")")
            // In JSON, as an escape.
            let escaped = "\\u" + String(format: "%04x", character.unicodeScalars.first!.value)
            for (body, work, field) in [("before\(escaped)after", "null", "the body"), ("x", "\"W\(escaped)\"", "source.work")] {
                let line =
                    #"{"verses": "2:255", "layer": "classical_shia", "body": "\#(body)", "source": {"work": \#(work), "author": "A", "reference": "R", "provenance": "editorial-summary"}}"#
                let error = #expect(throws: StoreError.self) {
                    try CommentaryFile(data: Data(("# first\n" + line).utf8), name: "c.jsonl")
                }
                #expect(error?.description.hasPrefix("c.jsonl:2: \(field) holds \(named)") == true, "\(error?.description ?? "")")
            }
        }
        // A tab is text, and a body may run over lines (a "\r" only as part of a line break); an embedding sets a run's
        // direction and the sources use it (al-Tawhid's hadith).
        let tabbed = completeFile(counts) { $0 == 1 && $1 == 3 ? "a\tb \u{202B}c\u{202C}" : "t" }
        #expect(try TanzilFile(data: tanzil(tabbed), name: "t.txt").ayat[2].text == "a\tb \u{202B}c\u{202C}")
        let body = #"{"verses": "2:255", "layer": "foundation", "body": "One.\r\n\r\nTwo.\tThree.", "source": {"provenance": "editorial"}}"#
        #expect(try CommentaryFile(data: Data(body.utf8), name: "c.jsonl").entries.first?.body == "One.\r\n\r\nTwo.\tThree.")
    }

    /// A Quran text imported under a translation's id took its place (`today` then found no translation), and the
    /// other way round: each is refused, and the stored edition stays.
    @Test func anEditionIsReplacedOnlyByOneOfItsKind() throws {
        let database = try seededDatabase()
        let counts = try database.ayahCounts()
        let file = try TanzilFile(data: tanzil(completeFile(counts) { "t \($0) \($1)" }), name: "t.txt", expectedCounts: counts)
        #expect(throws: StoreError.editionOfAnotherKind(id: "en.pickthall", kind: "translation")) {
            try database.importQuran(file, edition: Edition(id: "en.pickthall", kind: "quran", language: "ar", name: "Q", credit: "Q"))
        }
        #expect(throws: StoreError.editionOfAnotherKind(id: "quran-simple", kind: "quran")) {
            try database.importTranslation(file, edition: Edition(id: "quran-simple", kind: "translation", language: "en", name: "T", credit: "T"))
        }
        let verse = try database.verse(VerseRange(parsing: "1:1"), translation: "en.pickthall")
        #expect(verse.translation.ayat.first?.text == "In the name of Allah, the Beneficent, the Merciful.")
        #expect(verse.arabic.ayat.first?.text != "t 1 1")
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
