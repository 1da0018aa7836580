import Foundation
import GRDB
import Onboarding
import Storage

/// How users went through the onboarding between two instants, screen by screen, from the analytics events.
public struct OnboardingFunnel: Encodable, Sendable {
    public struct Step: Encodable, Sendable {
        public let screen: String
        /// Users who reached the screen, however they got there (viewed it, moved to it, or acted on it).
        public let reached: Int
        /// Users who skipped from it.
        public let skipped: Int
        /// Users who reached it and then completed the onboarding.
        public let completed: Int
    }

    public let from: String
    public let to: String
    public let started: Int
    public let completed: Int
    public let screens: [Step]
}

extension AppDatabase {
    /// Counts distinct users among events at or after `from` and before `to`, in the flow's screen order.
    public func onboardingFunnel(flow: OnboardingFlow, from: Date, to: Date) throws -> OnboardingFunnel {
        try read { db in
            let range: StatementArguments = [from.timeIntervalSince1970, to.timeIntervalSince1970]
            func perScreen(_ sql: String, _ arguments: StatementArguments) throws -> [String: Int] {
                var counts: [String: Int] = [:]
                for row in try Row.fetchAll(db, sql: sql, arguments: arguments) { counts[row[0]] = row[1] }
                return counts
            }
            /// Distinct users with `event` on each screen.
            func usersPerScreen(_ event: String) throws -> [String: Int] {
                try perScreen(
                    "SELECT screen, count(DISTINCT user_id) FROM analytics_event WHERE name = ? AND at >= ? AND at < ? GROUP BY screen",
                    [event] + range)
            }
            func users(_ name: String) throws -> Int {
                try Int.fetchOne(
                    db, sql: "SELECT count(DISTINCT user_id) FROM analytics_event WHERE name = ? AND at >= ? AND at < ?",
                    arguments: [name] + range) ?? 0
            }
            // A user was on a screen when any onboarding event names it: a view, a move to it (advance, back, skip,
            // auto-advance), or an action taken there.
            let onScreen = """
                v.screen IS NOT NULL AND v.name IN ('onboarding_started', 'onboarding_screen_viewed', 'onboarding_screen_reached',
                    'onboarding_skipped', 'notification_permission_primed', 'notification_permission_granted',
                    'notification_permission_denied', 'notification_permission_deferred', 'theme_selected', 'account_mode_chosen',
                    'onboarding_completed')
                """
            let reached = try perScreen(
                "SELECT v.screen, count(DISTINCT v.user_id) FROM analytics_event v WHERE \(onScreen) AND v.at >= ?1 AND v.at < ?2 GROUP BY v.screen",
                range)
            let skipped = try usersPerScreen("onboarding_skipped")
            // Each user's last completion in the range, once, joined to their screens: a correlated search per event
            // made the funnel quadratic in the events.
            let completed = try perScreen(
                """
                WITH done AS (
                    SELECT user_id, max(at) AS at FROM analytics_event
                    WHERE name = 'onboarding_completed' AND at >= ?1 AND at < ?2 AND user_id IS NOT NULL GROUP BY user_id)
                SELECT v.screen, count(DISTINCT v.user_id) FROM analytics_event v JOIN done ON done.user_id = v.user_id AND done.at >= v.at
                WHERE \(onScreen) AND v.at >= ?1 AND v.at < ?2
                GROUP BY v.screen
                """, range)
            // Every user starts on the first screen: whoever has any onboarding event reached it, even one who
            // advanced from it without the app sending a view.
            var reachedFirst = reached, completedFirst = completed
            if let first = flow.screens.first?.id {
                reachedFirst[first] = try Int.fetchOne(
                    db, sql: "SELECT count(DISTINCT v.user_id) FROM analytics_event v WHERE \(onScreen) AND v.at >= ?1 AND v.at < ?2",
                    arguments: range)
                completedFirst[first] = try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(DISTINCT v.user_id) FROM analytics_event v
                        WHERE v.name = 'onboarding_completed' AND v.at >= ?1 AND v.at < ?2
                        """, arguments: range)
            }
            return OnboardingFunnel(
                from: from.iso8601UTC, to: to.iso8601UTC, started: try users("onboarding_started"), completed: try users("onboarding_completed"),
                screens: flow.screens.map {
                    .init(screen: $0.id, reached: reachedFirst[$0.id] ?? 0, skipped: skipped[$0.id] ?? 0, completed: completedFirst[$0.id] ?? 0)
                })
        }
    }
}

extension AppDatabase {
    /// Removes analytics events older than `cutoff`, 10,000 per transaction; how many went.
    @discardableResult
    public func pruneEvents(before cutoff: Date) throws -> Int {
        try deleteInChunks(
            sql: "DELETE FROM analytics_event WHERE id IN (SELECT id FROM analytics_event WHERE at < ? ORDER BY at LIMIT ?)",
            arguments: [cutoff.timeIntervalSince1970])
    }
}

extension PostgresStore {
    /// As `AppDatabase.pruneEvents`; nil when another process is pruning.
    public func pruneEvents(before cutoff: Date, chunk: Int = 10_000) async throws -> Int? {
        try await deleteInChunks(
            job: "event prune", "DELETE FROM analytics_event WHERE id IN (SELECT id FROM analytics_event WHERE at < $1 ORDER BY at LIMIT $2)",
            arguments: [cutoff.timeIntervalSince1970], chunk: chunk)
    }
}
