import Diagnostics
import Foundation
import GRDB
import HijriCalendar
import Storage
import VerseCalendar

/// The bundled content, read from `data/` and checked before anything is written.
public struct BundledContent: Sendable {
    /// Bump when the way data/ is read into the database changes, so existing databases are seeded again; and when the
    /// excerpts' rules (`TafsirExcerpt`) change, so that the excerpts kept from reads are cut again (and rebundle).
    static let formatVersion = 8

    public static let arabicEdition = Edition(
        id: "quran-simple", kind: "quran", language: "ar", name: "Tanzil Quran Text (Simple, Version 1.1)",
        credit: "Quran text: Tanzil Project (https://tanzil.net), Creative Commons Attribution 3.0")
    public static let pickthall = Edition(
        id: "en.pickthall", kind: "translation", language: "en",
        name: "The Meaning of the Glorious Koran, Mohammed Marmaduke William Pickthall",
        credit: "Translation: Pickthall (en.pickthall), digital edition by Tanzil.net (https://tanzil.net/trans)")

    public let directory: URL
    public let fingerprint: String
    let surahs: [SurahEntry]
    let arabic: TanzilFile
    let translation: TanzilFile
    let layers: [Layer]
    /// The editions that feed each layer unless an installation says otherwise (layers.json's `sources`).
    let layerSources: LayerSources
    /// The commentary editions bundled in data/tafsir/ (verbatim parts, for the days' verses).
    let tafsir: [BundledTafsir]
    let displayThemes: [DisplayTheme]
    let calendar: VerseCalendarData
    let commentary: [CommentaryEntry]
    let crescentRegions: CrescentRegions
    /// Each region's predicted table, as its CSV text.
    let predictedTables: [String: String]
    /// The coastlines drawn under the crescent maps (Natural Earth's GeoJSON, kept as it is), if the folder has them.
    let coastline: String?
    public static let coastlineFile = "map/ne_110m_coastline.geojson"
    /// The coastline file's size limit, as the map's reader (`Coastlines.maximumBytes`) has it.
    static let coastlineMaximumBytes = 4 << 20
    /// The largest other data file read whole (the JSON files, the crescent tables; the largest, a bundled tafsir
    /// edition, is a few MiB): a file past it, or a FIFO or a device where a data file should be, is refused naming it.
    static let maximumDataFileBytes = 64 << 20

    struct SurahEntry: Decodable {
        let number: Int
        let transliteration: String
        let arabic: String
        let english: String
        let revelation: String
    }

    /// Reads everything; the first problem is an error naming the file.
    public init(directory: URL) throws(StoreError) {
        self.directory = directory
        self.fingerprint = try Self.fingerprint(of: directory)
        func url(_ path: String) -> URL { directory.appendingPathComponent(path) }
        func decode<T: Decodable>(_ type: T.Type, _ path: String) throws(StoreError) -> T {
            let data = try StoreError.contents(of: url(path), maximumBytes: Self.maximumDataFileBytes)
            do { return try JSONDecoder().decode(T.self, from: data) } catch let error as SelectionError {
                throw .malformedData(file: path, reason: error.description)
            } catch { throw .malformedData(file: path, reason: CommentaryFile.describe(error)) }
        }
        struct Surahs: Decodable { let surahs: [SurahEntry] }
        struct Layers: Decodable {
            let layers: [Layer]
            let sources: LayerSources?
            let sourcesAbout: String?
            enum CodingKeys: String, CodingKey { case layers, sources, sourcesAbout = "sources_about" }
        }
        struct Themes: Decodable { let themes: [DisplayTheme] }
        struct Months: Decodable { let months: [MonthTheme] }
        struct Occasions: Decodable { let occasions: [Occasion] }

        surahs = try decode(Surahs.self, "surahs.json").surahs
        guard surahs.map(\.number) == Array(1...114) else { throw .malformedData(file: "surahs.json", reason: "expected suras 1 to 114 in order") }
        arabic = try TanzilFile(contentsOf: url("quran/quran-arabic.txt"))
        translation = try TanzilFile(contentsOf: url("quran/translation-en-pickthall.txt"), expectedCounts: arabic.ayahCounts)
        let layerFile = try decode(Layers.self, "layers.json")
        layers = layerFile.layers
        layerSources = layerFile.sources ?? LayerSources([:])
        guard layers.map(\.id) == Layer.ids else { throw .malformedData(file: "layers.json", reason: "expected the layers \(Layer.ids) in order") }
        displayThemes = try decode(Themes.self, "display-themes.json").themes
        let months = try decode(Months.self, "calendar/months.json").months
        let occasions = try decode(Occasions.self, "calendar/occasions.json").occasions
        do { calendar = try VerseCalendarData(months: months, occasions: occasions) } catch {
            throw .malformedData(file: "calendar", reason: error.description)
        }
        (crescentRegions, predictedTables) = try Self.readCrescentRegions(in: directory)
        // Optional: without it the maps are drawn without coastlines. Present, it is read within bounds like any file.
        let coastlineURL = url(Self.coastlineFile)
        coastline =
            FileManager.default.fileExists(atPath: coastlineURL.path)
            ? String(decoding: try StoreError.contents(of: coastlineURL, maximumBytes: Self.coastlineMaximumBytes), as: UTF8.self) : nil
        var commentary: [CommentaryEntry] = []
        let commentaryFolder = url("commentary")
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: commentaryFolder.path)) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.sorted()
        for file in files {
            let entries = try CommentaryFile(contentsOf: commentaryFolder.appendingPathComponent(file)).entries
            commentary += entries
        }
        self.commentary = commentary
        tafsir = try BundledTafsir.all(in: directory, ayahCounts: arabic.ayahCounts)

        // Every selection and commentary entry must name verses that exist.
        let counts = arabic.ayahCounts
        func check(_ range: VerseRange, _ file: String) throws(StoreError) {
            guard range.end <= counts[range.surah - 1] else {
                throw .malformedData(file: file, reason: StoreError.verseNotFound(range.key).description)
            }
        }
        for month in calendar.months { for range in month.verses { try check(range, "calendar/months.json") } }
        for occasion in calendar.occasions { try check(occasion.verses, "calendar/occasions.json") }
        for entry in commentary { try check(entry.verses, "commentary") }
        var seen = Set<String>()
        for entry in commentary where !seen.insert(entry.key).inserted {
            throw .malformedData(file: "commentary", reason: "two entries for \(entry.key)")
        }
        let occasionIDs = Set(calendar.occasions.map(\.id))
        for entry in commentary {
            if let occasion = entry.occasion, !occasionIDs.contains(occasion) {
                throw .malformedData(file: "commentary", reason: "\(entry.verses.key) \(entry.layer) names the unknown occasion '\(occasion)'")
            }
        }
    }

    /// The regions of the predicted calendar and each one's table; a table must cover the years the predicted calendars
    /// cover.
    static func readCrescentRegions(in directory: URL) throws(StoreError) -> (CrescentRegions, [String: String]) {
        let regions = try crescentRegions(in: directory)
        var tables: [String: String] = [:]
        for region in regions.regions {
            let path = CrescentRegions.tableFile(region.id)
            let url = directory.appendingPathComponent(path)
            guard let text = String(bytes: try StoreError.contents(of: url, maximumBytes: Self.maximumDataFileBytes), encoding: .utf8) else {
                throw .malformedData(file: path, reason: "not UTF-8 text")
            }
            let table: PredictedTable
            do { table = try PredictedTable(regionID: region.id, csv: text) } catch { throw .malformedData(file: path, reason: error.description) }
            guard table.firstYear == PredictedMonthStarts.firstYear, table.lastYear == PredictedMonthStarts.lastYear else {
                throw .malformedData(
                    file: path,
                    reason:
                        "covers \(table.firstYear)-\(table.lastYear) AH: expected \(PredictedMonthStarts.firstYear)-\(PredictedMonthStarts.lastYear)")
            }
            tables[region.id] = text
        }
        return (regions, tables)
    }

    /// The regions file of a data folder, read within bounds and checked (the commands that need no database read it
    /// here too).
    public static func crescentRegions(in directory: URL) throws(StoreError) -> CrescentRegions {
        let json = try StoreError.contents(of: directory.appendingPathComponent(CrescentRegions.file), maximumBytes: CrescentRegions.maximumFileBytes)
        do { return try CrescentRegions(json: json) } catch { throw .malformedData(file: CrescentRegions.file, reason: error.description) }
    }

    /// The data files, relative to `directory`, sorted.
    static func files(in directory: URL) throws(StoreError) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else {
            throw .missingDataFile(directory.path)
        }
        var files: [String] = []
        while let path = enumerator.nextObject() as? String {
            if (enumerator.fileAttributes?[.type] as? FileAttributeType) == .typeRegular { files.append(path) }
        }
        return files.sorted()
    }

    /// What the data was seeded from: the Quran files by size (Tanzil's terms forbid changing them),
    /// every other file by content.
    static func fingerprint(of directory: URL) throws(StoreError) -> String {
        var hash = FNV1a()
        hash.mix("format \(formatVersion)".utf8)
        for path in try files(in: directory) {
            let url = directory.appendingPathComponent(path)
            hash.mix(path.utf8)
            if path.hasPrefix("quran/") {
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? -1
                hash.mix("\(size)".utf8)
            } else if let data = try? StoreError.contents(of: url, maximumBytes: Self.maximumDataFileBytes) {
                hash.mix(data)
            }
        }
        return hash.hex
    }

    /// A cheaper check made on every start: names, sizes and modification times (plain stat calls), and the format,
    /// so that a new way of reading the same files seeds again. Only when it changes is the content fingerprint
    /// computed again.
    static func statSignature(of directory: URL, format: Int = formatVersion) throws(StoreError) -> String {
        var hash = FNV1a()
        hash.mix("format \(format)".utf8)
        func walk(_ folder: String, _ prefix: String) {
            guard let dir = opendir(folder) else { return }
            defer { closedir(dir) }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { names.append(name) }
            }
            for name in names.sorted() {
                var info = stat()
                guard stat(folder + "/" + name, &info) == 0 else { continue }
                if FileKind(mode: info.st_mode) == .folder {
                    walk(folder + "/" + name, prefix + name + "/")
                } else {
                    hash.mix("\(prefix)\(name) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)\n".utf8)
                }
            }
        }
        guard FileManager.default.fileExists(atPath: directory.path) else { throw .missingDataFile(directory.path) }
        walk(directory.path, "")
        return hash.hex
    }
}

/// 64-bit FNV-1a: fast and good enough to notice a changed file; not a security hash.
struct FNV1a {
    private var value: UInt64 = 0xcbf2_9ce4_8422_2325
    mutating func mix<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }
    var hex: String { String(value, radix: 16) }
}

extension AppDatabase {
    /// The fingerprint of the data the database was last seeded from, if any.
    public func seededFingerprint() throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seed_fingerprint'") }
    }

    /// Seeds from `data/` unless the database already holds exactly that data. Idempotent; one transaction.
    @discardableResult
    public func seedIfNeeded(from directory: URL) throws -> Bool {
        let signature = try BundledContent.statSignature(of: directory)
        if try meta("seed_signature") == signature { return false }
        var seeded = false
        if try seededFingerprint() != BundledContent.fingerprint(of: directory) {
            try seed(BundledContent(directory: directory))
            seeded = true
        }
        try write { db in try Self.setMeta(db, "seed_signature", signature) }
        return seeded
    }

    func meta(_ key: String) throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) }
    }

    static func setMeta(_ db: Database, _ key: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }

    /// Replaces the bundled content with `content`. Imported commentary and editions under other ids are kept.
    public func seed(_ content: BundledContent) throws {
        try write { db in try Self.seed(db, content) }
    }

    /// `seed(_:)` in the caller's transaction; `force`: even if this content was seeded already.
    static func seed(_ db: Database, _ content: BundledContent, force: Bool = false) throws {
        if !force, try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'seed_fingerprint'") == content.fingerprint { return }
        let counts = content.arabic.ayahCounts
        try db.execute(sql: "DELETE FROM surah")
        let surah = try db.makeStatement(
            sql: "INSERT INTO surah (number, transliteration, arabic, english, revelation, ayah_count) VALUES (?, ?, ?, ?, ?, ?)")
        for entry in content.surahs {
            try surah.execute(arguments: [
                entry.number, entry.transliteration, entry.arabic, entry.english, entry.revelation, counts[entry.number - 1],
            ])
        }
        try Self.storeEdition(db, BundledContent.arabicEdition, file: content.arabic, progress: nil)
        try Self.storeEdition(db, BundledContent.pickthall, file: content.translation, progress: nil)

        for layer in content.layers {
            let sources = String(
                decoding: try JSONEncoder().encode(content.layerSources.sources(for: layer.id).map(\.description)), as: UTF8.self)
            try db.execute(
                sql: """
                    INSERT INTO layer (id, position, icon, title, description, sources) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET position = excluded.position, icon = excluded.icon,
                        title = excluded.title, description = excluded.description, sources = excluded.sources
                    """, arguments: [layer.id, layer.position, layer.icon, layer.title, layer.description, sources])
        }
        try db.execute(sql: "DELETE FROM display_theme")
        for theme in content.displayThemes {
            try db.execute(
                sql: "INSERT INTO display_theme (id, name, background, surface, text, accent) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [theme.id, theme.name, theme.background, theme.surface, theme.text, theme.accent])
        }

        try db.execute(sql: "DELETE FROM month_pool; DELETE FROM month_theme; DELETE FROM occasion; DELETE FROM verse_theme")
        func insertTheme(_ theme: Theme) throws {
            try db.execute(
                sql: "INSERT INTO verse_theme (id, name, relevance) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
                arguments: [theme.id, theme.name, theme.relevance])
        }
        let pool = try db.makeStatement(
            sql: "INSERT INTO month_pool (month, position, surah, ayah_start, ayah_end) VALUES (?, ?, ?, ?, ?)")
        for month in content.calendar.months {
            try insertTheme(month.theme)
            try db.execute(sql: "INSERT INTO month_theme (month, theme_id) VALUES (?, ?)", arguments: [month.month, month.theme.id])
            for (position, range) in month.verses.enumerated() {
                try pool.execute(arguments: [month.month, position, range.surah, range.start, range.end])
            }
        }
        for occasion in content.calendar.occasions {
            try insertTheme(occasion.theme)
            try db.execute(
                sql: """
                    INSERT INTO occasion (
                        id, name, name_arabic, description, note, month, day, observed, rank, surah, ayah_start, ayah_end, theme_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    occasion.id, occasion.name, occasion.nameArabic, occasion.description, occasion.note, occasion.month, occasion.day,
                    occasion.observed.rawValue, occasion.rank, occasion.verses.surah, occasion.verses.start, occasion.verses.end,
                    occasion.theme.id,
                ])
        }

        if let coastline = content.coastline {
            try Self.setMeta(db, "map_coastline", coastline)
        } else {
            try db.execute(sql: "DELETE FROM meta WHERE key = 'map_coastline'")
        }
        try db.execute(sql: "DELETE FROM crescent_region")
        for (position, region) in content.crescentRegions.regions.enumerated() {
            let sites = String(decoding: try JSONEncoder().encode(region.sites), as: UTF8.self)
            try db.execute(
                sql: "INSERT INTO crescent_region (id, position, name, rule, sites, is_default, predicted) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    region.id, position, region.name, region.rule.name, sites, region.id == content.crescentRegions.defaultRegion.id,
                    content.predictedTables[region.id],
                ])
        }

        try db.execute(sql: "DELETE FROM commentary WHERE origin = 'bundled'")
        try Self.storeCommentary(db, content.commentary, origin: "bundled", replace: false, progress: nil)
        // The bundled editions, except where the installation imported the whole edition (a bundled one has no
        // import time: the epoch stands in).
        // The excerpts kept from earlier reads go too: the passages and the rules that cut them may have changed
        // with the data (a change of the rules changes `formatVersion`); the bundle's own come with it.
        try db.execute(sql: "DELETE FROM tafsir_edition WHERE origin = 'bundled'")
        try db.execute(sql: "DELETE FROM tafsir_excerpt")
        let imported = Set(try String.fetchAll(db, sql: "SELECT id FROM tafsir_edition"))
        for bundled in content.tafsir where !imported.contains(bundled.edition.info.id) {
            try Self.storeTafsir(db, bundled.edition, terms: bundled.terms, origin: "bundled", at: Date(timeIntervalSince1970: 0), progress: nil)
            for kept in bundled.excerpts {
                try Self.storeExcerpt(db, edition: bundled.edition.info.id, part: kept.part, range: kept.range, kept.excerpt)
            }
        }
        try Self.setMeta(db, "seed_fingerprint", content.fingerprint)
    }

    static func storeEdition(_ db: Database, _ edition: Edition, file: TanzilFile, progress: ((Int, Int) -> Void)?) throws {
        try db.execute(sql: "DELETE FROM edition WHERE id = ?", arguments: [edition.id])
        try db.execute(
            sql: "INSERT INTO edition (id, kind, language, name, credit, notice) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [edition.id, edition.kind, edition.language, edition.name, edition.credit, file.notice.joined(separator: "\n")])
        let statement = try db.makeStatement(sql: "INSERT INTO ayah_text (edition_id, surah, ayah, text) VALUES (?, ?, ?, ?)")
        let total = file.ayat.count
        for (index, ayah) in file.ayat.enumerated() {
            try statement.execute(arguments: [edition.id, ayah.surah, ayah.ayah, ayah.text])
            if let progress, index % 256 == 0 || index == total - 1 { progress(index + 1, total) }
        }
    }

    static func storeCommentary(
        _ db: Database, _ entries: [CommentaryEntry], origin: String, replace: Bool, progress: ((Int, Int) -> Void)?
    ) throws {
        let conflict =
            replace
            ? """
            ON CONFLICT (surah, ayah_start, ayah_end, layer_id, ifnull(occasion_id, '')) DO UPDATE SET body = excluded.body,
                work = excluded.work, author = excluded.author, reference = excluded.reference, provenance = excluded.provenance,
                origin = excluded.origin
            """
            : "ON CONFLICT (surah, ayah_start, ayah_end, layer_id, ifnull(occasion_id, '')) DO NOTHING"
        let statement = try db.makeStatement(
            sql: """
                INSERT INTO commentary (surah, ayah_start, ayah_end, layer_id, occasion_id, body, work, author, reference, provenance, origin)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \(conflict)
                """)
        for (index, entry) in entries.enumerated() {
            try statement.execute(arguments: [
                entry.verses.surah, entry.verses.start, entry.verses.end, entry.layer, entry.occasion, entry.body,
                entry.source.work, entry.source.author, entry.source.reference, entry.source.provenance, origin,
            ])
            progress?(index + 1, entries.count)
        }
    }
}
