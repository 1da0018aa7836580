import Diagnostics
import Foundation
import GRDB
import Storage

/// A folder in the layout of narmafraz/ThaqalaynTafsirData: `editions.json` (the editions, each with its id, name,
/// author, language and source) and `{edition}/{sura}.json`, each `{"edition", "surah", "blocks": [HTML…],
/// "ayahs": [{"ayah", "block"}…]}` mapping every verse the edition comments on to the block (an index into `blocks`)
/// that holds its commentary. A block may cover several verses; a verse with no commentary has no entry.
///
/// Or, with `.tafsirAPI`, the layout of spa5k/tafsir_api's `tafsir/` folder: `editions.json` (`slug`, `name`,
/// `author_name`, `language_name`, `source`) and `{slug}/{sura}.json` (`{"ayahs": [{"surah", "ayah", "text"}…]}`) or, for a
/// sura without one, `{slug}/{sura}/{ayah}.json` (`{"surah", "ayah", "text"}`): a block for each verse.
public struct TafsirFolder: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case thaqalayn
        case tafsirAPI = "tafsir-api"
    }

    public let directory: URL
    public let format: Format
    public let editions: [TafsirEditionInfo]

    /// The largest file read: the largest sura file of the dataset is under 4 MB.
    public static let maximumFileBytes = 32 << 20

    public init(directory: URL, format: Format = .thaqalayn) throws(StoreError) {
        self.directory = directory
        self.format = format
        let url = directory.appendingPathComponent("editions.json")
        let data = try StoreError.contents(of: url, maximumBytes: Self.maximumFileBytes)
        do {
            switch format {
            case .thaqalayn: editions = try JSONDecoder().decode([TafsirEditionInfo].self, from: data)
            case .tafsirAPI:
                struct Entry: Decodable {
                    let slug: String
                    let name: String
                    let authorName: String
                    let languageName: String
                    let source: String?
                    enum CodingKeys: String, CodingKey { case slug, name, authorName = "author_name", languageName = "language_name", source }
                }
                editions = try JSONDecoder().decode([Entry].self, from: data).map {
                    TafsirEditionInfo(
                        id: $0.slug, name: $0.name, nameEnglish: nil, author: $0.authorName, authorEnglish: nil, language: $0.languageName,
                        source: $0.source ?? "tafsir_api", death: nil)
                }
            }
        } catch {
            throw .malformedData(file: url.path, reason: "not the dataset's editions.json (\(CommentaryFile.describe(error)))")
        }
        for edition in editions where !TafsirEditionInfo.isValidID(edition.id) {
            throw .malformedData(file: url.path, reason: "edition id '\(edition.id.prefix(60))' is not a name such as en.mizan")
        }
        // What is printed and shown of each edition: its names, author, language and source.
        for edition in editions {
            let fields: [(String, String?)] = [
                ("name", edition.name), ("name_en", edition.nameEnglish), ("author", edition.author), ("author_en", edition.authorEnglish),
                ("language", edition.language), ("source", edition.source), ("death", edition.death),
            ]
            for (field, value) in fields {
                if let value, let refusal = ImportedText.refusal(of: "\(edition.id)'s \(field)", in: value) {
                    throw .malformedData(file: url.path, reason: refusal)
                }
            }
        }
    }

    /// The edition `id` read whole and checked against the Quran's suras and ayat (`ayahCounts`, 114 of them); the
    /// first problem is an error naming the file and, where it is one, the verse. `progress` is told each sura read.
    public func read(_ id: String, ayahCounts: [Int], progress: ((Int, Int) -> Void)? = nil) throws(StoreError) -> TafsirEdition {
        guard let info = editions.first(where: { $0.id == id }) else {
            throw .malformedData(file: "editions.json", reason: "no edition '\(id)': it lists \(editions.map(\.id).joined(separator: ", "))")
        }
        let folder = directory.appendingPathComponent(id)
        var blocks: [TafsirEdition.Block] = []
        var verses: [TafsirEdition.Verse] = []
        var found = 0
        for surah in 1...114 {
            defer { progress?(surah, 114) }
            let sura =
                switch format {
                case .thaqalayn: try thaqalaynSura(folder, id: id, surah: surah)
                case .tafsirAPI: try tafsirAPISura(folder, id: id, surah: surah, ayahs: ayahCounts[surah - 1])
                }
            guard let sura else { continue }
            found += 1
            // Each verse once, in its sura, naming a block the file has; blocks no verse names, and empty ones, are
            // left out, the others keep their order.
            var seen = Set<Int>()
            for entry in sura.ayahs {
                guard (1...ayahCounts[surah - 1]).contains(entry.ayah) else {
                    throw .malformedData(
                        file: entry.file, reason: "\(surah):\(entry.ayah) is not a verse of sura \(surah) (\(ayahCounts[surah - 1]) ayat)")
                }
                guard sura.blocks.indices.contains(entry.block) else {
                    throw .malformedData(file: entry.file, reason: "\(surah):\(entry.ayah): block \(entry.block) of \(sura.blocks.count)")
                }
                guard seen.insert(entry.ayah).inserted else {
                    throw .malformedData(file: entry.file, reason: "\(surah):\(entry.ayah) is given twice")
                }
            }
            let used = Set(sura.ayahs.map(\.block))
            var index: [Int: Int] = [:]
            for (position, html) in sura.blocks.enumerated() where used.contains(position) {
                let text = TafsirText.plain(fromHTML: html)
                guard !text.isEmpty else { continue }
                // Its white space is folded already; what is left of a NUL, an escape or an override is refused, naming
                // the file and the first verse the block covers.
                if let refusal = ImportedText.refusal(of: "the block", in: text, newlines: true),
                    let entry = sura.ayahs.first(where: { $0.block == position })
                {
                    throw .malformedData(file: entry.file, reason: "\(surah):\(entry.ayah): \(refusal)")
                }
                index[position] = blocks.count
                blocks.append(.init(surah: surah, position: position, text: text))
            }
            for entry in sura.ayahs.sorted(by: { $0.ayah < $1.ayah }) {
                guard let block = index[entry.block] else { continue }
                verses.append(.init(surah: surah, ayah: entry.ayah, block: block))
            }
        }
        guard found > 0 else { throw .missingDataFile(folder.appendingPathComponent("1.json").path) }
        return TafsirEdition(info: info, blocks: blocks, verses: verses)
    }

    /// A sura as either layout gives it: its blocks' HTML, and each verse with its block and the file that names it.
    struct Sura {
        let blocks: [String]
        let ayahs: [(ayah: Int, block: Int, file: String)]
    }

    func decode<T: Decodable>(_ type: T.Type, _ url: URL, _ name: String) throws(StoreError) -> T {
        let data = try StoreError.contents(of: url, maximumBytes: Self.maximumFileBytes)
        do { return try JSONDecoder().decode(T.self, from: data) } catch { throw .malformedData(file: name, reason: CommentaryFile.describe(error)) }
    }

    /// ThaqalaynTafsirData's `{edition}/{sura}.json`, or nil when the edition has no file for the sura.
    func thaqalaynSura(_ folder: URL, id: String, surah: Int) throws(StoreError) -> Sura? {
        struct File: Decodable {
            struct Entry: Decodable {
                let ayah: Int
                let block: Int
            }
            let edition: String
            let surah: Int
            let blocks: [String]
            let ayahs: [Entry]
        }
        let url = folder.appendingPathComponent("\(surah).json")
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let name = "\(id)/\(surah).json"
        let file = try decode(File.self, url, name)
        guard file.edition == id, file.surah == surah else {
            throw .malformedData(file: name, reason: "holds \(file.edition.prefix(40)) sura \(file.surah), expected \(id) sura \(surah)")
        }
        return Sura(blocks: file.blocks, ayahs: file.ayahs.map { ($0.ayah, $0.block, name) })
    }

    /// spa5k's `{slug}/{sura}.json` or, without one, its `{slug}/{sura}/{ayah}.json` files: a block for each verse.
    func tafsirAPISura(_ folder: URL, id: String, surah: Int, ayahs count: Int) throws(StoreError) -> Sura? {
        struct Ayah: Decodable {
            let surah: Int
            let ayah: Int
            let text: String
        }
        struct File: Decodable { let ayahs: [Ayah] }
        var entries: [(Ayah, String)] = []
        let suraFile = folder.appendingPathComponent("\(surah).json")
        if FileManager.default.fileExists(atPath: suraFile.path) {
            let name = "\(id)/\(surah).json"
            entries = try decode(File.self, suraFile, name).ayahs.map { ($0, name) }
        } else {
            for ayah in 1...count {
                let url = folder.appendingPathComponent("\(surah)/\(ayah).json")
                guard FileManager.default.fileExists(atPath: url.path) else { continue }
                let name = "\(id)/\(surah)/\(ayah).json"
                entries.append((try decode(Ayah.self, url, name), name))
            }
        }
        guard !entries.isEmpty else { return nil }
        for (entry, name) in entries where entry.surah != surah {
            throw .malformedData(file: name, reason: "\(entry.surah):\(entry.ayah) is not a verse of sura \(surah)")
        }
        return Sura(blocks: entries.map(\.0.text), ayahs: entries.enumerated().map { ($0.element.0.ayah, $0.offset, $0.element.1) })
    }
}

/// An edition as `editions.json` lists it.
public struct TafsirEditionInfo: Codable, Hashable, Sendable {
    public let id: String
    public let name: String
    public let nameEnglish: String?
    public let author: String
    public let authorEnglish: String?
    public let language: String
    public let source: String
    /// The author's death, where the dataset gives it ("1107 AH").
    public let death: String?

    enum CodingKeys: String, CodingKey {
        case id, name, nameEnglish = "name_en", author, authorEnglish = "author_en", language, source, death
    }

    /// `en.mizan`, `en-tafisr-ibn-kathir`: 1 to 60 lowercase letters, digits, dashes and dots, starting with a letter
    /// (so never a path: no slash, no `..`).
    static func isValidID(_ id: String) -> Bool {
        (1...60).contains(id.utf8.count) && id.utf8.first.map { $0 >= 97 && $0 <= 122 } == true && !id.contains("..")
            && id.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 46 }
    }
}

/// An edition read from its files: its blocks as plain text, and the verses each covers.
public struct TafsirEdition: Sendable {
    public let info: TafsirEditionInfo
    public let blocks: [Block]
    /// Each verse with commentary, in order, with the index of its block in `blocks`.
    public let verses: [Verse]

    public struct Block: Sendable, Hashable {
        public let surah: Int
        /// Its index in its sura file's `blocks`.
        public let position: Int
        public let text: String
        /// The dataset's whole block, or (bundled) the verbatim part of it the repository carries.
        public let whole: Bool

        public init(surah: Int, position: Int, text: String, whole: Bool = true) {
            (self.surah, self.position, self.text, self.whole) = (surah, position, text, whole)
        }
    }

    public struct Verse: Sendable, Hashable {
        public let surah: Int
        public let ayah: Int
        public let block: Int
    }
}

/// What an installation knows of an edition beyond the dataset's own list: its licence, and whether its text is a
/// machine translation (nil: not known).
public struct TafsirEditionTerms: Sendable, Hashable {
    public let licence: String
    public let machineTranslation: Bool?

    public init(licence: String, machineTranslation: Bool?) {
        self.licence = licence
        self.machineTranslation = machineTranslation
    }
}

/// A stored edition, as `dailyverse import tafsir` and the layers name it.
public struct StoredTafsirEdition: Sendable, Hashable, Codable {
    public let id: String
    public let name: String
    public let author: String
    public let language: String
    public let source: String
    public let licence: String
    public let machineTranslation: Bool?
    public let blocks: Int
    public let verses: Int
    /// `bundled` (data/tafsir/, the verbatim parts the repository carries) or `import`.
    public let origin: String

    enum CodingKeys: String, CodingKey {
        case id, name, author, language, source, licence, blocks, verses, origin, machineTranslation = "machine_translation"
    }
}

extension AppDatabase {
    /// Replaces an edition (its blocks and the verses they cover) in one transaction; it replaces the bundled edition
    /// of the same id, and the seeding leaves it alone.
    public func importTafsir(_ edition: TafsirEdition, terms: TafsirEditionTerms, at now: Date, progress: ((Int, Int) -> Void)? = nil) throws {
        try write { db in
            let counts = try Int.fetchAll(db, sql: "SELECT ayah_count FROM surah ORDER BY number")
            guard counts.count == 114 else { throw StoreError.notSeeded("Quran text") }
            try Self.storeTafsir(db, edition, terms: terms, origin: "import", at: now, progress: progress)
        }
    }

    /// Writes an edition in place of any of its id.
    static func storeTafsir(
        _ db: Database, _ edition: TafsirEdition, terms: TafsirEditionTerms, origin: String, at now: Date, progress: ((Int, Int) -> Void)?
    ) throws {
        let info = edition.info
        try db.execute(sql: "DELETE FROM tafsir_edition WHERE id = ?", arguments: [info.id])
        try db.execute(
            sql: """
                INSERT INTO tafsir_edition (id, name, name_english, author, author_english, author_death, language, source, licence,
                    machine_translation, imported_at, origin)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                info.id, info.name, info.nameEnglish, info.author, info.authorEnglish, info.death, info.language, info.source,
                terms.licence, terms.machineTranslation, now.iso8601UTC, origin,
            ])
        let block = try db.makeStatement(sql: "INSERT INTO tafsir_block (edition_id, surah, position, text, whole) VALUES (?, ?, ?, ?, ?)")
        var ids: [Int64] = []
        ids.reserveCapacity(edition.blocks.count)
        let total = edition.blocks.count + edition.verses.count
        for (index, entry) in edition.blocks.enumerated() {
            try block.execute(arguments: [info.id, entry.surah, entry.position, entry.text, entry.whole])
            ids.append(db.lastInsertedRowID)
            if index % 256 == 0 { progress?(index, total) }
        }
        let verse = try db.makeStatement(sql: "INSERT INTO tafsir_verse (edition_id, surah, ayah, block_id) VALUES (?, ?, ?, ?)")
        for (index, entry) in edition.verses.enumerated() {
            try verse.execute(arguments: [info.id, entry.surah, entry.ayah, ids[entry.block]])
            if index % 256 == 0 { progress?(edition.blocks.count + index, total) }
        }
        progress?(total, total)
    }

    /// The editions stored, with their counts.
    public func tafsirEditions() throws -> [StoredTafsirEdition] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT e.*, (SELECT count(*) FROM tafsir_block b WHERE b.edition_id = e.id) AS blocks,
                        (SELECT count(*) FROM tafsir_verse v WHERE v.edition_id = e.id) AS verses
                    FROM tafsir_edition e ORDER BY e.id
                    """
            ).map {
                StoredTafsirEdition(
                    id: $0["id"], name: $0["name"], author: $0["author"], language: $0["language"], source: $0["source"], licence: $0["licence"],
                    machineTranslation: $0["machine_translation"], blocks: $0["blocks"], verses: $0["verses"], origin: $0["origin"])
            }
        }
    }

    /// The blocks of `edition` that comment on the verses of `range`, in order, each once.
    public func tafsirBlocks(edition: String, surah: Int, ayahs: ClosedRange<Int>) throws -> [String] {
        try read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT b.text FROM tafsir_block b WHERE b.id IN (
                        SELECT block_id FROM tafsir_verse WHERE edition_id = ? AND surah = ? AND ayah BETWEEN ? AND ?)
                    ORDER BY b.surah, b.position
                    """, arguments: [edition, surah, ayahs.lowerBound, ayahs.upperBound])
        }
    }
}

/// `data/tafsir-editions.json`: each source's terms, and whether an edition is a machine translation, with where that
/// is said.
public struct TafsirEditionCatalog: Sendable {
    public let sources: [String: String]
    public let editions: [String: Entry]

    public struct Entry: Decodable, Sendable {
        public let machineTranslation: Bool?
        public let basis: String
        enum CodingKeys: String, CodingKey { case machineTranslation = "machine_translation", basis }
    }

    public static let file = "tafsir-editions.json"

    public init(dataDirectory: URL) throws(StoreError) {
        let url = dataDirectory.appendingPathComponent(Self.file)
        struct File: Decodable {
            let sources: [String: String]
            let editions: [String: Entry]
        }
        let data = try StoreError.contents(of: url, maximumBytes: 1 << 20)
        do {
            let file = try JSONDecoder().decode(File.self, from: data)
            sources = file.sources
            editions = file.editions
        } catch { throw .malformedData(file: Self.file, reason: CommentaryFile.describe(error)) }
    }

    /// An edition's terms: its source's licence (or that the source's terms are not known), and what is known of its
    /// translation.
    public func terms(for info: TafsirEditionInfo) -> TafsirEditionTerms {
        TafsirEditionTerms(
            licence: sources[info.source] ?? "not known: source '\(info.source)' is not in \(Self.file); find its terms before using it",
            machineTranslation: editions[info.id]?.machineTranslation ?? nil)
    }
}
