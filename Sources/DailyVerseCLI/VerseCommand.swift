import ArgumentParser
import ContentStore
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct VerseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verse", abstract: "Print a verse (2:255) or passage (96:1-5) with its five layers.",
        discussion: """
            With --occasion, the occasion's own passage with the layers written for it first: how an occasion that \
            shares its day with one that leads (`today` names it under "Also") is read. `dailyverse calendar` lists \
            the occasions' ids.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("SURA:AYA or SURA:AYA-AYA (with --occasion, leave it out).", valueName: "key")) var key: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("An occasion's id: its passage and its own layers.", valueName: "id"))
    var occasion: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Translation id.", valueName: "id")) var translation: String = BundledContent.pickthall.id
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Print one layer only: foundation, classical_shia, contemporary, ahlul_bayt or comparative.", valueName: "layer"))
    var layer: String?
    @Flag(help: "With --layer: the layer's whole text (the edition's blocks for the verses), not the excerpt a day shows.")
    var full = false
    @OptionGroup var reader: ReaderLanguageOption

    func validate() throws {
        if let layer, !Layer.ids.contains(layer) {
            throw ValidationError("unknown layer '\(layer.prefix(40))': expected one of \(Layer.ids.joined(separator: ", "))")
        }
        if full && layer == nil { throw ValidationError("--full needs --layer") }
        switch (key, occasion) {
        case (nil, nil): throw ValidationError("give a verse (2:255), a passage (96:1-5), or --occasion ID")
        case (_?, _?): throw ValidationError("--occasion reads the occasion's own passage: leave out the verse")
        case (nil, _?) where layer != nil: throw ValidationError("--layer reads a verse's layer: give the verse, not --occasion")
        default: break
        }
    }

    func run() async throws {
        let database = try await global.openContent()
        if let occasion {
            let report = try DailyVerseReports(database: database).occasion(
                occasion, translation: translation, language: reader.language)
            if global.json { return try printJSON(report) }
            var out = report.occasion.name + (report.occasion.nameArabic.map { " (\($0))" } ?? "") + "\n"
            if let description = report.occasion.description { out += wrap(description, indent: "") + "\n" }
            print(out + "\n" + verseText(report.content, verse: report.verse) + wrap(report.attribution, indent: ""))
            return
        }
        let range = try VerseRange(parsing: key ?? "")
        if let layer {
            let reports = DailyVerseReports(database: database)
            if full {
                let commentary = try reports.commentary(range, layer: layer, language: reader.language)
                if global.json { return try printJSON(commentary) }
                print("\(commentary.title) — \(commentary.key)\n")
                print(wrap(commentary.text ?? "(no entry yet)", indent: "  "))
                if let source = commentary.source {
                    print("\n" + wrap(sourceLine(source), indent: "  "))
                    if !commentary.whole {
                        print(wrap("(the part of the edition the repository bundles: import the edition for its whole text)", indent: "  "))
                    }
                }
                return
            }
            let report = try reports.verse(range, translation: translation, language: reader.language)
            guard let shown = report.layers.first(where: { $0.id == layer }) else { return }
            if global.json { return try printJSON(shown) }
            print("\(shown.title) — \(range.key)\n")
            print(wrap(shown.body ?? "(no entry yet)", indent: "  "))
            if let source = shown.source { print("\n" + wrap(sourceLine(source) + (shown.more ? " · more: --full" : ""), indent: "  ")) }
            return
        }
        let report = try DailyVerseReports(database: database).verse(range, translation: translation, language: reader.language)
        if global.json { return try printJSON(report) }
        print(verseText(report.content, verse: report.verse))
        print(wrap(report.attribution, indent: ""))
    }
}
