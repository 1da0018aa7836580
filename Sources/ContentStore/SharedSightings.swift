import Foundation
import HijriCalendar
import PostgresNIO
import Storage

extension PublishedMonthStart {
    /// Year, then month.
    static func inOrder(_ a: PublishedMonthStart, _ b: PublishedMonthStart) -> Bool { (a.year, a.month) < (b.year, b.month) }

    /// Checks that the calendars hold `starts` published over `kept` (those of the same months replaced), throwing
    /// the calendar's error if not; the starts of `kept` they replace with a different day, for the publisher to say.
    static func replacing(_ kept: [PublishedMonthStart], with starts: [PublishedMonthStart]) throws -> [PublishedMonthStart] {
        let given = Set(starts.map { $0.year * 12 + $0.month })
        _ = try IslamicCalendar.sighted(published: kept.filter { !given.contains($0.year * 12 + $0.month) } + starts)
        return kept.filter { given.contains($0.year * 12 + $0.month) && !starts.contains($0) }
    }
}

/// The published month starts on PostgreSQL, where every process's calendars follow them: written by `sighting` on
/// the shared database, copied by each `serve` into its content copy (`replacePublishedMonthStarts`). The same checks
/// as on SQLite, under a lock so that two publishers do not each check without the other's start.
extension PostgresStore {
    public func publishedMonthStarts() async throws -> [PublishedMonthStart] {
        try await withoutTransaction { try await $0.publishedMonthStarts() }
    }

    /// What a publication did: how many starts it published, and the starts published before that it replaced with
    /// another day.
    public typealias Publication = (published: Int, replaced: [PublishedMonthStart])

    public func publishMonthStarts(_ starts: [PublishedMonthStart], at now: Date) async throws -> Publication {
        try await transaction { transaction in
            try await transaction.lock("published month starts")
            let replaced = try PublishedMonthStart.replacing(try await transaction.publishedMonthStarts(), with: starts)
            for start in starts {
                try await transaction.rows(
                    """
                    INSERT INTO published_month_start (year, month, first_day, created_at)
                    VALUES (\(start.year), \(start.month), \(start.firstDay.description), \(now.iso8601UTC))
                    ON CONFLICT (year, month) DO UPDATE SET first_day = excluded.first_day, created_at = excluded.created_at
                    """)
            }
            return (starts.count, replaced)
        }
    }

    public func removeMonthStart(year: Int, month: Int) async throws -> Bool {
        try await transaction { transaction in
            try await transaction.lock("published month starts")
            return try await transaction.changes("DELETE FROM published_month_start WHERE year = \(year) AND month = \(month) RETURNING 1") > 0
        }
    }
}

extension PostgresTransaction {
    func publishedMonthStarts() async throws -> [PublishedMonthStart] {
        try await rows("SELECT year, month, first_day FROM published_month_start ORDER BY year, month").map { row in
            let (year, month, day) = try row.decode((Int, Int, String).self)
            return PublishedMonthStart(year: year, month: month, firstDay: try CivilDate(parsing: day))
        }
    }
}
