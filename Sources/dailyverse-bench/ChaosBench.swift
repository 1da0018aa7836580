import AppSchema
import ArgumentParser
import ContentStore
import Delivery
import Foundation
import Logging
import Notifications
import PostgresNIO
import PushStandIns
import Storage

/// Several `dailyverse serve` processes on one PostgreSQL database, one of them killed (SIGKILL) and started again
/// every few seconds while they emit and deliver a morning's fires to an APNs stand-in. Afterwards every device has
/// exactly one outbox row, delivered; the stand-in got each device's verse once, or twice with the same collapse id
/// where a process died between the service's answer and its record; and no row is left leased. With
/// `--restart-after`, the PostgreSQL server is also restarted once while they work (every connection drops); with
/// `--clock-skew`, each process's clock runs that many seconds after the one before.
struct ChaosBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos", abstract: "serve processes on one PostgreSQL, killed and restarted while they work: each verse sent once.")
    @Option(help: "A PostgreSQL server's address; a database of the run's own is created there and dropped after.") var store: String
    @Option(help: "Devices, their fires spread over three minutes.") var devices = 30_000
    @Option(help: "serve processes at once.") var processes = 3
    @Option(help: "Seconds between kills.") var killEvery = 4.0
    @Option(help: "Give up after this many seconds.") var limit = 600.0
    @Option(help: "The dailyverse binary (default: beside this one).") var binary: String?
    @Option(help: "The data/ folder.") var data: String?
    @Option(
        help: ArgumentHelp(
            "Restart the PostgreSQL server this many seconds in, with the command in $DAILYVERSE_TEST_POSTGRES_RESTART (scripts/with-postgres.sh sets it).",
            valueName: "seconds")) var restartAfter: Double?
    @Option(help: ArgumentHelp("Each process's clock this many seconds after the one before.", valueName: "seconds")) var clockSkew = 0.0

    /// The pinned morning: fires at 08:01, 08:02 and 08:03 UTC; the processes' clocks start at 08:00:30 and run.
    static let morning = ISO8601DateFormatter().date(from: "2025-03-01T08:00:30Z")!

    func run() throws {
        let command = self
        if restartAfter != nil, ProcessInfo.processInfo.environment["DAILYVERSE_TEST_POSTGRES_RESTART"]?.isEmpty ?? true {
            throw ValidationError(
                "--restart-after needs DAILYVERSE_TEST_POSTGRES_RESTART, the command that restarts the server (scripts/with-postgres.sh sets it)")
        }
        guard (0...60).contains(clockSkew) else { throw ValidationError("invalid --clock-skew \(clockSkew): expected 0 to 60 seconds") }
        try waitFor { try await command.measure() }
    }

    /// Restarts the server with the command the environment names; how long it took. Spawned and waited for here
    /// (`posix_spawn`, `waitpid`): Foundation's `Process` never saw this shell end, whose child (the new postmaster)
    /// lives on.
    static func restartServer() throws -> Double {
        let started = Date()
        let command = ProcessInfo.processInfo.environment["DAILYVERSE_TEST_POSTGRES_RESTART"] ?? "false"
        let arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", command].map { $0.withCString { strdup($0) } } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ) == 0 else {
            throw Failed(description: "chaos: cannot run the restart command")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else { throw Failed(description: "chaos: restarting PostgreSQL failed (wait status \(status))") }
        return Date().timeIntervalSince(started)
    }

    struct Failed: Error, CustomStringConvertible { let description: String }

    func measure() async throws {
        let logger = Logger(label: "chaos") { _ in SwiftLogNoOpLogHandler() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-chaos-\(getpid())")
        try await BenchDatabase.withScratch(store, prefix: "dv_chaos") { address, password in
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try await run(address, password: password, folder: folder, logger: logger)
            } catch {
                print("chaos: the processes' logs are kept in \(folder.path)")
                throw error
            }
        }
        try? FileManager.default.removeItem(at: folder)
    }

    func run(_ address: PostgresAddress, password: String?, folder: URL, logger: Logger) async throws {
        let started = Date()
        // The installation: devices in a SQLite file, copied into PostgreSQL; each process's content is a copy of it.
        let source = try AppDatabase.open(path: folder.appendingPathComponent("source.sqlite").path, pool: true)
        try source.seedIfNeeded(from: try DataDirectory.locate(explicit: data))
        let devices = try (0..<devices).map { index in
            (
                line: index + 1,
                settings: DeviceSettings(
                    token: .apns(String(format: "%064x", index + 1)), timeZone: "UTC", reminderTime: try ReminderTime(hour: 8, minute: 1 + index % 3))
            )
        }
        // Added half an hour before: the morning's fire is each device's first.
        _ = try source.addDevices(devices, now: Self.morning.addingTimeInterval(-1800))
        let contents = (0..<processes).map { folder.appendingPathComponent("content-\($0).sqlite").path }
        for path in contents { try source.writeWithoutTransaction { try $0.execute(sql: "VACUUM INTO ?", arguments: [path]) } }
        let schema = try await PostgresStore.open(address, password: password, schema: .dailyVerse, logger: logger, maximumConnections: 1)
        await schema.close()
        let copy = try await PostgresStore.connect(address, password: password, logger: logger)
        _ = try await StoreCopy.copy(from: source, into: copy, address: address, schema: .dailyVerse, logger: logger)
        try await copy.close()
        print("chaos: \(self.devices) devices copied into \(address) in \(Int(Date().timeIntervalSince(started))) s")

        // The stand-in's clock runs as the processes' do: from the pinned morning, at the wall clock's pace.
        let wall = Date()
        let pinned: @Sendable () -> Date = { Self.morning.addingTimeInterval(Date().timeIntervalSince(wall)) }
        let standIn = try PushStandIn(subscriptions: 1, clock: pinned)
        let binary = binary ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("dailyverse").path
        let (processes, killEvery, limit, expected, restartAfter, clockSkew) = (processes, killEvery, limit, self.devices, restartAfter, clockSkew)
        let outcome = try await standIn.run { port -> (kills: Int, seconds: Double, restarts: Int) in
            let ca = try standIn.certificates.writeAuthority(in: folder)
            let p8 = folder.appendingPathComponent("AuthKey.p8")
            try standIn.p8.write(to: p8, atomically: true, encoding: .utf8)
            // Its owner's alone, as a key file should be (serve warns of one others may read).
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: p8.path)
            var environment = ProcessInfo.processInfo.environment
            for (key, value) in [
                "DAILYVERSE_DB": "\(address)", "DAILYVERSE_SINK": "push", "DAILYVERSE_PUSH_CA_FILE": ca, "DAILYVERSE_APNS_KEY_FILE": p8.path,
                "DAILYVERSE_APNS_KEY_ID": standIn.apnsKeyID, "DAILYVERSE_APNS_TEAM_ID": standIn.teamID, "DAILYVERSE_APNS_ENVIRONMENT": "sandbox",
                "DAILYVERSE_APNS_URL": "https://127.0.0.1:\(port)", "DAILYVERSE_APNS_TOPIC": standIn.topic, "DAILYVERSE_DELIVERY_LEASE": "10s",
                "DAILYVERSE_PUSH_TIMEOUT": "2s",
                "DAILYVERSE_LOG_LEVEL": "warning", "DAILYVERSE_DATA": try DataDirectory.locate(explicit: data).path,
            ] {
                environment[key] = value
            }
            if let password { environment["PGPASSWORD"] = password }
            /// A process started now, its clock where the others' are.
            func start(_ index: Int) throws -> Process {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: binary)
                process.arguments = ["serve", "--listen", "none", "--content-db", contents[index]]
                var own = environment
                own["DAILYVERSE_NOW"] = pinned().addingTimeInterval(Double(index) * clockSkew).iso8601UTC
                process.environment = own
                let log = folder.appendingPathComponent("serve-\(index).log")
                if !FileManager.default.fileExists(atPath: log.path) { FileManager.default.createFile(atPath: log.path, contents: nil) }
                let handle = try FileHandle(forWritingTo: log)
                handle.seekToEndOfFile()
                process.standardOutput = handle
                process.standardError = handle
                try process.run()
                return process
            }
            var running = try (0..<processes).map(start)
            let watcher = try await PostgresStore.open(address, password: password, schema: .dailyVerse, logger: logger, maximumConnections: 1)
            var kills = 0
            var restarts = 0
            let began = Date()
            var lastKill = Date()
            var (rows, settled) = (0, 0)
            while true {
                // While the server restarts, the watcher's reads fail too: it looks again.
                if let counts = try? await watcher.rows(
                    "SELECT count(*), count(*) FILTER (WHERE status <> 'pending') FROM outbox"
                ).first?.decode((Int, Int).self) {
                    (rows, settled) = counts
                }
                if rows == expected && settled == expected { break }
                if let restartAfter, restarts == 0, Date().timeIntervalSince(began) >= restartAfter {
                    let took = try Self.restartServer()
                    restarts += 1
                    print(
                        String(
                            format: "chaos: PostgreSQL restarted %.0f s in (%.1f s); %d rows written, %d settled by then", restartAfter, took, rows,
                            settled))
                }
                if Date().timeIntervalSince(began) > limit {
                    print("chaos: provider tokens the stand-in saw (iat): \(await standIn.script.providerTokens.map(\.iat))")
                    print("chaos: the stand-in's problems: \(Set(await standIn.script.problems).sorted().prefix(10))")
                    for process in running { process.terminate() }
                    await watcher.close()
                    throw Failed(description: "chaos: after \(Int(limit)) s, \(rows) rows written and \(settled) settled of \(expected)")
                }
                // Kills while there is work: the first minutes, emission and delivery.
                if Date().timeIntervalSince(lastKill) >= killEvery {
                    let victim = Int.random(in: 0..<processes)
                    kill(running[victim].processIdentifier, SIGKILL)
                    running[victim].waitUntilExit()
                    running[victim] = try start(victim)
                    kills += 1
                    lastKill = Date()
                }
                try await Task.sleep(nanoseconds: 200_000_000)
            }
            for process in running {
                process.terminate()
                process.waitUntilExit()
            }
            await watcher.close()
            return (kills, Date().timeIntervalSince(began), restarts)
        }

        // What the database says: one row per device, all delivered, none left leased.
        let check = try await PostgresStore.open(address, password: password, schema: .dailyVerse, logger: logger, maximumConnections: 1)
        let (rows, distinct, delivered, leased) =
            try await check.rows(
                """
                SELECT count(*), count(DISTINCT device_seq), count(*) FILTER (WHERE status = 'delivered'),
                    count(*) FILTER (WHERE lease_owner IS NOT NULL) FROM outbox
                """
            ).first?.decode((Int, Int, Int, Int).self) ?? (0, 0, 0, 0)
        await check.close()
        // What the stand-in says: each device's verse once, or twice with the same collapse id.
        var byDevice: [String: [String]] = [:]
        for request in await standIn.script.received where request.service == "apns" {
            byDevice[request.key, default: []].append(request.headers["apns-collapse-id"] ?? "")
        }
        let lost = expected - byDevice.count
        // A row is sent again only when a process died between the service's answer and its record: once per such
        // death. Two deaths in a row on the same rows (a kill every few seconds makes that possible) send it a third
        // time; every copy must carry the one collapse id, so that the device shows one notification.
        let repeats = byDevice.values.filter { $0.count == 2 }.count
        let more = byDevice.values.filter { $0.count > 2 }.count
        let mixed = byDevice.values.filter { Set($0).count > 1 }.count
        print(
            "chaos: outbox \(rows) rows for \(distinct) devices, \(delivered) delivered, \(leased) leased; stand-in: \(byDevice.count) devices, \(repeats) sent twice and \(more) more often (a second death), \(mixed) with differing collapse ids"
        )
        print(
            "chaos processes=\(processes) devices=\(expected) kills=\(outcome.kills) restarts=\(outcome.restarts) skew_s=\(clockSkew) repeats=\(repeats + more) lost=\(lost) seconds=\(Int(outcome.seconds.rounded()))"
        )
        guard rows == expected, distinct == expected, delivered == expected, leased == 0, lost == 0, mixed == 0 else {
            throw Failed(description: "chaos: the outbox or the stand-in disagree with one delivery per device (see above)")
        }
    }
}
