import ArgumentParser
import ContentStore
import Crypto
import Delivery
import Foundation
import Notifications
import PushServices
import Storage

struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Talk to the push services directly.", subcommands: [PushTestCommand.self])
}

struct PushTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test", abstract: "Send one device a notification now, through its service, and print the service's answer.",
        discussion: """
            The device gets today's verse as the scheduler would render it (same collapse id, so it replaces today's \
            notification). Nothing is written to the outbox. Unless the service accepted it, its answer is the error \
            line on stderr, with exit status 1; with --json the answer's object is printed on stdout too ("accepted": \
            false), for scripts to read.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var emit: EmitOptions
    @OptionGroup var push: PushOptions
    @Argument(help: ArgumentHelp("The device's id (from devices list).", valueName: "device-id")) var deviceID: String

    func run() async throws {
        let (deviceID, now) = (deviceID, try global.clock())
        let configuration = try emit.configuration(global)
        // On PostgreSQL: the device from there, today's content from this machine's copy (with the month starts
        // published there, as `serve` has them), the provider tokens and pauses every process shares.
        let shared = try await global.withPostgres { store in
            guard let state = try await store.withoutTransaction({ try await $0.deviceState(id: deviceID, now: now) }) else {
                throw DeviceError.notFound(deviceID)
            }
            let content = try await global.contentCopy(following: store, now: now)
            let record = try Emitter(database: content, configuration: configuration).preview(state.device, now: now)
            return try await send(record, state: .postgres(store), now: now)
        }
        let (record, outcome): (OutboxRecord, DeliveryOutcome)
        if let shared {
            (record, outcome) = shared
        } else {
            let database = try global.openDatabase()
            let preview = try Emitter(database: database, configuration: configuration).preview(deviceID: deviceID, now: now)
            (record, outcome) = try await send(preview, state: .sqlite(database, global), now: now)
        }
        let (accepted, line) = Self.describe(outcome)
        // The service answered: with --json its answer is the object on stdout whether it accepted or not (`accepted`
        // says which), so that a script reads a refusal's reason as it reads an acceptance. A refusal is still a
        // failure: the one error line on stderr, exit status 1 (and, without --json, nothing on stdout). Errors
        // before any answer (a bad option, an unknown device, a service not configured) are the error line alone.
        if global.json {
            try printJSON(PushTested(deviceID: deviceID, platform: record.platform, accepted: accepted, answer: line))
        }
        guard accepted else { throw CLIError("\(deviceID) (\(record.platform)): \(line)") }
        if !global.json { print("\(deviceID) (\(record.platform)): \(line)") }
    }

    /// Sends `record` through its platform's service, configured as `serve`'s push sink is; the record and the answer.
    func send(_ record: OutboxRecord, state: EmitOptions.SinkState, now: Date) async throws -> (OutboxRecord, DeliveryOutcome) {
        let senders = try push.makeSenders(global, credentials: state.credentials)
        let sink = PushSink(pauses: state.pauses, client: senders.client, senders: senders.list, clock: { now })
        guard sink.platforms?.contains(record.platform) == true else {
            try? await senders.client.shutdown()
            throw CLIError(
                "device '\(deviceID)' is \(record.platform), and \(Platform(rawValue: record.platform)?.serviceName ?? record.platform) is not configured"
            )
        }
        let outcome = await sink.sendNow(record)
        await sink.shutdown()
        return (record, outcome)
    }

    static func describe(_ outcome: DeliveryOutcome) -> (Bool, String) {
        switch outcome {
        case .delivered(let id): return (true, "accepted" + (id.map { " (\($0))" } ?? ""))
        case .retry(let error, let after): return (false, "not accepted, try later: \(error)" + (after.map { " (retry after \(Int($0)) s)" } ?? ""))
        case .failed(let error): return (false, "refused: \(error)")
        case .disabled(let error, _): return (false, "the service no longer knows this device: \(error)")
        case .paused(let error, _): return (false, "configuration error: \(error)")
        case .missed(let error): return (false, "not sent: \(error)")
        }
    }
}

/// What `push test --json` says: the service's answer, and whether it accepted the notification.
struct PushTested: Encodable {
    let deviceID: String
    let platform: String
    let accepted: Bool
    let answer: String

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case platform, accepted, answer
    }
}
