import Diagnostics
import Foundation
import Testing

/// What a path names, told one way for every command that refuses a path for its kind (the configuration file, the
/// database, `--out`, the spool, the imports).
@Suite struct FileKindTests {
    /// Each kind a test can make, and nothing for a path with nothing there. Links are followed, as every reader
    /// opens through them: a link to a file is a regular file, a link to nothing is nothing.
    @Test func eachKindAPathNames() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-kind-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("file").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let fifo = folder.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let link = folder.appendingPathComponent("link").path
        #expect(symlink(file, link) == 0)
        let absent = folder.appendingPathComponent("absent").path
        let dangling = folder.appendingPathComponent("dangling").path
        #expect(symlink(absent, dangling) == 0)

        #expect(FileKind.of(path: file) == .regular)
        #expect(FileKind.of(path: folder.path) == .folder)
        #expect(FileKind.of(path: fifo) == .fifo)
        #expect(FileKind.of(path: "/dev/null") == .device)
        #expect(FileKind.of(path: link) == .regular)
        #expect(FileKind.of(path: absent) == nil)
        #expect(FileKind.of(path: dangling) == nil)
    }

    /// The kinds a test cannot make simply (a socket, a block device) or `stat` never reports (a link), from their
    /// modes, permission bits ignored.
    @Test func theKindOfAMode() {
        #expect(FileKind(mode: S_IFREG | 0o644) == .regular)
        #expect(FileKind(mode: S_IFDIR | 0o755) == .folder)
        #expect(FileKind(mode: S_IFIFO | 0o600) == .fifo)
        #expect(FileKind(mode: S_IFCHR | 0o666) == .device)
        #expect(FileKind(mode: S_IFBLK | 0o660) == .device)
        #expect(FileKind(mode: S_IFSOCK | 0o777) == .socket)
        #expect(FileKind(mode: S_IFLNK | 0o777) == .link)
    }

    /// One phrase for a refusal, whoever refuses.
    @Test func aRefusalNamesWhatWasWantedAndWhatIsThere() {
        #expect(FileKind.fifo.refusal(wanted: .regular) == "not a regular file (a FIFO)")
        #expect(FileKind.folder.refusal(wanted: .regular) == "not a regular file (a folder)")
        #expect(FileKind.device.refusal(wanted: .regular) == "not a regular file (a device)")
        #expect(FileKind.regular.refusal(wanted: .folder) == "not a folder (a regular file)")
    }
}
