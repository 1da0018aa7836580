import Diagnostics
import Foundation

/// A Tanzil plain-text file: `sura|aya|text` a line, blank lines and `#` notice lines skipped.
public struct TanzilFile: Sendable {
    public struct Ayah: Sendable, Hashable {
        public let surah: Int
        public let ayah: Int
        public let text: String
    }

    public let ayat: [Ayah]
    /// The `#` lines, the source's notice, kept so that what we store can be credited as the source asks.
    public let notice: [String]

    /// Ayat per sura, as the file has them.
    public var ayahCounts: [Int] {
        var counts: [Int] = []
        for ayah in ayat {
            if ayah.surah > counts.count { counts.append(0) }
            counts[ayah.surah - 1] += 1
        }
        return counts
    }

    /// Parses and checks a whole file before anything is stored: canonical order from 1|1, no gaps, 114 suras,
    /// and — when `expectedCounts` is given (a translation checked against the Arabic) — the same ayat per sura.
    /// The first problem is an error naming the file, the line and the reason.
    public init(contentsOf url: URL, expectedCounts: [Int]? = nil) throws(StoreError) {
        let name = url.lastPathComponent
        // The whole Quran is 1.5 MB in Arabic, a few more in a translation with its notes.
        let data = try StoreError.contents(of: url, maximumBytes: 64 << 20)
        try self.init(data: data, name: name, expectedCounts: expectedCounts)
    }

    public init(data: Data, name: String, expectedCounts: [Int]? = nil) throws(StoreError) {
        guard let text = String(data: data, encoding: .utf8) else {
            throw .malformedData(file: name, reason: "not valid UTF-8")
        }
        var ayat: [Ayah] = []
        ayat.reserveCapacity(6236)
        var notice: [String] = []
        var expectedSurah = 1
        var expectedAyah = 1
        var lineNumber = 0
        func fail(_ reason: String) -> StoreError { .malformedLine(file: name, line: lineNumber, reason: reason) }

        for line in TextLines.of(text) {
            lineNumber += 1
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            if line.first == "#" {
                if let refusal = ImportedText.refusal(of: "the notice", in: line) { throw fail(refusal) }
                notice.append(String(line))
                continue
            }
            // `sura|aya|text`: a third '|' is a column more (another export's layout, a misplaced field), never part of a
            // verse's text, which must be stored exactly as the source has it.
            guard let first = line.firstIndex(of: "|") else { throw fail("expected 'sura|aya|text', found no '|'") }
            let rest = line[line.index(after: first)...]
            guard let second = rest.firstIndex(of: "|") else { throw fail("expected 'sura|aya|text', found one '|'") }
            let surahText = line[..<first], ayahText = rest[..<second]
            let body = String(rest[rest.index(after: second)...])
            guard let surah = Int(surahText), (1...114).contains(surah) else { throw fail("invalid sura number '\(surahText)'") }
            guard let ayah = Int(ayahText), ayah >= 1 else { throw fail("invalid aya number '\(ayahText)'") }
            if surah == expectedSurah + 1 && ayah == 1 && expectedAyah > 1 {
                if let expectedCounts, expectedCounts.count >= expectedSurah, expectedCounts[expectedSurah - 1] != expectedAyah - 1 {
                    throw fail("sura \(expectedSurah) ended after \(expectedAyah - 1) ayat; expected \(expectedCounts[expectedSurah - 1])")
                }
                expectedSurah = surah
                expectedAyah = 1
            }
            guard surah == expectedSurah, ayah == expectedAyah else {
                throw fail("expected \(expectedSurah)|\(expectedAyah), found \(surah)|\(ayah)")
            }
            guard !body.trimmingCharacters(in: .whitespaces).isEmpty else { throw fail("empty text for \(surah):\(ayah)") }
            guard !body.unicodeScalars.contains("\u{FFFD}") else {
                throw fail("text of \(surah):\(ayah) contains U+FFFD, a sign of a wrong decoding")
            }
            guard !body.contains("|") else { throw fail("a third '|' in the text of \(surah):\(ayah): expected 'sura|aya|text'") }
            if let refusal = ImportedText.refusal(of: "the text of \(surah):\(ayah)", in: body) { throw fail(refusal) }
            if let expectedCounts, expectedCounts.count >= surah, ayah > expectedCounts[surah - 1] {
                throw fail("sura \(surah) has \(expectedCounts[surah - 1]) ayat; found aya \(ayah)")
            }
            ayat.append(Ayah(surah: surah, ayah: ayah, text: body))
            expectedAyah += 1
        }
        guard expectedSurah == 114, expectedAyah > 1 else {
            throw StoreError.malformedData(file: name, reason: "ends at sura \(expectedSurah), aya \(expectedAyah - 1); the Quran has 114 suras")
        }
        if let expectedCounts, expectedCounts.count == 114, expectedCounts[113] != expectedAyah - 1 {
            throw StoreError.malformedData(file: name, reason: "sura 114 has \(expectedAyah - 1) ayat; expected \(expectedCounts[113])")
        }
        self.ayat = ayat
        self.notice = notice
    }
}
