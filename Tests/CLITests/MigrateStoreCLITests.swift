import DailyVerseTestSupport
import Foundation
import Testing

/// `dailyverse migrate-store`: refusals in one line (no file, a running scheduler, a password in the address, another
/// command given a PostgreSQL address), and, with a test server, a copy and the refusal to copy twice.
struct MigrateStoreCLITests {
    @Test func refusalsAreOneLineAndNameWhatIsWrong() throws {
        let db = CLI.freshDatabase()
        _ = CLI.run(["today"], database: db)
        let missing = CLI.run(["migrate-store", "--from", db + ".nothing", "--to", "postgresql://dv@127.0.0.1:1/dv"])
        #expect(missing.status == 1 && missing.stderr == "dailyverse: no SQLite database at '\(db).nothing'\n", "\(missing.stderr)")
        let password = CLI.run(["migrate-store", "--from", db, "--to", "postgresql://dv:hunter2@127.0.0.1/dv"])
        #expect(password.status == 1 && password.stderr.contains("carries a password") && !password.stderr.contains("hunter2"), "\(password.stderr)")
        // A scheduler holds the database (its lock, as serve takes it): the copy waits for no one and writes nothing.
        let lock = open(db + ".scheduler-lock", O_RDWR | O_CREAT, 0o600)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        _ = "4242\n".withCString { write(lock, $0, 5) }
        let held = CLI.run(["migrate-store", "--from", db, "--to", "postgresql://dv@127.0.0.1:1/dv"])
        #expect(held.status == 1 && held.stderr.contains("has a scheduler running (process 4242): stop serve"), "\(held.stderr)")
        for command in [["today"], ["devices", "list"], ["serve", "--once"]] {
            let refused = CLI.run(command, database: "postgresql://dv@db.example.org/dailyverse")
            #expect(refused.status == 1 && refused.stderr.contains("the commands do not run on PostgreSQL yet"), "\(command): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func copiesAnInstallationOnceAndRefusesASecondCopy() async throws {
        let db = CLI.freshDatabase()
        let added = CLI.run(
            ["devices", "add", "--platform", "fcm", "--token", String(repeating: "f", count: 40), "--tz", "Asia/Tehran"], database: db)
        try #require(added.status == 0, "\(added.stderr)")
        try await PostgresTesting.withDatabase { address in
            let copied = CLI.run(["migrate-store", "--from", db, "--to", "\(address)", "--json"])
            #expect(copied.status == 0, "\(copied.stderr)")
            let tables = copied.json["tables"] as? [[String: Any]] ?? []
            let device = tables.first { $0["table"] as? String == "device" }
            #expect(device?["rows"] as? Int == 1 && tables.count > 30, "\(copied.stdout.prefix(400))")
            #expect((copied.json["rows"] as? Int ?? 0) > 20_000)
            let again = CLI.run(["migrate-store", "--from", db, "--to", "\(address)"])
            #expect(again.status == 1 && again.stderr.contains("already holds data"), "\(again.stderr)")
        }
    }
}
