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

struct OutboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "Inspect, requeue and prune the outbox.",
        subcommands: [OutboxListCommand.self, OutboxRequeueCommand.self, OutboxPruneCommand.self])
}

struct OutboxRequeueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "requeue", abstract: "Put failed rows back to pending, with a fresh set of attempts.",
        discussion: """
            After the cause is mended (a webhook's address, a gateway's configuration). Give row ids, or --all for every \
            failed row. A row more than the grace period late is then recorded as missed, as any late fire is.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Every failed row.") var all = false
    @Argument(help: ArgumentHelp("Outbox row ids (from outbox list).", valueName: "id")) var ids: [Int64] = []

    func validate() throws {
        guard all != !ids.isEmpty else { throw ValidationError("give row ids or --all, not both or neither") }
        if let bad = ids.first(where: { $0 < 1 }) { throw ValidationError("invalid row id \(bad): ids start at 1") }
    }

    func run() async throws {
        let (chosen, now) = (all ? nil : ids, try global.clock())
        let count =
            try await global.withPostgres { try await $0.requeueFailed(ids: chosen, now: now) }
            ?? global.openDatabase().requeueFailed(ids: chosen, now: now)
        // Rows named that are not failed (or not there): one line on stderr that says what was done, and nothing on
        // stdout, as for any failure (the count printed first read as a success beside the error).
        if let chosen, count < Set(chosen).count {
            throw CLIError(
                "requeued \(count) of the \(Set(chosen).count) rows named: the others are not failed outbox rows (see outbox list --status failed)")
        }
        if global.json { try printJSON(["requeued": count]) } else { print("requeued \(count) failed outbox rows") }
    }
}

struct OutboxPruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune", abstract: "Remove delivered, failed and missed rows older than the retention; pending rows stay.",
        discussion: "`serve` does this every hour; this is for timer-driven setups and for trying a retention out.")
    @OptionGroup var global: GlobalOptions
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Age after which a settled row goes (outbox_retention if set, else \(DurationSetting.outboxRetention.bounds)).", valueName: "duration"))
    var retention: TimeSpan?

    func run() async throws {
        let cutoff = try global.clock().addingTimeInterval(-(try global.duration(.outboxRetention, flag: ("--retention", retention))))
        let pruned =
            try await global.sharedJob("the outbox is being pruned") { try await $0.pruneOutbox(settledBefore: cutoff) }
            ?? global.openDatabase().pruneOutbox(settledBefore: cutoff)
        if global.json { return try printJSON(["pruned": pruned]) }
        print("removed \(pruned) settled outbox rows created before \(cutoff.iso8601UTC)")
    }
}

struct OutboxListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List outbox rows, oldest first, as they are read.",
        discussion: "For many rows, a page at a time: --limit N, then --after the last id printed.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var page: PageOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("Only this local date, YYYY-MM-DD.", valueName: "date")) var date: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Only rows with this status.", valueName: "status")) var status: OutboxStatus?
    @Option(parsing: .unconditional, help: ArgumentHelp("Only rows with a larger id (the last id of the previous page).", valueName: "id")) var after:
        Int64?

    func validate() throws {
        if let after, after < 0 { throw ValidationError("invalid --after \(after): ids start at 1") }
    }

    func run() async throws {
        let day = try date.map { try CivilDate(parsing: $0) }
        let limit = page.limit
        let out = BufferedOutput()
        var count = 0
        // The list opens with its first element (or closes empty at the end): a command that fails before it has
        // listed anything prints nothing on standard output.
        func write(_ record: OutboxRecord) {
            if global.json {
                out.write((count == 0 ? "[" : ",\n") + record.jsonLine(includeStatus: true))
            } else {
                let error = record.lastError.map { "  last error: \($0)" } ?? ""
                out.write(
                    "\(record.id)  \(record.localDate)  \(record.status.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(record.platform.padding(toLength: 7, withPad: " ", startingAt: 0)) \(record.deviceID)  fire \(record.fireAt.iso8601UTC)  attempts \(record.attempts)\(error)\n"
                )
            }
            count += 1
        }
        let (status, after) = (status, after)
        if try await global.withPostgres({ try await $0.forEachOutboxRow(date: day, status: status, after: after, limit: limit, write) }) == nil {
            try global.openDatabase().forEachOutboxRow(date: day, status: status, after: after, limit: limit, write)
        }
        if global.json { out.write(count == 0 ? "[]\n" : "]\n") } else if count == 0 { out.write("no outbox rows\n") }
        out.flush()
    }
}
