import Foundation
import Testing

/// Every statement the sources send to PostgreSQL goes through `PostgresTransaction` (`rows`, `query`, `execute`,
/// `copy`, `run`) or the store's calls built on it, never through postgres-nio's own calls on a connection or the
/// pool: only that way does a statement on a connection the server ended fail rather than wait for ever (see
/// `ConnectionWatch`). A new domain query written the other way fails here, naming its file and line.
@Suite struct StatementPathTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// The files that call postgres-nio directly, to guard it.
    static let guarded: Set<String> = ["Storage/PostgresTransaction.swift", "Storage/ConnectionWatch.swift"]

    /// postgres-nio's calls that write statements, as code calls them.
    static var direct: Regex<AnyRegexOutput> {
        try! Regex(
            #"client\.(query|execute|withConnection|withTransaction)\(|\.withTransaction\(logger:|\.copyFrom\(|connection\.(query|execute)\(|[^A-Za-z](copy|held|watcher|check|schema)\.query\("#
        )
    }

    @Test func noStatementBypassesTheWatch() throws {
        let direct = Self.direct
        var found: [String] = []
        let files = FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let name = String(file.path.dropFirst(Self.sources.path.count + 1))
            guard !Self.guarded.contains(name) else { continue }
            for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .enumerated()
            where line.contains(direct) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                found.append("\(name):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "statements that bypass PostgresTransaction:\n\(found.joined(separator: "\n"))")
        // The check itself finds what it looks for.
        #expect("try await store.client.query(\"SELECT 1\")".contains(Self.direct))
        #expect("_ = try await connection.query(q, logger: logger)".contains(Self.direct))
        #expect(!"try await transaction.query(q)".contains(Self.direct))
    }
}
