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
        let topic = try global.setting(flag: apnsTopic, environment: "DAILYVERSE_APNS_TOPIC", key: "apns_topic") ?? "org.dailyverse.app"
        let grace = try global.duration(.grace, flag: grace)
        let aheadSeconds = try global.duration(.emitAhead, flag: emitAhead)
        // "default", a sound file of the app's bundle, or "none" for a silent alert.
        let sound = try global.setting(flag: nil, environment: "DAILYVERSE_APNS_SOUND", key: "apns_sound") ?? "default"
        guard (1...64).contains(sound.count), sound.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
            throw CLIError("invalid apns_sound '\(sound)': expected default, none or a sound file's name (letters, digits, . _ -)")
        }
        return EmitConfiguration(
            grace: grace,
            push: PushConfiguration(apnsTopic: topic, sound: sound == "none" ? nil : sound), ahead: ahead ? aheadSeconds : 0)
    }

    /// A deliverer for the configured sink, which records rows found later than the grace period as missed. The
    /// sink is the caller's to shut down.
    func makeDeliverer(
        _ global: GlobalOptions, _ database: AppDatabase, _ configuration: EmitConfiguration, push: PushOptions, clock: @escaping @Sendable () -> Date
    ) throws -> Deliverer {
        var deliverer = Deliverer(database: database, sink: try makeSink(global, database: database, push: push, clock: clock))
        deliverer.grace = configuration.grace
        return deliverer
    }

    func makeSink(_ global: GlobalOptions, database: AppDatabase, push: PushOptions, clock: @escaping @Sendable () -> Date) throws -> any Sink {
        let spec =
            try global.setting(flag: sink, environment: "DAILYVERSE_SINK", key: "sink")
            ?? "jsonl:" + URL(fileURLWithPath: try global.databasePath()).deletingLastPathComponent().appendingPathComponent("spool").path
        if spec == "stdout" { return StdoutSink() }
        if spec.hasPrefix("jsonl:"), spec.count > 6 {
            return try JSONLinesSpool(directory: URL(fileURLWithPath: String(spec.dropFirst(6))), recordedSize: { try database.spoolMark(path: $0) })
        }
        if spec.hasPrefix("webhook:"), let url = URL(string: String(spec.dropFirst(8))) { return try WebhookSink(url: url) }
        if spec == "push" {
            let senders = try push.makeSenders(global, database: database)
            guard senders.missing.count < 3 else {
                try? senders.client.http.syncShutdown()
                throw CLIError("sink push: no push service is configured (set apns_key_file, fcm_service_account_file or vapid_key_file)")
            }
            return PushSink(
                database: database, client: senders.client, apns: senders.apns, fcm: senders.fcm, webPush: senders.webPush, clock: clock)
        }
        if spec.hasPrefix("gorush:") {
            let client: PushClient
            do { client = try PushClient(caFile: try push.value(global, push.caFile, "push_ca_file")) } catch let error as PushConfigurationError {
                throw CLIError(error.description)
            }
            do { return try GorushSink(url: String(spec.dropFirst(7)), client: client, clock: clock) } catch {
                try? client.http.syncShutdown()
                throw error
            }
        }
        throw CLIError("invalid sink '\(WebhookSink.redacted(spec))': expected jsonl:DIR, stdout, webhook:URL, push or gorush:URL")
    }
}
