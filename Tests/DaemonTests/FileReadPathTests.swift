import Foundation
import Testing

/// Every file the program reads is read through `InputFile` (Diagnostics), which refuses anything but a regular file in
/// one line (a FIFO is not waited on, a device not read without end) and reads within a limit; never through
/// Foundation's or NIOSSL's readers of a path, which do neither. A reader written the other way fails here, naming its
/// file and line. (The benchmarks read files they made themselves and `/proc`, and are not scanned.)
@Suite struct FileReadPathTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// Readers of a whole file by its path or URL, as code calls them.
    static var direct: Regex<AnyRegexOutput> {
        try! Regex(
            #"(?:Data|String)\s*\(\s*contentsOf(?:File)?\s*:|\.contents\s*\(\s*atPath\s*:|FileHandle\s*\(\s*forReading(?:AtPath|From)\s*:|fromPEMFile\s*\(|\.file\s*\(|isReadableFile\s*\("#
        )
    }

    @Test func everyFileIsReadThroughInputFile() throws {
        let direct = Self.direct
        var found: [String] = []
        var scanned = 0
        let files = FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let name = String(file.path.dropFirst(Self.sources.path.count + 1))
            guard !name.hasPrefix("dailyverse-bench/") else { continue }
            scanned += 1
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: direct) {
                let start = text[..<match.range.lowerBound].lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
                guard !text[start..<match.range.lowerBound].trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
                let line = text[..<match.range.lowerBound].count(where: { $0 == "\n" }) + 1
                found.append("\(name):\(line): \(text[match.range])")
            }
        }
        #expect(scanned > 100, "the sources were not found beside this file")
        #expect(found.isEmpty, "files read other than through InputFile:\n\(found.joined(separator: "\n"))")
        // The check finds what it looks for, and passes over InputFile's own calls.
        for reader in [
            "try Data(contentsOf: url)", "String(contentsOfFile: path, encoding: .utf8)", "FileManager.default.contents(atPath: p)",
            "FileHandle(forReadingAtPath: path)", "FileHandle(forReadingFrom: url)", "NIOSSLCertificate.fromPEMFile(caFile)",
            "tls.additionalTrustRoots = [.file(caFile)]", "FileManager.default.isReadableFile(atPath: p)",
        ] {
            #expect(reader.contains(direct), "\(reader)")
        }
        for own in ["try InputFile.contents(of: path, maximumBytes: 1 << 20)", "try InputFile(path: path).readAll(maximumBytes: n)"] {
            #expect(!own.contains(direct), "\(own)")
        }
    }
}
