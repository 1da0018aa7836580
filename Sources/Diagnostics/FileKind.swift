#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a path names — a regular file, a folder, a FIFO, a device, a socket — told in one place, so that every command
/// that refuses a path for its kind names the kind in the same words ("not a regular file (a FIFO)").
///
/// Symbolic links are followed (`stat`, not `lstat`), as every reader and writer here opens through them: a link to a
/// file is `.regular`, a link to nothing is no file at all. `.link` is only the kind of a mode read with `lstat`.
public enum FileKind: Hashable, Sendable, CustomStringConvertible {
    case regular
    case folder
    case fifo
    /// A character or block device (`/dev/null`, a disk).
    case device
    case socket
    case link
    /// A kind the system has and none of the above is (a door, a whiteout).
    case other

    /// The kind a `stat` mode's type bits say.
    public init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .folder
        case S_IFIFO: self = .fifo
        case S_IFCHR, S_IFBLK: self = .device
        case S_IFSOCK: self = .socket
        case S_IFLNK: self = .link
        default: self = .other
        }
    }

    /// The kind of what `path` names, links followed; nil when nothing is there, or nothing can be found out about it
    /// (a link to nothing, a folder on the way that this process may not search).
    public static func of(path: String) -> FileKind? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileKind(mode: info.st_mode)
    }

    /// The kind as an error names it: "a folder", "a FIFO", "a device".
    public var description: String {
        switch self {
        case .regular: "a regular file"
        case .folder: "a folder"
        case .fifo: "a FIFO"
        case .device: "a device"
        case .socket: "a socket"
        case .link: "a symbolic link"
        case .other: "a file of another kind"
        }
    }

    /// Why a path of this kind is refused where one of `wanted` is needed, as every command says it: "not a regular
    /// file (a FIFO)", "not a folder (a regular file)".
    public func refusal(wanted: FileKind) -> String { "not \(wanted) (\(self))" }
}
