import AppSchema
import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage
import Testing

@testable import Delivery

/// The ground moving under the schedule: a clock that ran ahead (a pass with `--now` in the future, a stepped system
/// clock) and a stored zone the system's time zone data no longer knows.
@Suite struct ClockAndZoneTests {
    let created = instant("2025-02-01T00:00:00Z")

    /// One UTC device firing at 08:00, and an emitter writing only what is due.
    func fixture(devices: Int = 1) throws -> (AppDatabase, [Device], Emitter) {
        let database = try seededDatabase()
        let added = try (0..<devices).map { n in
            try database.addDevice(DeviceSettings(token: try apnsToken(100 + n), timeZone: "UTC"), now: created)
        }
        return (database, added, Emitter(database: database, configuration: configuration))
    }

    /// The dates a device was sent (or is to be sent) a verse.
    func dates(_ database: AppDatabase, _ device: Device) throws -> [String] {
        try database.outbox().filter { $0.deviceID == device.id && $0.status != .missed }.map(\.localDate).sorted()
    }

    @Test(arguments: [7.0 * 86_400, 5 * 365.0 * 86_400])
    func aClockSteppedForwardThenBackFiresOnTheNextRealDay(step: TimeInterval) throws {
        let (database, devices, emitter) = try fixture(devices: 3)
        // Real days: 1 March fires.
        #expect(try emitter.run(now: instant("2025-03-01T08:01:00Z")).queued == 3)
        // The clock runs ahead: passes at that clock fire its dates.
        let ahead = instant("2025-03-01T11:31:00Z").addingTimeInterval(step)
        #expect(try emitter.run(now: ahead).devices == 3)
        // Back to the real time, later the same day: nothing is due yet, and each device's entry is found ahead.
        let back = try emitter.run(now: instant("2025-03-01T12:00:00Z"))
        #expect(back.problems.count == 3)
        #expect(back.problems.allSatisfy { $0.kind == .clockAhead })
        #expect(back.queued == 0, "1 March was delivered already: the outbox's key refuses a second row")
        // The next real day fires, for every device, once.
        #expect(try emitter.run(now: instant("2025-03-02T08:00:30Z")).queued == 3)
        #expect(try emitter.run(now: instant("2025-03-02T08:05:00Z")).queued == 0)
        for device in devices {
            // The rows for the days ahead of the clock are gone: when those days come, they fire.
            #expect(try dates(database, device) == ["2025-03-01", "2025-03-02"])
        }
        // Said once: the next passes find nothing ahead.
        #expect(try emitter.run(now: instant("2025-03-03T08:00:30Z")).problems.isEmpty)
        let status = try database.scheduleProblems()
        #expect(status.clockAhead == 3)
        #expect(status.lastClockAhead == instant("2025-03-01T12:00:00Z"))
    }

    /// A clock a little more than two days ahead: its pass writes the real days it thinks it missed (1 and 2 March, as
    /// missed) and its own day. Back at the real time, the rows it wrote for days that have not come are gone, the
    /// missed ones too, so that 1 and 2 March fire when they come. (Only rows dated past tomorrow went: the two
    /// missed rows stayed, and refused the days' real fires.)
    @Test func aClockTwoDaysAheadLeavesNoRowThatStopsARealDay() throws {
        let (database, devices, emitter) = try fixture()
        #expect(try emitter.run(now: instant("2025-02-28T08:01:00Z")).queued == 1)
        let ahead = try emitter.run(now: instant("2025-03-03T10:30:00Z"))
        #expect(ahead.devices == 1 && ahead.missed >= 2)
        let back = try emitter.run(now: instant("2025-03-01T07:00:00Z"))
        #expect(back.problems.map(\.kind) == [.clockAhead])
        #expect(try emitter.run(now: instant("2025-03-01T08:00:30Z")).queued == 1)
        #expect(try emitter.run(now: instant("2025-03-02T08:00:30Z")).queued == 1)
        #expect(try dates(database, devices[0]) == ["2025-02-28", "2025-03-01", "2025-03-02"])
    }

    @Test func aDeviceCreatedAtAClockAheadFiresFromTheRealNow() throws {
        let database = try seededDatabase()
        let emitter = Emitter(database: database, configuration: configuration)
        // Added by a command run with --now in 2031.
        let device = try database.addDevice(DeviceSettings(token: try apnsToken(7), timeZone: "UTC"), now: instant("2031-01-01T11:31:00Z"))
        let found = try emitter.run(now: instant("2025-03-01T07:00:00Z"))
        #expect(found.problems.map(\.deviceID) == [device.id])
        #expect(try emitter.run(now: instant("2025-03-01T08:00:30Z")).queued == 1)
        #expect(try dates(database, device) == ["2025-03-01"])
    }

    @Test func entriesWithinADayAheadAreNotTheClocksMistake() throws {
        let (database, _, emitter) = try fixture()
        // Emitting ahead across midnight: the last fired date is tomorrow's, the next entry the day after.
        let ahead = Emitter(database: database, configuration: EmitConfiguration(grace: 7200, push: configuration.push, ahead: 3600))
        _ = try ahead.run(now: instant("2025-03-01T07:30:00Z"))
        #expect(try emitter.run(now: instant("2025-03-01T07:31:00Z")).problems.isEmpty)
        #expect(try database.scheduleProblems().clockAhead == 0)
        #expect(Scheduler.isAheadOfClock(instant("2025-03-03T08:00:01Z"), now: instant("2025-03-01T08:00:00Z")))
        #expect(!Scheduler.isAheadOfClock(instant("2025-03-02T09:00:00Z"), now: instant("2025-03-01T08:00:00Z")))
    }

    /// Writes a zone into a device's row as a system whose time zone data dropped it would find it.
    func vanish(_ database: AppDatabase, _ device: Device, zone: String = "Mars/Olympus_Mons") throws {
        try database.write { db in
            try db.execute(sql: "UPDATE device SET timezone = ? WHERE id = ?", arguments: [zone, device.id])
        }
    }

    @Test func aVanishedZoneIsShownAsItIsSaidOnceAndCanBeChanged() throws {
        let (database, devices, emitter) = try fixture(devices: 2)
        let lost = devices[0]
        try vanish(database, lost)
        // Shown as stored, with no next fire; the listing goes on past it.
        var listed: [String] = []
        try database.forEachDeviceState(now: fixedNow) { listed.append($0.device.id) }
        #expect(listed.count == 2)
        let state = try #require(try database.deviceState(id: lost.id, now: fixedNow))
        #expect(state.device.timeZone == "Mars/Olympus_Mons")
        #expect(state.nextFireAt == nil)
        #expect(DeviceRecord(state).text().contains("Mars/Olympus_Mons (unknown to this system's time zone data"))
        // The scheduler says it once, fires the other device, and counts it for status.
        try database.write { db in try db.execute(sql: "UPDATE schedule SET next_fire_at = 0") }
        let first = try emitter.run(now: instant("2025-03-01T08:00:30Z"))
        #expect(first.problems == [ScheduleProblem(deviceID: lost.id, kind: .unknownZone, detail: "Mars/Olympus_Mons")])
        #expect(first.queued == 1)
        try database.write { db in try db.execute(sql: "UPDATE schedule SET next_fire_at = 0") }
        #expect(try emitter.run(now: instant("2025-03-02T08:00:30Z")).problems.isEmpty, "said once per device")
        #expect(try database.scheduleProblems().unknownZones == 1)
        // Its owner can change anything else, or the zone; then it fires.
        _ = try database.updateDevice(
            id: lost.id, DeviceSettings(reminderTime: try ReminderTime(parsing: "09:00")), now: instant("2025-03-02T08:10:00Z"))
        _ = try database.updateDevice(id: lost.id, DeviceSettings(timeZone: "UTC"), now: instant("2025-03-02T08:11:00Z"))
        #expect(try database.scheduleProblems().unknownZones == 0)
        #expect(try emitter.run(now: instant("2025-03-02T09:00:30Z")).queued == 1)
        // Or remove it.
        #expect(try database.removeDevice(id: lost.id))
    }

    @Test func legacyNamesResolveThroughTheDatabasesLinks() throws {
        // A system whose time zone data has only canonical names (Debian moved the legacy ones to tzdata-legacy).
        let canonicalOnly: (String) -> TimeZone? = { name in
            ZoneAliases.links[name] == nil ? TimeZone(identifier: name) : nil
        }
        #expect(canonicalOnly("US/Pacific") == nil)
        let pacific = try #require(ZoneAliases.resolve("US/Pacific", lookup: canonicalOnly))
        #expect(pacific.identifier == "America/Los_Angeles")
        #expect(ZoneAliases.resolve("Asia/Calcutta", lookup: canonicalOnly)?.identifier == "Asia/Kolkata")
        #expect(ZoneAliases.resolve("Europe/Kiev", lookup: canonicalOnly)?.identifier == "Europe/Kyiv")
        #expect(ZoneAliases.resolve("Mars/Olympus_Mons", lookup: canonicalOnly) == nil)
        // Every link names a zone this system knows.
        for (name, target) in ZoneAliases.links { #expect(TimeZone(identifier: target) != nil, "\(name) -> \(target)") }
    }
}
