import DailyVerseTestSupport
import Foundation
import PostgresNIO
import Storage
import Testing

/// `COPY`'s text format as `CopyTextRows` writes it, read back by PostgreSQL itself: every text arrives as it was
/// (backslashes, tabs, line ends, a literal `\N`, Arabic, the empty string), NULL stays NULL, numbers keep every bit
/// (the infinities too, and NaN).
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct CopyTextRowsTests {
    let logger = PostgresTesting.logger

    @Test func whatIsCopiedIsWhatIsReadBack() async throws {
        let texts = [
            #"{"a":"say \"peace\"","b":"C:\\path"}"#, "tab\there", "line\nend", "carriage\rreturn", "\\N", "", "بسم الله الرحمن الرحيم",
            "\\", "ends with a backslash\\",
        ]
        let reals = [1_764_217_800.5, 0.1, -2.5e-300, 1e300, .infinity, -.infinity, .nan]
        try await PostgresTesting.withDatabase { address in
            let connection = try await PostgresTesting.session(address)
            _ = try await connection.rows("CREATE TABLE copied (n bigint, t text, r double precision, maybe text)")
            var rows = CopyTextRows()
            for (index, text) in texts.enumerated() {
                rows.integer(Int64(index) - 1)
                rows.text(text)
                rows.real(reals[index % reals.count])
                if index % 2 == 0 { rows.null() } else { rows.text(Array(text.utf8)) }
                rows.endRow()
            }
            let buffer = rows.buffer
            try await connection.copy(into: "copied", columns: ["n", "t", "r", "maybe"]) { writer in
                try await writer.write(buffer)
            }
            var read: [(Int64, String, Double, String?)] = []
            for row in try await connection.rows("SELECT n, t, r, maybe FROM copied ORDER BY n") {
                read.append(try row.decode((Int64, String, Double, String?).self))
            }
            try await connection.connection.close()
            #expect(read.count == texts.count)
            for (index, (number, text, real, maybe)) in read.enumerated() {
                #expect(number == Int64(index) - 1)
                #expect(text == texts[index])
                let written = reals[index % reals.count]
                #expect(real == written || (real.isNaN && written.isNaN), "\(real) where \(written) was written")
                #expect(maybe == (index % 2 == 0 ? nil : texts[index]))
            }
        }
    }
}
