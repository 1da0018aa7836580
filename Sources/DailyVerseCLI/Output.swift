import ArgumentParser
import ContentStore
import Daemon
import Delivery
import Diagnostics
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage
import VerseCalendar
import VerseOfTheDay

/// A command's error as the one line `runAsMain` prints: what a person can act on as it is worded, a database error
/// with SQLite's message, anything else as it describes itself.
func oneLine(_ error: any Error) -> String {
    let message: String
    switch error {
    case let error as UserFacingError: message = error.description
    case let error as DatabaseError: message = "database error: \(error.message ?? "\(error.resultCode)")"
    case let error as CocoaError: message = fileError(error)
    default: message = "\(error)"
    }
    // A line break inside is left for `ErrorLine.shortened` to show as `\u{A}`: a value that holds one (`--id $'en.x\n'`)
    // is then told apart from one with a space.
    return message.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A file that could not be read or written, as one line naming it and the system's reason ("cannot write
/// '/missing/m.svg': No such file or directory"), not Foundation's description of the error object.
func fileError(_ error: CocoaError) -> String {
    let path = (error.userInfo[NSFilePathErrorKey] as? String) ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
    let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
    let reason =
        underlying.flatMap { $0.domain == NSPOSIXErrorDomain ? String(cString: strerror(Int32($0.code))) : nil } ?? error.localizedDescription
    let verb = error.isWriteError ? "cannot write" : error.isReadError ? "cannot read" : "cannot use"
    return path.map { "\(verb) '\($0)': \(reason)" } ?? "\(verb) a file: \(reason)"
}

extension CocoaError {
    var isWriteError: Bool { (CocoaError.Code.fileWriteUnknown.rawValue...CocoaError.Code.fileWriteVolumeReadOnly.rawValue).contains(code.rawValue) }
    var isReadError: Bool { (CocoaError.Code.fileReadUnknown.rawValue...CocoaError.Code.fileReadUnsupportedScheme.rawValue).contains(code.rawValue) }
}

/// An output file's path, checked before the work that fills it (minutes of it, for a table): it is not a folder or
/// anything but a file, and its folder exists and can be written. The file itself is written whole later, or not at
/// all. (A folder named `map.svg` was found only by the write at the end, as "NSCocoaErrorDomain error 512".)
func checkedOutput(_ path: String) throws -> String {
    let checked = try checkedPath(path, what: "--out")
    if let kind = FileKind.of(path: checked), kind != .regular {
        let hint = kind == .folder ? "; give the name of a file in it" : ""
        throw CLIError("cannot write '\(path)': \(kind.refusal(wanted: .regular))\(hint)")
    }
    try checkedOutputFolder(URL(fileURLWithPath: checked).deletingLastPathComponent().path, for: path)
    return checked
}

/// A folder output goes into (`--out` of a file in it, or a folder itself): it exists, is a folder, and this process
/// may create files in it; else one line naming `path` and why, before any work.
func checkedOutputFolder(_ folder: String, for path: String) throws {
    guard let kind = FileKind.of(path: folder) else {
        let code = errno  // stat's own reason: no such folder, or one on the way this process may not search
        throw CLIError("cannot write '\(path)': \(String(cString: strerror(code)))")
    }
    guard kind == .folder else { throw CLIError("cannot write '\(path)': '\(folder)' is \(kind.refusal(wanted: .folder))") }
    guard access(folder, W_OK | X_OK) == 0 else { throw CLIError("cannot write '\(path)': \(String(cString: strerror(errno)))") }
}

func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    FileHandle.standardOutput.write(data)
    FileHandle.standardOutput.write(Data("\n".utf8))
}

/// Standard output through a 64 KiB buffer, for listings of millions of lines written as they are read: one system
/// call per buffer, not per line. A reader that goes away (`| head -1`) ends the process, as for any command line tool.
final class BufferedOutput {
    private var buffer: [UInt8] = []
    private let capacity = 64 * 1024

    init() { buffer.reserveCapacity(capacity) }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= capacity { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        var offset = 0
        while offset < buffer.count {
            let written = buffer[offset...].withUnsafeBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { break }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}

/// Options of the commands that list many rows: a page at a time, in a stable order.
struct PageOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("At most this many rows (1 to 100000000).", valueName: "n"))
    var limit: Int?

    func validate() throws {
        if let limit, !(1...100_000_000).contains(limit) { throw ValidationError("invalid --limit \(limit): expected 1 to 100000000") }
    }
}

/// Progress on stderr: a bar redrawn in place on a terminal; elsewhere (a log, a pipe, systemd) a line every
/// `interval` seconds, and one at the end of a stage that has said something, so that a long import says it is alive.
/// A stage done within `interval` says nothing there: a quick command that then fails writes its error as its one line
/// (`checking: 153/153 (100%)` came before the error a moment later). Sendable so that an async copy can report to it;
/// it is only ever updated from the one task of the command that made it.
final class ProgressBar: @unchecked Sendable {
    private let label: String
    private let isTerminal: Bool
    private let interval: TimeInterval
    private let now: () -> Date
    private let write: (String) -> Void
    private var lastPercent = -1
    /// When the stage began, then when it last wrote a line (not on a terminal).
    private var lastLine: Date?
    /// Whether a line was written (not on a terminal), and whether the last one said the stage was done.
    private var wrote = false
    private var ended = false

    init(
        _ label: String, isTerminal: Bool = isatty(STDERR_FILENO) == 1, interval: TimeInterval = 5, now: @escaping () -> Date = Date.init,
        write: @escaping (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        self.label = label
        self.isTerminal = isTerminal
        self.interval = interval
        self.now = now
        self.write = write
    }

    func update(_ done: Int, _ total: Int) {
        guard total > 0 else { return }
        let done = min(max(done, 0), total)
        let percent = Int(Double(done) * 100 / Double(total))
        if isTerminal {
            guard percent != lastPercent else { return }
            lastPercent = percent
            let width = 30
            let filled = width * percent / 100
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            write("\r\(label) \(bar) \(percent)% \(done)/\(total)" + (done == total ? "\n" : ""))
            return
        }
        let time = now()
        // The first call only starts the clock.
        guard let last = lastLine else {
            lastLine = time
            return
        }
        guard !ended, time.timeIntervalSince(last) >= interval || (done == total && wrote) else { return }
        write("\(label): \(done)/\(total) (\(percent)%)\n")
        (lastLine, wrote, ended) = (time, true, done == total)
    }
}

/// Wraps English text at `width` columns with an indent.
func wrap(_ text: String, width: Int = 78, indent: String = "  ") -> String {
    // Each paragraph wrapped on its own, a blank line between them.
    text.components(separatedBy: "\n\n").map { paragraph in
        var lines: [String] = []
        var line = indent
        for word in paragraph.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if line.count + word.count + 1 > width, line != indent {
                lines.append(line)
                line = indent
            }
            line += (line == indent ? "" : " ") + word
        }
        if line != indent { lines.append(line) }
        return lines.joined(separator: "\n")
    }.filter { !$0.isEmpty }.joined(separator: "\n\n")
}

/// The line under a layer that says whose words it is: "quotation · al-Mizan, Tabatabai · en.mizan on 97:1-5 ·
/// machine translation · CC BY-ND 4.0 …".
func sourceLine(_ source: LayerJSON.SourceJSON) -> String {
    let label = source.provenance == "editorial" ? "editorial text" : source.provenance.replacingOccurrences(of: "-", with: " ")
    var pieces = [label] + [source.work, source.author, source.reference].compactMap { $0 }
    if source.machineTranslation == true { pieces.append("machine translation") }
    if source.edition != nil { pieces.append(String(source.licence.prefix(while: { $0 != "(" && $0 != ":" })).trimmingCharacters(in: .whitespaces)) }
    return "[" + pieces.joined(separator: " · ") + "]"
}

/// The verse and its layers as readable text.
func verseText(_ content: VerseContent, verse: VerseJSON) -> String {
    var out = "\(content.surah.transliteration) (\(content.surah.arabic)) \(content.range.key)\n\n"
    // The basmala opening the sura is its heading, above aya 1.
    if let basmala = verse.basmala { out += "  \(basmala)\n" }
    out += "  \(verse.arabic)\n\n"
    out += wrap(verse.translation.text) + "\n"
    out += "  — \(content.translationName)\n"
    for layer in content.layers {
        out += "\n\(layer.layer.icon) \(layer.layer.title)\n"
        if let entry = layer.entry {
            out += wrap(entry.body, indent: "    ") + "\n"
            let line =
                sourceLine(LayerJSON(layer).source!) + (layer.more ? " · more: verse \(content.range.key) --layer \(layer.layer.id) --full" : "")
            out += wrap(line, indent: "    ") + "\n"
        } else {
            out += "    (no entry yet)\n"
        }
    }
    return out
}
