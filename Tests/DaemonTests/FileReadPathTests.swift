import Foundation
import Testing

/// Every file the program reads is read through `InputFile` (Diagnostics), which refuses anything but a regular file in
/// one line (a FIFO is not waited on, a device not read without end) and reads within a limit; never through
/// Foundation's or NIOSSL's readers of a path, which do neither. A reader written the other way fails here, naming its
/// file and line. (The benchmarks read files they made themselves and `/proc`, and are not scanned.)
@Suite struct FileReadPathTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// Readers of a file by its path or URL, as code calls them: Foundation's, NIOSSL's, C's, and GRDB's opening of a
    /// database (SQLite's open of a FIFO waits for a writer).
    static var direct: Regex<AnyRegexOutput> {
        let readers = [
            #"(?:Data|String|NSData|NSString)\s*(?:\.\s*init\s*)?\(\s*contentsOf(?:File|URL)?\s*:"#, #"\.contents\s*\(\s*atPath\s*:"#,
            #"FileHandle\s*\(\s*forReading(?:AtPath|From)\s*:"#, #"InputStream\s*\(\s*(?:fileAtPath|url)\s*:"#, #"\bfopen\s*\("#,
            #"fromPEMFile\s*\("#, #"NIOSSL(?:Certificate|PrivateKey)\s*\(\s*file\s*:"#, #"\.file\s*\("#, #"isReadableFile\s*\("#,
            #"Database(?:Queue|Pool)\s*\(\s*path\s*:"#,
        ]
        return try! Regex(readers.joined(separator: "|"))
    }

    /// The files that open SQLite databases, each after telling the path's kind (`AppDatabase.open`, `snapshot`) or on
    /// a database it opened itself (the checkpointer).
    static let databaseOpeners: Set<String> = ["Storage/AppDatabase.swift", "Storage/WALCheckpointer.swift"]

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
            for match in text.matches(of: direct) where !(Self.databaseOpeners.contains(name) && text[match.range].hasPrefix("Database")) {
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
            "tls.additionalTrustRoots = [.file(caFile)]", "FileManager.default.isReadableFile(atPath: p)", "NSString(contentsOfFile: p)",
            "Data.init(contentsOf: url)", "try NIOSSLCertificate(file: p, format: .pem)", "NIOSSLPrivateKey(file: p, format: .pem)",
            "InputStream(fileAtPath: p)", "fopen(path, \"r\")", "try DatabaseQueue(path: p)", "DatabasePool(path: p, configuration: c)",
        ] {
            #expect(reader.contains(direct), "\(reader)")
        }
        for own in [
            "try InputFile.contents(of: path, maximumBytes: 1 << 20)", "try InputFile(path: path).readAll(maximumBytes: n)", "try DatabaseQueue()",
        ] {
            #expect(!own.contains(direct), "\(own)")
        }
    }
}
