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

struct GuestsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "guests", abstract: "Guest users.", subcommands: [GuestsPurgeCommand.self])
}

struct GuestsPurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Remove guests inactive longer than the retention, with all their data.",
        discussion: "`serve` does this every hour; this is for timer-driven setups and for trying a retention out.")
    @OptionGroup var global: GlobalOptions
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Inactivity after which a guest goes (guest_retention if set, else \(DurationSetting.guestRetention.bounds)).", valueName: "duration"))
    var retention: TimeSpan?

    func run() async throws {
        let cutoff = try global.clock().addingTimeInterval(-(try global.duration(.guestRetention, flag: ("--retention", retention))))
        let purged =
            try await global.sharedJob("guests are being purged") { try await $0.purgeGuests(inactiveBefore: cutoff) }
            ?? global.openDatabase().purgeGuests(inactiveBefore: cutoff)
        if global.json { return try printJSON(["purged": purged]) }
        print("purged \(purged) guests inactive since before \(cutoff.iso8601UTC)")
    }
}
