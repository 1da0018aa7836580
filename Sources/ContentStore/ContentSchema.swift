import Storage

/// The content's tables (Quran text, editions, layers, commentary, themes, pools, occasions, display themes,
/// published month starts) and how their migrations changed them. Shipped steps are never edited; `Schema.dailyVerse`
/// lists every domain's steps in the order they run.
public enum ContentSchema {
    /// v1: the content as first shipped.
    public static let v1Content = MigrationStep(
        sql: """
            CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
            CREATE TABLE surah (
                number INTEGER PRIMARY KEY NOT NULL CHECK (number BETWEEN 1 AND 114),
                transliteration TEXT NOT NULL, arabic TEXT NOT NULL, english TEXT NOT NULL,
                revelation TEXT NOT NULL CHECK (revelation IN ('meccan', 'medinan')),
                ayah_count INTEGER NOT NULL CHECK (ayah_count > 0));
            CREATE TABLE edition (
                id TEXT PRIMARY KEY NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('quran', 'translation')),
                language TEXT NOT NULL, name TEXT NOT NULL, credit TEXT NOT NULL, notice TEXT NOT NULL);
            CREATE TABLE ayah_text (
                edition_id TEXT NOT NULL REFERENCES edition(id) ON DELETE CASCADE,
                surah INTEGER NOT NULL, ayah INTEGER NOT NULL, text TEXT NOT NULL,
                PRIMARY KEY (edition_id, surah, ayah)) WITHOUT ROWID;
            CREATE TABLE layer (
                id TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE, icon TEXT NOT NULL,
                title TEXT NOT NULL, description TEXT NOT NULL);
            CREATE TABLE commentary (
                id INTEGER PRIMARY KEY,
                surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                layer_id TEXT NOT NULL REFERENCES layer(id),
                body TEXT NOT NULL, work TEXT, author TEXT, reference TEXT, provenance TEXT NOT NULL,
                origin TEXT NOT NULL CHECK (origin IN ('bundled', 'import')),
                UNIQUE (surah, ayah_start, ayah_end, layer_id));
            CREATE INDEX commentary_by_surah ON commentary (surah, ayah_start);
            CREATE TABLE verse_theme (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, relevance TEXT NOT NULL);
            CREATE TABLE month_theme (
                month INTEGER PRIMARY KEY NOT NULL CHECK (month BETWEEN 1 AND 12),
                theme_id TEXT NOT NULL REFERENCES verse_theme(id));
            CREATE TABLE month_pool (
                month INTEGER NOT NULL REFERENCES month_theme(month), position INTEGER NOT NULL,
                surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                PRIMARY KEY (month, position)) WITHOUT ROWID;
            CREATE TABLE occasion (
                id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, description TEXT,
                month INTEGER NOT NULL, day INTEGER NOT NULL,
                surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                theme_id TEXT NOT NULL REFERENCES verse_theme(id), UNIQUE (month, day));
            CREATE TABLE display_theme (
                id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, background TEXT NOT NULL,
                surface TEXT NOT NULL, text TEXT NOT NULL, accent TEXT NOT NULL);
            CREATE TABLE published_month_start (
                year INTEGER NOT NULL, month INTEGER NOT NULL CHECK (month BETWEEN 1 AND 12),
                first_day TEXT NOT NULL, created_at TEXT NOT NULL,
                PRIMARY KEY (year, month));
            """)

    /// v2 (with Delivery's devices and outbox): the occasions' Arabic names.
    public static let v2OccasionNames = MigrationStep(
        sql: """
            ALTER TABLE occasion ADD COLUMN name_arabic TEXT;
            """)

    /// v15: the regions a predicted calendar is kept for, as data/calendar/crescent-regions.json gives them, each with
    /// its table (data/calendar/predicted/<id>.csv, the CSV text): seeded with the rest of the content.
    public static let v15CrescentRegions = MigrationStep(
        sql: """
            CREATE TABLE crescent_region (
                id TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE, name TEXT NOT NULL, rule TEXT NOT NULL,
                sites TEXT NOT NULL, is_default INTEGER NOT NULL CHECK (is_default IN (0, 1)), predicted TEXT NOT NULL);
            """)

    /// v16: commentary editions imported whole (`dailyverse import tafsir`): each edition with what is known of it, its
    /// blocks as plain text (in the order of their sura file), and for each verse the block that comments on it.
    public static let v16TafsirEditions = MigrationStep(
        sql: """
            CREATE TABLE tafsir_edition (
                id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, name_english TEXT, author TEXT NOT NULL, author_english TEXT,
                author_death TEXT, language TEXT NOT NULL, source TEXT NOT NULL, licence TEXT NOT NULL,
                machine_translation INTEGER CHECK (machine_translation IN (0, 1)), imported_at TEXT NOT NULL);
            CREATE TABLE tafsir_block (
                id INTEGER PRIMARY KEY,
                edition_id TEXT NOT NULL REFERENCES tafsir_edition(id) ON DELETE CASCADE,
                surah INTEGER NOT NULL CHECK (surah BETWEEN 1 AND 114), position INTEGER NOT NULL, text TEXT NOT NULL,
                UNIQUE (edition_id, surah, position));
            CREATE TABLE tafsir_verse (
                edition_id TEXT NOT NULL REFERENCES tafsir_edition(id) ON DELETE CASCADE,
                surah INTEGER NOT NULL, ayah INTEGER NOT NULL,
                block_id INTEGER NOT NULL REFERENCES tafsir_block(id) ON DELETE CASCADE,
                PRIMARY KEY (edition_id, surah, ayah)) WITHOUT ROWID;
            CREATE INDEX tafsir_verse_by_block ON tafsir_verse (block_id);
            """)

    /// v17: the five layers from the editions. Each layer keeps the editions that feed it by default (data/layers.json's
    /// `sources`, as JSON); an edition says whether it was bundled (data/tafsir/, seeded with the rest and replaced by
    /// the seeding) or imported (`import tafsir`, which seeding never touches); a block says whether it is the dataset's
    /// whole block or the verbatim part of it the repository bundles.
    public static let v17LayerSources = MigrationStep(
        sql: """
            ALTER TABLE layer ADD COLUMN sources TEXT NOT NULL DEFAULT '{}';
            ALTER TABLE tafsir_edition ADD COLUMN origin TEXT NOT NULL DEFAULT 'import' CHECK (origin IN ('bundled', 'import'));
            ALTER TABLE tafsir_block ADD COLUMN whole INTEGER NOT NULL DEFAULT 1 CHECK (whole IN (0, 1));
            """)

    /// v18: the excerpt a day shows of an edition, kept per edition, part and passage (the verses a day can show): the
    /// bundle's, written when it was cut, or the first read's; `text` NULL where the edition has nothing clean for the
    /// passage. An edition's go with it; seeding keeps none but the bundle's.
    public static let v18TafsirExcerpts = MigrationStep(
        sql: """
            CREATE TABLE tafsir_excerpt (
                edition_id TEXT NOT NULL REFERENCES tafsir_edition(id) ON DELETE CASCADE,
                part TEXT NOT NULL CHECK (part IN ('commentary', 'narrations')),
                surah INTEGER NOT NULL CHECK (surah BETWEEN 1 AND 114), ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                text TEXT, block_start INTEGER NOT NULL, block_end INTEGER NOT NULL, more INTEGER NOT NULL CHECK (more IN (0, 1)),
                PRIMARY KEY (edition_id, part, surah, ayah_start, ayah_end)) WITHOUT ROWID;
            """)

    /// v19: hadith collections imported (`import hadith`): each hadith where its book puts it (volume, book, chapter,
    /// number as the source gives them, and its place in the chapter), its English and Arabic, its gradings (JSON) where
    /// the source gives any, and the verses it cites. A collection's go with it.
    public static let v19Hadith = MigrationStep(
        sql: """
            CREATE TABLE hadith_book (
                id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, author TEXT NOT NULL, translator TEXT, source TEXT NOT NULL,
                licence TEXT NOT NULL, imported_at TEXT NOT NULL);
            CREATE TABLE hadith (
                id INTEGER PRIMARY KEY,
                book_id TEXT NOT NULL REFERENCES hadith_book(id) ON DELETE CASCADE,
                volume INTEGER NOT NULL, book TEXT, chapter TEXT, chapter_title TEXT, number TEXT NOT NULL,
                number_from TEXT NOT NULL CHECK (number_from IN ('footnote', 'heading', 'source', 'position')),
                position INTEGER NOT NULL, english TEXT NOT NULL, arabic TEXT, gradings TEXT NOT NULL DEFAULT '[]', url TEXT,
                verse_count INTEGER NOT NULL);
            CREATE INDEX hadith_by_book ON hadith (book_id);
            CREATE TABLE hadith_verse (
                surah INTEGER NOT NULL CHECK (surah BETWEEN 1 AND 114), ayah INTEGER NOT NULL,
                hadith_id INTEGER NOT NULL REFERENCES hadith(id) ON DELETE CASCADE,
                PRIMARY KEY (surah, ayah, hadith_id)) WITHOUT ROWID;
            CREATE INDEX hadith_verse_by_hadith ON hadith_verse (hadith_id);
            """)

    /// v10: occasions: several on one day (a rank decides which leads), nights kept from the evening before, a day that
    /// is the month's last (day 0), a note for another tradition's date. Commentary may name the occasion it was
    /// written for, and is then shown on that occasion only; an entry's key includes it. Both tables are rebuilt
    /// (SQLite cannot drop a UNIQUE constraint); occasions are reseeded, commentary is copied.
    public static let v10OccasionsAndNights = MigrationStep(
        sql: """
            CREATE TABLE occasion_v10 (
                id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, name_arabic TEXT, description TEXT, note TEXT,
                month INTEGER NOT NULL CHECK (month BETWEEN 1 AND 12), day INTEGER NOT NULL CHECK (day BETWEEN 0 AND 30),
                observed TEXT NOT NULL DEFAULT 'day' CHECK (observed IN ('day', 'night')),
                rank INTEGER NOT NULL DEFAULT 2 CHECK (rank BETWEEN 1 AND 3),
                surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                theme_id TEXT NOT NULL REFERENCES verse_theme(id), UNIQUE (month, day, observed, rank));
            INSERT INTO occasion_v10 (id, name, name_arabic, description, month, day, surah, ayah_start, ayah_end, theme_id)
                SELECT id, name, name_arabic, description, month, day, surah, ayah_start, ayah_end, theme_id FROM occasion;
            DROP TABLE occasion;
            ALTER TABLE occasion_v10 RENAME TO occasion;
            CREATE TABLE commentary_v10 (
                id INTEGER PRIMARY KEY,
                surah INTEGER NOT NULL, ayah_start INTEGER NOT NULL, ayah_end INTEGER NOT NULL,
                layer_id TEXT NOT NULL REFERENCES layer(id), occasion_id TEXT,
                body TEXT NOT NULL, work TEXT, author TEXT, reference TEXT, provenance TEXT NOT NULL,
                origin TEXT NOT NULL CHECK (origin IN ('bundled', 'import')));
            INSERT INTO commentary_v10 (id, surah, ayah_start, ayah_end, layer_id, body, work, author, reference, provenance, origin)
                SELECT id, surah, ayah_start, ayah_end, layer_id, body, work, author, reference, provenance, origin FROM commentary;
            DROP TABLE commentary;
            ALTER TABLE commentary_v10 RENAME TO commentary;
            CREATE UNIQUE INDEX commentary_key ON commentary (surah, ayah_start, ayah_end, layer_id, ifnull(occasion_id, ''));
            CREATE INDEX commentary_by_surah ON commentary (surah, ayah_start);
            """)
}

extension ContentSchema {
    /// PostgreSQL, first migration: the content's tables as SQLite's v1–v19 left them, column for column (flags as
    /// integers, dates as the ISO text SQLite keeps), so that `migrate-store` copies rows as they are.
    public static let postgresV1 = PostgresStep(
        "CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)",
        """
        CREATE TABLE surah (
            number integer PRIMARY KEY CHECK (number BETWEEN 1 AND 114),
            transliteration text NOT NULL, arabic text NOT NULL, english text NOT NULL,
            revelation text NOT NULL CHECK (revelation IN ('meccan', 'medinan')),
            ayah_count integer NOT NULL CHECK (ayah_count > 0))
        """,
        """
        CREATE TABLE edition (
            id text PRIMARY KEY, kind text NOT NULL CHECK (kind IN ('quran', 'translation')),
            language text NOT NULL, name text NOT NULL, credit text NOT NULL, notice text NOT NULL)
        """,
        """
        CREATE TABLE ayah_text (
            edition_id text NOT NULL REFERENCES edition(id) ON DELETE CASCADE,
            surah integer NOT NULL, ayah integer NOT NULL, text text NOT NULL,
            PRIMARY KEY (edition_id, surah, ayah))
        """,
        """
        CREATE TABLE layer (
            id text PRIMARY KEY, position integer NOT NULL UNIQUE, icon text NOT NULL,
            title text NOT NULL, description text NOT NULL, sources text NOT NULL DEFAULT '{}')
        """,
        "CREATE TABLE verse_theme (id text PRIMARY KEY, name text NOT NULL, relevance text NOT NULL)",
        """
        CREATE TABLE month_theme (
            month integer PRIMARY KEY CHECK (month BETWEEN 1 AND 12),
            theme_id text NOT NULL REFERENCES verse_theme(id))
        """,
        """
        CREATE TABLE month_pool (
            month integer NOT NULL REFERENCES month_theme(month), position integer NOT NULL,
            surah integer NOT NULL, ayah_start integer NOT NULL, ayah_end integer NOT NULL,
            PRIMARY KEY (month, position))
        """,
        """
        CREATE TABLE display_theme (
            id text PRIMARY KEY, name text NOT NULL, background text NOT NULL,
            surface text NOT NULL, text text NOT NULL, accent text NOT NULL)
        """,
        """
        CREATE TABLE published_month_start (
            year integer NOT NULL, month integer NOT NULL CHECK (month BETWEEN 1 AND 12),
            first_day text NOT NULL, created_at text NOT NULL,
            PRIMARY KEY (year, month))
        """,
        """
        CREATE TABLE occasion (
            id text PRIMARY KEY, name text NOT NULL, name_arabic text, description text, note text,
            month integer NOT NULL CHECK (month BETWEEN 1 AND 12), day integer NOT NULL CHECK (day BETWEEN 0 AND 30),
            observed text NOT NULL DEFAULT 'day' CHECK (observed IN ('day', 'night')),
            rank integer NOT NULL DEFAULT 2 CHECK (rank BETWEEN 1 AND 3),
            surah integer NOT NULL, ayah_start integer NOT NULL, ayah_end integer NOT NULL,
            theme_id text NOT NULL REFERENCES verse_theme(id), UNIQUE (month, day, observed, rank))
        """,
        """
        CREATE TABLE commentary (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            surah integer NOT NULL, ayah_start integer NOT NULL, ayah_end integer NOT NULL,
            layer_id text NOT NULL REFERENCES layer(id), occasion_id text,
            body text NOT NULL, work text, author text, reference text, provenance text NOT NULL,
            origin text NOT NULL CHECK (origin IN ('bundled', 'import')))
        """,
        "CREATE UNIQUE INDEX commentary_key ON commentary (surah, ayah_start, ayah_end, layer_id, coalesce(occasion_id, ''))",
        "CREATE INDEX commentary_by_surah ON commentary (surah, ayah_start)",
        """
        CREATE TABLE crescent_region (
            id text PRIMARY KEY, position integer NOT NULL UNIQUE, name text NOT NULL, rule text NOT NULL,
            sites text NOT NULL, is_default integer NOT NULL CHECK (is_default IN (0, 1)), predicted text NOT NULL)
        """,
        """
        CREATE TABLE tafsir_edition (
            id text PRIMARY KEY, name text NOT NULL, name_english text, author text NOT NULL, author_english text,
            author_death text, language text NOT NULL, source text NOT NULL, licence text NOT NULL,
            machine_translation integer CHECK (machine_translation IN (0, 1)), imported_at text NOT NULL,
            origin text NOT NULL DEFAULT 'import' CHECK (origin IN ('bundled', 'import')))
        """,
        """
        CREATE TABLE tafsir_block (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            edition_id text NOT NULL REFERENCES tafsir_edition(id) ON DELETE CASCADE,
            surah integer NOT NULL CHECK (surah BETWEEN 1 AND 114), position integer NOT NULL, text text NOT NULL,
            whole integer NOT NULL DEFAULT 1 CHECK (whole IN (0, 1)),
            UNIQUE (edition_id, surah, position))
        """,
        """
        CREATE TABLE tafsir_verse (
            edition_id text NOT NULL REFERENCES tafsir_edition(id) ON DELETE CASCADE,
            surah integer NOT NULL, ayah integer NOT NULL,
            block_id bigint NOT NULL REFERENCES tafsir_block(id) ON DELETE CASCADE,
            PRIMARY KEY (edition_id, surah, ayah))
        """,
        "CREATE INDEX tafsir_verse_by_block ON tafsir_verse (block_id)",
        """
        CREATE TABLE tafsir_excerpt (
            edition_id text NOT NULL REFERENCES tafsir_edition(id) ON DELETE CASCADE,
            part text NOT NULL CHECK (part IN ('commentary', 'narrations')),
            surah integer NOT NULL CHECK (surah BETWEEN 1 AND 114), ayah_start integer NOT NULL, ayah_end integer NOT NULL,
            text text, block_start integer NOT NULL, block_end integer NOT NULL, more integer NOT NULL CHECK (more IN (0, 1)),
            PRIMARY KEY (edition_id, part, surah, ayah_start, ayah_end))
        """,
        """
        CREATE TABLE hadith_book (
            id text PRIMARY KEY, title text NOT NULL, author text NOT NULL, translator text, source text NOT NULL,
            licence text NOT NULL, imported_at text NOT NULL)
        """,
        """
        CREATE TABLE hadith (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            book_id text NOT NULL REFERENCES hadith_book(id) ON DELETE CASCADE,
            volume integer NOT NULL, book text, chapter text, chapter_title text, number text NOT NULL,
            number_from text NOT NULL CHECK (number_from IN ('footnote', 'heading', 'source', 'position')),
            position integer NOT NULL, english text NOT NULL, arabic text, gradings text NOT NULL DEFAULT '[]', url text,
            verse_count integer NOT NULL)
        """,
        "CREATE INDEX hadith_by_book ON hadith (book_id)",
        """
        CREATE TABLE hadith_verse (
            surah integer NOT NULL CHECK (surah BETWEEN 1 AND 114), ayah integer NOT NULL,
            hadith_id bigint NOT NULL REFERENCES hadith(id) ON DELETE CASCADE,
            PRIMARY KEY (surah, ayah, hadith_id))
        """,
        "CREATE INDEX hadith_verse_by_hadith ON hadith_verse (hadith_id)"
    )
}
