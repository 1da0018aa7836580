import Diagnostics
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

    /// A commentary file's limits: one entry (a passage's commentary with its source) is far below a megabyte; a file
    /// is read a line at a time, so its size is bounded only by the entries it holds.
    public static let maximumLineBytes = 1 << 20

    /// Reads the file a line at a time (a line over `maximumLineBytes` is an error naming the file and the line, found
    /// before more than that is held); a folder, a FIFO or a device is refused by name.
    public init(contentsOf url: URL) throws(StoreError) {
        let name = url.lastPathComponent
        var parser = Parser(name: name)
        try StoreError.forEachLine(of: url, name: name, maximumLineBytes: Self.maximumLineBytes) { number, bytes in
            guard let line = String(validating: bytes, as: UTF8.self) else {
                throw StoreError.malformedLine(file: name, line: number, reason: "not valid UTF-8")
            }
            try parser.add(line[...], number: number)
        }
        (entries, lineNumbers) = (parser.entries, parser.lineNumbers)
    }

    public init(data: Data, name: String) throws(StoreError) {
        guard let text = String(data: data, encoding: .utf8) else { throw .malformedData(file: name, reason: "not valid UTF-8") }
        var parser = Parser(name: name)
        for (index, line) in TextLines.of(text).enumerated() {
            guard line.utf8.count <= Self.maximumLineBytes else {
                throw .malformedLine(file: name, line: index + 1, reason: "longer than \(Self.maximumLineBytes) bytes")
            }
            try parser.add(line, number: index + 1)
        }
        (entries, lineNumbers) = (parser.entries, parser.lineNumbers)
    }

    /// Checks and collects entries line by line; the first problem is an error naming the file, the line and why.
    private struct Parser {
        let name: String
        var entries: [CommentaryEntry] = []
        var lineNumbers: [Int] = []
        var seen = Set<String>()
        let decoder = JSONDecoder()

        init(name: String) { self.name = name }

        mutating func add(_ rawLine: Substring, number lineNumber: Int) throws(StoreError) {
            func fail(_ reason: String) -> StoreError { .malformedLine(file: name, line: lineNumber, reason: reason) }
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { return }
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
                throw fail("not a commentary object: \(CommentaryFile.describe(error))")
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
            // A NUL cut the body short where it was stored; an escape or a bidirectional override is printed as it is.
            if let refusal = ImportedText.refusal(of: "the body", in: parsed.body, newlines: true) { throw fail(refusal) }
            for (field, value) in [("work", parsed.source.work), ("author", parsed.source.author), ("reference", parsed.source.reference)] {
                if let value, let refusal = ImportedText.refusal(of: "source.\(field)", in: value) { throw fail(refusal) }
            }
            if let occasion = parsed.occasion, !CommentaryFile.isOccasionID(occasion) {
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
