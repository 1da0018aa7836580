import Foundation
import Testing

/// Every statement the sources and the tests send to PostgreSQL goes through `PostgresTransaction` (`rows`, `query`,
/// `execute`, `copy`, `run`) or the store's calls built on it, never through postgres-nio's own calls on a connection
/// or the pool: only that way does a statement on a connection the server ended fail rather than wait for ever (see
/// `ConnectionWatch`). A new domain query written the other way fails here, naming its file and line; so does a test's
/// (a test whose session the server ends, as a test server with a short `idle_in_transaction_session_timeout` does,
/// must fail, not hang the suite).
@Suite struct StatementPathTests {
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The files that call postgres-nio directly: to guard it, or (this one) to show what the check finds.
    static let guarded: Set<String> = [
        "Sources/Storage/PostgresTransaction.swift", "Sources/Storage/ConnectionWatch.swift", "Tests/StorageTests/StatementPathTests.swift",
    ]

    /// postgres-nio's calls that write statements, as code calls them, over lines: its `query` and `execute` take a
    /// `logger:` (`PostgresTransaction`'s never do), its pool's `query` and `execute` whatever they take (but an HTTP
    /// test client's `execute(uri:…)`), and its pool's and connection's other entry points by name.
    static var direct: Regex<AnyRegexOutput> {
        let arguments = #"(?:[^()]|\((?:[^()]|\([^()]*\))*\))*"#
        return try! Regex(
            #"\.\s*(?:query|execute)\("# + arguments
                + #"logger:|client\s*\.\s*(?:query\(|execute\((?!\s*uri\s*:))|\.\s*(?:copyFrom|simpleQuery|prepareStatement|listen|withTransaction|withConnection)\s*[({]"#
        )
    }

    @Test func noStatementBypassesTheWatch() throws {
        let direct = Self.direct
        var found: [String] = []
        var scanned = 0
        for folder in ["Sources", "Tests"] {
            let files = FileManager.default.enumerator(at: Self.package.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                let name = String(file.path.dropFirst(Self.package.path.count + 1))
                guard !Self.guarded.contains(name) else { continue }
                scanned += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: direct) {
                    let line = text[..<match.range.lowerBound].count(where: { $0 == "\n" }) + 1
                    let start = text[..<match.range.lowerBound].lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
                    guard !text[start..<match.range.lowerBound].trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
                    found.append("\(name):\(line): \(text[match.range].prefix(80))")
                }
            }
        }
        #expect(scanned > 100, "the sources and tests were not found beside this file")
        #expect(found.isEmpty, "statements that bypass PostgresTransaction:\n\(found.joined(separator: "\n"))")
        // The check itself finds what it looks for, over lines, and passes over this package's own calls.
        for bypass in [
            "try await store.client.query(\"SELECT 1\")", "_ = try await connection.query(q, logger: logger)",
            "try await connection\n    .query(PostgresQuery(unsafeSQL: \"x\\(y)\"), logger: logger)", "conn.execute(Lookup(hash: h), logger: l)",
            "try await c.copyFrom(table: t, logger: l) { _ in }", "client.withConnection { c in }",
            "try await store.client.execute(Lookup(hash: h))",
        ] {
            #expect(bypass.contains(direct), "\(bypass)")
        }
        for own in [
            "try await transaction.query(q)", "try await session.rows(\"SELECT 1\")", "try await execute(SessionLookup(hash: hash))",
            "try db.execute(sql: s)", "try await client.execute(uri: \"/v1/today\", method: .get)",
        ] {
            #expect(!own.contains(direct), "\(own)")
        }
    }
}
