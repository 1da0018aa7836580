import DailyVerseTestSupport
import Foundation
import Testing

@testable import ContentStore

/// A new way of reading data/ (a new `formatVersion`) seeds an existing database again even when no file changed: the
/// start-up check that skips the content fingerprint carries the format too. (It did not, and a database seeded by an
/// older build kept what that build had read, the excerpts it kept among them.)
@Suite struct SeedFormatTests {
    @Test func theStartUpSignatureChangesWithTheFormat() throws {
        let now = try BundledContent.statSignature(of: dataDirectory)
        #expect(try BundledContent.statSignature(of: dataDirectory) == now)
        #expect(try BundledContent.statSignature(of: dataDirectory, format: BundledContent.formatVersion - 1) != now)
    }
}
