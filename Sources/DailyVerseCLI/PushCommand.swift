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
            notification). Nothing is written to the outbox. Exit status 1 unless the service accepted it.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var emit: EmitOptions
    @OptionGroup var push: PushOptions
    @Argument(help: ArgumentHelp("The device's id (from devices list).", valueName: "device-id")) var deviceID: String

    func run() async throws {
        let database = try global.openDatabase()
        let now = try global.clock()
        let record = try Emitter(database: database, configuration: try emit.configuration(global)).preview(deviceID: deviceID, now: now)
        let senders = try push.makeSenders(global, database: database)
        let sink = PushSink(pauses: database, client: senders.client, senders: senders.list, clock: { now })
        guard sink.platforms?.contains(record.platform) == true else {
            try? await senders.client.shutdown()
            throw CLIError(
                "device '\(deviceID)' is \(record.platform), and \(Platform(rawValue: record.platform)?.serviceName ?? record.platform) is not configured"
            )
        }
        let outcome = await sink.sendNow(record)
        await sink.shutdown()
        let (accepted, line) = Self.describe(outcome)
        if global.json {
            try printJSON(["device_id": deviceID, "platform": record.platform, "accepted": accepted ? "true" : "false", "answer": line])
        } else {
            print("\(deviceID) (\(record.platform)): \(line)")
        }
        if !accepted { throw ExitCode(1) }
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
