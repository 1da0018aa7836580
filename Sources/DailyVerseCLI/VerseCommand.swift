import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct VerseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verse", abstract: "Print a verse (2:255) or passage (96:1-5) with its five layers.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("SURA:AYA or SURA:AYA-AYA.", valueName: "key")) var key: String
    @Option(parsing: .unconditional, help: ArgumentHelp("Translation id.", valueName: "id")) var translation: String = BundledContent.pickthall.id

    func run() throws {
        try reportingErrors {
            let range = try VerseRange(parsing: key)
            let report = try DailyVerseReports(database: global.openDatabase()).verse(range, translation: translation)
            if global.json { return try printJSON(report) }
            print(verseText(report.content, verse: report.verse))
            print(wrap(report.attribution, indent: ""))
        }
    }
}
