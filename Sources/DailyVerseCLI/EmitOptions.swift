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

/// Options of the scheduler and its sinks.
struct EmitOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Where payloads go: push (APNs, FCM and Web Push directly), gorush:URL, jsonl:DIR (default: a spool folder beside the database), stdout, or webhook:URL.",
            valueName: "sink"))
    var sink: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Send a fire this late, record an older one as missed (e.g. 2h, 90m, 7200s; \(DurationSetting.grace.bounds)).", valueName: "duration"))
    var grace: TimeSpan?

    @Option(
        name: .customLong("apns-topic"),
        parsing: .unconditional, help: ArgumentHelp("The app's bundle id, sent as apns-topic. Also $DAILYVERSE_APNS_TOPIC.", valueName: "id"))
    var apnsTopic: String?

    @Option(
        name: .customLong("emit-ahead"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Write fires this far ahead of their time (e.g. 15m, 0 for none), to be delivered at their time (\(DurationSetting.emitAhead.bounds); --once: none).",
            valueName: "duration"))
    var emitAhead: TimeSpan?

    /// How the scheduler emits; `ahead` applies to a running daemon (a single pass writes only the fires due).
    func configuration(_ global: GlobalOptions, ahead: Bool = false) throws -> EmitConfiguration {
        let topic =
            try global.setting(flag: ("--apns-topic", apnsTopic), environment: "DAILYVERSE_APNS_TOPIC", key: "apns_topic")?.text
            ?? "org.dailyverse.app"
        let grace = try global.duration(.grace, flag: ("--grace", grace))
        let aheadSeconds = try global.duration(.emitAhead, flag: ("--emit-ahead", emitAhead))
        // "default", a sound file of the app's bundle, or "none" for a silent alert.
        let sound =
            try global.checked(environment: "DAILYVERSE_APNS_SOUND", key: "apns_sound") { sound in
                guard (1...64).contains(sound.count), sound.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
                    throw SettingRefusal("expected default, none or a sound file's name (letters, digits, . _ -)")
                }
                return sound
            } ?? "default"
        return EmitConfiguration(
            grace: grace,
            push: PushConfiguration(apnsTopic: topic, sound: sound == "none" ? nil : sound), ahead: ahead ? aheadSeconds : 0)
    }

    /// A deliverer for the configured sink, which records rows found later than the grace period as missed. The
    /// sink is the caller's to shut down.
    func makeDeliverer(
        _ global: GlobalOptions, _ database: AppDatabase, _ configuration: EmitConfiguration, push: PushOptions, clock: @escaping @Sendable () -> Date
    ) throws -> Deliverer {
        try makeDeliverer(global, queue: SQLiteOutbox(database: database), state: .sqlite(database, global), configuration, push: push, clock: clock)
    }

    /// A deliverer from `queue` for the configured sink, its state kept in `state`.
    func makeDeliverer(
        _ global: GlobalOptions, queue: any OutboxQueue, state: SinkState, _ configuration: EmitConfiguration, push: PushOptions,
        clock: @escaping @Sendable () -> Date
    ) throws -> Deliverer {
        var deliverer = Deliverer(queue: queue, sink: try makeSink(global, state: state, push: push, clock: clock))
        deliverer.grace = configuration.grace
        deliverer.clock = clock
        return deliverer
    }

    /// What a sink keeps in the store: the push services' pauses and provider tokens, and for the spool the sizes its
    /// files are known to the outbox at (nil where the spool is not offered).
    struct SinkState {
        let pauses: any PauseStore
        let credentials: any CredentialStore
        let spool: (folder: String, recordedSize: @Sendable (String) throws -> Int64?, unsettled: @Sendable (String, [String]) throws -> Set<String>)?

        /// SQLite's: the spool by default, beside the database.
        static func sqlite(_ database: AppDatabase, _ global: GlobalOptions) throws -> SinkState {
            SinkState(
                pauses: database, credentials: DatabaseCredentialStore(database: database),
                spool: (
                    URL(fileURLWithPath: try global.databasePath()).deletingLastPathComponent().appendingPathComponent("spool").path,
                    { try database.spoolMark(path: $0) }, { try database.unsettledOutboxDevices(localDate: $0, deviceIDs: $1) }
                ))
        }

        /// PostgreSQL's: pauses and tokens shared by every process; no spool, which is one machine's files.
        static func postgres(_ store: PostgresStore) -> SinkState {
            SinkState(pauses: store, credentials: PostgresCredentialStore(store: store), spool: nil)
        }
    }

    /// The sink as set (flag, environment, file), if it is, with where it came from.
    func sinkSetting(_ global: GlobalOptions) throws -> SettingValue? {
        try global.setting(flag: ("--sink", sink), environment: "DAILYVERSE_SINK", key: "sink")
    }

    /// The sink's spelling, checked before anything is opened for it (a database created for a typo).
    func checkSinkSpelling(_ global: GlobalOptions) throws {
        if let setting = try sinkSetting(global) { _ = try setting.checked(SinkSpec.parse) }
    }

    /// On PostgreSQL, where several processes deliver, the sink's setting is checked before anything is opened: none,
    /// or a spool (one machine's files), is refused there, before this process migrates or registers itself.
    func checkSharedSink(_ global: GlobalOptions) throws {
        guard let setting = try sinkSetting(global) else { throw Self.noSharedSink }
        if case .spool = try setting.checked(SinkSpec.parse) { throw Self.refused(setting, Self.sharedSpool) }
    }

    static let noSharedSink = CLIError(
        "set the sink (--sink, DAILYVERSE_SINK or sink): push, webhook:URL or gorush:URL; on PostgreSQL, where several processes deliver, there is no spool by default"
    )

    /// Why a spool is refused on PostgreSQL.
    static let sharedSpool = "a spool is one machine's files, and on PostgreSQL several processes deliver: use push, webhook:URL or gorush:URL"

    /// The sink's setting refused for `reason`, naming where it came from; a URL's credentials are never shown.
    static func refused(_ setting: SettingValue, _ reason: String) -> SettingError {
        setting.refused(reason, shown: WebhookSink.redacted(setting.text))
    }

    func makeSink(_ global: GlobalOptions, state: SinkState, push: PushOptions, clock: @escaping @Sendable () -> Date) throws -> any Sink {
        // None set: the spool beside the database, where there is one. What is refused below was set, and is named
        // with where it came from.
        let spec: SinkSpec
        let setting = try sinkSetting(global)
        if let setting {
            spec = try setting.checked(SinkSpec.parse)
        } else if let spool = state.spool {
            spec = .spool(folder: spool.folder)
        } else {
            throw Self.noSharedSink
        }
        func refused(_ reason: String) -> any Error {
            guard let setting else { return CLIError("invalid sink: \(reason)") }
            return Self.refused(setting, reason)
        }
        switch spec {
        case .stdout: return StdoutSink()
        case .spool(let folder):
            guard let spool = state.spool else { throw refused(Self.sharedSpool) }
            return try JSONLinesSpool(directory: URL(fileURLWithPath: folder), recordedSize: spool.recordedSize, unsettled: spool.unsettled)
        case .webhook(let url):
            do { return try WebhookSink(url: url) } catch let error as SinkError { throw refused(error.description) }
        case .push:
            let senders = try push.makeSenders(global, credentials: state.credentials)
            guard !senders.list.isEmpty else {
                try? senders.client.http.syncShutdown()
                throw CLIError("sink push: no push service is configured (set apns_key_file, fcm_service_account_file or vapid_key_file)")
            }
            return PushSink(pauses: state.pauses, client: senders.client, senders: senders.list, clock: clock)
        case .gorush(let url):
            let client = try push.client(global)
            do { return try GorushSink(url: url, client: client, clock: clock) } catch {
                try? client.http.syncShutdown()
                if let error = error as? SinkError { throw refused(error.description) }
                throw error
            }
        }
    }
}

/// A sink as written, read once by one rule: for the check at start (before anything is opened) and for making it.
enum SinkSpec: Equatable {
    case stdout, push
    case spool(folder: String)
    case webhook(URL)
    case gorush(String)

    /// The sink's forms, as a sink of none of them is refused.
    static let forms = "expected jsonl:DIR, stdout, webhook:URL, push or gorush:URL"

    /// `text` read as a sink; a `SettingRefusal` naming the forms, or why a webhook's or gorush's URL is not one (a
    /// URL's credentials never shown).
    static func parse(_ text: String) throws -> SinkSpec {
        if text == "stdout" { return .stdout }
        if text == "push" { return .push }
        if text.hasPrefix("jsonl:"), text.count > 6 { return .spool(folder: String(text.dropFirst(6))) }
        for prefix in ["webhook:", "gorush:"] where text.hasPrefix(prefix) {
            let url = String(text.dropFirst(prefix.count))
            guard WebhookSink.isHTTPURL(url), let parsed = URL(string: url) else {
                throw SettingRefusal(WebhookSink.notAnHTTPURL + " after " + prefix, shown: WebhookSink.redacted(text))
            }
            return prefix == "webhook:" ? .webhook(parsed) : .gorush(url)
        }
        throw SettingRefusal(forms, shown: WebhookSink.redacted(text))
    }
}
