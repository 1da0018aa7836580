import AppSchema
import ArgumentParser
import Astronomy
import ContentStore
import Foundation
import HijriCalendar
import Storage
import VerseOfTheDay

/// A year of the predicted calendar for a region, each month's 29th evening judged at the region's sites; and
/// `today` on the predicted calendar against `today` on Umm al-Qura (what it cost before), interleaved in the same run.
struct CrescentBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crescent",
        abstract: "A year of crescent predictions for a region, and today on the predicted calendar against Umm al-Qura.",
        discussion: """
            --check recomputes every region's table in data/ step by step (the tests check a sample); --select prints \
            the table from which the Iran preset was chosen (README, "How the regions were chosen").
            """)
    @Option(help: "The region (data/calendar/crescent-regions.json).") var region = "iran"
    @Option(help: "The Hijri year predicted.") var year = 1447
    @Option(help: "Timed runs (1 to 100).") var runs = 10
    @Option(help: "The data/ folder.") var data: String?
    @Flag(help: "Recompute every region's table and compare.") var check = false
    @Flag(help: "Score the candidate rules and site sets on Iran's observed months.") var select = false

    func validate() throws {
        guard (1...100).contains(runs) else { throw ValidationError("invalid --runs \(runs): expected 1 to 100") }
        guard (PredictedMonthStarts.firstYear + 1...PredictedMonthStarts.lastYear).contains(year) else {
            throw ValidationError("invalid --year \(year): expected \(PredictedMonthStarts.firstYear + 1) to \(PredictedMonthStarts.lastYear)")
        }
    }

    func run() throws {
        let directory = try DataDirectory.locate(explicit: data, environment: ProcessInfo.processInfo.environment)
        let regions = try BundledContent.crescentRegions(in: directory)
        if check { return try checkTables(regions, directory) }
        if select { return try selection(directory) }
        let region = try regions.region(region)
        let table = try PredictedTable(
            regionID: region.id, csv: String(contentsOf: directory.appendingPathComponent(CrescentRegions.tableFile(region.id)), encoding: .utf8))
        let calendar = try IslamicCalendar.predicted(table: table, region: region, published: [])
        // The twelve 29th evenings that decide the year's months (the first from the year before's last month).
        let previousStarts = try (0..<12).map { month in
            month == 0 ? try calendar.firstDay(year: year - 1, month: 12) : try calendar.firstDay(year: year, month: month)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func timed(_ work: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            try work()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        }
        var yearTimes: [Double] = []
        var eveningTimes: [Double] = []
        var starts: [Int] = []
        let evenings = previousStarts.count * region.sites.count
        for _ in 0..<runs {
            yearTimes.append(timed { starts = previousStarts.map { PredictedMonthStarts.step(region: region, start: $0).next } })
            // Every site on every one of those evenings, none skipped because another saw the crescent first.
            eveningTimes.append(
                timed {
                    for start in previousStarts {
                        let day = PredictedMonthStarts.lookingEvening(afterStart: start)
                        _ = region.verdicts(dayNumber: day, conjunction: Conjunction.nearest(evening: day))
                    }
                })
        }
        guard try starts == (1...12).map({ try calendar.firstDay(year: year, month: $0) }) else {
            throw ValidationError("the year's predictions differ from the region's table")
        }
        print("region: \(region.name), \(region.sites.count) sites, rule \(region.rule.name); year \(year) AH; \(runs) runs")
        print(String(format: "a year of predictions (12 months): median %.1f ms", median(yearTimes)))
        print(String(format: "every site on every evening (%d evenings): median %.1f ms", evenings, median(eveningTimes)))

        // today: the predicted calendar against Umm al-Qura, on one seeded database, interleaved.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-bench-crescent-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try AppDatabase.open(path: folder.appendingPathComponent("bench.sqlite").path)
        try database.seedIfNeeded(from: directory)
        try database.useCrescentRegion(region.id)
        let reports = DailyVerseReports(database: database)
        var predicted: [Double] = []
        var ummAlQura: [Double] = []
        let first = try CivilDate(parsing: "2025-01-01").dayNumber
        for index in 0..<(runs * 50) {
            let day = CivilDate(dayNumber: first + index * 7 % 700)
            ummAlQura.append(try timed { _ = try reports.today(TodayRequest(date: day, timeZone: "Asia/Tehran", calendar: .ummAlQura)) })
            predicted.append(try timed { _ = try reports.today(TodayRequest(date: day, timeZone: "Asia/Tehran", calendar: .predicted)) })
        }
        print(
            String(
                format: "today (in process, %d each): umm-al-qura median %.3f ms, predicted median %.3f ms (ratio %.2f)", runs * 50,
                median(ummAlQura), median(predicted), median(predicted) / median(ummAlQura)))
        print(String(format: "crescent year_ms=%.1f evenings_per_s=%.0f", median(yearTimes), Double(evenings) / (median(eveningTimes) / 1000)))
    }

    /// Every step of every region's table, as the code gives it now.
    func checkTables(_ regions: CrescentRegions, _ directory: URL) throws {
        for region in regions.regions {
            let text = try String(contentsOf: directory.appendingPathComponent(CrescentRegions.tableFile(region.id)), encoding: .utf8)
            let table = try PredictedTable(regionID: region.id, csv: text)
            let computed = PredictedMonthStarts.chain(region: region)
            guard let index = zip(table.starts, computed).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset else {
                print("\(region.id): all \(table.starts.count - 1) months as the table gives them")
                continue
            }
            throw ValidationError(
                "\(region.id): month \(index) (\(table.firstYear + index / 12)-\(index % 12 + 1)) begins on \(CivilDate(dayNumber: computed[index])), the table says \(CivilDate(dayNumber: table.starts[index])): run dailyverse crescent table --region \(region.id) --out data/\(CrescentRegions.tableFile(region.id))"
            )
        }
    }

    /// The candidates for the Iran preset, each scored on Iran's observed months of 1300–1422 (where the choice is
    /// made) and 1423–1447 (where it is reported): exact first days, and the predicted ones a day early or late.
    func selection(_ directory: URL) throws {
        let places: [String: Site] = [
            "Tehran": Site(name: "Tehran", latitude: 35.6892, longitude: 51.3890, height: 1190),
            "Qom": Site(name: "Qom", latitude: 34.6401, longitude: 50.8764, height: 928),
            "Mashhad": Site(name: "Mashhad", latitude: 36.2605, longitude: 59.6168, height: 995),
            "Ahvaz": Site(name: "Ahvaz", latitude: 31.3183, longitude: 48.6706, height: 20),
            "Bandar Abbas": Site(name: "Bandar Abbas", latitude: 27.1832, longitude: 56.2666, height: 10),
            "Chabahar": Site(name: "Chabahar", latitude: 25.2919, longitude: 60.6430, height: 10),
            "Kermanshah": Site(name: "Kermanshah", latitude: 34.3142, longitude: 47.0650, height: 1350),
            "Zahedan": Site(name: "Zahedan", latitude: 29.4963, longitude: 60.8629, height: 1385),
            "Shiraz": Site(name: "Shiraz", latitude: 29.5918, longitude: 52.5837, height: 1500),
            "Bushehr": Site(name: "Bushehr", latitude: 28.9234, longitude: 50.8203, height: 10),
        ]
        let sets: [(String, [String])] = [
            ("Tehran, Qom, Mashhad", ["Tehran", "Qom", "Mashhad"]),
            ("ten across Iran", ["Tehran", "Qom", "Mashhad", "Ahvaz", "Bandar Abbas", "Chabahar", "Kermanshah", "Zahedan", "Shiraz", "Bushehr"]),
            ("the south coast", ["Ahvaz", "Bandar Abbas", "Chabahar", "Bushehr"]),
            ("Tehran, Mashhad and the south", ["Tehran", "Mashhad", "Ahvaz", "Bandar Abbas", "Chabahar"]),
        ]
        let text = try String(contentsOf: directory.appendingPathComponent("sightings/iran-observed.csv"), encoding: .utf8)
        let observed = try text.split(separator: "\n").dropFirst().map { line -> (year: Int, month: Int, day: Int) in
            let fields = line.split(separator: ",")
            return (Int(fields[0])!, Int(fields[1])!, try CivilDate(parsing: String(fields[2])).dayNumber)
        }
        print("rule    sites                             1300-1422 exact (early/late)   1423-1447 exact (early/late)")
        for rule in VisibilityRule.names.compactMap(VisibilityRule.init(name:)) {
            for (label, names) in sets {
                let region = CrescentRegion(id: "candidate", name: label, sites: names.map { places[$0]! }, rule: rule)
                let starts = PredictedMonthStarts.chain(region: region, firstYear: 1300, lastYear: 1447)
                var scores: [(exact: Int, early: Int, late: Int, total: Int)] = []
                for years in [1300...1422, 1423...1447] {
                    var exact = 0, early = 0, late = 0
                    for month in observed where years.contains(month.year) {
                        let day = starts[(month.year - 1300) * 12 + month.month - 1]
                        if day == month.day { exact += 1 } else if day < month.day { early += 1 } else { late += 1 }
                    }
                    scores.append((exact, early, late, exact + early + late))
                }
                let cells = scores.map {
                    String(format: "%4d/%d %5.1f%% (%d/%d)", $0.exact, $0.total, Double($0.exact) * 100 / Double($0.total), $0.early, $0.late)
                }
                print(
                    "\(rule.name)  \(label.padding(toLength: 32, withPad: " ", startingAt: 0))  \(cells[0].padding(toLength: 29, withPad: " ", startingAt: 0))  \(cells[1])"
                )
            }
        }
    }
}
