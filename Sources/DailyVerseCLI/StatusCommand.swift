import ArgumentParser
import ContentStore
import Daemon
import Delivery
import Foundation
import HijriCalendar
import Hummingbird
import Logging
import Metrics
import NIOCore
import Notifications
import Onboarding
import PushServices
import ServiceLifecycle
import Storage
import VerseOfTheDay

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Devices, the next fires, the outbox backlog by status, and the last errors; on PostgreSQL, the serve processes sharing it.")
    @OptionGroup var global: GlobalOptions

    struct Report: Encodable {
        let devices: Int
        let enabled: Int
        let nextFires: [NextFire]
        let outbox: [String: Int]
        /// Of the pending rows, those written ahead of their time.
        let writtenAhead: Int
        let lastErrors: [LastError]
        let push: [PushLine]
        let schedule: Schedule
        /// The live `serve` processes on a PostgreSQL database (absent on SQLite).
        let processes: [ProcessRecord]?
        /// On PostgreSQL, the revision of the imports published there ('' for none), which each process's
        /// `content_imports` should be within a minute of an import (absent on SQLite).
        let contentImports: String?
        /// What the scheduler found wrong: devices rescheduled because their entry was ahead of the clock (with the
        /// last time), and enabled devices whose zone this system does not know.
        struct Schedule: Encodable {
            let clockAhead: Int
            let lastClockAhead: String?
            let unknownZones: Int
            enum CodingKeys: String, CodingKey {
                case clockAhead = "clock_ahead", lastClockAhead = "last_clock_ahead", unknownZones = "unknown_zones"
            }
            func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(clockAhead, forKey: .clockAhead)
                try container.encode(lastClockAhead, forKey: .lastClockAhead)
                try container.encode(unknownZones, forKey: .unknownZones)
            }
        }
        struct NextFire: Encodable {
            let deviceID: String
            let at: String
            enum CodingKeys: String, CodingKey { case deviceID = "device_id", at }
        }
        struct LastError: Encodable {
            let outboxID: Int64
            let error: String
            enum CodingKeys: String, CodingKey { case outboxID = "outbox_id", error }
        }
        /// A push platform: whether this configuration sends to it, and what happened there.
        struct PushLine: Encodable {
            let configured: Bool
            let status: PushPlatformStatus
            /// APNs: how old the provider token in use is, in seconds.
            let providerTokenAge: Int?
            enum CodingKeys: String, CodingKey { case configured, status, providerTokenAge = "provider_token_age" }
            func encode(to encoder: Encoder) throws {
                try status.encode(to: encoder)
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(configured, forKey: .configured)
                try container.encode(providerTokenAge, forKey: .providerTokenAge)
            }
        }
        enum CodingKeys: String, CodingKey {
            case devices, enabled, nextFires = "next_fires", outbox, writtenAhead = "written_ahead", lastErrors = "last_errors", push
            case schedule, processes, contentImports = "content_imports"
        }
    }

    func run() async throws {
        let now = try global.clock()
        let shared = try await global.withPostgres { store in (try await store.deliveryStatus(now: now), try await store.importsRevision()) }
        try show(try shared?.0 ?? global.openDatabase().deliveryStatus(now: now), contentImports: shared?.1, now: now)
    }

    func show(_ status: DeliveryStatus, contentImports: String?, now: Date) throws {
        do {
            let report = Report(
                devices: status.devices, enabled: status.enabled,
                nextFires: status.next.map { .init(deviceID: $0.id, at: $0.at.iso8601UTC) },
                outbox: Dictionary(uniqueKeysWithValues: OutboxStatus.allCases.map { ($0.rawValue, status.outbox[$0] ?? 0) }),
                writtenAhead: status.writtenAhead, lastErrors: status.lastErrors.map { .init(outboxID: $0.id, error: $0.error) },
                push: try pushLines(status),
                schedule: .init(clockAhead: status.clockAhead, lastClockAhead: status.lastClockAhead?.iso8601UTC, unknownZones: status.unknownZones),
                processes: status.processes, contentImports: contentImports)
            if global.json { return try printJSON(report) }
            print("devices: \(report.devices) (\(report.enabled) enabled)")
            print("next fires:")
            if report.nextFires.isEmpty { print("  none") }
            for fire in report.nextFires { print("  \(fire.at)  \(fire.deviceID)") }
            print(
                "outbox: "
                    + OutboxStatus.allCases.map { status in
                        let count = "\(status.rawValue) \(report.outbox[status.rawValue] ?? 0)"
                        return status == .pending && report.writtenAhead > 0 ? count + " (\(report.writtenAhead) written ahead)" : count
                    }.joined(separator: ", "))
            print("push (last hour; devices disabled by their service in the last day):")
            for line in report.push {
                let status = line.status
                var text = "  \(status.platform.padding(toLength: 8, withPad: " ", startingAt: 0)) "
                text += line.configured ? "configured" : "not configured"
                if let reason = status.pausedReason { text += ", PAUSED until \(status.pausedUntil ?? "?"): \(reason)" }
                text += "; \(status.deliveredLastHour) delivered, \(status.failedLastHour) failed, \(status.retryingLastHour) retrying"
                text += "; \(status.disabledLastDay) disabled"
                if let age = line.providerTokenAge { text += "; provider token \(age / 60) min old" }
                print(text)
            }
            let schedule = report.schedule
            if schedule.clockAhead > 0 {
                print(
                    "schedule: \(schedule.clockAhead) devices were found scheduled more than two days ahead of the clock and rescheduled "
                        + "from now (last at \(schedule.lastClockAhead ?? "?")): see the log")
            }
            if schedule.unknownZones > 0 {
                print("schedule: \(schedule.unknownZones) enabled devices have a time zone this system does not know: they do not fire")
            }
            if !report.lastErrors.isEmpty {
                print("last errors:")
                for error in report.lastErrors { print("  #\(error.outboxID): \(error.error)") }
            }
            if let processes = report.processes {
                print("processes (seen in the last \(Int(PostgresStore.processStaleAfter)) s):")
                if processes.isEmpty { print("  none") }
                for process in processes {
                    let pass = process.lastPassAt.map { "last pass \($0.iso8601UTC)" } ?? "no pass yet"
                    let imports =
                        process.contentImports.map { $0 == report.contentImports ? "imports current" : "imports \(Self.shown($0)), not yet the last" }
                        ?? "imports not known"
                    print(
                        "  \(process.host) pid \(process.pid), since \(process.startedAt.iso8601UTC); \(pass); \(process.rowsLeased) rows leased; "
                            + "\(imports) (seen \(Int(now.timeIntervalSince(process.lastSeenAt))) s ago)")
                }
                if let revision = report.contentImports { print("imports on the database: \(Self.shown(revision))") }
            }
        }
    }

    /// A revision of the imports as `status` prints it: its first eight characters, or that none was published.
    static func shown(_ revision: String) -> String { revision.isEmpty ? "none published" : String(revision.prefix(8)) }

    /// Per platform: configured in this configuration (its key setting is there), and the database's record.
    func pushLines(_ delivery: DeliveryStatus) throws -> [Report.PushLine] {
        let keys = ["apns": "apns_key_file", "fcm": "fcm_service_account_file", "webpush": "vapid_key_file"]
        let tokenAge = delivery.apnsTokenAge.map { Int($0) }
        return try delivery.push.map { status in
            let key = keys[status.platform] ?? ""
            let configured = try global.setting(environment: "DAILYVERSE_" + key.uppercased(), key: key).map { !$0.text.isEmpty } ?? false
            return Report.PushLine(configured: configured, status: status, providerTokenAge: status.platform == "apns" ? tokenAge : nil)
        }
    }
}
