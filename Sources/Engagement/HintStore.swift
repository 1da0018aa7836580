import Accounts
import Foundation
import GRDB
import Onboarding
import Storage

/// What the hint rules need to know about one user and session.
public struct HintContext: Sendable {
    public var records: [String: HintRecord]
    public var eventCounts: [String: Int]
    public var tutorial: Bool
    public var zone: TimeZone

    public func eligible(_ catalog: HintCatalog, now: Date) -> [HintCatalog.Hint] {
        HintRules.eligible(catalog: catalog, records: records, eventCounts: eventCounts, tutorial: tutorial, now: now, zone: zone)
    }
}

public enum HintChange: Sendable {
    case shown, dismissed
}

/// What showing or dismissing a hint does, worked out from the user's hint context (the same for either store): the
/// record after, and what is written — the shown row, the dismissal, the analytics event (none when nothing changes).
struct HintStep {
    var record: HintRecord
    var insertShown = false
    var markDismissed = false
    var event: String?
}

extension HintContext {
    func step(_ hint: HintCatalog.Hint, _ change: HintChange, catalog: HintCatalog, now: Date) throws -> HintStep {
        var step = HintStep(record: records[hint.id] ?? HintRecord())
        switch change {
        case .shown:
            if step.record.shownAt != nil && !tutorial { return step }
            guard eligible(catalog, now: now).contains(hint) else {
                throw OnboardingError.invalidTransition("hint '\(hint.id)' is not eligible now")
            }
            if step.record.shownAt == nil {
                step.record.shownAt = now
                step.record.shownInTutorial = tutorial
            }
            step.insertShown = true
            step.event = "hint_shown"
        case .dismissed:
            guard step.record.shownAt != nil else { throw OnboardingError.invalidTransition("hint '\(hint.id)' has not been shown") }
            if step.record.dismissedAt != nil && !tutorial { return step }
            if step.record.dismissedAt == nil {
                step.record.dismissedAt = now
                step.markDismissed = true
            }
            step.event = "hint_dismissed"
        }
        return step
    }
}

/// How many distinct event names one user may record: the rules need a handful, and a client cannot grow the table.
public let maximumEventNames = 100

extension AppDatabase {
    static func hintContext(_ db: Database, userID: String, token: String) throws -> HintContext {
        var records: [String: HintRecord] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM hint_state WHERE user_id = ?", arguments: [userID]) {
            records[row["hint_id"]] = HintRecord(
                shownAt: (row["shown_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
                dismissedAt: (row["dismissed_at"] as Double?).map(Date.init(timeIntervalSince1970:)), shownInTutorial: row["shown_in_tutorial"])
        }
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, count FROM app_event_count WHERE user_id = ?", arguments: [userID]) {
            counts[row["name"]] = row["count"]
        }
        let tutorial = try Bool.fetchOne(db, sql: "SELECT tutorial FROM session WHERE token_hash = ?", arguments: [SessionToken.hash(token)]) ?? false
        let zone = TimeZone.iana(try settings(db, userID: userID).timezone) ?? TimeZone(identifier: "UTC")!
        return HintContext(records: records, eventCounts: counts, tutorial: tutorial, zone: zone)
    }

    public func hintContext(userID: String, token: String) throws -> HintContext {
        try read { db in try Self.hintContext(db, userID: userID, token: token) }
    }

    /// Records that a hint was shown or dismissed. Showing needs the hint to be eligible now (or shown already: the
    /// app may say so twice); dismissing needs it shown. Each first time appends its analytics event.
    public func changeHint(
        _ hint: HintCatalog.Hint, _ change: HintChange, catalog: HintCatalog, userID: String, token: String, now: Date
    ) throws -> HintRecord {
        try write { db in
            let context = try Self.hintContext(db, userID: userID, token: token)
            let step = try context.step(hint, change, catalog: catalog, now: now)
            let at = now.timeIntervalSince1970
            if step.insertShown {
                try db.execute(
                    sql: """
                        INSERT INTO hint_state (user_id, hint_id, shown_at, shown_in_tutorial) VALUES (?, ?, ?, ?)
                        ON CONFLICT (user_id, hint_id) DO NOTHING
                        """, arguments: [userID, hint.id, at, context.tutorial])
            }
            if step.markDismissed {
                try db.execute(sql: "UPDATE hint_state SET dismissed_at = ? WHERE user_id = ? AND hint_id = ?", arguments: [at, userID, hint.id])
            }
            if let event = step.event {
                try Self.recordEvent(db, userID: userID, name: event, screen: hint.id, properties: ["tutorial": "\(context.tutorial)"], at: now)
            }
            return step.record
        }
    }

    /// Counts one app event; the count after it.
    public func recordAppEvent(_ name: String, userID: String, now: Date) throws -> Int {
        try write { db in
            let known = try Bool.fetchOne(db, sql: "SELECT 1 FROM app_event_count WHERE user_id = ? AND name = ?", arguments: [userID, name]) == true
            if !known,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM app_event_count WHERE user_id = ?", arguments: [userID]) ?? 0 >= maximumEventNames
            {
                throw OnboardingError.invalidTransition("at most \(maximumEventNames) different event names per user")
            }
            try db.execute(
                sql: """
                    INSERT INTO app_event_count (user_id, name, count, last_at) VALUES (?, ?, 1, ?)
                    ON CONFLICT (user_id, name) DO UPDATE SET count = count + 1, last_at = excluded.last_at
                    """, arguments: [userID, name, now.timeIntervalSince1970])
            return try Int.fetchOne(db, sql: "SELECT count FROM app_event_count WHERE user_id = ? AND name = ?", arguments: [userID, name]) ?? 1
        }
    }

    public func setTutorial(_ on: Bool, token: String) throws {
        try write { db in
            try db.execute(sql: "UPDATE session SET tutorial = ? WHERE token_hash = ?", arguments: [on, SessionToken.hash(token)])
        }
    }

    /// Forgets the user's hints and event counts, and ends tutorial mode in all their sessions.
    public func resetHints(userID: String) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM hint_state WHERE user_id = ?", arguments: [userID])
            try db.execute(sql: "DELETE FROM app_event_count WHERE user_id = ?", arguments: [userID])
            try db.execute(sql: "UPDATE session SET tutorial = 0 WHERE user_id = ?", arguments: [userID])
        }
    }

    /// A guest's hints and counts, carried into an account: each hint shown or dismissed at the earliest of the two,
    /// counts added.
    static func mergeHints(_ db: Database, from guestID: String, into accountID: String) throws {
        try db.execute(
            sql: """
                INSERT INTO hint_state (user_id, hint_id, shown_at, dismissed_at, shown_in_tutorial)
                SELECT ?, hint_id, shown_at, dismissed_at, shown_in_tutorial FROM hint_state WHERE user_id = ? AND true
                ON CONFLICT (user_id, hint_id) DO UPDATE SET
                    shown_at = coalesce(min(shown_at, excluded.shown_at), shown_at, excluded.shown_at),
                    dismissed_at = coalesce(min(dismissed_at, excluded.dismissed_at), dismissed_at, excluded.dismissed_at)
                """, arguments: [accountID, guestID])
        // The guest's counts of names the account has are added; its other names join while the account has room
        // for them (`maximumEventNames`), the latest first.
        try db.execute(
            sql: """
                INSERT INTO app_event_count (user_id, name, count, last_at)
                SELECT :account, name, count, last_at FROM app_event_count
                WHERE user_id = :guest AND (
                    name IN (SELECT name FROM app_event_count WHERE user_id = :account)
                    OR name IN (
                        SELECT name FROM app_event_count WHERE user_id = :guest
                            AND name NOT IN (SELECT name FROM app_event_count WHERE user_id = :account)
                        ORDER BY last_at DESC, name
                        LIMIT max(0, :maximum - (SELECT count(*) FROM app_event_count WHERE user_id = :account))))
                ON CONFLICT (user_id, name) DO UPDATE SET count = count + excluded.count, last_at = max(last_at, excluded.last_at)
                """, arguments: ["account": accountID, "guest": guestID, "maximum": maximumEventNames])
    }
}
