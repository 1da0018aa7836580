import Foundation
import GRDB
import HijriCalendar
import Storage
import VerseCalendar

extension AppDatabase {
    // MARK: - Quran text

    public func surah(_ number: Int) throws -> Surah? {
        try read { db in try Self.surah(db, number) }
    }

    static func surah(_ db: Database, _ number: Int) throws -> Surah? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM surah WHERE number = ?"), arguments: [number]) else { return nil }
        return Surah(
            number: row["number"], transliteration: row["transliteration"], arabic: row["arabic"], english: row["english"],
            revelation: row["revelation"], ayahCount: row["ayah_count"])
    }

    /// Checks that `range` names verses that exist, from the sura's length alone.
    public func validate(_ range: VerseRange) throws {
        guard let surah = try surah(range.surah) else { throw StoreError.notSeeded("suras") }
        guard range.end <= surah.ayahCount else { throw StoreError.verseNotFound(range.key) }
    }

    /// The Arabic text, the translation, the sura and the layers of a verse or passage, in one read; on an occasion,
    /// the entries written for it come before the verse's own.
    /// `language`: the reader's (`readerLanguages`), whose editions each layer takes first.
    public func verse(_ range: VerseRange, translation: String, occasion: String? = nil, language: String? = nil) throws -> VerseContent {
        let context = layerContext(language: language)
        defer { keepExcerpts(context, for: range) }
        return try read { db in
            guard let surah = try Self.surah(db, range.surah) else { throw StoreError.notSeeded("suras") }
            guard range.end <= surah.ayahCount else { throw StoreError.verseNotFound(range.key) }
            guard
                let edition = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM edition WHERE id = ? AND kind = 'translation'"), arguments: [translation])
            else { throw StoreError.unknownTranslation(translation) }
            func text(_ editionID: String) throws -> VerseText {
                let rows = try Row.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT ayah, text FROM ayah_text WHERE edition_id = ? AND surah = ? AND ayah BETWEEN ? AND ? ORDER BY ayah"),
                    arguments: [editionID, range.surah, range.start, range.end])
                guard rows.count == range.ayahCount else { throw StoreError.notSeeded("text for \(range.key) in \(editionID)") }
                return VerseText(edition: editionID, ayat: rows.map { (number: $0["ayah"], text: $0["text"]) })
            }
            return VerseContent(
                range: range, surah: surah, arabic: try text(BundledContent.arabicEdition.id),
                translation: try text(translation), translationName: edition["name"],
                layers: try Self.layerTexts(db, for: range, occasion: occasion, context: context),
                credits: [BundledContent.arabicEdition.credit, edition["credit"]])
        }
    }

    // MARK: - Layers

    public func layers() throws -> [Layer] {
        try read { db in try Self.layers(db) }
    }

    /// Commentary entries by provenance (`editorial`, `editorial-summary`, `quotation`, …).
    public func commentaryCountsByProvenance() throws -> [String: Int] {
        try read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT provenance, count(*) AS n FROM commentary GROUP BY provenance") {
                counts[row["provenance"]] = row["n"]
            }
            return counts
        }
    }

    public func layerIDs() throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT id FROM layer ORDER BY position") }
    }

    static func layers(_ db: Database) throws -> [Layer] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM layer ORDER BY position")).map {
            Layer(id: $0["id"], position: $0["position"], icon: $0["icon"], title: $0["title"], description: $0["description"])
        }
    }

    /// The five layers for a verse or passage: on an occasion, an entry written for it first; then an excerpt of the
    /// first of the layer's editions that comments on the verses cleanly; then our entry for exactly that range, else
    /// the narrowest entry whose passage contains it; nil where there is none. An entry written for an occasion is never
    /// shown on another day, even for a verse inside its passage.
    /// `only`: that layer alone (the whole text of one layer needs no other's excerpt).
    static func layerTexts(
        _ db: Database, for range: VerseRange, occasion: String?, context: LayerContext, only: String? = nil
    ) throws -> [LayerText] {
        // Every entry whose verses contain the range (the index narrows it to a few); which one each layer shows is
        // `CommentaryEntry.shown`'s rule.
        let candidates = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM commentary WHERE surah = ? AND ayah_start <= ? AND ayah_end >= ?"),
            arguments: [range.surah, range.start, range.end]
        ).map {
            CommentaryEntry(
                verses: VerseRange(surah: $0["surah"], start: $0["ayah_start"], end: $0["ayah_end"]), layer: $0["layer_id"],
                occasion: $0["occasion_id"], body: $0["body"],
                source: CommentarySource(work: $0["work"], author: $0["author"], reference: $0["reference"], provenance: $0["provenance"]))
        }
        let sources = try layerSources(db, overrides: context.overrides)
        return try layers(db).filter { only == nil || $0.id == only }.map { layer in
            let shown = CommentaryEntry.shown(for: range, layer: layer.id, occasion: occasion, among: candidates)
            if shown?.occasion == nil,
                let (entry, more, whole) = try editionLayer(
                    db, layer: layer.id, sources: try preferring(sources.sources(for: layer.id), context, db), range: range, context: context
                )
            {
                return LayerText(layer: layer, entry: entry, more: more, whole: whole)
            }
            return LayerText(layer: layer, entry: shown)
        }
    }

    // MARK: - Calendar and themes

    /// The verse calendar as seeded: twelve month themes with their pools, and the occasions.
    public func verseCalendar() throws -> VerseCalendarData {
        try read { db in
            var themes: [String: Theme] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM verse_theme") {
                themes[row["id"]] = Theme(id: row["id"], name: row["name"], relevance: row["relevance"])
            }
            var pools: [Int: [VerseRange]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM month_pool ORDER BY month, position") {
                pools[row["month"], default: []].append(VerseRange(surah: row["surah"], start: row["ayah_start"], end: row["ayah_end"]))
            }
            let months = try Row.fetchAll(db, sql: "SELECT * FROM month_theme ORDER BY month").map { row in
                MonthTheme(month: row["month"], theme: themes[row["theme_id"]]!, verses: pools[row["month"]] ?? [])
            }
            let occasions = try Row.fetchAll(db, sql: "SELECT * FROM occasion ORDER BY month, day = 0, day, rank").map { row in
                Self.occasion(row, theme: themes[row["theme_id"]]!)
            }
            guard !months.isEmpty else { throw StoreError.notSeeded("verse calendar") }
            return try VerseCalendarData(months: months, occasions: occasions)
        }
    }

    /// One occasion, by its id.
    public func occasion(id: String) throws -> Occasion {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM occasion WHERE id = ?", arguments: [id]),
                let theme = try Row.fetchOne(db, sql: "SELECT * FROM verse_theme WHERE id = ?", arguments: [row["theme_id"] as String])
            else { throw StoreError.unknownOccasion(id) }
            return Self.occasion(row, theme: Theme(id: theme["id"], name: theme["name"], relevance: theme["relevance"]))
        }
    }

    static func occasion(_ row: Row, theme: Theme) -> Occasion {
        Occasion(
            id: row["id"], name: row["name"], nameArabic: row["name_arabic"], description: row["description"], note: row["note"],
            month: row["month"], day: row["day"], observed: Observance(rawValue: row["observed"]) ?? .day, rank: row["rank"],
            verses: VerseRange(surah: row["surah"], start: row["ayah_start"], end: row["ayah_end"]), theme: theme)
    }

    /// The calendar as a selection source that reads only the rows one day needs.
    public var calendarSource: some VerseCalendarSource { StoreCalendarSource(database: self) }

    public func displayThemes() throws -> [DisplayTheme] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM display_theme ORDER BY rowid").map {
                DisplayTheme(
                    id: $0["id"], name: $0["name"], background: $0["background"], surface: $0["surface"], text: $0["text"], accent: $0["accent"])
            }
        }
    }

    // MARK: - Published month starts (the sighted calendar)

    public func publishedMonthStarts() throws -> [PublishedMonthStart] {
        try read { db in try Self.publishedMonthStarts(db) }
    }

    static func publishedMonthStarts(_ db: Database) throws -> [PublishedMonthStart] {
        try Row.fetchAll(db, sql: "SELECT year, month, first_day FROM published_month_start ORDER BY year, month").map {
            PublishedMonthStart(year: $0["year"], month: $0["month"], firstDay: try CivilDate(parsing: $0["first_day"]))
        }
    }

    /// The calendar of `kind`, with the published starts for the sighted and predicted ones (the predicted one for
    /// the region this process keeps, `useCrescentRegion`).
    public func islamicCalendar(_ kind: CalendarKind) throws -> IslamicCalendar {
        switch kind {
        case .sighted: try IslamicCalendar.sighted(published: publishedMonthStarts())
        case .predicted: try predictedCalendar()
        case .ummAlQura, .tabular: try IslamicCalendar.make(kind)
        }
    }

    /// Publishes (or replaces) a month start; refused, with nothing written, if the sighted calendar could not hold it.
    public func publishMonthStart(_ start: PublishedMonthStart, at now: Date) throws { _ = try publishMonthStarts([start], at: now) }

    /// Publishes (or replaces) many month starts in one transaction: all of them, or, if the calendars could not hold
    /// them with the starts already published, none. Returns the starts published before that they replaced with
    /// another day.
    public func publishMonthStarts(_ starts: [PublishedMonthStart], at now: Date) throws -> (published: Int, replaced: [PublishedMonthStart]) {
        try write { db in
            let replaced = try PublishedMonthStart.replacing(try Self.publishedMonthStarts(db), with: starts)
            let statement = try db.makeStatement(
                sql: """
                    INSERT INTO published_month_start (year, month, first_day, created_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (year, month) DO UPDATE SET first_day = excluded.first_day, created_at = excluded.created_at
                    """)
            for start in starts {
                try statement.execute(arguments: [start.year, start.month, start.firstDay.description, now.iso8601UTC])
            }
            return (starts.count, replaced)
        }
    }

    /// Makes the published starts exactly `starts` (a process's content copy following PostgreSQL's); whether anything
    /// changed.
    @discardableResult
    public func replacePublishedMonthStarts(with starts: [PublishedMonthStart], at now: Date) throws -> Bool {
        try write { db in
            guard try Self.publishedMonthStarts(db) != starts.sorted(by: PublishedMonthStart.inOrder) else { return false }
            try db.execute(sql: "DELETE FROM published_month_start")
            for start in starts {
                try db.execute(
                    sql: "INSERT INTO published_month_start (year, month, first_day, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [start.year, start.month, start.firstDay.description, now.iso8601UTC])
            }
            return true
        }
    }

    /// Removes a published start; false if there was none.
    @discardableResult
    public func removeMonthStart(year: Int, month: Int) throws -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM published_month_start WHERE year = ? AND month = ?", arguments: [year, month])
            return db.changesCount > 0
        }
    }
}

/// A verse or passage with everything shown beside it.
public struct VerseContent: Sendable {
    public let range: VerseRange
    public let surah: Surah
    public let arabic: VerseText
    public let translation: VerseText
    public let translationName: String
    public let layers: [LayerText]
    public let credits: [String]
}

/// Reads the verse calendar row by row, for the selection of a single day.
struct StoreCalendarSource: VerseCalendarSource {
    let database: AppDatabase

    func occasions(on days: [MonthDay]) throws -> [Occasion] {
        guard let first = days.first else { return [] }
        // One statement for every day a selection asks about (at most three), padded so that it is always the same
        // cached statement.
        precondition(days.count <= 3, "a day asks about its date, its month's last day and tomorrow")
        let keys = days + Array(repeating: first, count: 3 - days.count)
        return try database.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT o.*, t.name AS theme_name, t.relevance FROM occasion o JOIN verse_theme t ON t.id = o.theme_id
                        WHERE (o.month, o.day) IN (VALUES (?, ?), (?, ?), (?, ?))
                        """), arguments: StatementArguments(keys.flatMap { [$0.month, $0.day] })
            ).map { row in
                AppDatabase.occasion(row, theme: Theme(id: row["theme_id"], name: row["theme_name"], relevance: row["relevance"]))
            }
        }
    }

    func monthTheme(month: Int) throws -> Theme {
        try database.read { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT t.* FROM month_theme m JOIN verse_theme t ON t.id = m.theme_id WHERE m.month = ?"),
                    arguments: [month])
            else { throw StoreError.notSeeded("verse calendar") }
            return Theme(id: row["id"], name: row["name"], relevance: row["relevance"])
        }
    }

    func poolSize(month: Int) throws -> Int {
        let size =
            try database.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM month_pool WHERE month = ?"), arguments: [month])
            } ?? 0
        guard size > 0 else { throw StoreError.notSeeded("verse calendar") }
        return size
    }

    func poolEntry(month: Int, index: Int) throws -> VerseRange {
        try database.read { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT surah, ayah_start, ayah_end FROM month_pool WHERE month = ? ORDER BY position LIMIT 1 OFFSET ?"),
                    arguments: [month, index])
            else { throw StoreError.notSeeded("verse calendar") }
            return VerseRange(surah: row["surah"], start: row["ayah_start"], end: row["ayah_end"])
        }
    }
}
