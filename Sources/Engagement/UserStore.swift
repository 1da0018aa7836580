import Accounts
import Delivery
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Onboarding
import Storage

/// Everything the API reads and writes about users — accounts and sessions, settings and bookmarks, devices,
/// onboarding, hints and events — as async operations, each one transaction, on either store: SQLite
/// (`SQLiteUserStore`, one process) or PostgreSQL (`PostgresUserStore`, any number of processes). Each domain keeps its
/// own queries; this is where they are put together for a request.
public protocol UserStore: Sendable {
    /// Throws when the store cannot be used: its file removed or replaced, its server unreachable.
    func check() async throws

    // Accounts and sessions
    func createGuest(now: Date) async throws -> (User, token: String)
    /// A new account, or a guest upgraded in place (`upgrading`), with the `guest_upgraded` analytics event recorded in
    /// the same transaction.
    func createAccount(
        email: String, passwordHash: String, displayName: String?, upgrading guest: String?, now: Date
    ) async throws -> (
        User, token: String
    )
    func passwordHash(emails: [String]) async throws -> (userID: String, hash: String)?
    func openSession(userID: String, now: Date) async throws -> (User, token: String)
    func authenticate(token: String, now: Date, policy: SessionPolicy) async throws -> User?
    func closeSession(token: String) async throws
    /// A sign-in in one transaction: `guestID`'s guest, if any, merged into the account, and a session opened. Refused
    /// (`DeviceError.tooManyToMerge`), changing nothing, when the account would have more than `maximumDevices`
    /// devices with the guest's; a failure leaves the guest and its token as they were.
    func signIn(
        userID: String, mergingGuest guestID: String?, flow: OnboardingFlow, maximumDevices: Int, now: Date
    ) async throws -> (
        User, token: String
    )
    func recordEvent(userID: String?, name: String, screen: String?, properties: [String: String], at: Date) async throws

    // Settings and bookmarks
    func settings(userID: String) async throws -> UserSettings
    /// The settings use case: a checked change to a user's settings, carried into each of their devices in the same
    /// transaction (each rescheduled, never firing a local date twice).
    func changeSettings(userID: String, _ change: DeviceSettings, now: Date) async throws -> UserSettings
    func bookmarks(userID: String) async throws -> [Bookmark]
    func addBookmark(userID: String, verseKey: String, now: Date) async throws -> Bool
    func removeBookmark(userID: String, verseKey: String) async throws -> Bool

    // Devices
    func devices(userID: String, now: Date) async throws -> [DeviceState]
    /// Registers a user's device (`AppDatabase.registerDevice`), the fields left out taken from the user's settings.
    func registerDevice(_ settings: DeviceSettings, userID: String, now: Date, maximum: Int) async throws -> (DeviceState, created: Bool)
    func updateDevice(
        id: String, userID: String, now: Date, settings: @escaping @Sendable (Platform) throws -> DeviceSettings
    ) async throws
        -> DeviceState
    func removeDevice(id: String, userID: String) async throws -> Bool

    // Onboarding, hints and events
    func onboardingState(userID: String, flow: OnboardingFlow) async throws -> OnboardingState
    func applyOnboarding(_ event: OnboardingEvent, userID: String, machine: OnboardingMachine, now: Date) async throws -> OnboardingState
    func hintContext(userID: String, token: String) async throws -> HintContext
    func changeHint(
        _ hint: HintCatalog.Hint, _ change: HintChange, catalog: HintCatalog, userID: String, token: String, now: Date
    ) async throws
        -> HintRecord
    func setTutorial(_ on: Bool, token: String) async throws
    func resetHints(userID: String) async throws
    func recordAppEvent(_ name: String, userID: String, now: Date) async throws -> Int
}

extension UserSettings {
    /// Takes the fields a checked change sets.
    public mutating func apply(_ change: DeviceSettings) {
        if let value = change.reminderTime { reminderTime = value }
        if let value = change.timeZone { timezone = value }
        if let value = change.calendar { calendar = value }
        if let value = change.adjustment { adjustment = value }
        if let value = change.displayTheme { displayTheme = value }
        if let value = change.enabled { notifications = value }
        if let value = change.locale { locale = value }
    }
}

extension UserSettings {
    /// What a new device of this user starts with (a zone the system no longer knows is left to the device default).
    public var deviceDefaults: DeviceSettings {
        var defaults = DeviceSettings()
        defaults.timeZone = TimeZone.iana(timezone) == nil ? nil : timezone
        defaults.reminderTime = reminderTime
        defaults.calendar = calendar
        defaults.adjustment = adjustment
        defaults.displayTheme = displayTheme
        defaults.enabled = notifications
        defaults.locale = locale
        return defaults
    }
}

extension AppDatabase {
    /// The settings use case on SQLite (`UserStore.changeSettings`).
    public func changeSettings(userID: String, _ change: DeviceSettings, now: Date) throws -> UserSettings {
        try write { db in
            let settings = try Self.updateSettings(db, userID: userID, now: now) { $0.apply(change) }
            try Self.applyToUserDevices(db, userID: userID, change, now: now)
            return settings
        }
    }

    /// A user's device registered with the user's stored settings as its defaults, and its state after.
    public func registerUserDevice(_ settings: DeviceSettings, userID: String, now: Date, maximum: Int) throws -> (DeviceState, created: Bool) {
        try write { db in
            let (device, created) = try Self.registerDevice(db, settings, userID: userID, now: now, maximum: maximum) { db in
                try Self.storedSettings(db, userID: userID)?.deviceDefaults ?? DeviceSettings()
            }
            guard let state = try Self.deviceState(db, id: device.id, now: now) else { throw DeviceError.notFound(device.id) }
            return (state, created)
        }
    }

    /// A user's device changed, and its state after.
    public func updateUserDevice(id: String, userID: String, now: Date, settings: (Platform) throws -> DeviceSettings) throws -> DeviceState {
        try write { db in
            let device = try Self.updateDevice(db, id: id, userID: userID, now: now, settings: settings)
            guard let state = try Self.deviceState(db, id: device.id, now: now) else { throw DeviceError.notFound(id) }
            return state
        }
    }
}

/// The API's users on SQLite: each operation the domains' synchronous method, run off the event loop
/// (`AppDatabase.run`).
public struct SQLiteUserStore: UserStore {
    public let database: AppDatabase

    public init(_ database: AppDatabase) { self.database = database }

    public func check() async throws { try database.checkFile() }

    public func createGuest(now: Date) async throws -> (User, token: String) { try await database.run { try $0.createGuest(now: now) } }

    public func createAccount(
        email: String, passwordHash: String, displayName: String?, upgrading guest: String?, now: Date
    ) async throws
        -> (User, token: String)
    {
        // A guest's upgrade and its analytics event in one transaction: a reply lost after the commit cannot lose the
        // event (the retry finds an account, 409).
        try await database.run { app in
            try app.write { db in
                let created = try AppDatabase.createAccount(
                    db, email: email, passwordHash: passwordHash, displayName: displayName, upgrading: guest, now: now)
                if guest != nil {
                    try AppDatabase.recordEvent(db, userID: created.0.id, name: AnalyticsEvent.guestUpgraded, screen: nil, properties: [:], at: now)
                }
                return created
            }
        }
    }

    public func passwordHash(emails: [String]) async throws -> (userID: String, hash: String)? {
        try await database.run { try $0.passwordHash(emails: emails) }
    }

    public func openSession(userID: String, now: Date) async throws -> (User, token: String) {
        try await database.run { try $0.openSession(userID: userID, now: now) }
    }

    public func authenticate(token: String, now: Date, policy: SessionPolicy) async throws -> User? {
        try await database.run { try $0.authenticate(token: token, now: now, policy: policy) }
    }

    public func closeSession(token: String) async throws { try await database.run { try $0.closeSession(token: token) } }

    public func signIn(
        userID: String, mergingGuest guestID: String?, flow: OnboardingFlow, maximumDevices: Int, now: Date
    ) async throws -> (
        User, token: String
    ) {
        try await database.run { try $0.signIn(userID: userID, mergingGuest: guestID, flow: flow, maximumDevices: maximumDevices, now: now) }
    }

    public func recordEvent(userID: String?, name: String, screen: String?, properties: [String: String], at: Date) async throws {
        try await database.run { try $0.recordEvent(userID: userID, name: name, screen: screen, properties: properties, at: at) }
    }

    public func settings(userID: String) async throws -> UserSettings { try await database.run { try $0.settings(userID: userID) } }

    public func changeSettings(userID: String, _ change: DeviceSettings, now: Date) async throws -> UserSettings {
        try await database.run { try $0.changeSettings(userID: userID, change, now: now) }
    }

    public func bookmarks(userID: String) async throws -> [Bookmark] { try await database.run { try $0.bookmarks(userID: userID) } }

    public func addBookmark(userID: String, verseKey: String, now: Date) async throws -> Bool {
        try await database.run { try $0.addBookmark(userID: userID, verseKey: verseKey, now: now) }
    }

    public func removeBookmark(userID: String, verseKey: String) async throws -> Bool {
        try await database.run { try $0.removeBookmark(userID: userID, verseKey: verseKey) }
    }

    public func devices(userID: String, now: Date) async throws -> [DeviceState] {
        try await database.run { try $0.devices(userID: userID, now: now) }
    }

    public func registerDevice(_ settings: DeviceSettings, userID: String, now: Date, maximum: Int) async throws -> (DeviceState, created: Bool) {
        try await database.run { try $0.registerUserDevice(settings, userID: userID, now: now, maximum: maximum) }
    }

    public func updateDevice(
        id: String, userID: String, now: Date, settings: @escaping @Sendable (Platform) throws -> DeviceSettings
    )
        async throws -> DeviceState
    {
        try await database.run { try $0.updateUserDevice(id: id, userID: userID, now: now, settings: settings) }
    }

    public func removeDevice(id: String, userID: String) async throws -> Bool {
        try await database.run { try $0.removeDevice(id: id, userID: userID) }
    }

    public func onboardingState(userID: String, flow: OnboardingFlow) async throws -> OnboardingState {
        try await database.run { try $0.onboardingState(userID: userID, flow: flow) }
    }

    public func applyOnboarding(_ event: OnboardingEvent, userID: String, machine: OnboardingMachine, now: Date) async throws -> OnboardingState {
        try await database.run { try $0.applyOnboarding(event, userID: userID, machine: machine, now: now) }
    }

    public func hintContext(userID: String, token: String) async throws -> HintContext {
        try await database.run { try $0.hintContext(userID: userID, token: token) }
    }

    public func changeHint(
        _ hint: HintCatalog.Hint, _ change: HintChange, catalog: HintCatalog, userID: String, token: String, now: Date
    ) async throws -> HintRecord {
        try await database.run { try $0.changeHint(hint, change, catalog: catalog, userID: userID, token: token, now: now) }
    }

    public func setTutorial(_ on: Bool, token: String) async throws { try await database.run { try $0.setTutorial(on, token: token) } }

    public func resetHints(userID: String) async throws { try await database.run { try $0.resetHints(userID: userID) } }

    public func recordAppEvent(_ name: String, userID: String, now: Date) async throws -> Int {
        try await database.run { try $0.recordAppEvent(name, userID: userID, now: now) }
    }
}
