import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage
import Testing

@testable import Delivery

/// What the deliverer does with the outcomes only push senders give: a device its service no longer knows, a
/// service paused by our configuration, a sink that takes some platforms only.
@Suite struct PushOutcomeTests {
    /// Answers per device id; the default for the others.
    final class AnsweringSink: Sink, @unchecked Sendable {
        let name = "answering"
        let platforms: Set<String>?
        var answers: [String: DeliveryOutcome]
        var fallback: DeliveryOutcome
        var handed: [String] = []
        init(_ answers: [String: DeliveryOutcome] = [:], fallback: DeliveryOutcome = .delivered(), platforms: Set<String>? = nil) {
            self.answers = answers
            self.fallback = fallback
            self.platforms = platforms
        }
        func deliver(_ records: [OutboxRecord]) async throws -> [Int64: DeliveryOutcome] {
            handed += records.map(\.deviceID)
            return Dictionary(uniqueKeysWithValues: records.map { ($0.id, answers[$0.deviceID] ?? fallback) })
        }
    }

    func devices(_ database: AppDatabase) throws -> [Device] {
        try (0..<4).map { n in
            try database.addDevice(DeviceSettings(token: try apnsToken(20 + n), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        }
    }

    func tokenOf(_ device: Device) -> String {
        if case .apns(let token) = device.token { return token }
        return ""
    }

    @Test func aDeviceItsServiceNoLongerKnowsIsDisabledWithTheReasonUntilItRegistersAgain() async throws {
        let database = try seededDatabase()
        let all = try devices(database)
        let gone = all[0]
        let emitter = Emitter(database: database, configuration: configuration)
        _ = try emitter.run(now: instant("2025-03-01T08:05:00Z"))
        let sink = AnsweringSink([gone.id: .disabled(error: "APNs 410 Unregistered", token: tokenOf(gone))], fallback: .delivered(id: "apns-id-7"))
        let now = instant("2025-03-01T08:06:00Z")
        let summary = try await Deliverer(database: database, sink: sink).run(now: now)
        #expect(summary.delivered == 3 && summary.failed == 1 && summary.disabled == 1)
        let state = try #require(try database.deviceState(id: gone.id, now: now))
        #expect(!state.device.enabled && state.nextFireAt == nil)
        #expect(state.disabledReason == "APNs 410 Unregistered" && state.disabledAt == now)
        let record = DeviceRecord(state)
        #expect(record.disabledReason == "APNs 410 Unregistered" && record.disabledAt == now.iso8601UTC)
        #expect(record.text().contains("disabled by its push service"))
        let rows = try database.outbox(date: try CivilDate(parsing: "2025-03-01"))
        #expect(rows.filter { $0.status == .delivered }.allSatisfy { $0.serviceID == "apns-id-7" })
        #expect(rows.first { $0.deviceID == gone.id }?.status == .failed)

        // The next day it is sent nothing; the others are.
        #expect(try emitter.run(now: instant("2025-03-02T08:05:00Z")).queued == 3)
        // The app registers the same token again: enabled, the reason cleared, and it fires the day after.
        _ = try database.updateDevice(id: gone.id, DeviceSettings(token: gone.token), now: instant("2025-03-02T09:00:00Z"))
        let back = try #require(try database.deviceState(id: gone.id, now: instant("2025-03-02T09:00:00Z")))
        #expect(back.device.enabled && back.disabledReason == nil && back.disabledAt == nil)
        #expect(try emitter.run(now: instant("2025-03-03T08:05:00Z")).queued == 4)
        // A device switched off by its owner stays off when it sends its token again with enabled false.
        _ = try database.updateDevice(id: gone.id, DeviceSettings(enabled: false), now: instant("2025-03-03T09:00:00Z"))
        _ = try database.updateDevice(id: gone.id, DeviceSettings(token: gone.token), now: instant("2025-03-03T09:01:00Z"))
        #expect(try database.deviceState(id: gone.id, now: instant("2025-03-03T09:01:00Z"))?.device.enabled == false)
    }

    @Test func aRefusalOfATokenTheDeviceNoLongerHasLeavesItEnabled() async throws {
        let database = try seededDatabase()
        let all = try devices(database)
        _ = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T08:05:00Z"))
        // The app registered a new token after the row was written, before the service refused the old one.
        _ = try database.updateDevice(id: all[1].id, DeviceSettings(token: try apnsToken(99)), now: instant("2025-03-01T08:05:30Z"))
        let sink = AnsweringSink([all[1].id: .disabled(error: "APNs 400 BadDeviceToken", token: tokenOf(all[1]))])
        let summary = try await Deliverer(database: database, sink: sink).run(now: instant("2025-03-01T08:06:00Z"))
        #expect(summary.failed == 1 && summary.disabled == 0)
        let state = try #require(try database.deviceState(id: all[1].id, now: instant("2025-03-01T08:06:00Z")))
        #expect(state.device.enabled && state.disabledReason == nil)
    }

    @Test func aPausedServiceKeepsItsRowsPendingWithoutCountingAnAttempt() async throws {
        let database = try seededDatabase()
        _ = try devices(database)
        _ = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T08:05:00Z"))
        let sink = AnsweringSink(fallback: .paused(error: "APNs 403 InvalidProviderToken", after: 300))
        let deliverer = Deliverer(database: database, sink: sink)
        let now = instant("2025-03-01T08:06:00Z")
        let summary = try await deliverer.run(now: now)
        #expect(summary.deferred == 4 && summary.pausedError == "APNs 403 InvalidProviderToken" && summary.failed == 0 && summary.retrying == 0)
        #expect(try database.outbox(status: .pending).allSatisfy { $0.attempts == 0 && $0.lastError == "APNs 403 InvalidProviderToken" })
        #expect(try await deliverer.run(now: now.addingTimeInterval(299)) == DeliverySummary())
        sink.fallback = .delivered()
        #expect(try await deliverer.run(now: now.addingTimeInterval(300)).delivered == 4)
        #expect(try database.outbox(status: .delivered).allSatisfy { $0.attempts == 1 })
    }

    @Test func aSinkForSomePlatformsLeavesTheOthersRowsUntouched() async throws {
        let database = try seededDatabase()
        _ = try devices(database)
        _ = try database.addDevice(
            DeviceSettings(token: try .fcm(validating: "fcm-token:APA91bExampleExample_01"), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        _ = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T08:05:00Z"))
        let sink = AnsweringSink(platforms: ["fcm"])
        let summary = try await Deliverer(database: database, sink: sink).run(now: instant("2025-03-01T08:06:00Z"))
        #expect(summary.delivered == 1 && sink.handed.count == 1)
        let apns = try database.outbox(status: .pending)
        #expect(apns.count == 4 && apns.allSatisfy { $0.platform == "apns" && $0.attempts == 0 && $0.lastError == nil })
        // A sink that takes no platform at all sends nothing.
        let none = AnsweringSink(platforms: [])
        #expect(try await Deliverer(database: database, sink: none).run(now: instant("2025-03-01T08:07:00Z")) == DeliverySummary())
        #expect(none.handed.isEmpty)
    }
}
