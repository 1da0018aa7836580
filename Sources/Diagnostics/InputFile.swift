#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file someone handed the program to read (an import, a data file): opened once, refused in one line naming it
/// unless it is a regular file that can be read, and read within bounds — a whole file up to a size, or line by line
/// with a longest line, in constant memory whatever the file holds (a file of a single 300 MB line, a sparse file
/// of 2 GB, a FIFO that never ends).
public struct InputFile: ~Copyable {
    public let path: String
    /// Its size in bytes when opened.
    public let size: Int
    private let descriptor: Int32

    /// Opens `path` for reading: it must exist, be readable, and be a regular file (or a link to one).
    public init(path: String) throws(InputFileError) {
        self.path = path
        // Non-blocking, so that opening a FIFO with no writer does not hang before it is found not to be a file.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw InputFileError(path: path, reason: InputFileError.reason(errno: errno)) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = InputFileError.reason(errno: errno)
            close(descriptor)
            throw InputFileError(path: path, reason: reason)
        }
        let kind = FileKind(mode: info.st_mode)
        guard kind == .regular else {
            close(descriptor)
            throw InputFileError(path: path, reason: kind.refusal(wanted: .regular))
        }
        _ = fcntl(descriptor, F_SETFL, 0)
        self.descriptor = descriptor
        size = Int(info.st_size)
    }

    deinit { close(descriptor) }

    /// The whole file, refused if it is over `maximumBytes` (checked before anything is read, and again while
    /// reading, for a file that grows); a text file without a byte-order mark at its start, a binary one (`text`
    /// false: a key of random bytes, which may begin with the mark's three) as it is.
    public func readAll(maximumBytes: Int, text: Bool = true) throws(InputFileError) -> [UInt8] {
        guard size <= maximumBytes else { throw tooLarge(maximumBytes) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try readChunk(into: &chunk)
            if count == 0 {
                // A text file's byte-order mark (some editors write one) is not part of its content.
                if text, bytes.starts(with: ImportedText.byteOrderMark) { bytes.removeFirst(ImportedText.byteOrderMark.count) }
                return bytes
            }
            guard bytes.count + count <= maximumBytes else { throw tooLarge(maximumBytes) }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Each line (without its `\n`, and without a `\r` before it; the first without a byte-order mark, which some
    /// editors write), numbered from 1, with the bytes read so far (for a progress bar). A line over `maximumLineBytes`
    /// is an error naming the file and the line, found before more than that is held.
    public func forEachLine(
        maximumLineBytes: Int, _ body: (_ number: Int, _ line: ArraySlice<UInt8>, _ bytesRead: Int) throws -> Void
    ) throws {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var pending: [UInt8] = []
        var number = 0
        var bytesRead = 0
        func emit(_ line: ArraySlice<UInt8>) throws {
            number += 1
            let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            try body(number, number == 1 ? ImportedText.droppingByteOrderMark(trimmed) : trimmed, bytesRead)
        }
        while true {
            let count = try readChunk(into: &chunk)
            if count == 0 { break }
            bytesRead += count
            var start = 0
            for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
                if pending.isEmpty {
                    try emit(chunk[start..<index])
                } else {
                    pending.append(contentsOf: chunk[start..<index])
                    try emit(pending[...])
                    pending.removeAll(keepingCapacity: true)
                }
                start = index + 1
            }
            pending.append(contentsOf: chunk[start..<count])
            guard pending.count <= maximumLineBytes else {
                throw InputFileError(path: path, reason: "line \(number + 1) is longer than \(maximumLineBytes) bytes")
            }
        }
        if !pending.isEmpty { try emit(pending[...]) }
    }

    private func readChunk(into chunk: inout [UInt8]) throws(InputFileError) -> Int {
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw InputFileError(path: path, reason: InputFileError.reason(errno: errno))
        }
    }

    private func tooLarge(_ maximum: Int) -> InputFileError {
        InputFileError(path: path, reason: "larger than the limit of \(InputFile.describe(bytes: maximum))")
    }

    /// A size as a limit is said: "1 MiB", "64 KiB", "100 bytes" (the largest unit it is a whole number of).
    public static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }

    /// The bytes of the regular file at `path`, at most `maximumBytes` (a text file's without a byte-order mark): for a
    /// file read whole, so that a FIFO, a device or a folder named as it is refused rather than waited on or read
    /// without end.
    public static func contents(of path: String, maximumBytes: Int, text: Bool = true) throws(InputFileError) -> [UInt8] {
        try InputFile(path: path).readAll(maximumBytes: maximumBytes, text: text)
    }

    /// The largest file of PEM certificates read (`push_ca_file`, PostgreSQL's `sslrootcert`): a bundle of every
    /// public root is about 200 KiB.
    public static let maximumCertificateFileBytes = 4 << 20

    /// Why a file a setting names cannot be used, as every setting says it: "the file does not exist", "the file
    /// cannot be read by this process (…)", else the file's own reason ("not a regular file (a FIFO)", a limit).
    public static func settingReason(_ error: InputFileError) -> String {
        if error.isMissing { return "the file does not exist" }
        if error.isDenied {
            return "the file cannot be read by this process (check its owner and mode; under the shipped unit, hand it over with LoadCredential=)"
        }
        return error.reason
    }
}

/// A file that cannot be read as given: its path and why, in one line.
public struct InputFileError: UserFacingError, Equatable, Sendable {
    public let path: String
    public let reason: String
    public init(path: String, reason: String) { (self.path, self.reason) = (path, reason) }
    public var description: String { "'\(path)': \(reason)" }
    /// Whether the file is not there at all.
    public var isMissing: Bool { reason == Self.reason(errno: ENOENT) }
    /// Whether this process may not read it (its owner and mode).
    public var isDenied: Bool { reason == Self.reason(errno: EACCES) }

    static func reason(errno code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case ELOOP: "too many levels of symbolic links"
        case ENOTDIR: "a part of the path is not a folder"
        case EISDIR: FileKind.folder.refusal(wanted: .regular)
        default: String(cString: strerror(code)) + " (errno \(code))"
        }
    }
}

/// A path given on the command line or in the environment that is not valid UTF-8: Swift reads such bytes as U+FFFD,
/// and a file opened by that name would not be the one meant.
public func checkedPath(_ path: String, what: String) throws(InputFileError) -> String {
    guard !path.unicodeScalars.contains("\u{FFFD}") else {
        throw InputFileError(path: path, reason: "\(what) is not valid UTF-8; rename it, or give it by a path that is")
    }
    guard !path.isEmpty else { throw InputFileError(path: path, reason: "\(what) is empty") }
    // A control character (a newline from a botched variable or script) makes a file no one meant, and a log line
    // that reads as two.
    guard !path.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
        throw InputFileError(path: path.debugDescription, reason: "\(what) holds a control character (a newline?)")
    }
    return path
}
