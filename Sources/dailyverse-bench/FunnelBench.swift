import AppSchema
import ArgumentParser
import ContentStore
import Engagement
import Foundation
import GRDB
import Onboarding
import Storage

/// `onboarding funnel` over a table of analytics events, at two sizes (the second ten times the first), against a
/// full scan of the same table in the same run: linear work grows ten times, the old correlated query grew a hundred.
struct FunnelBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "funnel", abstract: "The onboarding funnel at 100,000 and 1,000,000 events, against a full scan of the table.")
    @Option(help: "Events in the larger table (10,000 to 10,000,000); the smaller has a tenth.") var events = 1_000_000
    @Option(help: "Timed runs at each size (1 to 100).") var runs = 5
    @Option(help: "The data/ folder.") var data: String?

    func validate() throws {
        guard (10_000...10_000_000).contains(events) else { throw ValidationError("invalid --events \(events): expected 10000 to 10000000") }
        guard (1...100).contains(runs) else { throw ValidationError("invalid --runs \(runs): expected 1 to 100") }
    }

    /// A table of `count` events: users who start, view the screens in order, some skip, three in five complete.
    static func database(events count: Int, flow: OnboardingFlow, folder: URL) throws -> AppDatabase {
        let database = try AppDatabase.open(path: folder.appendingPathComponent("funnel-\(count).sqlite").path)
        let screens = flow.screens.map(\.id)
        try database.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO analytics_event (user_id, name, screen, properties, at) VALUES (?, ?, ?, '{}', ?)")
            var written = 0
            var user = 0
            let start = 1_740_787_200.0  // 2025-03-01
            while written < count {
                user += 1
                let id = "user-\(user)"
                var at = start + Double(user % 86_400)
                func event(_ name: String, _ screen: String?) throws {
                    guard written < count else { return }
                    try insert.execute(arguments: [id, name, screen, at])
                    written += 1
                    at += 1
                }
                try event("onboarding_started", screens[0])
                let last = user % 5 == 0 ? 2 : screens.count - 1
                for screen in screens[...last] { try event("onboarding_screen_viewed", screen) }
                if user % 5 == 0 { try event("onboarding_skipped", screens[2]) }
                if user % 5 < 3 { try event("onboarding_completed", screens[last]) }
            }
        }
        return database
    }

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-bench-funnel-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let flow = try OnboardingFlow.load(from: try DataDirectory.locate(explicit: data, environment: ProcessInfo.processInfo.environment))
        let from = Date(timeIntervalSince1970: 0), to = Date(timeIntervalSince1970: 4_102_444_800)
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func timed(_ work: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            try work()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        }
        var results: [(events: Int, funnel: Double, scan: Double)] = []
        for count in [events / 10, events] {
            let database = try Self.database(events: count, flow: flow, folder: folder)
            var funnel: [Double] = [], scan: [Double] = []
            var completed = 0
            for _ in 0..<runs {
                funnel.append(try timed { completed = try database.onboardingFunnel(flow: flow, from: from, to: to).completed })
                // The baseline: one pass over every event, reading the columns the funnel reads.
                scan.append(
                    try timed {
                        _ = try database.read { db in
                            try Int.fetchOne(db, sql: "SELECT count(DISTINCT user_id || name || coalesce(screen, '')) FROM analytics_event")
                        }
                    })
            }
            print(
                String(
                    format: "%9d events: funnel median %8.1f ms, full scan %8.1f ms (%d completed)", count, median(funnel), median(scan), completed))
            results.append((count, median(funnel), median(scan)))
        }
        let growth = results[1].funnel / results[0].funnel
        print(String(format: "ten times the events: the funnel took %.1f times as long (the scan %.1f)", growth, results[1].scan / results[0].scan))
        print(
            String(
                format: "funnel events=%d median_ms=%.1f scan_ratio=%.2f growth=%.1f", events, results[1].funnel, results[1].funnel / results[1].scan,
                growth))
    }
}
