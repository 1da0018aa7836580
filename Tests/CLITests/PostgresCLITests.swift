import DailyVerseTestSupport
import Foundation
import Testing

/// The commands on PostgreSQL: refusals in one line (no file to copy, a running scheduler, a password in the address, a
/// command that does not run there yet, serve with the API), and, with a test server, `migrate-store`'s copy and its
/// refusal to copy twice, and `serve --once`'s pass.
struct PostgresCLITests {
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
        for command in [["today"], ["devices", "list"], ["status"]] {
            let refused = CLI.run(command, database: "postgresql://dv@db.example.org/dailyverse")
            #expect(refused.status == 1 && refused.stderr.contains("this command does not run on PostgreSQL yet"), "\(command): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
        }
        // serve runs on PostgreSQL without the API only: said before anything is opened.
        let api = CLI.run(["serve"], database: "postgresql://dv@db.example.org/dailyverse")
        #expect(
            api.status == 1
                && api.stderr
                    == "dailyverse: the HTTP API does not run on PostgreSQL yet: serve with --listen none (the scheduler and delivery run), or keep SQLite\n",
            "\(api.stderr)")
    }

    /// `serve --once` on PostgreSQL, after the copy: the fires due go out once, through the sink; a second pass finds
    /// nothing; a spool, which is one machine's, is refused, and so is no sink at all.
    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func serveOncePassesOnPostgreSQL() async throws {
        let db = CLI.freshDatabase()
        for n in 1...3 {
            let added = CLI.run(
                [
                    "devices", "add", "--platform", "fcm", "--token", "token-\(n)-" + String(repeating: "f", count: 30), "--tz", "UTC", "--time",
                    "08:0\(n)",
                    "--now", "2025-03-01T00:00:00Z",
                ], database: db)
            try #require(added.status == 0, "\(added.stderr)")
        }
        let content = CLI.freshDatabase(named: "content.sqlite")
        try await PostgresTesting.withDatabase { address in
            try #require(CLI.run(["migrate-store", "--from", db, "--to", "\(address)"]).status == 0)
            let arguments = ["serve", "--once", "--content-db", content, "--now", "2025-03-01T08:05:00Z"]
            let none = CLI.run(arguments, database: "\(address)")
            #expect(none.status == 1 && none.stderr.contains("set the sink"), "\(none.stderr)")
            let spool = CLI.run(arguments + ["--sink", "jsonl:" + content + ".spool"], database: "\(address)")
            #expect(spool.status == 1 && spool.stderr.contains("a spool is one machine's files"), "\(spool.stderr)")
            let first = CLI.run(arguments + ["--sink", "stdout"], database: "\(address)")
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.split(separator: "\n").count == 3, "\(first.stdout.prefix(300))")
            #expect(first.stderr.contains("3 devices due, 3 queued, 0 missed; 3 delivered"), "\(first.stderr)")
            let second = CLI.run(arguments + ["--sink", "stdout"], database: "\(address)")
            #expect(second.stdout.isEmpty && second.stderr.contains("0 devices due, 0 queued, 0 missed; 0 delivered"), "\(second.stderr)")
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
