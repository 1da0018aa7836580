import Accounts
import Delivery
import Foundation
import Notifications
import Onboarding
import PostgresNIO
import Storage

/// Onboarding, hints and events on PostgreSQL: the queries of `OnboardingStore.swift`, `HintStore.swift` and
/// `GuestMerge.swift` in PostgreSQL's words, inside the caller's transaction; what an event or a hint change does is
/// worked out by the same functions as on SQLite (`OnboardingMachine`, `HintContext.step`, `completionChange`).
extension PostgresTransaction {
    func onboardingState(userID: String, flow: OnboardingFlow) async throws -> OnboardingState {
        guard let text = try await value("SELECT state FROM onboarding WHERE user_id = \(userID)", as: String.self) else {
            return OnboardingState(flow: flow)
        }
        return try JSONDecoder().decode(OnboardingState.self, from: Data(text.utf8))
    }

    func recordEvent(userID: String?, name: String, screen: String?, properties: [String: String], at: Date) async throws {
        try await rows(
            """
            INSERT INTO analytics_event (user_id, name, screen, properties, at)
            VALUES (\(userID), \(name), \(screen), \(try AppDatabase.encodedProperties(properties)), \(at.timeIntervalSince1970))
            """)
    }

    /// As `AppDatabase.applyOnboarding`; the caller holds the user's lock.
    func applyOnboarding(
        _ event: OnboardingEvent, userID: String, machine: OnboardingMachine, now: Date, themes: Set<String>
    ) async throws
        -> OnboardingState
    {
        let state = try await onboardingState(userID: userID, flow: machine.flow)
        let (next, analytics) = try machine.apply(event, to: state, at: now)
        let text = String(decoding: try JSONEncoder().encode(next), as: UTF8.self)
        try await rows(
            """
            INSERT INTO onboarding (user_id, state, updated_at) VALUES (\(userID), \(text), \(now.timeIntervalSince1970))
            ON CONFLICT (user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at
            """)
        for event in analytics {
            try await recordEvent(userID: userID, name: event.name, screen: event.screen, properties: event.properties, at: event.at)
        }
        if let change = AppDatabase.completionChange(event, next) {
            _ = try await updateSettings(userID: userID, now: now) { $0.apply(change) }
            try await applyToUserDevices(userID: userID, change, now: now, themes: themes)
        }
        return next
    }

    func hintContext(userID: String, token: String) async throws -> HintContext {
        var records: [String: HintRecord] = [:]
        for row in try await rows("SELECT hint_id, shown_at, dismissed_at, shown_in_tutorial FROM hint_state WHERE user_id = \(userID)") {
            let (id, shown, dismissed, tutorial) = try row.decode((String, Double?, Double?, Int).self)
            records[id] = HintRecord(
                shownAt: shown.map(Date.init(timeIntervalSince1970:)), dismissedAt: dismissed.map(Date.init(timeIntervalSince1970:)),
                shownInTutorial: tutorial != 0)
        }
        var counts: [String: Int] = [:]
        for row in try await rows("SELECT name, count FROM app_event_count WHERE user_id = \(userID)") {
            let (name, count) = try row.decode((String, Int).self)
            counts[name] = count
        }
        let tutorial = try await value("SELECT tutorial FROM session WHERE token_hash = \(SessionToken.hash(token))", as: Int.self) ?? 0
        let zone = TimeZone.iana(try await settings(userID: userID).timezone) ?? TimeZone(identifier: "UTC")!
        return HintContext(records: records, eventCounts: counts, tutorial: tutorial != 0, zone: zone)
    }

    /// As `AppDatabase.changeHint`; the caller holds the user's lock.
    func changeHint(
        _ hint: HintCatalog.Hint, _ change: HintChange, catalog: HintCatalog, userID: String, token: String, now: Date
    )
        async throws -> HintRecord
    {
        let context = try await hintContext(userID: userID, token: token)
        let step = try context.step(hint, change, catalog: catalog, now: now)
        let at = now.timeIntervalSince1970
        if step.insertShown {
            try await rows(
                """
                INSERT INTO hint_state (user_id, hint_id, shown_at, shown_in_tutorial) VALUES (\(userID), \(hint.id), \(at), \(context.tutorial ? 1 : 0))
                ON CONFLICT (user_id, hint_id) DO NOTHING
                """)
        }
        if step.markDismissed {
            try await rows("UPDATE hint_state SET dismissed_at = \(at) WHERE user_id = \(userID) AND hint_id = \(hint.id)")
        }
        if let event = step.event {
            try await recordEvent(userID: userID, name: event, screen: hint.id, properties: ["tutorial": "\(context.tutorial)"], at: now)
        }
        return step.record
    }

    /// As `AppDatabase.recordAppEvent`; the caller holds the user's lock, so the names are counted one at a time.
    func recordAppEvent(_ name: String, userID: String, now: Date) async throws -> Int {
        let known = try await value("SELECT 1 FROM app_event_count WHERE user_id = \(userID) AND name = \(name)", as: Int32.self) != nil
        if !known, try await value("SELECT count(*) FROM app_event_count WHERE user_id = \(userID)", as: Int.self) ?? 0 >= maximumEventNames {
            throw OnboardingError.invalidTransition("at most \(maximumEventNames) different event names per user")
        }
        return try await value(
            """
            INSERT INTO app_event_count (user_id, name, count, last_at) VALUES (\(userID), \(name), 1, \(now.timeIntervalSince1970))
            ON CONFLICT (user_id, name) DO UPDATE SET count = app_event_count.count + 1, last_at = excluded.last_at
            RETURNING count
            """, as: Int.self) ?? 1
    }

    func resetHints(userID: String) async throws {
        try await rows("DELETE FROM hint_state WHERE user_id = \(userID)")
        try await rows("DELETE FROM app_event_count WHERE user_id = \(userID)")
        try await rows("UPDATE session SET tutorial = 0 WHERE user_id = \(userID)")
    }

    /// As SQLite's `mergeGuest`: every domain's rows of the guest moved in one transaction, the guest retired.
    /// Both users are locked first, in a fixed order, so that two merges never wait on each other.
    func mergeGuest(_ guestID: String, into accountID: String, flow: OnboardingFlow, maximumDevices: Int, now: Date) async throws {
        for id in [guestID, accountID].sorted() { _ = try await lockUser(id) }
        guard try await isGuest(userID: guestID) else { return }
        try await mergeGuestBookmarks(from: guestID, into: accountID)
        try await moveDevices(from: guestID, to: accountID, maximum: maximumDevices, now: now)
        let guestState = try await onboardingState(userID: guestID, flow: flow)
        let accountState = try await onboardingState(userID: accountID, flow: flow)
        if AppDatabase.progress(guestState, flow) > AppDatabase.progress(accountState, flow) {
            try await rows(
                """
                INSERT INTO onboarding (user_id, state, updated_at) SELECT \(accountID), state, \(now.timeIntervalSince1970) FROM onboarding
                WHERE user_id = \(guestID)
                ON CONFLICT (user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at
                """)
        }
        try await mergeGuestSettings(from: guestID, into: accountID, now: now)
        try await rows(
            """
            INSERT INTO hint_state (user_id, hint_id, shown_at, dismissed_at, shown_in_tutorial)
            SELECT \(accountID), hint_id, shown_at, dismissed_at, shown_in_tutorial FROM hint_state WHERE user_id = \(guestID)
            ON CONFLICT (user_id, hint_id) DO UPDATE SET
                shown_at = coalesce(least(hint_state.shown_at, excluded.shown_at), hint_state.shown_at, excluded.shown_at),
                dismissed_at = coalesce(least(hint_state.dismissed_at, excluded.dismissed_at), hint_state.dismissed_at, excluded.dismissed_at)
            """)
        try await rows(
            """
            INSERT INTO app_event_count (user_id, name, count, last_at)
            SELECT \(accountID), name, count, last_at FROM app_event_count
            WHERE user_id = \(guestID) AND (
                name IN (SELECT name FROM app_event_count WHERE user_id = \(accountID))
                OR name IN (
                    SELECT name FROM app_event_count WHERE user_id = \(guestID)
                        AND name NOT IN (SELECT name FROM app_event_count WHERE user_id = \(accountID))
                    ORDER BY last_at DESC, name
                    LIMIT greatest(0, \(maximumEventNames) - (SELECT count(*) FROM app_event_count WHERE user_id = \(accountID)))))
            ON CONFLICT (user_id, name) DO UPDATE SET count = app_event_count.count + excluded.count,
                last_at = greatest(app_event_count.last_at, excluded.last_at)
            """)
        try await rows("UPDATE analytics_event SET user_id = \(accountID) WHERE user_id = \(guestID)")
        try await recordEvent(userID: accountID, name: AnalyticsEvent.guestMerged, screen: nil, properties: ["guest": guestID], at: now)
        try await removeUser(id: guestID)
    }
}

/// The API's users on PostgreSQL, shared by every process: each change one transaction; a read, or a change of one
/// statement, outside any (under READ COMMITTED a transaction of reads gives them no common snapshot, only two more
/// round trips); a change whose check and write must not interleave with the same user's others (devices, settings,
/// onboarding, hints, event counts) is done under that user's row lock. `themes` are the display themes of the
/// process's content (its SQLite copy).
public struct PostgresUserStore: UserStore {
    public let store: PostgresStore
    public let themes: Set<String>

    public init(store: PostgresStore, themes: Set<String>) {
        self.store = store
        self.themes = themes
    }

    /// A transaction under the user's lock; a user removed meanwhile is `UserStoreError.userGone`, answered as a
    /// missing reference is on SQLite (their token no longer valid).
    func forUser<T: Sendable>(_ userID: String, _ body: @escaping @Sendable (PostgresTransaction) async throws -> T) async throws -> T {
        try await store.transaction { transaction in
            guard try await transaction.lockUser(userID) else { throw UserStoreError.userGone }
            return try await body(transaction)
        }
    }

    public func check() async throws { try await store.withoutTransaction { try await $0.rows("SELECT 1") } }

    public func createGuest(now: Date) async throws -> (User, token: String) { try await store.transaction { try await $0.createGuest(now: now) } }

    public func createAccount(
        email: String, passwordHash: String, displayName: String?, upgrading guest: String?, now: Date
    ) async throws
        -> (User, token: String)
    {
        try await store.transaction { transaction in
            let created = try await transaction.createAccount(
                email: email, passwordHash: passwordHash, displayName: displayName, upgrading: guest, now: now)
            if guest != nil {
                try await transaction.recordEvent(userID: created.0.id, name: AnalyticsEvent.guestUpgraded, screen: nil, properties: [:], at: now)
            }
            return created
        }
    }

    public func passwordHash(emails: [String]) async throws -> (userID: String, hash: String)? {
        try await store.withoutTransaction { try await $0.passwordHash(emails: emails) }
    }

    public func openSession(userID: String, now: Date) async throws -> (User, token: String) {
        try await store.transaction { try await $0.openSession(userID: userID, now: now) }
    }

    public func authenticate(token: String, now: Date, policy: SessionPolicy) async throws -> User? {
        // One read (and, once a minute per session, two single-row writes that need not be together).
        try await store.withoutTransaction { try await $0.authenticate(token: token, now: now, policy: policy) }
    }

    public func closeSession(token: String) async throws { try await store.withoutTransaction { try await $0.closeSession(token: token) } }

    public func signIn(
        userID: String, mergingGuest guestID: String?, flow: OnboardingFlow, maximumDevices: Int, now: Date
    ) async throws -> (
        User, token: String
    ) {
        try await store.transaction { transaction in
            if let guestID, guestID != userID {
                try await transaction.mergeGuest(guestID, into: userID, flow: flow, maximumDevices: maximumDevices, now: now)
            }
            return try await transaction.openSession(userID: userID, now: now)
        }
    }

    public func recordEvent(userID: String?, name: String, screen: String?, properties: [String: String], at: Date) async throws {
        try await store.withoutTransaction { try await $0.recordEvent(userID: userID, name: name, screen: screen, properties: properties, at: at) }
    }

    public func settings(userID: String) async throws -> UserSettings {
        try await store.withoutTransaction { try await $0.settings(userID: userID) }
    }

    public func changeSettings(userID: String, _ change: DeviceSettings, now: Date) async throws -> UserSettings {
        let themes = themes
        return try await forUser(userID) { transaction in
            let settings = try await transaction.updateSettings(userID: userID, now: now) { $0.apply(change) }
            try await transaction.applyToUserDevices(userID: userID, change, now: now, themes: themes)
            return settings
        }
    }

    public func bookmarks(userID: String) async throws -> [Bookmark] {
        try await store.withoutTransaction { try await $0.bookmarks(userID: userID) }
    }

    public func addBookmark(userID: String, verseKey: String, now: Date) async throws -> Bool {
        try await forUser(userID) { try await $0.addBookmark(userID: userID, verseKey: verseKey, now: now) }
    }

    public func removeBookmark(userID: String, verseKey: String) async throws -> Bool {
        try await store.withoutTransaction { try await $0.removeBookmark(userID: userID, verseKey: verseKey) }
    }

    public func devices(userID: String, now: Date) async throws -> [DeviceState] {
        try await store.withoutTransaction { try await $0.devices(userID: userID, now: now) }
    }

    public func registerDevice(_ settings: DeviceSettings, userID: String, now: Date, maximum: Int) async throws -> (DeviceState, created: Bool) {
        let themes = themes
        return try await forUser(userID) { transaction in
            let defaults = try await transaction.storedSettings(userID: userID)?.deviceDefaults ?? DeviceSettings()
            let (device, created) = try await transaction.registerDevice(
                settings, userID: userID, now: now, maximum: maximum, defaults: defaults, themes: themes)
            guard let state = try await transaction.deviceState(id: device.id, now: now) else { throw DeviceError.notFound(device.id) }
            return (state, created)
        }
    }

    public func updateDevice(
        id: String, userID: String, now: Date, settings: @escaping @Sendable (Platform) throws -> DeviceSettings
    )
        async throws -> DeviceState
    {
        let themes = themes
        return try await forUser(userID) { transaction in
            _ = try await transaction.updateDevice(id: id, userID: userID, now: now, themes: themes, settings: settings)
            guard let state = try await transaction.deviceState(id: id, now: now) else { throw DeviceError.notFound(id) }
            return state
        }
    }

    public func removeDevice(id: String, userID: String) async throws -> Bool {
        try await forUser(userID) { try await $0.removeDevice(id: id, userID: userID) }
    }

    public func onboardingState(userID: String, flow: OnboardingFlow) async throws -> OnboardingState {
        try await store.withoutTransaction { try await $0.onboardingState(userID: userID, flow: flow) }
    }

    public func applyOnboarding(_ event: OnboardingEvent, userID: String, machine: OnboardingMachine, now: Date) async throws -> OnboardingState {
        let themes = themes
        return try await forUser(userID) { try await $0.applyOnboarding(event, userID: userID, machine: machine, now: now, themes: themes) }
    }

    public func hintContext(userID: String, token: String) async throws -> HintContext {
        try await store.withoutTransaction { try await $0.hintContext(userID: userID, token: token) }
    }

    public func changeHint(
        _ hint: HintCatalog.Hint, _ change: HintChange, catalog: HintCatalog, userID: String, token: String, now: Date
    ) async throws -> HintRecord {
        try await forUser(userID) { try await $0.changeHint(hint, change, catalog: catalog, userID: userID, token: token, now: now) }
    }

    public func setTutorial(_ on: Bool, token: String) async throws {
        try await store.withoutTransaction {
            try await $0.rows("UPDATE session SET tutorial = \(on ? 1 : 0) WHERE token_hash = \(SessionToken.hash(token))")
        }
    }

    public func resetHints(userID: String) async throws { try await forUser(userID) { try await $0.resetHints(userID: userID) } }

    public func recordAppEvent(_ name: String, userID: String, now: Date) async throws -> Int {
        try await forUser(userID) { try await $0.recordAppEvent(name, userID: userID, now: now) }
    }
}

/// A user-store operation that found its user gone: answered as a token no longer valid.
public enum UserStoreError: Error, Sendable {
    case userGone
}
