import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage

/// Something the scheduler found wrong with one device's schedule, recorded once per device and kind (table
/// `schedule_problem`): said in the log when found, and counted by `status`.
public struct ScheduleProblem: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// A queue entry more than `Scheduler.aheadOfClock` ahead of the clock: rescheduled from the clock's now.
        case clockAhead = "clock_ahead"
        /// A stored zone this system's time zone data no longer knows: the device is looked at again daily.
        case unknownZone = "unknown_zone"
    }

    public let deviceID: String
    public let kind: Kind
    /// What was found: the entry's instant and last fired date, or the zone's name.
    public let detail: String

    public init(deviceID: String, kind: Kind, detail: String) {
        (self.deviceID, self.kind, self.detail) = (deviceID, kind, detail)
    }

    /// A device's queue entry found ahead of the clock: its instant and the last date it fired (a day number).
    static func clockAhead(deviceID: String, nextFire: Double, lastFired: Int?) -> ScheduleProblem {
        let last = lastFired.map { CivilDate(dayNumber: $0).description } ?? "never"
        return ScheduleProblem(
            deviceID: deviceID, kind: .clockAhead, detail: "next fire \(Date(timeIntervalSince1970: nextFire).iso8601UTC), last fired \(last)")
    }
}

extension Emitter {
    /// Takes every queue entry further ahead of the clock than a pass at `now` could have written and, for a live one,
    /// queues the device again at `now` with no last fired date, so that this pass schedules it from the clock's now.
    /// Its outbox rows for dates still more than a day ahead go too: they were written for days that have not come,
    /// and would stop those days from firing when they do; so do the rows that clock wrote and did not send (the real
    /// days it took for missed); and a creation time ahead of the clock (a device added by a
    /// command run with `--now` in the future) becomes now, since fires before it are not the device's. Exactly once
    /// per real local date still holds: the outbox's unique key refuses a second row for a date already fired.
    /// Entries left behind by a change are dropped.
    func rescheduleAheadOfClock(now: Date) throws -> [ScheduleProblem] {
        let limit = now.addingTimeInterval(Scheduler.aheadOfClock).timeIntervalSince1970
        let query = """
            SELECT s.next_fire_at, s.device_seq, s.version, s.last_local_day, d.id, d.schedule_version = s.version AND d.enabled
            FROM schedule s LEFT JOIN device d ON d.seq = s.device_seq WHERE s.next_fire_at > ?
            """
        // Looked for first in a read, which costs a seek to the queue's end (its key is ordered by instant): a pass
        // that finds none takes no write lock for it.
        guard
            try database.read({ db in try Bool.fetchOne(db, sql: "SELECT 1 FROM schedule WHERE next_fire_at > ? LIMIT 1", arguments: [limit]) })
                == true
        else { return [] }
        return try database.write { db in
            let rows = try Row.fetchAll(db, sql: query, arguments: [limit])
            // The last UTC date a legitimate row can have: a local date at most a day after the UTC date of now.
            let lastDay = AppDatabase.outboxDay(dayNumber: CivilDate(instant: now, timeZone: TimeZone(identifier: "UTC")!).dayNumber + 1)
            var problems: [ScheduleProblem] = []
            for row in rows {
                let fireAt: Double = row[0]
                let seq: Int64 = row[1]
                try db.execute(sql: "DELETE FROM schedule WHERE next_fire_at = ? AND device_seq = ?", arguments: [fireAt, seq])
                guard let id = row[4] as String?, row[5] as Bool? == true else { continue }
                try db.execute(
                    sql: "INSERT OR REPLACE INTO schedule (next_fire_at, device_seq, version, last_local_day) VALUES (?, ?, ?, NULL)",
                    arguments: [now.timeIntervalSince1970, seq, row[2] as Int])
                try db.execute(
                    sql: """
                        DELETE FROM outbox WHERE device_seq = ? AND (\(AppDatabase.outboxDay) > ? OR (created_at > ? AND status <> 'delivered'))
                        """, arguments: [seq, lastDay, limit])
                try db.execute(
                    sql: "UPDATE device SET created_at = ? WHERE seq = ? AND created_at > ?", arguments: [now.timeIntervalSince1970, seq, limit])
                let problem = ScheduleProblem.clockAhead(deviceID: id, nextFire: fireAt, lastFired: row[3])
                try Self.record(db, problem, seq: seq, now: now, replacing: true)
                problems.append(problem)
            }
            return problems
        }
    }

    /// Records a problem; whether it is new (an unknown zone is said once per device, a clock ahead each time).
    @discardableResult
    static func record(_ db: Database, _ problem: ScheduleProblem, seq: Int64, now: Date, replacing: Bool) throws -> Bool {
        try db.execute(
            sql: "INSERT OR \(replacing ? "REPLACE" : "IGNORE") INTO schedule_problem (device_seq, kind, detail, found_at) VALUES (?, ?, ?, ?)",
            arguments: [seq, problem.kind.rawValue, problem.detail, now.timeIntervalSince1970])
        return db.changesCount > 0
    }
}

extension AppDatabase {
    /// For `status`: devices rescheduled because their entry was ahead of the clock (and the last time it happened),
    /// and enabled devices whose stored zone this system does not know.
    public func scheduleProblems() throws -> (clockAhead: Int, lastClockAhead: Date?, unknownZones: Int) {
        try read { db in
            let ahead = try Row.fetchOne(db, sql: "SELECT count(*), max(found_at) FROM schedule_problem WHERE kind = 'clock_ahead'")
            var unknown = 0
            // Zones are few: each distinct one is asked of the system once.
            for row in try Row.fetchAll(db, sql: "SELECT timezone, count(*) FROM device WHERE enabled GROUP BY timezone")
            where TimeZone.iana(row[0]) == nil {
                unknown += row[1] as Int
            }
            return (ahead?[0] ?? 0, (ahead?[1] as Double?).map(Date.init(timeIntervalSince1970:)), unknown)
        }
    }
}
