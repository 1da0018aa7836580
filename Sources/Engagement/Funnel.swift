import Foundation
import GRDB
import Onboarding
import PostgresNIO
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

/// The funnel's statements, the same on both stores: `?1` and `?2` are the range's bounds (instants), `?3` an event's
/// name. Each counts distinct users, per screen or in all.
enum FunnelStatement: CaseIterable {
    /// Per screen: users who were on it.
    case reached
    /// Per screen: users who skipped from it.
    case skipped
    /// Per screen: users who were on it and completed after.
    case completed
    /// Users with any onboarding event on any screen.
    case anyScreen
    /// Users who started; users who completed.
    case started, completedUsers

    /// A user was on a screen when any onboarding event names it: a view, a move to it (advance, back, skip,
    /// auto-advance), or an action taken there.
    static let onScreen = """
        v.screen IS NOT NULL AND v.name IN ('onboarding_started', 'onboarding_screen_viewed', 'onboarding_screen_reached',
            'onboarding_skipped', 'notification_permission_primed', 'notification_permission_granted',
            'notification_permission_denied', 'notification_permission_deferred', 'theme_selected', 'account_mode_chosen',
            'onboarding_completed')
        """

    var perScreen: Bool { [.reached, .skipped, .completed].contains(self) }

    /// The event name `?3` stands for ("" where the statement has none, and is given only two parameters).
    var eventName: String {
        switch self {
        case .skipped: "onboarding_skipped"
        case .started: "onboarding_started"
        case .completedUsers: "onboarding_completed"
        case .reached, .completed, .anyScreen: ""
        }
    }

    var sql: String {
        switch self {
        case .reached:
            "SELECT v.screen, count(DISTINCT v.user_id) FROM analytics_event v WHERE \(Self.onScreen) AND v.at >= ?1 AND v.at < ?2 GROUP BY v.screen"
        case .skipped: "SELECT screen, count(DISTINCT user_id) FROM analytics_event WHERE name = ?3 AND at >= ?1 AND at < ?2 GROUP BY screen"
        // Each user's last completion in the range, once, joined to their screens: a correlated search per event made
        // the funnel quadratic in the events.
        case .completed:
            """
            WITH done AS (
                SELECT user_id, max(at) AS at FROM analytics_event
                WHERE name = 'onboarding_completed' AND at >= ?1 AND at < ?2 AND user_id IS NOT NULL GROUP BY user_id)
            SELECT v.screen, count(DISTINCT v.user_id) FROM analytics_event v JOIN done ON done.user_id = v.user_id AND done.at >= v.at
            WHERE \(Self.onScreen) AND v.at >= ?1 AND v.at < ?2
            GROUP BY v.screen
            """
        case .anyScreen: "SELECT count(DISTINCT v.user_id) FROM analytics_event v WHERE \(Self.onScreen) AND v.at >= ?1 AND v.at < ?2"
        case .started, .completedUsers: "SELECT count(DISTINCT user_id) FROM analytics_event WHERE name = ?3 AND at >= ?1 AND at < ?2"
        }
    }

    /// What the statements counted: per screen for those that count per screen, a total for the others.
    struct Counts {
        var perScreen: [FunnelStatement: [String: Int]] = [:]
        var total: [FunnelStatement: Int] = [:]
    }

    static func funnel(_ counts: Counts, flow: OnboardingFlow, from: Date, to: Date) -> OnboardingFunnel {
        var reached = counts.perScreen[.reached] ?? [:], completed = counts.perScreen[.completed] ?? [:]
        let skipped = counts.perScreen[.skipped] ?? [:]
        // Every user starts on the first screen: whoever has any onboarding event reached it, even one who advanced
        // from it without the app sending a view; and whoever completed, completed from it.
        if let first = flow.screens.first?.id {
            reached[first] = counts.total[.anyScreen] ?? 0
            completed[first] = counts.total[.completedUsers] ?? 0
        }
        return OnboardingFunnel(
            from: from.iso8601UTC, to: to.iso8601UTC, started: counts.total[.started] ?? 0, completed: counts.total[.completedUsers] ?? 0,
            screens: flow.screens.map {
                .init(screen: $0.id, reached: reached[$0.id] ?? 0, skipped: skipped[$0.id] ?? 0, completed: completed[$0.id] ?? 0)
            })
    }
}

extension AppDatabase {
    /// Counts distinct users among events at or after `from` and before `to`, in the flow's screen order.
    public func onboardingFunnel(flow: OnboardingFlow, from: Date, to: Date) throws -> OnboardingFunnel {
        let counts = try read { db in
            var counts = FunnelStatement.Counts()
            for statement in FunnelStatement.allCases {
                var arguments: StatementArguments = [from.timeIntervalSince1970, to.timeIntervalSince1970]
                if !statement.eventName.isEmpty { arguments += [statement.eventName] }
                if statement.perScreen {
                    var perScreen: [String: Int] = [:]
                    for row in try Row.fetchAll(db, sql: statement.sql, arguments: arguments) {
                        if let screen = row[0] as String? { perScreen[screen] = row[1] }
                    }
                    counts.perScreen[statement] = perScreen
                } else {
                    counts.total[statement] = try Int.fetchOne(db, sql: statement.sql, arguments: arguments) ?? 0
                }
            }
            return counts
        }
        return FunnelStatement.funnel(counts, flow: flow, from: from, to: to)
    }
}

extension PostgresStore {
    /// As `AppDatabase.onboardingFunnel`: the same statements, numbered as PostgreSQL numbers its parameters, in one
    /// transaction (one snapshot, as SQLite's read).
    public func onboardingFunnel(flow: OnboardingFlow, from: Date, to: Date) async throws -> OnboardingFunnel {
        let range = (from.timeIntervalSince1970, to.timeIntervalSince1970)
        let counts = try await transaction { transaction in
            _ = try await transaction.rows("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            var counts = FunnelStatement.Counts()
            for statement in FunnelStatement.allCases {
                var bindings = PostgresBindings()
                bindings.append(range.0)
                bindings.append(range.1)
                if !statement.eventName.isEmpty { bindings.append(statement.eventName) }
                let rows = try await transaction.rows(
                    PostgresQuery(unsafeSQL: statement.sql.replacingOccurrences(of: "?", with: "$"), binds: bindings))
                if statement.perScreen {
                    counts.perScreen[statement] = Dictionary(
                        try rows.compactMap { row in try row.decode((String?, Int).self) }.compactMap { screen, count in screen.map { ($0, count) } },
                        uniquingKeysWith: +)
                } else {
                    counts.total[statement] = try rows.first?.decode(Int.self) ?? 0
                }
            }
            return counts
        }
        return FunnelStatement.funnel(counts, flow: flow, from: from, to: to)
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
            job: "event prune", from: "analytics_event", key: "id", where: "at < $1", order: "at",
            arguments: [cutoff.timeIntervalSince1970], chunk: chunk)
    }
}
