import Foundation

/// Tells systemd how the service is doing (sd_notify): READY=1, WATCHDOG=1, STOPPING=1, STATUS=….
/// Without NOTIFY_SOCKET (not run by systemd) every call does nothing.
public struct SystemdNotifier: Sendable {
    let socketPath: String?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        // Microseconds as systemd writes them; anything else (or over a day) is ignored rather than trusted.
        watchdogInterval = environment["WATCHDOG_USEC"].flatMap { text in
            guard (1...11).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }), let micros = Int(text),
                (1...86_400_000_000).contains(micros)
            else { return nil }
            return TimeInterval(micros) / 1_000_000
        }
    }

    /// How often systemd expects WATCHDOG=1, if it does.
    public let watchdogInterval: TimeInterval?

    public var isActive: Bool { socketPath != nil }

    public func ready(status: String? = nil) { send("READY=1" + (status.map { "\nSTATUS=\($0)" } ?? "")) }
    public func watchdog() { send("WATCHDOG=1") }
    public func stopping() { send("STOPPING=1") }
    public func status(_ text: String) { send("STATUS=\(text)") }

    func send(_ message: String) {
        guard let socketPath else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // A leading '@' names an abstract socket: its first byte is NUL.
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, address, length) }
            }
        }
    }
}
