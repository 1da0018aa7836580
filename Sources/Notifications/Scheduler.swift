import Foundation
import HijriCalendar

/// When devices fire. Pure: every function takes the zone, the time and `now` as values.
///
/// A device fires once per local date, at its reminder time in its own zone:
/// - a local time that does not exist that day (the spring-forward gap) fires later by the length of the gap
///   (02:30 becomes 03:30 in America/New_York on 2025-03-09);
/// - a local time that happens twice (fall-back) fires once, at the earlier instant;
///   both as java.time's `ZonedDateTime.of` and RFC 5545 resolve them;
/// - a fire found less than `grace` late is still sent; an older one is recorded as missed;
/// - a date is never fired twice: only dates after the last one fired (or missed) are considered.
public enum Scheduler {
    /// How far back a pass looks for dates not yet fired: after a long outage the older ones are skipped.
    public static let lookbackDays = 2

    /// The instant at which `date` at `time` happens in `zone`.
    public static func fireInstant(date: CivilDate, time: ReminderTime, zone: TimeZone) -> Date {
        let local = date.dayNumber * 86_400 + time.secondsIntoDay  // the wall time, counted as if it were UTC
        // The offsets in force a day either side bracket any transition near this wall time.
        let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local - 86_400)))
        let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local + 86_400)))
        var candidates: [Int] = []
        for offset in Set([before, after]) {
            let instant = local - offset
            if zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))) == offset { candidates.append(instant) }
        }
        if let earliest = candidates.min() {
            return Date(timeIntervalSince1970: Double(earliest))  // one instant, or the earlier of two (overlap)
        }
        // A gap: read the wall time with the offset before the transition, which lands after it, later by the gap.
        return Date(timeIntervalSince1970: Double(local - before))
    }

    /// What a device should do for one local date.
    public struct Fire: Hashable, Sendable {
        public enum Action: String, Sendable { case send, missed }
        public let localDate: CivilDate
        public let fireAt: Date
        public let action: Action
    }

    /// The fires due at `now`, oldest first: each local date after `lastFired` whose instant has come (and, for a
    /// new device, came after `eligibleFrom`), to send if less than `grace` late, else to record as missed.
    public static func due(
        lastFired: CivilDate?, time: ReminderTime, zone: TimeZone, now: Date, grace: TimeInterval, eligibleFrom: Date? = nil
    ) -> [Fire] {
        let today = CivilDate(instant: now, timeZone: zone)
        var fires: [Fire] = []
        for offset in stride(from: lookbackDays, through: 0, by: -1) {
            let date = today.adding(days: -offset)
            if let lastFired, date <= lastFired { continue }
            let at = fireInstant(date: date, time: time, zone: zone)
            guard at <= now else { continue }
            if let eligibleFrom, at < eligibleFrom { continue }
            fires.append(Fire(localDate: date, fireAt: at, action: now.timeIntervalSince(at) < grace ? .send : .missed))
        }
        return fires
    }

    /// The next fire after the dates already fired: the first local date after `lastFired` (and not before the
    /// lookback window) whose instant is not before `eligibleFrom`.
    public static func next(lastFired: CivilDate?, time: ReminderTime, zone: TimeZone, now: Date, eligibleFrom: Date? = nil)
        -> (localDate: CivilDate, fireAt: Date)
    {
        var date = CivilDate(instant: now, timeZone: zone).adding(days: -lookbackDays)
        if let lastFired, lastFired >= date { date = lastFired.adding(days: 1) }
        while true {
            let at = fireInstant(date: date, time: time, zone: zone)
            if eligibleFrom.map({ at >= $0 }) ?? true { return (date, at) }
            date = date.adding(days: 1)
        }
    }
}
