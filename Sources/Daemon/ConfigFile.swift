import Diagnostics
import Foundation

/// The configuration file: a small subset of TOML — `key = value` lines and `#` comments; values are "strings",
/// 'literal strings', integers, floats and booleans. Anything else, a `[section]` header included (every setting is a
/// top-level key, and an empty `[extra]` passed unnoticed), is an error naming the line, so a typo cannot pass
/// unnoticed.
public struct ConfigFile: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int)
        case float(Double)
        case bool(Bool)
    }

    /// Values by key.
    public let values: [String: Value]
    /// The line each key is set on, and the file's name, for errors found after parsing (an unknown key).
    public let lines: [String: Int]
    public let file: String
    /// Each value as written in the file (`0123456789` keeps its zero), for `text(_:)`.
    public let written: [String: String]

    public init(values: [String: Value], lines: [String: Int] = [:], file: String = "config", written: [String: String] = [:]) {
        self.values = values
        self.lines = lines
        self.file = file
        self.written = written
    }

    /// Refuses a key outside `known`, naming the file and the line.
    public func checkKeys(_ known: Set<String>) throws(ConfigError) {
        guard let key = Set(values.keys).subtracting(known).min(by: { (lines[$0] ?? 0, $0) < (lines[$1] ?? 0, $1) }) else { return }
        throw .unknownKey(file: file, line: lines[key] ?? 0, key: key)
    }

    /// The most a configuration file may hold: its few dozen settings take a few KiB.
    public static let maximumBytes = 1 << 20

    /// The file at `path`, read as every input file is (`InputFile`): a folder, a FIFO or a device is refused naming
    /// what it is, without waiting for a writer or reading a device without end, and so is a file over `maximumBytes`.
    public init(contentsOf path: String) throws(ConfigError) {
        let bytes: [UInt8]
        do { bytes = try InputFile.contents(of: path, maximumBytes: Self.maximumBytes) } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else { throw .invalid(file: path, line: 0, reason: "not UTF-8") }
        try self.init(parsing: text, file: path)
    }

    public init(parsing text: String, file: String = "config") throws(ConfigError) {
        var values: [String: Value] = [:]
        var lines: [String: Int] = [:]
        var written: [String: String] = [:]
        // Windows line ends and a byte-order mark read as Linux's (a file saved on Windows was one line, all comment).
        for (index, raw) in TextLines.of(text).enumerated() {
            func fail(_ reason: String) -> ConfigError { .invalid(file: file, line: index + 1, reason: reason) }
            let line = Self.stripComment(raw).trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                throw fail("a section (\(Self.shown(String(line.prefix(60))))) is not read: every setting is a key = value line of its own")
            }
            guard let equals = line.firstIndex(of: "=") else { throw fail("expected key = value") }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let valueText = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard Self.isBareKey(key) else { throw fail("invalid key '\(key)'") }
            guard values[key] == nil else { throw fail("'\(key)' is set twice") }
            guard let value = Self.value(valueText) else { throw fail("invalid value for '\(key)': \(Self.shown(valueText))") }
            values[key] = value
            lines[key] = index + 1
            written[key] = valueText
        }
        self.init(values: values, lines: lines, file: file, written: written)
    }

    public func string(_ key: String) throws(ConfigError) -> String? {
        switch values[key] {
        case nil: return nil
        case .string(let text): return text
        default: throw .wrongType(key: key, expected: "a string")
        }
    }

    /// A setting's value as the command line would give it: a string as it is, a number or a boolean as written
    /// (`max_devices_per_user = 20` is "20"), for the setting's own check to read and, if need be, refuse by name.
    public func text(_ key: String) -> String? {
        switch values[key] {
        case nil: return nil
        case .string(let text): return text
        case .integer(let number): return written[key] ?? String(number)
        case .float(let number): return written[key] ?? String(number)
        case .bool(let flag): return flag ? "true" : "false"
        }
    }

    public func integer(_ key: String) throws(ConfigError) -> Int? {
        switch values[key] {
        case nil: return nil
        case .integer(let number): return number
        default: throw .wrongType(key: key, expected: "a whole number")
        }
    }

    /// A value as an error shows it: one that may be an address with credentials (`@`, a query) only up to its first
    /// `:`, so that a database address written without its quotes never puts its password in the journal.
    static func shown(_ value: String) -> String {
        // `://` too: an unquoted value is cut at `#`, which a password may hold (`postgresql://u:p#ss@db/dv`).
        guard value.contains("@") || value.contains("?") || value.contains("://") else { return value }
        let scheme = value.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        let shown = value.contains(":") && !scheme.contains("@") && !scheme.contains("?") ? scheme + ":…" : "…"
        return shown + " (not shown whole: it may hold a password)"
    }

    static func isBareKey<S: StringProtocol>(_ key: S) -> Bool {
        !key.isEmpty && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// Drops a `#` comment that is not inside a string.
    static func stripComment(_ line: Substring) -> Substring {
        var quote: Character? = nil
        var escaped = false
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if escaped { escaped = false } else if character == "\\" && open == "\"" { escaped = true } else if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" {
                return line[..<index]
            }
        }
        return line
    }

    static func value(_ text: String) -> Value? {
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            let inner = text.dropFirst().dropLast()
            return inner.contains("'") ? nil : .string(String(inner))
        }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
            var result = ""
            var escaped = false
            for character in text.dropFirst().dropLast() {
                if escaped {
                    switch character {
                    case "\"": result.append("\"")
                    case "\\": result.append("\\")
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    default: return nil
                    }
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    return nil
                } else {
                    result.append(character)
                }
            }
            return escaped ? nil : .string(result)
        }
        let digits = text.replacingOccurrences(of: "_", with: "")
        if let integer = Int(digits) { return .integer(integer) }
        if digits.contains("."), let float = Double(digits), float.isFinite { return .float(float) }
        return nil
    }
}

public enum ConfigError: UserFacingError, Equatable, Sendable {
    /// The file cannot be read as a configuration file: missing, not a regular file, over the limit.
    case unreadable(path: String, reason: String)
    case invalid(file: String, line: Int, reason: String)
    case wrongType(key: String, expected: String)
    case unknownKey(file: String, line: Int, key: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read configuration file '\(path)': \(reason)"
        case .invalid(let file, let line, let reason): "\(file):\(line): \(reason)"
        case .wrongType(let key, let expected): "configuration key '\(key)' must be \(expected)"
        case .unknownKey(let file, let line, let key): "\(file):\(line): unknown configuration key '\(key)'"
        }
    }
}
