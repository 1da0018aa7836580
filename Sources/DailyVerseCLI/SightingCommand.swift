import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct SightingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sighting", abstract: "Manage published month starts for the sighted calendar.",
        discussion: """
            A published start may differ from Umm al-Qura by at most 2 days. Neighbouring months move with it so that \
            every month keeps 29 or 30 days (README, "The calendars").
            """,
        subcommands: [SightingSetCommand.self, SightingListCommand.self, SightingRemoveCommand.self])
}

struct SightingSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set", abstract: "Publish the first day of a Hijri month.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Hijri year.") var year: Int
    @Argument(help: "Hijri month, 1-12.") var month: Int
    @Argument(help: ArgumentHelp("Gregorian first day, YYYY-MM-DD.", valueName: "date")) var date: String

    func run() throws {
        try reportingErrors {
            guard (1...12).contains(month) else { throw CLIError("invalid month \(month): expected 1 to 12") }
            let start = PublishedMonthStart(year: year, month: month, firstDay: try CivilDate(parsing: date))
            try SightedMonthStarts.validate(start)
            let database = try global.openDatabase()
            try database.publishMonthStart(start, at: global.clock())
            if global.json { return try printJSON(start) }
            print("published: \(HijriMonth(rawValue: month)!.englishName) \(year) begins on \(start.firstDay)")
        }
    }
}

struct SightingListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the published month starts.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        try reportingErrors {
            let starts = try global.openDatabase().publishedMonthStarts()
            if global.json { return try printJSON(starts) }
            if starts.isEmpty { print("no published month starts") }
            for start in starts {
                let uq = try IslamicCalendar.ummAlQura.firstDay(year: start.year, month: start.month)
                let shift = start.firstDay.dayNumber - uq
                print(
                    "\(start.year)-\(String(format: "%02d", start.month))  \(HijriMonth(rawValue: start.month)!.englishName.padding(toLength: 18, withPad: " ", startingAt: 0)) \(start.firstDay)  (Umm al-Qura \(shift == 0 ? "same day" : String(format: "%+d", shift)))"
                )
            }
        }
    }
}

struct SightingRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a published month start.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Hijri year.") var year: Int
    @Argument(help: "Hijri month, 1-12.") var month: Int

    func run() throws {
        try reportingErrors {
            guard try global.openDatabase().removeMonthStart(year: year, month: month) else {
                throw CLIError("no published start for \(year)-\(month)")
            }
            if global.json { return try printJSON(["removed": "\(year)-\(month)"]) }
            print("removed the published start of \(year)-\(month)")
        }
    }
}
