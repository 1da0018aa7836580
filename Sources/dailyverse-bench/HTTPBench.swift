import Accounts
import AppSchema
import ArgumentParser
import ContentStore
import Engagement
import Foundation
import HTTPAPI
import Hummingbird
import Logging
import Onboarding
import ServiceLifecycle
import Storage
import VerseOfTheDay

/// The API under load: wrk (64 connections) against `GET /v1/today?tz=Asia/Baghdad` and against a trivial route of
/// the same server (`GET /health`), in the same run.
struct HTTPBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http", abstract: "GET /v1/today vs a trivial route of the same server, with wrk (apt-get install wrk).")
    @Option(help: "Seconds per measurement.") var duration = 10
    @Option(help: "Open connections.") var connections = 64
    @Option(help: "wrk threads.") var threads = 2
    @Option(help: "The data/ folder.") var data: String?

    final class Port: @unchecked Sendable {
        let ready = DispatchSemaphore(value: 0)
        var value = 0
    }

    @Option(
        help: ArgumentHelp(
            "A PostgreSQL server: users (and the bearer token each request to /v1/today carries) in a database of the run's own there.",
            valueName: "postgresql://…")) var store: String?

    final class Shared: @unchecked Sendable {
        var scratch: BenchDatabase.Scratch?
        var users: PostgresUserStore?
        var token: String?
    }

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-http-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let directory = try DataDirectory.locate(explicit: data)
        let database = try AppDatabase.open(path: folder.appendingPathComponent("http.sqlite").path, pool: true, createFolder: true)
        try database.seedIfNeeded(from: directory)
        // On PostgreSQL: the users there, and a guest whose token every request to /v1/today carries, so that each is
        // looked up in the database as the app's requests are.
        let shared = Shared()
        defer {
            if let scratch = shared.scratch { try? waitFor { await scratch.drop() } }
        }
        if let store {
            try waitFor {
                let scratch = try await BenchDatabase.Scratch(store, prefix: "dv_http")
                shared.scratch = scratch
                let users = PostgresUserStore(store: try await scratch.open(), themes: Set(try database.displayThemes().map(\.id)))
                shared.users = users
                shared.token = try await users.createGuest(now: Date()).token
            }
        }
        let environment = try APIEnvironment(
            reports: DailyVerseReports(database: database), clock: { Date() },
            onboarding: try OnboardingMachine(flow: OnboardingFlow.load(from: directory), database: database),
            copy: try OnboardingCopy.load(from: directory), hints: try HintCatalog.load(from: directory),
            throttles: shared.users.map { Throttles().shared(in: PostgresThrottleCounter(store: $0.store)) } ?? Throttles(), users: shared.users)
        let port = Port()
        let app = buildApplication(environment, host: "127.0.0.1", port: 0, serverName: "dailyverse-bench", logger: Logger(label: "dailyverse-bench"))
        {
            port.value = $0
            port.ready.signal()
        }
        // Run under a service group of its own, so that the end of the bench is a graceful shutdown, not a cancellation.
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "dailyverse-bench")))
        let server = Task { try await group.run() }
        port.ready.wait()
        defer {
            let stopped = DispatchSemaphore(value: 0)
            Task {
                await group.triggerGracefulShutdown()
                _ = await server.result
                stopped.signal()
            }
            stopped.wait()
        }
        let base = "http://127.0.0.1:\(port.value)"
        print("server on \(base); wrk with \(connections) connections, \(duration) s per route")

        func load(_ path: String, seconds: Int) throws -> (rps: Double, p99: Double) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            let token = path.hasPrefix("/v1/today") ? shared.token.map { ["-H", "Authorization: Bearer \($0)"] } ?? [] : []
            process.arguments = ["wrk", "-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency"] + token + [base + path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.standardError
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0, let rps = Self.requestsPerSecond(text), let p99 = Self.percentile99(text) else {
                throw ValidationError("wrk failed or printed no figures (is it installed? apt-get install wrk):\n\(text)")
            }
            if let errors = text.split(separator: "\n").first(where: { $0.contains("Non-2xx") }) { throw ValidationError("wrk: \(errors)") }
            return (rps, p99)
        }
        // Warm both routes up, then measure them one after the other.
        _ = try load("/health", seconds: 2)
        _ = try load("/v1/today?tz=Asia/Baghdad", seconds: 2)
        let trivial = try load("/health", seconds: duration)
        let today = try load("/v1/today?tz=Asia/Baghdad", seconds: duration)
        print(String(format: "trivial: %.0f requests/s, p99 %.2f ms", trivial.rps, trivial.p99))
        print(String(format: "today:   %.0f requests/s, p99 %.2f ms", today.rps, today.p99))
        let name = shared.users == nil ? "" : " store=postgres"
        print(String(format: "http%@ today_rps=%.0f ratio_to_trivial=%.2f p99_ms=%.2f", name, today.rps, today.rps / trivial.rps, today.p99))
    }

    /// "Requests/sec:  12345.67"
    static func requestsPerSecond(_ text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix("Requests/sec:") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// The "99%" line of wrk's latency distribution, in milliseconds ("99%    3.21ms", "850.00us", "1.20s").
    static func percentile99(_ text: String) -> Double? {
        guard let line = text.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("99%") }),
            let value = line.split(separator: " ").last
        else { return nil }
        for (unit, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where value.hasSuffix(unit) {
            return Double(value.dropLast(unit.count)).map { $0 * scale }
        }
        return nil
    }
}
