import Foundation
import Logging

/// One line per event on standard error: `info: pass done devices=3 queued=2`. Under systemd (JOURNAL_STREAM set)
/// each line starts with its syslog priority (`<6>`), so the journal records the level.
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    let label: String
    let journal: Bool

    public init(label: String, level: Logger.Level, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.label = label
        self.logLevel = level
        self.journal = environment["JOURNAL_STREAM"] != nil
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quoted("\($0.value)"))" }.joined(separator: " ")
        let text = "\(event.message)\(fields.isEmpty ? "" : " " + fields)".replacingOccurrences(of: "\n", with: " ")
        let prefix = journal ? "<\(Self.priority(event.level))>" : ""
        FileHandle.standardError.write(Data("\(prefix)\(event.level): \(text)\n".utf8))
    }

    static func quoted(_ value: String) -> String {
        value.contains(" ") || value.isEmpty ? "\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\"" : value
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
