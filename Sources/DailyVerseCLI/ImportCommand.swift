import ArgumentParser
import ContentStore
import Diagnostics
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import Quran text, a translation or commentary. The whole file is checked first; a bad line imports nothing.",
        discussion: """
            With a PostgreSQL database (--db, DAILYVERSE_DB or `database`), an import is made once for every machine: \
            into this machine's content copy (DAILYVERSE_CONTENT_DB or content_database), with every check, then \
            published to the database in one transaction; every serve's copy follows it within a minute.
            """,
        subcommands: [
            ImportQuranCommand.self, ImportTranslationCommand.self, ImportCommentaryCommand.self, ImportTafsirCommand.self,
            ImportHadithCommand.self,
        ])
}

struct ImportQuranCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "quran", abstract: "Import Arabic Quran text in Tanzil format (sura|aya|text).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Tanzil text file.", valueName: "file")) var file: String
    @Option(parsing: .unconditional, help: ArgumentHelp("Edition id; the bundled Arabic is quran-simple.", valueName: "id")) var id: String =
        BundledContent.arabicEdition.id
    @Option(parsing: .unconditional, help: ArgumentHelp("Edition name.", valueName: "name")) var name: String = BundledContent.arabicEdition.name

    func run() async throws {
        guard EditionID.isQuranText(id) else {
            throw CLIError("invalid edition id '\(id)': expected lower-case letters, digits, '.', '_' or '-', such as quran-simple")
        }
        try checkedText(name, what: "name")
        let database = try global.importDatabase(edition: id)
        let parsed = try TanzilFile(contentsOf: URL(fileURLWithPath: file))
        let bar = ProgressBar("quran")
        let edition = Edition(id: id, kind: "quran", language: "ar", name: name, credit: BundledContent.arabicEdition.credit)
        try await global.importing(into: database) { try $0.importQuran(parsed, edition: edition, progress: bar.update) }
        try report(global.json, ImportResult(kind: "quran", id: id, count: parsed.ayat.count, file: file))
    }
}

struct ImportTranslationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "translation", abstract: "Import a translation in Tanzil format; its ayat must match the Arabic.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Tanzil text file.", valueName: "file")) var file: String
    @Option(parsing: .unconditional, help: ArgumentHelp("Translation id, e.g. en.pickthall.", valueName: "id")) var id: String
    @Option(parsing: .unconditional, help: ArgumentHelp("Translation name.", valueName: "name")) var name: String?
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Language code, two or three lowercase letters. Default: the id's (en for en.pickthall); another is refused.", valueName: "code"))
    var language: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Credit line shown with the text.", valueName: "text")) var credit: String?

    func run() async throws {
        // The id is LANGUAGE.NAME: its language is the translation's. `--id xx.test` was stored as English (the
        // default), and `--id en.test --language zz` as zz.
        guard let idLanguage = EditionID.translationLanguage(id) else {
            throw CLIError("invalid translation id '\(id)': expected LANGUAGE.NAME such as en.pickthall")
        }
        if let language {
            guard EditionID.isLanguage(language) else {
                throw CLIError("invalid --language '\(language)': expected a language's code (BCP 47), two or three lowercase letters, such as en")
            }
            guard language == idLanguage else {
                throw CLIError(
                    "--language '\(language)' is not the language of the translation id '\(id)' ('\(idLanguage)'): leave --language out, or name the id \(language).NAME"
                )
            }
        }
        for (what, text) in [("name", name), ("credit", credit)] { if let text { try checkedText(text, what: what) } }
        let database = try global.importDatabase(edition: id)
        let parsed = try TanzilFile(contentsOf: URL(fileURLWithPath: file), expectedCounts: database.ayahCounts())
        let bar = ProgressBar("translation")
        let edition = Edition(id: id, kind: "translation", language: idLanguage, name: name ?? id, credit: credit ?? "Translation: \(name ?? id)")
        try await global.importing(into: database) { try $0.importTranslation(parsed, edition: edition, progress: bar.update) }
        try report(global.json, ImportResult(kind: "translation", id: id, count: parsed.ayat.count, file: file))
    }
}

struct ImportCommentaryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commentary",
        abstract: "Import commentary in JSON Lines (see the README); an entry replaces the one for the same verses, layer and occasion.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("JSON Lines file.", valueName: "file")) var file: String

    func run() async throws {
        let url = URL(fileURLWithPath: file)
        let parsed = try CommentaryFile(contentsOf: url)
        let database = try global.importDatabase()
        let bar = ProgressBar("commentary")
        try await global.importing(into: database) { try $0.importCommentary(parsed, name: url.lastPathComponent, progress: bar.update) }
        try report(global.json, ImportResult(kind: "commentary", id: nil, count: parsed.entries.count, file: file))
    }
}

/// Edition ids and language codes, checked character by character: a pattern ending in `$` let a final line break
/// through (`--id $'en.x\n'` and `--language $'en\n'` were imported).
enum EditionID {
    static func isLower(_ byte: UInt8) -> Bool { (97...122).contains(byte) }
    static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

    /// A BCP 47 primary language subtag as the imports take it: two or three lowercase ASCII letters (`en`, `ar`, `fas`).
    /// Its shape only: no list of the languages is kept.
    static func isLanguage(_ text: some StringProtocol) -> Bool { (2...3).contains(text.utf8.count) && text.utf8.allSatisfy { isLower($0) } }

    /// A Quran text's id: a lowercase letter or digit, then up to 63 of them, `.`, `_` and `-` (`quran-simple`).
    static func isQuranText(_ id: String) -> Bool {
        guard let first = id.utf8.first, isLower(first) || isDigit(first), (1...64).contains(id.utf8.count) else { return false }
        return id.utf8.allSatisfy { isLower($0) || isDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// A translation's id, LANGUAGE.NAME (`en.pickthall`: the language as `isLanguage` takes it, the name 1 to 40
    /// lowercase letters, digits, `_` and `-`): its language, or nil for anything else.
    static func translationLanguage(_ id: String) -> String? {
        guard let dot = id.firstIndex(of: "."), isLanguage(id[..<dot]) else { return nil }
        let name = id[id.index(after: dot)...]
        guard (1...40).contains(name.utf8.count),
            name.utf8.allSatisfy({ isLower($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else { return nil }
        return String(id[..<dot])
    }
}

struct ImportResult: Encodable {
    let kind: String
    let id: String?
    let count: Int
    let file: String
}

private func report(_ json: Bool, _ result: ImportResult) throws {
    if json { return try printJSON(result) }
    print(
        "imported \(result.count) \(result.kind == "commentary" ? "entries" : "ayat") of \(result.kind)\(result.id.map { " '\($0)'" } ?? "") from \(result.file)"
    )
}

struct ImportTafsirCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tafsir", abstract: "Import whole commentary editions from a folder in the layout of ThaqalaynTafsirData.",
        discussion: """
            The folder holds editions.json and {edition}/{sura}.json (github.com/narmafraz/ThaqalaynTafsirData). Each \
            edition is read and checked whole before it is written, in one transaction: all of it or none (an edition \
            imported before is replaced). Each edition's terms are printed as data/tafsir-editions.json gives them for \
            its source: import only what you have the right to use.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The dataset's folder (for tafsir-api, its tafsir/ folder).", valueName: "dir")) var directory: String
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("thaqalayn (narmafraz/ThaqalaynTafsirData) or tafsir-api (spa5k/tafsir_api).", valueName: "format"))
    var format: TafsirFolder.Format = .thaqalayn
    @Option(
        name: .customLong("edition"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("An edition to import (repeat for more). Default: every edition listed.", valueName: "id"))
    var editions: [String] = []

    struct Imported: Encodable {
        let edition: String
        let name: String
        let author: String
        let blocks: Int
        let verses: Int
        let licence: String
        let machineTranslation: Bool?
        enum CodingKeys: String, CodingKey { case edition, name, author, blocks, verses, licence, machineTranslation = "machine_translation" }

        /// `machine_translation` is null, not absent, when it is not known.
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(edition, forKey: .edition)
            try container.encode(name, forKey: .name)
            try container.encode(author, forKey: .author)
            try container.encode(blocks, forKey: .blocks)
            try container.encode(verses, forKey: .verses)
            try container.encode(licence, forKey: .licence)
            try container.encode(machineTranslation, forKey: .machineTranslation)
        }
    }

    func run() async throws {
        let folder = try TafsirFolder(directory: URL(fileURLWithPath: try checkedPath(directory, what: "the folder's name")), format: format)
        let catalog = try TafsirEditionCatalog(dataDirectory: global.dataDirectory())
        let chosen = editions.isEmpty ? folder.editions.map(\.id) : editions
        // Every edition named is one the folder has, before any is imported: an unknown one last stopped the command
        // with the others already in.
        let known = Set(folder.editions.map(\.id))
        if let unknown = chosen.first(where: { !known.contains($0) }) {
            throw CLIError("unknown edition '\(unknown)' in '\(directory)' (it has: \(known.sorted().joined(separator: ", "))); nothing was imported")
        }
        let database = try global.importDatabase()
        let counts = try database.ayahCounts()
        let now = try global.clock()
        // One import for all the editions: on PostgreSQL, published once (each edition read as it is imported).
        let done = try await global.importing(into: database) { database in
            try chosen.map { id in
                let edition = try folder.read(id, ayahCounts: counts, progress: ProgressBar("\(id) suras").update)
                let terms = catalog.terms(for: edition.info)
                try database.importTafsir(edition, terms: terms, at: now, progress: ProgressBar("\(id) rows").update)
                let result = Imported(
                    edition: id, name: edition.info.nameEnglish ?? edition.info.name, author: edition.info.authorEnglish ?? edition.info.author,
                    blocks: edition.blocks.count, verses: edition.verses.count, licence: terms.licence, machineTranslation: terms.machineTranslation)
                return (result: result, source: edition.info.source)
            }
        }
        var sources: [(source: String, licence: String)] = []
        for (result, source) in done {
            if !sources.contains(where: { $0.source == source }) { sources.append((source, result.licence)) }
            if !global.json {
                let machine =
                    result.machineTranslation.map { $0 ? "a machine translation" : "not a machine translation" } ?? "machine translation not known"
                print("imported \(result.edition): \(result.name), \(result.author) — \(result.blocks) blocks, \(result.verses) verses; \(machine)")
            }
        }
        if global.json { return try printJSON(done.map(\.result)) }
        // Each source's terms once, after the editions that come from it.
        for (source, licence) in sources { print("terms of \(source): \(licence)") }
    }
}

struct ImportHadithCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hadith", abstract: "Import hadith collections from narmafraz/ThaqalaynDataSources, linked to the verses they cite.",
        discussion: """
            DIR is the dataset (or its scraped/ folder): al-Kafi from hubeali_com/Al-Kafi-Volume-1 … 8 (hubeali.com's \
            translation, whose text marks each verse a hadith cites as [2:255]), and the thaqalayn.net books of \
            thaqalayn_api/<book>/hadiths.json (Nahj al-Balagha, Uyun Akhbar al-Rida, …; the verses read from the \
            translators' citations, such as (al-Nisa, 4:54)). Each hadith keeps its volume, book, chapter and number as the \
            source gives them, and its gradings where given. A collection is read and checked whole, then written in one \
            transaction, replacing one imported before. Nothing states a licence for these translations: import them \
            only with the right to use them; they are never bundled. The ahlul_bayt layer shows them with the source \
            hadith (or hadith:BOOK) in --layers; data/layers.json names it by default.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The dataset's folder.", valueName: "dir")) var directory: String
    @Option(
        name: .customLong("book"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("A collection to import (al-kafi, nahj-al-balagha, …); repeat it. Default: every one found.", valueName: "id"))
    var books: [String] = []

    struct Imported: Encodable {
        let book: String
        let title: String
        let hadiths: Int
        let citing: Int
        let verses: Int
        let licence: String
    }

    func run() async throws {
        let folder = try HadithFolder(directory: URL(fileURLWithPath: try checkedPath(directory, what: "the folder's name")))
        for book in books where !folder.books.contains(book) {
            throw CLIError("no collection '\(book.prefix(80))' in \(directory): found \(folder.books.joined(separator: ", "))")
        }
        let database = try global.importDatabase()
        let counts = try database.ayahCounts()
        // Every collection read and checked before any is written: a broken one imports nothing.
        var read: [HadithBook] = []
        for id in books.isEmpty ? folder.books : books {
            let reading = ProgressBar("\(id) files")
            do {
                read.append(try folder.read(id, ayahCounts: counts, progress: reading.update))
            } catch {
                // Every collection was asked for: say which can be named, so the readable ones can be imported.
                guard books.isEmpty else { throw error }
                throw CLIError(
                    "\(error); nothing imported: name the collections to import with --book (found: \(folder.books.joined(separator: ", ")))")
            }
        }
        let now = try global.clock()
        // One import for all the collections: on PostgreSQL, published once.
        let books = read
        try await global.importing(into: database) { database in
            for book in books { try database.importHadith(book, at: now, progress: ProgressBar("\(book.id) hadith").update) }
        }
        var imported: [Imported] = []
        for book in read {
            let id = book.id
            let citing = book.hadiths.filter { !$0.verses.isEmpty }
            let result = Imported(
                book: id, title: book.title, hadiths: book.hadiths.count, citing: citing.count, verses: Set(citing.flatMap(\.verses)).count,
                licence: HadithBook.terms)
            imported.append(result)
            if !global.json {
                print("imported \(id): \(book.title), \(book.author) — \(result.hadiths) hadith, \(result.citing) citing \(result.verses) verses")
            }
        }
        if global.json { return try printJSON(imported) }
        print("terms: \(HadithBook.terms)")
    }
}

/// An edition's name or credit line as given: some text, on one line, of a sensible length, holding what imported
/// text may hold (`ImportedText`: a bidirectional override in `--name` was taken where the file's was refused).
func checkedText(_ text: String, what: String) throws {
    guard !text.trimmingCharacters(in: .whitespaces).isEmpty, text.count <= 300, ImportedText.problem(in: text) == nil
    else { throw CLIError("invalid --\(what) \(text.debugDescription): expected one line of 1 to 300 characters") }
}
