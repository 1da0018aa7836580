import Encodings
import Foundation
import HijriCalendar
import PushServices
import Testing

@testable import Notifications

@Suite struct SchedulerTests {
    func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }
    func zone(_ name: String) -> TimeZone { TimeZone(identifier: name)! }
    func date(_ text: String) throws -> CivilDate { try CivilDate(parsing: text) }
    func time(_ text: String) throws -> ReminderTime { try ReminderTime(parsing: text) }

    /// (zone, local date, local time, expected instant): plain days, spring-forward gaps (later by the gap),
    /// fall-back overlaps (the earlier instant), and the zones furthest from UTC.
    @Test(arguments: [
        ("America/New_York", "2025-03-08", "02:30", "2025-03-08T07:30:00Z"),
        ("America/New_York", "2025-03-09", "02:30", "2025-03-09T07:30:00Z"),  // gap: 03:30 EDT
        ("America/New_York", "2025-03-09", "03:30", "2025-03-09T07:30:00Z"),  // same instant, and still one per date
        ("America/New_York", "2025-11-02", "01:30", "2025-11-02T05:30:00Z"),  // overlap: 01:30 EDT, not EST
        ("America/New_York", "2025-11-02", "08:00", "2025-11-02T13:00:00Z"),
        ("Europe/London", "2025-03-30", "01:30", "2025-03-30T01:30:00Z"),  // gap: 02:30 BST
        ("Europe/London", "2025-10-26", "01:30", "2025-10-26T00:30:00Z"),  // overlap: 01:30 BST
        ("Europe/London", "2025-07-01", "08:00", "2025-07-01T07:00:00Z"),
        ("Australia/Lord_Howe", "2025-10-05", "02:15", "2025-10-04T15:45:00Z"),  // 30-minute gap: 02:45 +11
        ("Australia/Lord_Howe", "2025-04-06", "01:45", "2025-04-05T14:45:00Z"),  // 30-minute overlap: the +11 one
        ("Australia/Lord_Howe", "2025-07-01", "08:00", "2025-06-30T21:30:00Z"),  // +10:30
        ("Asia/Tehran", "2022-03-22", "00:30", "2022-03-21T21:00:00Z"),  // gap when Iran still had DST
        ("Asia/Tehran", "2022-09-21", "23:30", "2022-09-21T19:00:00Z"),  // overlap: the +04:30 one
        ("Asia/Tehran", "2023-03-22", "00:30", "2023-03-21T21:00:00Z"),  // no DST since 2023: +03:30
        ("Pacific/Kiritimati", "2025-03-01", "08:00", "2025-02-28T18:00:00Z"),  // UTC+14
        ("Pacific/Pago_Pago", "2025-03-01", "08:00", "2025-03-01T19:00:00Z"),  // UTC−11
    ])
    func fireInstants(zoneName: String, localDate: String, localTime: String, expected: String) throws {
        let at = Scheduler.fireInstant(date: try date(localDate), time: try time(localTime), zone: zone(zoneName))
        #expect(ISO8601DateFormatter().string(from: at) == expected)
    }

    @Test func sendsWithinGraceAndRecordsOlderFiresAsMissed() throws {
        let newYork = zone("America/New_York")
        let created = instant("2025-01-01T00:00:00Z")
        let fire = instant("2025-03-10T12:00:00Z")  // 08:00 EDT
        func due(_ now: String, last: CivilDate?) -> [Scheduler.Fire] {
            Scheduler.due(lastFired: last, time: try! time("08:00"), zone: newYork, now: instant(now), grace: 7200, eligibleFrom: created)
        }
        let yesterday = try date("2025-03-09")
        #expect(due("2025-03-10T11:59:59Z", last: yesterday).isEmpty)
        #expect(due("2025-03-10T12:00:00Z", last: yesterday) == [.init(localDate: try date("2025-03-10"), fireAt: fire, action: .send)])
        #expect(due("2025-03-10T13:59:59Z", last: yesterday).map(\.action) == [.send])
        #expect(due("2025-03-10T14:00:00Z", last: yesterday).map(\.action) == [.missed])
        // Already fired today: nothing more until tomorrow.
        #expect(due("2025-03-10T20:00:00Z", last: try date("2025-03-10")).isEmpty)
        let next = Scheduler.next(lastFired: try date("2025-03-10"), time: try time("08:00"), zone: newYork, now: instant("2025-03-10T20:00:00Z"))
        #expect(next.localDate == (try date("2025-03-11")))
        #expect(next.fireAt == instant("2025-03-11T12:00:00Z"))
    }

    @Test func firesAheadOfTheirTimeAreToSendAndLateOnesJudgedAgainstNow() throws {
        // Across New York's spring-forward night: 02:30 on 9 March fires at 03:30 EDT (07:30Z).
        let newYork = zone("America/New_York")
        func due(now: String, through: String, last: String) throws -> [Scheduler.Fire] {
            Scheduler.due(
                lastFired: try date(last), time: try time("02:30"), zone: newYork, now: instant(now), through: instant(through), grace: 7200,
                eligibleFrom: instant("2025-01-01T00:00:00Z"))
        }
        // Fifteen minutes ahead of the fire: sent, at its own instant.
        #expect(
            try due(now: "2025-03-09T07:20:00Z", through: "2025-03-09T07:35:00Z", last: "2025-03-08")
                == [.init(localDate: try date("2025-03-09"), fireAt: instant("2025-03-09T07:30:00Z"), action: .send)])
        // Not yet within the window: nothing.
        #expect(try due(now: "2025-03-09T07:00:00Z", through: "2025-03-09T07:15:00Z", last: "2025-03-08").isEmpty)
        // After downtime, the late fire is judged against now, not against the end of the window.
        let late = try due(now: "2025-03-10T07:20:00Z", through: "2025-03-10T07:35:00Z", last: "2025-03-08")
        #expect(late.map(\.localDate.description) == ["2025-03-09", "2025-03-10"])
        #expect(late.map(\.action) == [.missed, .send])
        // A window that ends before now is now.
        #expect(try due(now: "2025-03-09T07:40:00Z", through: "2025-03-09T07:00:00Z", last: "2025-03-08").map(\.action) == [.send])
    }

    @Test func afterDowntimeOlderDatesAreMissedAndTodaySent() throws {
        let utc = zone("UTC")
        let fires = Scheduler.due(
            lastFired: try date("2025-03-01"), time: try time("08:00"), zone: utc, now: instant("2025-03-10T09:00:00Z"), grace: 7200,
            eligibleFrom: instant("2025-01-01T00:00:00Z"))
        #expect(fires.map(\.localDate.description) == ["2025-03-08", "2025-03-09", "2025-03-10"])
        #expect(fires.map(\.action) == [.missed, .missed, .send])
    }

    @Test func aNewDeviceIsNotOwedFiresFromBeforeItExisted() throws {
        let fires = Scheduler.due(
            lastFired: nil, time: try time("08:00"), zone: zone("UTC"), now: instant("2025-03-10T12:00:00Z"), grace: 7200,
            eligibleFrom: instant("2025-03-10T11:00:00Z"))
        #expect(fires.isEmpty)
        let next = Scheduler.next(
            lastFired: nil, time: try time("08:00"), zone: zone("UTC"), now: instant("2025-03-10T12:00:00Z"),
            eligibleFrom: instant("2025-03-10T11:00:00Z"))
        #expect(next.localDate.description == "2025-03-11")
    }

    @Test func changingZoneOrTimeNeverFiresTheSameLocalDateTwice() throws {
        // Fired 2025-03-01 at 08:00 in Tokyo (2025-02-28T23:00Z). The user moves to Los Angeles, where it is
        // 2025-03-01 09:00: that local date has had its verse, so nothing is due until 2 March.
        let last = try date("2025-03-01")
        let losAngeles = zone("America/Los_Angeles")
        #expect(Scheduler.due(lastFired: last, time: try time("08:00"), zone: losAngeles, now: instant("2025-03-01T17:00:00Z"), grace: 7200).isEmpty)
        #expect(
            Scheduler.next(lastFired: last, time: try time("08:00"), zone: losAngeles, now: instant("2025-03-01T17:00:00Z")).localDate.description
                == "2025-03-02")
        // Moving the time later on a day already fired does not fire again.
        #expect(
            Scheduler.due(lastFired: last, time: try time("10:00"), zone: zone("Asia/Tokyo"), now: instant("2025-03-01T02:00:00Z"), grace: 7200)
                .isEmpty)
        // Walking a week across New York's spring-forward in 15-minute steps gives exactly one send per date.
        var fired: CivilDate? = nil
        var sends: [String] = []
        var now = instant("2025-03-06T00:00:00Z")
        while now < instant("2025-03-13T00:00:00Z") {
            for fire in Scheduler.due(
                lastFired: fired, time: try time("02:30"), zone: zone("America/New_York"), now: now, grace: 7200,
                eligibleFrom: instant("2025-03-06T00:00:00Z"))
            {
                if fire.action == .send { sends.append(fire.localDate.description) }
                fired = fire.localDate
            }
            now = now.addingTimeInterval(900)
        }
        #expect(sends == ["2025-03-06", "2025-03-07", "2025-03-08", "2025-03-09", "2025-03-10", "2025-03-11", "2025-03-12"])
    }

    @Test func reminderTimesAndTokensAreValidated() throws {
        for bad in ["24:00", "7:30", "07:60", "0730", "", "07:3a", "07:30:00", "07:30 ", "٠٧:٣٠", "07.30"] {
            #expect(throws: DeviceError.invalidTime(bad)) { try ReminderTime(parsing: bad) }
        }
        #expect(try ReminderTime(parsing: "23:59").description == "23:59")
        #expect(try ReminderTime(parsing: "00:00") == .midnight)
        let apns = String(repeating: "ab", count: 32)
        #expect(try PushToken.apns(validating: apns.uppercased()) == .apns(apns))
        for bad in ["abc", String(repeating: "g", count: 64), String(repeating: "a", count: 63)] {
            #expect(throws: DeviceError.self) { try PushToken.apns(validating: bad) }
        }
        #expect(throws: DeviceError.self) { try PushToken.fcm(validating: "short") }
        #expect(throws: DeviceError.self) { try PushToken.fcm(validating: String(repeating: "a", count: 30) + " x") }
        let key = Base64URL.encode(Data([4] + [UInt8](repeating: 7, count: 64)))
        let auth = Base64URL.encode(Data(repeating: 1, count: 16))
        #expect(throws: Never.self) { try PushToken.webpush(validatingEndpoint: "https://push.example.org/abc", p256dh: key, auth: auth) }
        #expect(throws: DeviceError.self) { try PushToken.webpush(validatingEndpoint: "http://push.example.org/abc", p256dh: key, auth: auth) }
        #expect(throws: DeviceError.self) { try PushToken.webpush(validatingEndpoint: "https://push.example.org/abc", p256dh: auth, auth: auth) }
        for userinfo in ["https://Eve@push.example.org/abc", "https://eve:pw@push.example.org/abc"] {
            #expect(throws: DeviceError.self) { try PushToken.webpush(validatingEndpoint: userinfo, p256dh: key, auth: auth) }
        }
        // An endpoint is a URI: printable ASCII, nothing a parser might encode or keep raw (a NUL, a space, a newline,
        // a letter outside ASCII), which one store would keep and the other refuse.
        for odd in ["\u{0}", " ", "\n", "\t", "\u{7F}", "é", "\u{200B}"] {
            #expect(throws: DeviceError.self, "\(odd.debugDescription)") {
                try PushToken.webpush(validatingEndpoint: "https://push.example.org/a\(odd)b", p256dh: key, auth: auth)
            }
        }
        // One subscription has one spelling: the host in lower case without its default port, the keys re-encoded (a
        // key padded with a kilobyte of "=", or in the standard alphabet, is the same key).
        let padded = Data([4] + [UInt8](repeating: 0xFB, count: 64)).base64EncodedString() + String(repeating: "=", count: 1000)
        #expect(
            try PushToken.webpush(validatingEndpoint: "https://Push.Example.ORG:443/Send/AbC:x", p256dh: padded, auth: auth + "==")
                == .webpush(
                    endpoint: "https://push.example.org/Send/AbC:x", p256dh: Base64URL.encode(Data([4] + [UInt8](repeating: 0xFB, count: 64))),
                    auth: auth))
        #expect(
            try PushToken.webpush(validatingEndpoint: "https://push.example.org:8443/a", p256dh: key, auth: auth)
                == .webpush(
                    endpoint: "https://push.example.org:8443/a", p256dh: key, auth: auth))
        #expect(throws: DeviceError.invalidTimeZone("Mars/Olympus")) { try Device.validateTimeZone("Mars/Olympus") }
    }
}
