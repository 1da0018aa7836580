import ArgumentParser
import Astronomy
import ContentStore
import CrescentMap
import Diagnostics
import Foundation
import HijriCalendar

struct CrescentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crescent", abstract: "The new crescent: its visibility on an evening, and the predicted calendar's tables.",
        discussion: """
            A month of the predicted calendar begins on the day after the first evening its crescent counts as seen \
            (Odeh's criterion, at or above the region's zone) at any of the region's sites, else after 30 days. The \
            regions are in data/calendar/crescent-regions.json (README, "The calendars").
            """,
        subcommands: [CrescentEveningCommand.self, CrescentMapCommand.self, CrescentTableCommand.self])
}

/// The regions from the data folder (these commands do not need the database).
func crescentRegions(_ global: GlobalOptions) throws -> CrescentRegions {
    try BundledContent.crescentRegions(in: global.dataDirectory())
}

struct CrescentEveningCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evening", abstract: "Judge one evening's crescent at each of a region's sites.")
    @OptionGroup var global: GlobalOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("The civil day whose evening is judged, YYYY-MM-DD.", valueName: "date")) var date: String

    func run() throws {
        let day = try CivilDate(parsing: date)
        // From the predicted table's first evenings (1300 AH) to the map's last year: far outside them it answered
        // nonsense (a conjunction after the evening, a negative age).
        let first = try CivilDate(parsing: "1880-01-01").dayNumber
        guard (first...MapPicture.dayNumbers.upperBound).contains(day.dayNumber) else {
            throw CLIError("date \(date) is outside the years an evening can be judged for (1880-01-01 to 2100-12-31)")
        }
        let regions = try crescentRegions(global)
        let region = try global.region(in: regions)
        let conjunction = Conjunction.nearest(evening: day.dayNumber)
        let rows = region.verdicts(dayNumber: day.dayNumber, conjunction: conjunction).compactMap { CrescentEvidence($0, rule: region.rule) }
        if global.json { return try printJSON(rows) }
        print(
            "Evening of \(day) · \(region.name) · rule \(region.rule.name) (zone \(region.rule.zone.rawValue) or better: \(region.rule.zone.meaning))"
        )
        print("conjunction \(rows.first?.conjunction ?? "-")\n")
        print("site              sunset     lag min  age h      V  zone  seen")
        for row in rows {
            let name = row.site.padding(toLength: 16, withPad: " ", startingAt: 0)
            let sunset = String(row.sunset.dropFirst(11).prefix(5))
            print(
                "\(name)  \(sunset) UT  " + String(format: "%6.1f  %5.1f  %5.2f", row.lagMinutes, row.ageHours, row.v)
                    + "  \(row.zone)     \(row.seen ? "yes" : "no")")
        }
        let seen = rows.contains { $0.seen }
        print(
            "\n\(seen ? "Seen" : "Not seen") by the rule: \(seen ? "the next day begins a month" : "a month that reached its 29th day completes 30")"
        )
    }
}

struct CrescentMapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map", abstract: "Draw the world's visibility zones (A-D) for one evening's crescent, with the region's sites.",
        discussion: """
            Each cell of a grid (latitudes within 60°) is judged at its own sunset and best time, as the astronomical \
            centres' maps are. SVG by default (on standard output without --out); --out FILE.png draws a PNG.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("The civil day whose evening is drawn, YYYY-MM-DD (1900 to 2100).", valueName: "date"))
    var date: String
    @Option(parsing: .unconditional, help: ArgumentHelp("Write to this file, .svg or .png (replaced whole).", valueName: "file")) var out: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Grid spacing in degrees, 1 to 10.", valueName: "degrees")) var spacing = 2

    func run() throws {
        let day = try CivilDate(parsing: date)
        guard MapPicture.dayNumbers.contains(day.dayNumber) else {
            throw CLIError("date \(date) is outside the years a map can be drawn for (1900-01-01 to 2100-12-31)")
        }
        guard (1...10).contains(spacing) else { throw CLIError("invalid --spacing \(spacing): expected 1 to 10 degrees") }
        let format = try out.map { path -> String in
            let lower = path.lowercased()
            guard lower.hasSuffix(".svg") || lower.hasSuffix(".png") else {
                throw CLIError("invalid --out '\(path)': expected a file name ending in .svg or .png")
            }
            return String(lower.suffix(3))
        }
        if let out { _ = try checkedOutput(out) }
        if out == nil, global.json { throw CLIError("--json describes the file written: give --out FILE (without it the picture is printed)") }
        let directory = try global.dataDirectory()
        let region = try global.region(in: crescentRegions(global))
        let bytes = try InputFile(path: directory.appendingPathComponent(Coastlines.file).path).readAll(maximumBytes: Coastlines.maximumBytes)
        let coastlines = try Coastlines(geoJSON: Data(bytes))
        let bar = ProgressBar("rows")
        let picture = MapPicture.evening(
            dayNumber: day.dayNumber, region: region, coastlines: coastlines, spacing: Double(spacing), progress: bar.update)
        guard let out else {
            return print(picture.svg, terminator: "")
        }
        let data = format == "png" ? Data(picture.png) : Data(picture.svg.utf8)
        try data.write(to: URL(fileURLWithPath: try checkedPath(out, what: "--out")), options: .atomic)
        if global.json {
            return try printJSON(MapWritten(file: out, bytes: data.count, caption: picture.caption.joined(separator: " / ")))
        }
        print("wrote \(out): \(picture.caption.joined(separator: "; "))")
    }
}

struct CrescentTableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table",
        abstract:
            "Compute a region's predicted calendar, \(PredictedMonthStarts.firstYear)-\(PredictedMonthStarts.lastYear) AH, as the CSV data/calendar/predicted/<region>.csv holds.",
        discussion: "The tables in data/ are made with this command; the tests check that the code still gives them.")
    @OptionGroup var global: GlobalOptions
    @Option(
        parsing: .unconditional, help: ArgumentHelp("Write the table to this file (replaced whole) instead of standard output.", valueName: "file"))
    var out: String?

    func run() throws {
        if let out { _ = try checkedOutput(out) }
        if out == nil, global.json { throw CLIError("--json describes the file written: give --out FILE (without it the table is printed)") }
        let region = try global.region(in: crescentRegions(global))
        let bar = ProgressBar("months of \(region.id)")
        let total = (PredictedMonthStarts.lastYear - PredictedMonthStarts.firstYear + 1) * 12
        let starts = PredictedMonthStarts.chain(region: region) { bar.update($0, total) }
        let table = try PredictedTable(regionID: region.id, firstYear: PredictedMonthStarts.firstYear, starts: starts)
        guard let out else {
            return print(table.csv, terminator: "")
        }
        try Data(table.csv.utf8).write(to: URL(fileURLWithPath: try checkedPath(out, what: "--out")), options: .atomic)
        if global.json { return try printJSON(TableWritten(region: region.id, file: out, months: total)) }
        print("wrote \(out): \(total) months of \(region.name)")
    }
}

/// What `crescent map --json` says of the file it wrote.
struct MapWritten: Encodable {
    let file: String
    let bytes: Int
    let caption: String
}

/// What `crescent table --json` says of the file it wrote.
struct TableWritten: Encodable {
    let region: String
    let file: String
    let months: Int
}
