import Accounts
import Delivery
import Foundation
import GRDB
import Onboarding
import Storage

extension AppDatabase {
    /// A sign-in in one transaction: `guestID`'s guest, if any, merged into the account (`mergeGuest`), and a session
    /// opened for it. A failure leaves both as they were: the guest and its token, no session.
    public func signIn(
        userID: String, mergingGuest guestID: String?, flow: OnboardingFlow, maximumDevices: Int = .max, now: Date
    ) throws -> (
        User, token: String
    ) {
        try write { db in
            if let guestID { try Self.mergeGuest(db, guestID, into: userID, flow: flow, maximumDevices: maximumDevices, now: now) }
            return try Self.openUserSession(db, userID: userID, now: now)
        }
    }

    /// Signs a guest into an account, inside the caller's transaction: the guest's bookmarks join the account's, its
    /// devices move to the account, onboarding progress is kept from whichever is further along, the account's
    /// settings win where it has them, hints and event counts are carried over, and the guest is retired (its sessions
    /// with it). Each domain moves its own rows; this is the one place that knows them all. Refused, changing nothing,
    /// when the account would have more than `maximumDevices` devices with the guest's.
    static func mergeGuest(_ db: Database, _ guestID: String, into accountID: String, flow: OnboardingFlow, maximumDevices: Int, now: Date) throws {
        guard guestID != accountID, try Self.isGuest(db, userID: guestID) else { return }
        try Self.mergeGuestBookmarks(db, from: guestID, into: accountID)
        try Self.moveDevices(db, from: guestID, to: accountID, maximum: maximumDevices, now: now)
        try Self.mergeOnboarding(db, from: guestID, into: accountID, flow: flow, now: now)
        try Self.mergeGuestSettings(db, from: guestID, into: accountID, now: now)
        try Self.mergeHints(db, from: guestID, into: accountID)
        // The guest's events become the account's: its onboarding stays in the funnel, under the one user.
        try db.execute(sql: "UPDATE analytics_event SET user_id = ? WHERE user_id = ?", arguments: [accountID, guestID])
        try Self.recordEvent(db, userID: accountID, name: AnalyticsEvent.guestMerged, screen: nil, properties: ["guest": guestID], at: now)
        try Self.removeUser(db, id: guestID)
    }

    /// The guest's onboarding progress, kept if it is further along than the account's.
    static func mergeOnboarding(_ db: Database, from guestID: String, into accountID: String, flow: OnboardingFlow, now: Date) throws {
        let guestState = try onboardingState(db, userID: guestID, flow: flow)
        let accountState = try onboardingState(db, userID: accountID, flow: flow)
        guard progress(guestState, flow) > progress(accountState, flow) else { return }
        try db.execute(
            sql: """
                INSERT INTO onboarding (user_id, state, updated_at) SELECT ?, state, ? FROM onboarding WHERE user_id = ?
                ON CONFLICT (user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at
                """, arguments: [accountID, now.timeIntervalSince1970, guestID])
    }
}
