import Accounts
import ArgumentParser
import Daemon
import Foundation

/// A length of time as the settings write it: `90`, `90s`, `15m`, `2h`, `30d`, a decimal point allowed (`1.5h`). Read
/// the same way from a flag (by the parser), the environment and the configuration file. Only digits and one point are
/// read, so no exponent, sign, `inf` or `nan` gets through; whether the span suits a setting is the setting's question
/// (`DurationSetting`).
struct TimeSpan: Equatable, ExpressibleByArgument {
    /// As it was written, for messages.
    let text: String
    let seconds: TimeInterval

    init?(_ text: String) {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text)
        var scale = 1.0
        if let last = text.last, let unit = units[last] {
            number = number.dropLast()
            scale = unit
        }
        guard !number.isEmpty, number.count <= 12, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            number.filter({ $0 == "." }).count <= 1, number != ".", let value = Double(number)
        else { return nil }
        self.text = text
        self.seconds = value * scale
    }

    init?(argument: String) { self.init(argument) }

    /// `text` as a span within `range`, in seconds; else what it may be (`SettingValue.checked` names the setting, the
    /// value and where it came from).
    static func interval(_ text: String, within range: ClosedRange<TimeInterval>) throws(SettingRefusal) -> TimeInterval {
        guard let span = TimeSpan(text) else { throw SettingRefusal("expected a number with s, m, h or d, from \(formatted(range))") }
        guard range.contains(span.seconds) else { throw SettingRefusal("expected \(formatted(range))") }
        return span.seconds
    }

    /// `1s to 1h`.
    static func formatted(_ range: ClosedRange<TimeInterval>) -> String { "\(formatted(range.lowerBound)) to \(formatted(range.upperBound))" }

    /// `90s`, `15m`, `2h`, `30d`: the largest unit that divides the value.
    static func formatted(_ seconds: TimeInterval) -> String {
        for (unit, size) in [("d", 86_400.0), ("h", 3600), ("m", 60)] where seconds >= size && seconds.truncatingRemainder(dividingBy: size) == 0 {
            return "\(Int(seconds / size))\(unit)"
        }
        return "\(Int(seconds))s"
    }
}

/// A duration the daemon or a command is configured with: where it is read from (its flag, which each command names,
/// then its environment variable, then its key in the configuration file), its default, and its range, checked once
/// whichever source gave it.
struct DurationSetting: Sendable {
    let environment: String
    let key: String
    let fallback: TimeInterval
    let range: ClosedRange<TimeInterval>

    static let grace = DurationSetting(environment: "DAILYVERSE_GRACE", key: "grace", fallback: 7200, range: 0...86_400)
    static let emitAhead = DurationSetting(environment: "DAILYVERSE_EMIT_AHEAD", key: "emit_ahead", fallback: 900, range: 0...3600)
    /// How long a process holds the outbox rows it takes on PostgreSQL: longer than a batch takes to send, and as
    /// long as a dead process's rows wait for another.
    static let deliveryLease = DurationSetting(
        environment: "DAILYVERSE_DELIVERY_LEASE", key: "delivery_lease", fallback: 300, range: 5...3600)
    static let idleTimeout = DurationSetting(
        environment: "DAILYVERSE_IDLE_TIMEOUT", key: "idle_timeout", fallback: 30, range: 1...3600)
    static let guestRetention = DurationSetting(
        environment: "DAILYVERSE_GUEST_RETENTION", key: "guest_retention", fallback: DaemonBuilder.Retention().guests,
        range: retention)
    static let outboxRetention = DurationSetting(
        environment: "DAILYVERSE_OUTBOX_RETENTION", key: "outbox_retention",
        fallback: DaemonBuilder.Retention().outbox, range: retention)
    static let eventRetention = DurationSetting(
        environment: "DAILYVERSE_EVENT_RETENTION", key: "event_retention",
        fallback: DaemonBuilder.Retention().events, range: retention)
    static let sessionIdle = DurationSetting(
        environment: "DAILYVERSE_SESSION_IDLE", key: "session_idle", fallback: SessionPolicy().idle, range: 3600...3650 * 86_400
    )
    static let sessionLifetime = DurationSetting(
        environment: "DAILYVERSE_SESSION_LIFETIME", key: "session_lifetime", fallback: SessionPolicy().lifetime,
        range: retention)

    /// A day to ten years, for both retentions.
    static let retention: ClosedRange<TimeInterval> = 86_400...3650 * 86_400
    /// The window of an API throttle (`5/15m`).
    static let throttleWindow: ClosedRange<TimeInterval> = 1...ThrottleEvents.longestWindow
    /// How long a push service may take to answer one request.
    static let pushTimeout: ClosedRange<TimeInterval> = 1...300

    /// The default and the range, as the flags' help says them (`default 30s, 1s to 1h`), from the values checked.
    var bounds: String { "default \(TimeSpan.formatted(fallback)), \(TimeSpan.formatted(range))" }
}

extension GlobalOptions {
    /// `setting`'s value in seconds: from `flag` (its name as the command spells it, and its value, already read as a
    /// span by the parser), the environment or the configuration file, in that order, else its default; within its
    /// range, or refused naming where it came from. The file is read either way, so that a typo in it, or a value a
    /// flag overrides, is still said.
    func duration(_ setting: DurationSetting, flag: (name: String, value: TimeSpan?)?) throws -> TimeInterval {
        let given = try self.setting(
            flag: flag.map { (name: $0.name, value: $0.value?.text) }, environment: setting.environment, key: setting.key)
        guard let given else { return setting.fallback }
        return try given.checked { try TimeSpan.interval($0, within: setting.range) }
    }
}
