import AppSchema
import ArgumentParser
import Astronomy
import ContentStore
import Daemon
import Diagnostics
import Foundation
import HTTPAPI
import HijriCalendar
import Logging
import Onboarding
import Storage
import Synchronization

/// Options every command shares.
public struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "The database: a SQLite file, or a postgresql:// address (README, PostgreSQL). Default: $DAILYVERSE_DB, else 'database' in the configuration file, else a file in the XDG data directory.",
            valueName: "path"))
    var db: String?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "The data/ folder to seed from. Default: $DAILYVERSE_DATA, else 'data' in the configuration file, else found beside the binary.",
            valueName: "dir"))
    var data: String?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("Pin the clock to this instant (ISO 8601), for fixtures and replays. Also $DAILYVERSE_NOW.", valueName: "instant"))
    var now: String?

    @Flag(name: .long, help: "Print JSON for scripts instead of text.")
    var json = false

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "The region whose predicted calendar to keep (data/calendar/crescent-regions.json). Default: $DAILYVERSE_REGION, else 'region' in the configuration file, else the data's default (iran).",
            valueName: "id"))
    var region: String?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "Which commentary editions feed which layer, in order of preference: LAYER=EDITION[,EDITION…][;LAYER=…], e.g. 'classical_shia=en.mizan,ar.majma;ahlul_bayt=en.safi:narrations'. A layer not named keeps data/layers.json's sources. Default: $DAILYVERSE_LAYERS, else 'layers' in the configuration file.",
            valueName: "sources"))
    var layers: String?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("Configuration file (TOML). Default: $DAILYVERSE_CONFIG, else /etc/dailyverse/config.toml if present.", valueName: "path"))
    var config: String?

    public init() {}

    /// The global flags given, checked before every command runs whether or not it reads them (`runAsMain`): `--now
    /// tomorow` on a command that keeps no clock is still a mistake worth a line, not a flag passed over. Only what the
    /// flags say is checked here, without opening anything; the environment and the configuration file are read, and
    /// checked, by the commands that use them. (Not the parser's `validate`, whose errors read as a usage mistake.)
    func checkFlags() throws {
        if now != nil { _ = try clock() }
        if let db { _ = try SettingValue(text: db, origin: .flag("--db")).checked(Self.parseDatabase) }
        if let data { _ = try SettingValue(text: data, origin: .flag("--data")).checked(Self.parsePath) }
        if let config { _ = try SettingValue(text: config, origin: .flag("--config")).checked(Self.parsePath) }
        if let layers { _ = try SettingValue(text: layers, origin: .flag("--layers")).checked(Self.parseLayers) }
        // A region's id or sites (`LAT,LON;…`, at most 400 bytes): which of them the data knows is the command's to say.
        if let region {
            try SettingValue(text: region, origin: .flag("--region")).checked { text in
                if text.isEmpty || text.utf8.count > 400 || text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    throw SettingRefusal("expected a region's id, such as iran, or LAT,LON sites")
                }
            }
        }
    }

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    static let defaultConfigPath = "/etc/dailyverse/config.toml"
    static let configKeys: Set<String> = Set(
        [
            "database", "data", "sink", "grace", "emit_ahead", "apns_topic", "log_level", "listen", "guest_retention", "outbox_retention",
            "idle_timeout", "throttle_sign_in", "throttle_guests", "throttle_accounts", "trusted_proxies",
            "max_connections", "throttle_writes", "max_devices_per_user", "event_retention", "session_idle", "session_lifetime", "region",
            "layers", "delivery_lease", "content_database", "throttle_key_file",
        ] + PushOptions.fileKeys)

    /// The configuration file, if one is named or the default exists. Flags override the environment, which
    /// overrides the file, which overrides the defaults.
    /// Read once per process: every setting asks for it.
    func configFile() throws -> ConfigFile? {
        let setting =
            config.map { SettingValue(text: $0, origin: .flag("--config")) }
            ?? environment["DAILYVERSE_CONFIG"].flatMap { $0.isEmpty ? nil : SettingValue(text: $0, origin: .environment("DAILYVERSE_CONFIG")) }
        let named = try setting?.checked(Self.parsePath)
        let path = named ?? Self.defaultConfigPath
        return try Self.loaded.value(for: path) {
            guard named != nil || FileManager.default.fileExists(atPath: path) else { return nil }
            try Self.checkOwnership(path)
            let file = try ConfigFile(contentsOf: path)
            try file.checkKeys(Self.configKeys)
            return file
        }
    }

    private static let loaded = LoadedConfig()

    /// The configuration can point the sink at any address and the database at any file: a file that another user
    /// could have written is refused, naming the reason.
    static func checkOwnership(_ path: String) throws {
        var info = stat()
        // Missing, or no file at all (a folder, a FIFO, a device, whose modes say nothing of who wrote a file):
        // `ConfigFile` reads only a regular file, and names the kind.
        guard stat(path, &info) == 0, FileKind(mode: info.st_mode) == .regular else { return }
        let mode = Int(info.st_mode) & 0o777
        if mode & 0o022 != 0 {
            throw CLIError(
                "configuration file '\(path)' is writable by \(mode & 0o002 != 0 ? "everyone" : "its group") (mode 0\(String(mode, radix: 8))): "
                    + "run chmod go-w on it")
        }
        let owner = info.st_uid
        if owner != 0 && owner != getuid() {
            throw CLIError("configuration file '\(path)' belongs to user \(owner), neither root nor this user (\(getuid())): refusing it")
        }
    }

    /// Settings of the configuration file that a flag or an environment variable overrode in this process, as
    /// "'key' in FILE is overridden by NAME in the environment", for `serve` to say at start.
    static let overrides = Overrides()

    final class Overrides: Sendable {
        private let seen = Mutex<[String]>([])
        func note(_ line: String) { seen.withLock { if !$0.contains(line) { $0.append(line) } } }
        var all: [String] { seen.withLock { $0 } }
    }

    /// Configuration files read so far, by path, with the error if reading failed.
    private final class LoadedConfig: Sendable {
        private let files = Mutex<[String: Result<ConfigFile?, any Error>]>([:])

        func value(for path: String, load: () throws -> ConfigFile?) throws -> ConfigFile? {
            try files.withLock { files in
                if let result = files[path] { return try result.get() }
                let result = Result { try load() }
                files[path] = result
                return try result.get()
            }
        }
    }

    /// A setting from its flag (`flag`: its name, and its value if given), its environment variable, the configuration
    /// file, in that order, with where it came from: a value refused is refused naming that (`SettingValue.checked`).
    /// The file is read (and checked) even when a flag or the environment wins, so a typo in it never goes unnoticed.
    func setting(flag: (name: String, value: String?)? = nil, environment name: String, key: String) throws -> SettingValue? {
        let file = try configFile()
        let fromFile = file.flatMap { file in
            file.text(key).map { SettingValue(text: $0, origin: .configuration(key: key, path: file.file, line: file.lines[key] ?? 0)) }
        }
        let fromFlag = flag.flatMap { flag in flag.value.map { SettingValue(text: $0, origin: .flag(flag.name)) } }
        let overriding: SettingValue? =
            fromFlag ?? environment[name].flatMap { $0.isEmpty ? nil : SettingValue(text: $0, origin: .environment(name)) }
        // The same value in both places (the unit's environment and the file the shell's commands read) overrides nothing.
        if let overriding, let fromFile, fromFile.text != overriding.text, let file {
            Self.overrides.note("'\(key)' in \(file.file) is overridden by \(overriding.origin.overriding)")
        }
        return overriding ?? fromFile
    }

    /// A setting (as `setting(flag:environment:key:)` finds it) read by `parse`, nil when none is given. A value `parse`
    /// refuses (`SettingRefusal`) is one line naming the flag, the variable, or the file's line and key it came from.
    func checked<T>(
        flag: (name: String, value: String?)? = nil, environment name: String, key: String, _ parse: (String) throws -> T
    ) throws -> T? {
        guard let value = try setting(flag: flag, environment: name, key: key) else { return nil }
        return try value.checked(parse)
    }

    /// The API's throttles: `COUNT/DURATION` each (`5/15m`), from the environment or the configuration file.
    func throttles() throws -> Throttles {
        func throttle(_ key: String, _ fallback: String) throws -> Throttle {
            let parsed = try checked(environment: "DAILYVERSE_" + key.uppercased(), key: key) { try Self.parseThrottle($0, example: fallback) }
            return try parsed ?? Self.parseThrottle(fallback, example: fallback)
        }
        return Throttles(
            signIn: try throttle("throttle_sign_in", "5/15m"), guests: try throttle("throttle_guests", "10/1h"),
            accounts: try throttle("throttle_accounts", "5/1h"), writes: try throttle("throttle_writes", "120/1m"))
    }

    /// A throttle as written, `COUNT/DURATION` (`example`, such as 5/15m).
    static func parseThrottle(_ text: String, example: String) throws -> Throttle {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let limit = Digits.wholeNumber(parts[0], in: 1...1_000_000) else {
            throw SettingRefusal("expected COUNT/DURATION such as \(example), COUNT from 1 to 1000000")
        }
        let window: TimeInterval
        do { window = try TimeSpan.interval(String(parts[1]), within: DurationSetting.throttleWindow) } catch {
            throw SettingRefusal("its window '\(parts[1])': \(error.reason)")
        }
        return Throttle(limit: limit, window: window)
    }

    /// The region named by `--region`, `DAILYVERSE_REGION` or the configuration file, else nil (the data's default).
    func regionSetting() throws -> SettingValue? { try setting(flag: ("--region", region), environment: "DAILYVERSE_REGION", key: "region") }

    /// The region setting kept by `database` (nil: the data's default), an unknown one refused naming where it came from.
    func useRegion(in database: AppDatabase) throws {
        guard let region = try regionSetting() else { return try database.useCrescentRegion(nil) }
        try region.checked { id in
            do { try database.useCrescentRegion(id) } catch let error as CalendarError { throw Self.regionRefusal(error) }
        }
    }

    /// A region setting refused by the regions (unknown, or sites out of range), as `SettingValue.checked` says it;
    /// any other error of the calendar (the data's regions themselves) as it is.
    static func regionRefusal(_ error: CalendarError) -> any Error {
        switch error {
        case .unknownRegion(_, let known):
            return SettingRefusal("no such region: " + CalendarError.regionsExpected(known))
        case .badCoordinates(_, let detail): return SettingRefusal(detail)
        default: return error
        }
    }

    /// The layer setting (`--layers`, `DAILYVERSE_LAYERS` or the configuration file) and the editions it names, else
    /// nil (the data's).
    func layerSetting() throws -> (value: SettingValue, sources: LayerSources)? {
        guard let value = try setting(flag: ("--layers", layers), environment: "DAILYVERSE_LAYERS", key: "layers"),
            let sources = try value.checked(Self.parseLayers)
        else { return nil }
        return (value, sources)
    }

    /// The layer setting's form read (`LayerSources(setting:)`): blank is none.
    static func parseLayers(_ text: String) throws -> LayerSources? {
        do { return try LayerSources(setting: text) } catch {
            if case .invalidLayerSources(let reason) = error { throw SettingRefusal(reason) }
            throw error
        }
    }

    /// The editions the layer setting names, each one `database` holds: a misspelt one is a line naming it, not a
    /// layer quietly left without it. Asked once the content is there to ask (an import, which may bring the edition
    /// named, is not asked; a content copy is asked once it has followed the database's imports).
    func checkLayerEditions(in database: AppDatabase) throws {
        if let layers = try layerSetting() { try Self.checkEditions(layers, in: database) }
    }

    /// `layers`' editions checked against `database`, one it lacks refused naming where the setting came from.
    static func checkEditions(_ layers: (value: SettingValue, sources: LayerSources), in database: AppDatabase) throws {
        try layers.value.checked { _ in
            do { try database.checkLayerSources(layers.sources) } catch StoreError.invalidLayerSources(let reason) { throw SettingRefusal(reason) }
        }
    }

    /// The configured region among `regions`, else their default; an unknown name is an error listing the known.
    func region(in regions: CrescentRegions) throws -> CrescentRegion {
        guard let region = try regionSetting() else { return regions.defaultRegion }
        return try region.checked { id in
            do { return try regions.region(id) } catch let error as CalendarError { throw Self.regionRefusal(error) }
        }
    }

    /// The instant the clock is pinned at, as written: --now (even empty, which `clock()` refuses), else a non-empty
    /// DAILYVERSE_NOW (an empty variable is no setting, as for every variable); nil for the wall clock.
    var pinnedInstant: SettingValue? {
        now.map { SettingValue(text: $0, origin: .flag("--now")) }
            ?? environment["DAILYVERSE_NOW"].flatMap { $0.isEmpty ? nil : SettingValue(text: $0, origin: .environment("DAILYVERSE_NOW")) }
    }

    /// Whether the clock is one the operator chose (--now, DAILYVERSE_NOW) rather than the wall clock.
    var clockIsPinned: Bool { pinnedInstant != nil }

    /// The pinned clock, or the wall clock.
    func clock() throws -> Date {
        guard let pinned = pinnedInstant else { return Date() }
        return try pinned.checked { text in
            // An empty --now is a mistake (a variable that was not set), not a wish for the wall clock.
            guard !text.isEmpty, let date = Date(iso8601: text), date.isInSupportedRange else { throw SettingRefusal(instantExpected) }
            return date
        }
    }

    /// The database file in use.
    func databasePath() throws -> String {
        // A path that is not UTF-8 reaches Swift with U+FFFD in it: opening that would create a file by another name.
        try checkedPath(databaseSetting() ?? AppDatabase.defaultPath(environment: environment), what: "the database path")
    }

    /// The SQLite database named by --db, DAILYVERSE_DB or `database`, if any. A `postgresql://` address is refused
    /// in one line by the commands that write the SQLite database only (read as a path, it would name a folder
    /// `postgresql:`); the others ask `postgresAddress()` first.
    func databaseSetting() throws -> String? {
        guard let location = try databaseLocation() else { return nil }
        switch location {
        case .sqlite(let path): return path
        case .postgres(let address):
            throw CLIError(
                "database '\(address)' is PostgreSQL, and this command writes the content, which each machine reads from its own SQLite copy: give --db that copy (content_database)"
            )
        }
    }

    /// The database named by --db, DAILYVERSE_DB or `database`, if any: a SQLite file or a PostgreSQL server.
    func databaseLocation() throws -> DatabaseLocation? {
        try setting(flag: ("--db", db), environment: "DAILYVERSE_DB", key: "database")?.checked(Self.parseDatabase)
    }

    /// The database setting read: a `postgresql://` address, or the path of a SQLite file (checked as every path is).
    /// An address is shown as `DatabaseLocation` shows it, never with what may be a password.
    static func parseDatabase(_ text: String) throws -> DatabaseLocation {
        let location: DatabaseLocation
        do { location = try DatabaseLocation(text) } catch {
            if case .badAddress(let address, let reason) = error { throw SettingRefusal(reason, shown: address) }
            throw error
        }
        if case .sqlite(let path) = location { _ = try parsePath(path) }
        return location
    }

    /// A path a setting names, checked as every path is (`checkedPath`): not empty, valid UTF-8, no control character.
    static func parsePath(_ text: String) throws -> String {
        do { return try checkedPath(text, what: "the path") } catch { throw SettingRefusal(error.reason) }
    }

    /// With a PostgreSQL database, this machine's SQLite copy of the content: `flag`, DAILYVERSE_CONTENT_DB or
    /// `content_database`, else content.sqlite in the XDG data folder. Opened (and seeded) as `openDatabase` opens.
    func openContentCopy(flag: String?, pool: Bool = false) throws -> AppDatabase {
        let named = try setting(flag: ("--content-db", flag), environment: "DAILYVERSE_CONTENT_DB", key: "content_database")?.checked(Self.parsePath)
        let defaultPath = URL(fileURLWithPath: AppDatabase.defaultPath(environment: environment)).deletingLastPathComponent()
            .appendingPathComponent("content.sqlite").path
        return try openDatabase(named: named, defaultPath: defaultPath, pool: pool)
    }

    /// On PostgreSQL, the display themes a device may have: those of this machine's content copy, as `serve` checks
    /// them (SQLite's device writes check the database's own table).
    func contentCopyThemes() throws -> Set<String> { Set(try openContentCopy(flag: nil).displayThemes().map(\.id)) }

    /// The content the reading commands (today, verse, the calendars, coverage) read: the SQLite database, or with a
    /// PostgreSQL database this machine's content copy, with the month starts and the imports published there copied
    /// into it first, as `serve` copies them each minute: what a command prints is what the API answers.
    func openContent() async throws -> AppDatabase {
        let now = try clock()
        return try await withPostgres { try await contentCopy(following: $0, now: now) } ?? openDatabase(checkingLayers: true)
    }

    /// This machine's content copy, with the month starts and the imported content published on `store` copied into it.
    func contentCopy(following store: PostgresStore, now: Date) async throws -> AppDatabase {
        let content = try openContentCopy(flag: nil)
        try await ServeCommand.followTheDatabase(store, content, data: try dataDirectory(), now: now)
        try checkLayerEditions(in: content)
        return content
    }

    /// The database an import writes: the SQLite database; or, with PostgreSQL, this machine's content copy, where the
    /// import's checks run before `importing` publishes it. `edition`: a Quran text's or translation's id, refused on
    /// PostgreSQL when it is a bundled edition's (the database holds imports only, and each copy seeds the bundled
    /// text from data/, so a replacement of it could not be shared).
    func importDatabase(edition: String? = nil) throws -> AppDatabase {
        guard try postgresAddress() != nil else { return try openDatabase() }
        if let edition, ImportedContent.bundledEditionIDs.contains(edition) {
            throw CLIError(
                "edition '\(edition)' is bundled: on PostgreSQL an imported text is shared under an id of its own (--id), and the bundled one stays"
            )
        }
        return try openContentCopy(flag: nil)
    }

    /// Runs `body`, an import into `database` (`importDatabase()`). On PostgreSQL the import is then published: the
    /// content copy's imports replace the database's, in one transaction, and every process's copy follows them
    /// within a minute (`PostgresStore.publishImport`).
    func importing<T: Sendable>(into database: AppDatabase, _ body: @escaping @Sendable (AppDatabase) throws -> T) async throws -> T {
        let data = try dataDirectory()
        let bundled: @Sendable () throws -> BundledContent = { try BundledContent(directory: data) }
        if let published = try await withPostgres({ try await $0.publishImport(through: database, bundled: bundled, body) }) { return published }
        return try body(database)
    }

    /// A change to the devices on either store: on PostgreSQL `shared` in one transaction, given the display themes
    /// this machine's content copy knows (the database holds no content); otherwise `local` on the SQLite file.
    func changingDevices<T: Sendable>(
        shared: @escaping @Sendable (PostgresTransaction, Set<String>) async throws -> T, local: (AppDatabase) throws -> T
    ) async throws -> T {
        if let done = try await withPostgres({ store in
            let themes = try contentCopyThemes()
            return try await store.transaction { try await shared($0, themes) }
        }) {
            return done
        }
        return try local(openDatabase())
    }

    /// The PostgreSQL database named by --db, DAILYVERSE_DB or `database`, if that is what it names.
    func postgresAddress() throws -> PostgresAddress? {
        guard let location = try databaseLocation(), case .postgres(let address) = location else { return nil }
        return address
    }

    /// Runs `body` on the PostgreSQL database the settings name, opened (and migrated) for it and closed after; nil
    /// when the database is a SQLite file. A failure is one line naming the database and the cause.
    func withPostgres<T: Sendable>(_ body: (PostgresStore) async throws -> T) async throws -> T? {
        guard let address = try postgresAddress() else { return nil }
        let logger = Logger(label: "dailyverse") { _ in SwiftLogNoOpLogHandler() }
        let store = try await PostgresStore.open(address, password: try PostgresPassword.resolve(for: address), schema: .dailyVerse, logger: logger)
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch let error as UserFacingError {
            await store.close()
            throw error
        } catch {
            await store.close()
            throw CLIError(store.describe(error))
        }
    }

    /// On PostgreSQL, one of the hourly jobs `serve` runs under an advisory lock (`body` answers nil when a process
    /// holds it now): its count, or one line saying `doing` is under way elsewhere. Nil on SQLite.
    func sharedJob(_ doing: String, _ body: (PostgresStore) async throws -> Int?) async throws -> Int? {
        guard let shared = try await withPostgres(body) else { return nil }
        guard let count = shared else { throw CLIError("\(doing) by another process right now: try again when it is done") }
        return count
    }

    /// The data/ folder in use.
    func dataDirectory() throws -> URL {
        guard let named = try setting(flag: ("--data", data), environment: "DAILYVERSE_DATA", key: "data") else {
            return try DataDirectory.locate(explicit: nil, environment: [:])
        }
        return try named.checked { path in
            do { return try DataDirectory.locate(explicit: path, environment: [:]) } catch let error as StoreError {
                if case .notADataDirectory = error { throw SettingRefusal(StoreError.notADataFolder) }
                throw error
            }
        }
    }

    /// The onboarding flow from data/.
    func onboardingFlow() throws -> OnboardingFlow { try OnboardingFlow.load(from: dataDirectory()) }

    /// The onboarding flow, with the layer and theme ids it may name.
    func onboardingMachine(_ database: AppDatabase) throws -> OnboardingMachine {
        try OnboardingMachine(flow: onboardingFlow(), database: database)
    }

    func hintCatalog() throws -> HintCatalog { try HintCatalog.load(from: dataDirectory()) }

    /// Opens the database as its one scheduler: the lock is taken first, so a second `serve` on the same database
    /// stops before it migrates or seeds anything (unless the database's folder is still to be created, when it is
    /// taken right after).
    func openDatabaseAsScheduler(pool: Bool = false) throws -> (AppDatabase, SchedulerLock) {
        let path = try databasePath()
        let moved = SchedulerLock.movedMark(database: path)
        // Its being there decides, whether or not this process may read it (a mark written by root under a strict umask).
        if access(moved, F_OK) == 0 {
            let said =
                (try? InputFile.contents(of: moved, maximumBytes: 4096)).map {
                    ": " + String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).prefix(200)
                } ?? ""
            throw CLIError("'\(path)' was moved to PostgreSQL (\(moved)\(said)): a scheduler on it would send again what PostgreSQL sends")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let early = FileManager.default.fileExists(atPath: folder) ? try SchedulerLock.acquire(database: path) : nil
        // The scheduler renders what the layers hold, and its API answers with them.
        let database = try openDatabase(pool: pool, checkingLayers: true)
        return (database, try early ?? SchedulerLock.acquire(database: path))
    }

    /// Opens the database, creating, migrating and seeding it on first use; with `checkingLayers`, for the commands that
    /// read the layers (the content's readers, the scheduler), the editions the layer setting names are checked against
    /// it. (Checked on every command, it cost two queries each and refused `devices list` for a misspelt edition.)
    func openDatabase(pool: Bool = false, checkingLayers: Bool = false) throws -> AppDatabase {
        try openDatabase(setting: databaseSetting(), pool: pool, checkingLayers: checkingLayers)
    }

    /// As `openDatabase(pool:checkingLayers:)`, the database setting read already (`databaseSetting()`).
    func openDatabase(setting named: String?, pool: Bool = false, checkingLayers: Bool = false) throws -> AppDatabase {
        try openDatabase(named: named, defaultPath: AppDatabase.defaultPath(environment: environment), pool: pool, checkingLayers: checkingLayers)
    }

    /// Opens the SQLite database at `named` (else at `defaultPath`, creating its folder), creating, migrating and seeding
    /// it on first use.
    func openDatabase(named: String?, defaultPath: String, pool: Bool = false, checkingLayers: Bool = false) throws -> AppDatabase {
        // Folders are created for the default location only: an explicit path into a missing folder is a typo.
        let explicit = try named.map { try checkedPath($0, what: "the database path") }
        let path = explicit ?? defaultPath
        // The data folder, found before anything is opened: one named (--data, DAILYVERSE_DATA, `data`) that is not a
        // data folder is refused whatever the database (it was passed over once the database was seeded), and so is
        // none found for a database still to be made (it was left migrated and empty).
        let data = Result { try dataDirectory() }
        if case .failure(let error) = data {
            // `.dataDirectoryNotFound` is none named (a named one that is not a data folder is the setting refused).
            guard case .dataDirectoryNotFound = error as? StoreError, access(path, F_OK) == 0 else { throw error }
        }
        // The layer setting read once, its form checked before anything is opened (a bad one made the database first);
        // its editions are checked against the database below, when asked, and it is kept for the queries.
        let layers = try layerSetting()
        // So is a region the data does not have, where the database is still to be made (a typo made it first): one
        // there already is asked below, by `useRegion`, without the data folder's file read again.
        if case .success(let folder) = data, access(path, F_OK) != 0, try regionSetting() != nil {
            _ = try region(in: BundledContent.crescentRegions(in: folder))
        }
        let database = try AppDatabase.open(path: path, pool: pool, createFolder: explicit == nil)
        switch data {
        case .success(let folder): try database.seedIfNeeded(from: folder)
        case .failure(let error):
            // A database seeded before can serve without its data folder, when none was named; an empty one cannot.
            guard try database.seededFingerprint() != nil else { throw error }
        }
        try useRegion(in: database)
        if checkingLayers, let layers { try Self.checkEditions(layers, in: database) }
        database.useLayerSources(layers?.sources)
        return database
    }
}

/// Calendar choice, shared by the commands that convert dates.
struct CalendarOptions: ParsableArguments {
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "The Hijri calendar: predicted (the default: month starts from the crescent's visibility at --region's sites, with the published starts), umm-al-qura, tabular, or sighted (Umm al-Qura with the published starts).",
            valueName: "name"))
    var calendar: CalendarKind = .installationDefault

    /// `.unconditional`: the value may start with a dash, so `--adjust -1` reads as users type it.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Shift the Hijri date by this many days.", valueName: "days"))
    var adjust: Adjustment = .zero

    /// The chosen calendar and adjustment; the sighted and predicted calendars need the database (the published
    /// starts, the regions' tables), the others not.
    func resolve(_ global: GlobalOptions) async throws -> (IslamicCalendar, Adjustment) {
        switch calendar {
        case .sighted, .predicted: (try await global.openContent().islamicCalendar(calendar), adjust)
        case .ummAlQura, .tabular: (try IslamicCalendar.make(calendar), adjust)
        }
    }
}

/// What an instant option or setting takes.
let instantExpected = "expected an ISO 8601 instant such as 2025-03-01T06:00:00Z (years 0001-9999)"

func parseInstant(_ text: String, option: String) throws -> Date {
    guard let date = Date(iso8601: text), date.isInSupportedRange else { throw CLIError("invalid \(option) '\(text)': \(instantExpected)") }
    return date
}

func parseTimeZone(_ name: String?) throws -> TimeZone {
    guard let name else { return TimeZone.current }
    guard let zone = TimeZone.iana(name) else {
        throw CalendarError.unknownTimeZone(name)
    }
    return zone
}

/// An error of the command line itself, with its message.
struct CLIError: UserFacingError {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The reader's language for the layers, shared by `today` and `verse`.
struct ReaderLanguageOption: ParsableArguments {
    @Option(
        name: .customLong("lang"), parsing: .unconditional,
        help: ArgumentHelp(
            "The reader's language, en or ar: each layer takes an edition in it first (Arabic al-Mizan where it is imported).",
            valueName: "code"))
    var language: String?

    func validate() throws {
        if let language, !AppDatabase.readerLanguages.contains(language) {
            throw ValidationError(
                "unknown language '\(language.prefix(40))' for --lang: expected one of \(AppDatabase.readerLanguages.joined(separator: ", "))")
        }
    }
}
