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

    /// How far ahead of the clock a queue entry can be when a pass at that clock wrote it: a device's next fire is the
    /// day after the last date fired, which is at most tomorrow (written up to `emit_ahead`, at most an hour, early),
    /// so within 26 hours with a daylight-saving hour. An entry further ahead than this was left by a clock that ran
    /// ahead (a stepped system clock, a pass with `--now` in the future): the clock's mistake, not the device's.
    public static let aheadOfClock: TimeInterval = 2 * 86_400

    /// Whether a queue entry at `nextFireAt` is the mark of a clock that ran ahead of `now`.
    public static func isAheadOfClock(_ nextFireAt: Date, now: Date) -> Bool {
        nextFireAt.timeIntervalSince(now) > aheadOfClock
    }

    /// The instant at which `date` at `time` happens in `zone`.
    public static func fireInstant(date: CivilDate, time: ReminderTime, zone: some UTCOffsets) -> Date {
        let local = date.dayNumber * 86_400 + time.secondsIntoDay  // the wall time, counted as if it were UTC
        // The offsets in force a day either side bracket any transition near this wall time.
        let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local - 86_400)))
        let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local + 86_400)))
        // The wall time read with each offset; those that give back their own offset are real instants.
        let first = local - before
        let second = local - after
        let firstIsReal = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(first))) == before
        let secondIsReal = before != after && zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(second))) == after
        switch (firstIsReal, secondIsReal) {
        case (true, true): return Date(timeIntervalSince1970: Double(min(first, second)))  // the earlier of two (overlap)
        case (true, false): return Date(timeIntervalSince1970: Double(first))
        case (false, true): return Date(timeIntervalSince1970: Double(second))
        case (false, false): break
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
    ///
    /// With `through` later than `now`, also the fires to come until then, to send (emitted ahead of their time).
    public static func due(
        lastFired: CivilDate?, time: ReminderTime, zone: some UTCOffsets, now: Date, through: Date? = nil, grace: TimeInterval,
        eligibleFrom: Date? = nil
    ) -> [Fire] {
        let through = max(now, through ?? now)
        let today = localDate(through, zone)
        var fires: [Fire] = []
        for offset in stride(from: lookbackDays, through: 0, by: -1) {
            let date = today.adding(days: -offset)
            if let lastFired, date <= lastFired { continue }
            let at = fireInstant(date: date, time: time, zone: zone)
            guard at <= through else { continue }
            if let eligibleFrom, at < eligibleFrom { continue }
            fires.append(Fire(localDate: date, fireAt: at, action: action(fireAt: at, now: now, grace: grace)))
        }
        return fires
    }

    /// A fire found at `now`: sent if less than `grace` late (or still to come), else recorded as missed.
    public static func action(fireAt: Date, now: Date, grace: TimeInterval) -> Fire.Action {
        now.timeIntervalSince(fireAt) < grace ? .send : .missed
    }

    /// The next fire after the dates already fired: the first local date after `lastFired` (and not before the
    /// lookback window) whose instant is not before `eligibleFrom`.
    public static func next(
        lastFired: CivilDate?, time: ReminderTime, zone: some UTCOffsets, now: Date, eligibleFrom: Date? = nil
    )
        -> (localDate: CivilDate, fireAt: Date)
    {
        var date = localDate(now, zone).adding(days: -lookbackDays)
        if let lastFired, lastFired >= date { date = lastFired.adding(days: 1) }
        while true {
            let at = fireInstant(date: date, time: time, zone: zone)
            if eligibleFrom.map({ at >= $0 }) ?? true { return (date, at) }
            date = date.adding(days: 1)
        }
    }

    /// The civil date `instant` falls on in `zone`.
    public static func localDate(_ instant: Date, _ zone: some UTCOffsets) -> CivilDate {
        let seconds = Date.wholeSeconds(instant) + zone.secondsFromGMT(for: instant)
        return CivilDate(dayNumber: seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
    }
}

/// Where the scheduler reads a zone's UTC offsets: a `TimeZone`, or a `ZoneWindow` that has read them once.
public protocol UTCOffsets {
    func secondsFromGMT(for date: Date) -> Int
}

extension TimeZone: UTCOffsets {}

/// One zone's UTC offsets over a window of days, read from the zone once: its offset at the start and every
/// transition inside. A pass asks the same few hundred zones about the same few days a million times, and each
/// question to `TimeZone` costs far more than a search of a handful of transitions. Outside the window it asks the zone.
public struct ZoneWindow: UTCOffsets, Sendable {
    public let zone: TimeZone
    let start: Double
    let end: Double
    /// Transition instants (seconds since 1970) and the offset from each on; the first is the window's start.
    let changes: [(at: Double, offset: Int)]

    /// The window `[instant − days, instant + days)`.
    public init(_ zone: TimeZone, around instant: Date, days: Int = 5) {
        self.zone = zone
        let from = instant.addingTimeInterval(-Double(days) * 86_400)
        let to = instant.addingTimeInterval(Double(days) * 86_400)
        var changes: [(at: Double, offset: Int)] = [(from.timeIntervalSince1970, zone.secondsFromGMT(for: from))]
        var cursor = from
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next < to, next > cursor {
            changes.append((next.timeIntervalSince1970, zone.secondsFromGMT(for: next)))
            cursor = next
        }
        // Trust the table only if it agrees with the zone at its end; otherwise every question goes to the zone.
        if changes.last!.offset == zone.secondsFromGMT(for: to.addingTimeInterval(-1)) {
            (start, end) = (from.timeIntervalSince1970, to.timeIntervalSince1970)
        } else {
            (start, end) = (0, 0)
        }
        self.changes = changes
    }

    public func secondsFromGMT(for date: Date) -> Int {
        let t = date.timeIntervalSince1970
        guard t >= start, t < end else { return zone.secondsFromGMT(for: date) }
        var index = 0
        while index + 1 < changes.count, changes[index + 1].at <= t { index += 1 }
        return changes[index].offset
    }
}
