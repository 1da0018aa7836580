import Accounts
import Delivery
import Foundation
import GRDB
import Onboarding
import Storage

extension AppDatabase {
    public func onboardingState(userID: String, flow: OnboardingFlow) throws -> OnboardingState {
        try read { db in try Self.onboardingState(db, userID: userID, flow: flow) }
    }

    static func onboardingState(_ db: Database, userID: String, flow: OnboardingFlow) throws -> OnboardingState {
        guard let text = try String.fetchOne(db, sql: "SELECT state FROM onboarding WHERE user_id = ?", arguments: [userID]) else {
            return OnboardingState(flow: flow)
        }
        return try JSONDecoder().decode(OnboardingState.self, from: Data(text.utf8))
    }

    /// Applies an event and records its analytics in one transaction; a refused event changes nothing.
    public func applyOnboarding(_ event: OnboardingEvent, userID: String, machine: OnboardingMachine, now: Date) throws -> OnboardingState {
        try write { db in
            let state = try Self.onboardingState(db, userID: userID, flow: machine.flow)
            let (next, analytics) = try machine.apply(event, to: state, at: now)
            let text = String(decoding: try JSONEncoder().encode(next), as: UTF8.self)
            try db.execute(
                sql: """
                    INSERT INTO onboarding (user_id, state, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at
                    """, arguments: [userID, text, now.timeIntervalSince1970])
            for event in analytics {
                try Self.recordEvent(db, userID: userID, name: event.name, screen: event.screen, properties: event.properties, at: event.at)
            }
            if let change = Self.completionChange(event, next) {
                _ = try Self.updateSettings(db, userID: userID, now: now) { $0.apply(change) }
                try Self.applyToUserDevices(db, userID: userID, change, now: now)
            }
            return next
        }
    }

    public func recordEvent(userID: String?, name: String, screen: String?, properties: [String: String], at: Date) throws {
        try write { db in try Self.recordEvent(db, userID: userID, name: name, screen: screen, properties: properties, at: at) }
    }

    static func recordEvent(_ db: Database, userID: String?, name: String, screen: String?, properties: [String: String], at: Date) throws {
        try db.execute(
            sql: "INSERT INTO analytics_event (user_id, name, screen, properties, at) VALUES (?, ?, ?, ?, ?)",
            arguments: [userID, name, screen, try encodedProperties(properties), at.timeIntervalSince1970])
    }

    /// Completion carries the chosen theme and the notification answer into the settings and the devices.
    static func completionChange(_ event: OnboardingEvent, _ next: OnboardingState) -> DeviceSettings? {
        guard case .complete = event, let theme = next.theme else { return nil }
        return DeviceSettings(displayTheme: theme, enabled: next.notificationPermission == .granted)
    }

    /// The properties of an analytics event as stored: JSON with sorted keys.
    static func encodedProperties(_ properties: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(properties), as: UTF8.self)
    }

    /// How far along an onboarding is: completed beats everything, then the number of screens seen.
    static func progress(_ state: OnboardingState, _ flow: OnboardingFlow) -> Int {
        (state.isCompleted ? 1000 : 0) + state.screensSeen.count * 10 + (flow.index(of: state.currentScreen) ?? 0)
    }
}
