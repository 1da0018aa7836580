import Foundation
import Synchronization
import Testing

@testable import DailyVerseCLI

/// A key file others may open is said once a process, however often it is read (`serve` reads the VAPID key for its
/// sender and again for the API's public key), and one only its owner may open never.
@Suite struct KeyFileModesTests {
    final class Lines: Sendable {
        private let said = Mutex<[String]>([])
        func append(_ line: String) { said.withLock { $0.append(line) } }
        var all: [String] { said.withLock { $0 } }
    }

    @Test func aKeyFileOthersMayOpenIsSaidOnceAProcess() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-key-file-modes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let open = folder.appendingPathComponent("open.pem").path
        let own = folder.appendingPathComponent("own.pem").path
        for (path, mode) in [(open, 0o644), (own, 0o600)] {
            try "-----BEGIN PRIVATE KEY-----\nnot a real key\n-----END PRIVATE KEY-----\n".write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        }
        let lines = Lines()
        let modes = KeyFileModes { lines.append($0) }
        for _ in 0..<3 {
            modes.check(open, setting: "vapid_key_file")
            modes.check(own, setting: "apns_key_file")
        }
        #expect(lines.all == ["vapid_key_file '\(open)' is readable by others (mode 0644); chmod 600 it"])
        #expect(!lines.all.joined().contains("PRIVATE KEY"))
    }

    @Test func theWarningSaysWhatOthersMayDo() {
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o600) == nil)
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o400) == nil)
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o700) == nil)
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o100_640) == "s 'k' is readable by others (mode 0640); chmod 600 it")
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o604) == "s 'k' is readable by others (mode 0604); chmod 600 it")
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o620) == "s 'k' is writable by others (mode 0620); chmod 600 it")
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o666) == "s 'k' is readable and writable by others (mode 0666); chmod 600 it")
        #expect(
            KeyFileModes.warning("k", setting: "s", mode: 0o777) == "s 'k' is readable, writable and executable by others (mode 0777); chmod 600 it")
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o044) == "s 'k' is readable by others (mode 0044); chmod 600 it")
        #expect(KeyFileModes.warning("k", setting: "s", mode: 0o601) == "s 'k' is executable by others (mode 0601); chmod 600 it")
    }
}

/// A key file is bytes, read as they are: a throttle key from /dev/urandom may begin with the three bytes of a UTF-8
/// byte-order mark, which a text file's reading drops (it was refused as 29 bytes, or a longer one changed).
@Suite struct KeyFileBytesTests {
    @Test func aBinaryKeyKeepsItsFirstBytes() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dv-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let key = Data([0xEF, 0xBB, 0xBF] + (0..<29).map { UInt8($0) })
        try key.write(to: file)
        #expect(try PushOptions.readBytes(file.path, limit: 4096) == key)
        #expect(try PushOptions.readBytes(file.path, limit: 31) == nil, "over the limit")
    }
}
