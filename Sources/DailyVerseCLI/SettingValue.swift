import Diagnostics

/// Where a setting's value came from: the command line, the environment, or a line of the configuration file. A value
/// may be given in all three (a flag, the unit's environment, /etc/dailyverse/config.toml); the one refused is named.
enum SettingOrigin: Sendable, Equatable {
    /// A flag, by its name as typed (`--outbox-retention`).
    case flag(String)
    /// An environment variable, by its name (`DAILYVERSE_OUTBOX_RETENTION`).
    case environment(String)
    /// A key of the configuration file, with the file (as named) and the line the key is set on.
    case configuration(key: String, path: String, line: Int)

    /// As the line that says a file's setting was overridden names the winner.
    var overriding: String {
        switch self {
        case .flag: "the command line"
        case .environment(let name): "\(name) in the environment"
        case .configuration(_, let path, let line): "\(path):\(line)"
        }
    }
}

/// A setting's value as it was given, with where it came from (`GlobalOptions.setting`).
struct SettingValue: Sendable, Equatable {
    let text: String
    let origin: SettingOrigin

    /// `parse(text)`, its `SettingRefusal` turned into the `SettingError` that names this value and its origin. Any
    /// other error goes through as it is: a database that cannot be opened, say, is said in its own words, which name
    /// it. (A file a setting names that cannot be read, a key file, is the value refused: its reader throws a
    /// `SettingRefusal`.)
    func checked<T>(_ parse: (String) throws -> T) throws -> T {
        do { return try parse(text) } catch let refusal as SettingRefusal { throw refused(refusal.reason, shown: refusal.shown) }
    }

    /// This value refused for `reason`; `shown` in its place where the value may hold what no log should (an address
    /// with credentials).
    func refused(_ reason: String, shown: String? = nil) -> SettingError {
        SettingError(origin: origin, shown: shown ?? text, reason: reason)
    }
}

/// Why a setting's value is refused, in words that name neither the setting nor the value: `SettingValue.checked`
/// adds both, and where the value came from. (Also a `UserFacingError`, saying the reason alone, should one be thrown
/// outside `checked`.)
struct SettingRefusal: UserFacingError {
    let reason: String
    /// The value as the error shows it, when it is not shown as given (an address that may hold a password).
    let shown: String?

    init(_ reason: String, shown: String? = nil) {
        self.reason = reason
        self.shown = shown
    }

    var description: String { reason }
}

/// A setting's value refused, in one line that names where it came from, the value, and why:
///
///     invalid --outbox-retention '3651d': expected 1d to 3650d
///     invalid DAILYVERSE_OUTBOX_RETENTION '3x' (environment): expected a number with s, m, h or d, from 1d to 3650d
///     /etc/dailyverse/config.toml:12: invalid outbox_retention '3x': expected a number with s, m, h or d, from 1d to 3650d
///
/// The file's line is said as the configuration file's other errors say it (`FILE:LINE: …`). The value is quoted, so
/// the line printed cuts a long one and escapes control characters in it (`ErrorLine.shortened`).
struct SettingError: UserFacingError, Equatable {
    let origin: SettingOrigin
    let shown: String
    let reason: String

    var description: String {
        switch origin {
        case .flag(let flag): "invalid \(flag) '\(shown)': \(reason)"
        case .environment(let name): "invalid \(name) '\(shown)' (environment): \(reason)"
        case .configuration(let key, let path, let line): "\(path):\(line): invalid \(key) '\(shown)': \(reason)"
        }
    }
}
