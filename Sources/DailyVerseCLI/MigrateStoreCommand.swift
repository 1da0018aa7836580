import AppSchema
import ArgumentParser
import Daemon
import Diagnostics
import Foundation
import Logging
import Storage

/// `dailyverse migrate-store`: an installation's SQLite database copied into PostgreSQL.
struct MigrateStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-store",
        abstract: "Copy an installation's SQLite database into an empty PostgreSQL database: checked, all or nothing.",
        discussion: """
            Every table is copied in one transaction: devices, the schedule queue, the outbox, users and sessions, \
            settings and bookmarks, onboarding, events and hints, published month starts and all content, imported \
            editions and hadith included. Each table is then read back from PostgreSQL and its row count and checksum \
            compared with the SQLite file's before anything is committed; on any difference, or any error, PostgreSQL \
            is left as it was.

            The PostgreSQL database must be empty (its schema is created). Stop `serve` first: the copy takes the \
            SQLite database's scheduler lock, so it refuses a database a scheduler is running on, and no scheduler \
            can start on it meanwhile. The file is only read: the copy is made from a snapshot of it (SQLite's \
            online backup, FILE.migrate-snapshot beside it for the copy's duration: as much free space as the file \
            takes), so a command writing it meanwhile changes nothing copied. Once the copy is committed, \
            FILE.moved says where it went, and `serve` refuses the file from then on (remove FILE.moved to serve it \
            again, as a rollback). The password comes from the systemd credential 'database-password', PGPASSWORD \
            or a passfile (~/.pgpass), never the address. The README's "Moving to PostgreSQL" says how to move an \
            installation with no reminder sent twice or missed.
            """)

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The SQLite database file to copy.", valueName: "file"))
    var from: String

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "The PostgreSQL database to copy into: postgresql://USER@HOST:PORT/DATABASE[?sslmode=verify-full&…].", valueName: "address"))
    var to: String

    @Flag(name: .long, help: "Print JSON for scripts instead of text.")
    var json = false

    struct Result: Encodable {
        let from: String
        let to: String
        let tables: [TableCopy]
        let rows: Int
        let seconds: Double
    }

    func run() async throws {
        let address = try PostgresAddress(to)
        // SQLite's open of a FIFO waits for a writer, and a folder or a device is no database either.
        switch FileKind.of(path: from) {
        case .regular?: break
        case nil: throw CLIError("no SQLite database at '\(from)'")
        case let kind?: throw CLIError("no SQLite database at '\(from)': \(kind.refusal(wanted: .regular))")
        }
        let lock: SchedulerLock
        do {
            lock = try SchedulerLock.acquire(database: from)
        } catch SchedulerLockError.held(_, let holder) {
            throw CLIError(
                "'\(from)' has a scheduler running (\(holder.map { "process \($0)" } ?? "another process")): stop serve before copying its database"
            )
        } catch {
            // Said, though it adds nothing: without a catch-all here the Swift 6.3 compiler fails on this function
            // ("Found ownership error"), since the body no longer runs in a closure.
            throw error
        }
        let password = try PostgresPassword.resolve(for: address)
        // A snapshot of the file, beside it (the same disk), removed when done: the file itself is never written.
        let snapshot = from + ".migrate-snapshot"
        try? FileManager.default.removeItem(atPath: snapshot)
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: snapshot + suffix) }
        }
        let source = try AppDatabase.snapshot(of: from, into: snapshot, schema: .dailyVerse)
        let logger = Logger(label: "dailyverse.migrate-store", factory: { _ in SwiftLogNoOpLogHandler() })
        let started = Date()
        let store = try await PostgresStore.open(address, password: password, schema: .dailyVerse, logger: logger, maximumConnections: 1)
        await store.close()
        let connection = try await PostgresStore.connect(address, password: password, logger: logger)
        let bar = ProgressBar("rows")
        let copies: [TableCopy]
        do {
            copies = try await StoreCopy.copy(from: source, into: connection, address: address, schema: .dailyVerse, logger: logger) {
                done, total in
                bar.update(done, total)
            }
            try? await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
        // The file must not be served again beside PostgreSQL: it would send what PostgreSQL's processes send.
        let moved =
            "copied to \(address) by dailyverse migrate-store at \(ISO8601DateFormatter().string(from: Date())); remove this file to serve '\(from)' again\n"
        do {
            try moved.write(toFile: SchedulerLock.movedMark(database: from), atomically: true, encoding: .utf8)
            // Readable by the service's user, whoever wrote it.
            _ = chmod(SchedulerLock.movedMark(database: from), 0o644)
        } catch {
            throw CLIError(
                "copied, but could not write '\(SchedulerLock.movedMark(database: from))' (\(error.localizedDescription)): do not start serve on '\(from)' again"
            )
        }
        withExtendedLifetime(lock) {}
        let result = Result(
            from: from, to: address.description, tables: copies, rows: copies.map(\.rows).reduce(0, +),
            seconds: (Date().timeIntervalSince(started) * 10).rounded() / 10)
        if json {
            try printJSON(result)
            return
        }
        let width = max(5, copies.map(\.table.count).max() ?? 0)
        print("table".padding(toLength: width, withPad: " ", startingAt: 0) + "        rows  checksum")
        for copy in copies {
            let rows = String(copy.rows)
            print(
                copy.table.padding(toLength: width, withPad: " ", startingAt: 0) + String(repeating: " ", count: max(1, 12 - rows.count)) + rows
                    + "  " + copy.checksum)
        }
        print(
            "copied \(result.rows) rows of \(copies.count) tables from '\(from)' into \(address) in \(result.seconds) s; "
                + "every table's row count and checksum read back the same")
    }
}
