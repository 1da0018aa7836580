import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar

/// Benchmarks, each measured side by side with its baseline in the same run and ending with its figure line.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dailyverse-bench", abstract: "DailyVerse benchmarks (run with swift run -c release).",
        subcommands: [
            HijriBench.self, TodayBench.self, EmitBench.self, HTTPBench.self, DeliverBench.self, FunnelBench.self, CrescentBench.self,
            ChaosBench.self,
        ])
}

/// Our Gregorian→Hijri conversion against Foundation's `.islamicUmmAlQura` `dateComponents`, over the same dates.
struct HijriBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hijri", abstract: "Gregorian→Hijri: table lookup vs Foundation.")
    @Option(help: "Passes over every day of the Umm al-Qura range.") var passes = 3

    func run() throws {
        let range = IslamicCalendar.ummAlQura.supportedRange
        let days = Array(range.lowerBound.dayNumber...range.upperBound.dayNumber)
        var foundation = Calendar(identifier: .islamicUmmAlQura)
        foundation.timeZone = TimeZone(identifier: "UTC")!
        let dates = days.map { Date(timeIntervalSince1970: Double($0) * 86_400) }
        let calendar = IslamicCalendar.ummAlQura

        // Both sides get one warm-up pass; checksums keep the work from being optimised away and prove agreement.
        func ours() throws -> (Double, Int) {
            var sum = 0
            let start = DispatchTime.now().uptimeNanoseconds
            for day in days {
                let h = try calendar.hijriDate(dayNumber: day)
                sum &+= h.year &* 400 &+ h.month &* 31 &+ h.day
            }
            return (Double(DispatchTime.now().uptimeNanoseconds - start), sum)
        }
        func theirs() -> (Double, Int) {
            var sum = 0
            let start = DispatchTime.now().uptimeNanoseconds
            for date in dates {
                let c = foundation.dateComponents([.year, .month, .day], from: date)
                sum &+= c.year! &* 400 &+ c.month! &* 31 &+ c.day!
            }
            return (Double(DispatchTime.now().uptimeNanoseconds - start), sum)
        }
        _ = try ours()
        _ = theirs()
        var oursBest = Double.infinity, theirsBest = Double.infinity
        var checksums = Set<Int>()
        for _ in 0..<passes {
            let (a, s1) = try ours()
            let (b, s2) = theirs()
            oursBest = min(oursBest, a)
            theirsBest = min(theirsBest, b)
            checksums.formUnion([s1, s2])
        }
        guard checksums.count == 1 else { throw ValidationError("our conversion and Foundation's disagree") }
        let n = Double(days.count)
        print("dates: \(days.count) (every day \(range.lowerBound) to \(range.upperBound)), best of \(passes) passes")
        print(String(format: "dailyverse:  %8.1f ns/date", oursBest / n))
        print(String(format: "foundation:  %8.1f ns/date", theirsBest / n))
        print(String(format: "hijri speedup=%.1f", theirsBest / oursBest))
    }
}

/// Whole `dailyverse today` processes on a seeded database.
struct TodayBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "today", abstract: "Median wall time of `dailyverse today` processes.")
    @Option(help: "Number of timed runs (1 to 10000).") var runs = 100

    func validate() throws {
        guard (1...10_000).contains(runs) else { throw ValidationError("invalid --runs \(runs): expected 1 to 10000") }
    }
    @Option(help: "The data/ folder.") var data: String?

    func run() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("dailyverse")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw ValidationError("build dailyverse first: \(binary.path) not found")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-bench-\(getpid())")
        // An explicit database path must be in an existing folder.
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("bench.sqlite").path
        var environment = ProcessInfo.processInfo.environment
        environment["DAILYVERSE_DB"] = db
        if let data { environment["DAILYVERSE_DATA"] = data }

        // posix_spawn and waitpid directly: Foundation's Process.waitUntilExit polls its run loop on Linux,
        // which would add tens of milliseconds to every sample.
        let environmentStrings = environment.map { "\($0.key)=\($0.value)" }
        func timed(_ arguments: [String]) throws -> Double {
            let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
            let envp = environmentStrings.map { strdup($0) } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            var pid: pid_t = 0
            let start = DispatchTime.now().uptimeNanoseconds
            guard posix_spawn(&pid, binary.path, &actions, nil, argv, envp) == 0 else {
                throw ValidationError("cannot start \(binary.path)")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            guard status == 0 else { throw ValidationError("dailyverse \(arguments) failed (status \(status))") }
            return elapsed
        }
        // The first run creates, migrates and seeds the database.
        let seed = try timed(["today", "--date", "2025-03-01", "--tz", "Asia/Baghdad", "--json"])
        print(String(format: "first run (create + migrate + seed everything): %.0f ms", seed))
        // The baseline, in the same run and interleaved: `dailyverse --help`, a process that starts and parses its
        // arguments and does nothing else. What `today` costs beyond it is its own work.
        var samples: [Double] = []
        var baseline: [Double] = []
        for index in 0..<runs {
            let day = CivilDate(dayNumber: try CivilDate(parsing: "2025-01-01").dayNumber + index * 9)
            samples.append(try timed(["today", "--date", day.description, "--tz", "Asia/Baghdad", "--json"]))
            baseline.append(try timed(["--help"]))
        }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        print(String(format: "runs: %d, min %.1f ms, max %.1f ms", runs, samples.min()!, samples.max()!))
        print(String(format: "baseline (--help, the same binary): median %.1f ms, min %.1f ms", median(baseline), baseline.min()!))
        print(
            String(format: "today beyond the baseline: %.1f ms (ratio %.2f)", median(samples) - median(baseline), median(samples) / median(baseline)))
        print(String(format: "today median_ms=%.1f", median(samples)))
    }
}

Bench.main()
