import Foundation
import VerseCalendar

/// Commentary in JSON Lines, one entry per line (README, "Commentary format"):
///
///     {"verses": "5:67", "layer": "foundation", "body": "…",
///      "source": {"work": null, "author": null, "reference": null, "provenance": "editorial"}}
///
/// An entry written for one occasion names it (`"occasion": "ghadir"`) and is shown on that occasion only.
///
/// Blank lines and lines starting with `#` are skipped. Unknown keys are refused, so a typo cannot drop a field.
public struct CommentaryFile: Sendable {
    public let entries: [CommentaryEntry]
    /// The line each entry came from, for errors found after parsing (a verse the Quran lacks).
    public let lineNumbers: [Int]

    private struct Line: Decodable {
        let verses: String
        let layer: String
        let occasion: String?
        let body: String
        let source: Source

        struct Source: Decodable {
            let work: String?
            let author: String?
            let reference: String?
            let provenance: String
            enum CodingKeys: String, CodingKey, CaseIterable { case work, author, reference, provenance }
        }
        enum CodingKeys: String, CodingKey, CaseIterable { case verses, layer, occasion, body, source }
    }

    /// A commentary file's limits: an edition verse by verse is tens of megabytes; one entry (a passage's commentary
    /// with its source) is far below a megabyte.
    public static let maximumFileBytes = 256 << 20
    public static let maximumLineBytes = 1 << 20

    public init(contentsOf url: URL) throws(StoreError) {
        let data = try StoreError.contents(of: url, maximumBytes: Self.maximumFileBytes)
        try self.init(data: data, name: url.lastPathComponent)
    }

    public init(data: Data, name: String) throws(StoreError) {
        guard let text = String(data: data, encoding: .utf8) else { throw .malformedData(file: name, reason: "not valid UTF-8") }
        var entries: [CommentaryEntry] = []
        var lineNumbers: [Int] = []
        var seen = Set<String>()
        let decoder = JSONDecoder()
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            func fail(_ reason: String) -> StoreError { .malformedLine(file: name, line: lineNumber, reason: reason) }
            guard rawLine.utf8.count <= Self.maximumLineBytes else { throw fail("longer than \(Self.maximumLineBytes) bytes") }
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let lineData = Data(line.utf8)
            if let object = try? JSONSerialization.jsonObject(with: lineData) as? [String: Any] {
                let unknown = Set(object.keys).subtracting(Line.CodingKeys.allCases.map(\.rawValue))
                if let key = unknown.sorted().first { throw fail("unknown key '\(key)'") }
                if let source = object["source"] as? [String: Any],
                    let key = Set(source.keys).subtracting(Line.Source.CodingKeys.allCases.map(\.rawValue)).sorted().first
                {
                    throw fail("unknown key 'source.\(key)'")
                }
            }
            let parsed: Line
            do { parsed = try decoder.decode(Line.self, from: lineData) } catch {
                throw fail("not a commentary object: \(Self.describe(error))")
            }
            let verses: VerseRange
            do { verses = try VerseRange(parsing: parsed.verses) } catch { throw fail(error.description) }
            guard Layer.ids.contains(parsed.layer) else { throw fail(StoreError.unknownLayer(parsed.layer).description) }
            guard !parsed.body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw fail("empty body") }
            guard CommentarySource.provenances.contains(parsed.source.provenance) else {
                throw fail(
                    "unknown provenance '\(parsed.source.provenance)': expected one of \(CommentarySource.provenances.joined(separator: ", "))")
            }
            guard !parsed.body.unicodeScalars.contains("\u{FFFD}") else { throw fail("body contains U+FFFD, a sign of a wrong decoding") }
            if let occasion = parsed.occasion, !Self.isOccasionID(occasion) {
                throw fail("invalid occasion '\(occasion)': expected an occasion id such as ashura or qadr-23")
            }
            let source = CommentarySource(
                work: parsed.source.work, author: parsed.source.author, reference: parsed.source.reference,
                provenance: parsed.source.provenance)
            let entry = CommentaryEntry(verses: verses, layer: parsed.layer, occasion: parsed.occasion, body: parsed.body, source: source)
            guard seen.insert(entry.key).inserted else {
                throw fail("a second entry for \(verses.key) in layer \(parsed.layer)" + (parsed.occasion.map { " for occasion \($0)" } ?? ""))
            }
            entries.append(entry)
            lineNumbers.append(lineNumber)
        }
        self.entries = entries
        self.lineNumbers = lineNumbers
    }

    /// Occasion ids are lowercase letters, digits and hyphens, at most 64.
    static func isOccasionID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing key '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "wrong type for '\(path)'"
        case DecodingError.dataCorrupted: return "invalid JSON"
        default: return "invalid JSON"
        }
    }
}
