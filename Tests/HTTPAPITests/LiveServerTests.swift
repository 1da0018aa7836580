import DailyVerseTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

@testable import HTTPAPI

#if canImport(Glibc)
import Glibc
#endif

/// A real server on a loopback port, as `serve` runs it (`apiServer`), spoken to over a raw socket: what the parser
/// refuses and what a silent client gets never reach the router, so only a real connection shows them.
@Suite struct LiveServerTests {
    /// Runs the API on 127.0.0.1 with an ephemeral port; `body` gets the port. The server is then shut down
    /// gracefully, as `serve` does on SIGTERM.
    func withServer(
        idleTimeout: TimeInterval = 30, trustedProxies: TrustedProxies = .none, connections: ConnectionLimit = ConnectionLimit(maximum: 1024),
        _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        let environment = try makeEnvironment(clock: { fixedNow }, trustedProxies: trustedProxies)
        let port = PortBox()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let application = buildApplication(
            environment, host: "127.0.0.1", port: 0, idleTimeout: idleTimeout, connections: connections, logger: logger
        ) { port.set($0) }
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        // The server's tasks (its connections' and its routes') run on a thread of their own: on the shared pool,
        // other suites' work held them past the 30-second request deadline, which closed connections unanswered.
        async let running: Void = withTaskExecutorPreference(OwnThreadExecutor.servers) { try await group.run() }
        do {
            try await body(try await port.wait())
        } catch {
            await group.triggerGracefulShutdown()
            try await running
            throw error
        }
        await group.triggerGracefulShutdown()
        try await running
    }

    /// Blocking socket work, off the cooperative pool: on two cores, tests blocking its threads would starve the
    /// server they talk to.
    static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Sends `request` and reads until the server closes the connection (at most `timeout` seconds).
    static func exchange(port: Int, _ request: [UInt8], timeout: TimeInterval = 60) async throws -> (response: String, closed: Bool) {
        try await blocking {
            let socket = try RawSocket(port: port, timeout: timeout)
            defer { socket.close() }
            try socket.send(request)
            return socket.readUntilClosed()
        }
    }

    /// Sends `start`, then `byte` every 0.1 s (at most 200 of them): whether the server closed the connection meanwhile.
    static func closedWhileTrickling(port: Int, start: String, byte: Character) async throws -> Bool {
        try await blocking {
            let socket = try RawSocket(port: port, timeout: 0.05)
            defer { socket.close() }
            try socket.send(Array(start.utf8))
            for _ in 0..<200 {
                Thread.sleep(forTimeInterval: 0.1)
                guard socket.sendOne(byte.asciiValue ?? 0x20) else { return true }
                if socket.readUntilClosed().closed { return true }
            }
            return false
        }
    }

    @Test func requestsTheParserRefusesGetTheJSONError() async throws {
        try await withServer { port in
            let manyHeaders = "GET /health HTTP/1.1\r\nHost: x\r\n" + (0..<1000).map { "X-H\($0): v\r\n" }.joined() + "\r\n"
            let longHeader = "GET /health HTTP/1.1\r\nHost: x\r\nX-Long: " + String(repeating: "a", count: 1 << 20) + "\r\n\r\n"
            let longURL = "GET /health?" + String(repeating: "a", count: 1 << 20) + " HTTP/1.1\r\nHost: x\r\n\r\n"
            let cases: [(String, [UInt8], String, String)] = [
                ("1,000 headers", Array(manyHeaders.utf8), "431", "headers_too_large"),
                ("a 1 MB header", Array(longHeader.utf8), "431", "headers_too_large"),
                ("a 1 MB URL", Array(longURL.utf8), "431", "headers_too_large"),
                (
                    "invalid UTF-8 in the path", Array("GET /v1/verses/".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8), "400",
                    "bad_url"
                ),
            ]
            for (name, request, status, code) in cases {
                let (response, closed) = try await Self.exchange(port: port, request)
                #expect(response.hasPrefix("HTTP/1.1 \(status)"), "\(name): \(response.prefix(80))")
                #expect(response.contains("application/json"), "\(name)")
                #expect(response.contains(#""code":"\#(code)""#), "\(name): \(response.suffix(200))")
                #expect(closed, "\(name): the connection is closed after the error")
            }
            // A well-formed request on the same server is still answered.
            let (ok, _) = try await Self.exchange(port: port, Array("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(ok.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func aConnectionThatSendsNoCompleteRequestIsClosed() async throws {
        try await withServer(idleTimeout: 0.3) { port in
            // Silent, and a head that never ends (a byte at a time, as a slow client sends it): both are closed by
            // the idle timeout; reading waits for the close, up to 60 s, so a server that keeps them open fails.
            let (silent, partial) = try await Self.blocking {
                let silent = try RawSocket(port: port, timeout: 60)
                defer { silent.close() }
                let partial = try RawSocket(port: port, timeout: 60)
                defer { partial.close() }
                try partial.send(Array("GET /health HTTP/1.1\r\nHo".utf8))
                return (silent.readUntilClosed().closed, partial.readUntilClosed().closed)
            }
            #expect(silent)
            #expect(partial)
            // A client that completes its request in time is answered.
            let (ok, _) = try await Self.exchange(port: port, Array("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(ok.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func aHeadTrickledAByteAtATimeIsCutOffAtTheDeadline() async throws {
        try await withServer(idleTimeout: 0.5) { port in
            // Each byte of a head that never ends comes well within the idle timeout, which each byte restarts; the
            // head is not complete 0.5 s after the connection opened, so it is closed.
            let closed = try await Self.closedWhileTrickling(port: port, start: "GET /health HTTP/1.1\r\nX-Long: ", byte: "a")
            #expect(closed, "the connection stayed open for a head trickled over 20 s")
        }
    }

    @Test func connectionsOverTheLimitAreAnswered503AndClosed() async throws {
        let limit = ConnectionLimit(maximum: 5)
        try await withServer(connections: limit) { port in
            let (refused, afterwards) = try await Self.blocking {
                // Five connections, each with a byte of a request: the limit.
                let held = try (0..<5).map { _ in try RawSocket(port: port, timeout: 60) }
                for socket in held { try socket.send(Array("G".utf8)) }
                // Connected is not yet accepted: wait (at most 10 s) until the server counts all five.
                let deadline = ContinuousClock.now + .seconds(10)
                while limit.current < 5 && ContinuousClock.now < deadline { usleep(1_000) }
                // A sixth is answered 503 busy and closed, whatever it sends.
                let sixth = try RawSocket(port: port, timeout: 60)
                try sixth.send(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                let refused = sixth.readUntilClosed()
                sixth.close()
                for socket in held { socket.close() }
                return (refused, limit.current)
            }
            #expect(refused.response.hasPrefix("HTTP/1.1 503"), "\(refused.response.prefix(80))")
            #expect(refused.response.contains(#""code":"busy""#))
            #expect(refused.closed)
            #expect(afterwards <= 6)
            // Once the flood ends, the server answers.
            var ok = ""
            for _ in 0..<100 where !ok.hasPrefix("HTTP/1.1 200") {
                ok = try await Self.exchange(port: port, Array("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)).response
            }
            #expect(ok.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func aBodyTrickledAByteAtATimeIsCutOffAtTheDeadline() async throws {
        try await withServer(idleTimeout: 0.5) { port in
            // Each byte comes well within the idle timeout, which a body's chunks restart; the request as a whole does
            // not arrive within it after its head, so the connection is closed.
            let closed = try await Self.closedWhileTrickling(
                port: port, start: "POST /v1/guests HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n", byte: " ")
            #expect(closed, "the connection stayed open for a body trickled over 20 s")
        }
    }

    @Test func malformedChunksAndUnsupportedCodingsGetA4xxNeverA500() async throws {
        try await withServer { port in
            let head = "POST /v1/guests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            let cases: [(String, String, String, String)] = [
                ("a chunk size that is not hex", "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "400", "bad_request"),
                ("a negative chunk size", "Transfer-Encoding: chunked\r\n\r\n-1\r\n{}\r\n0\r\n\r\n", "400", "bad_request"),
                ("a chunk size of 20 hex digits", "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n{}\r\n0\r\n\r\n", "400", "bad_request"),
                ("gzip before chunked", "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "501", "unsupported_transfer_coding"),
                ("an unknown coding", "Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "", ""),
            ]
            for (name, rest, status, code) in cases {
                let (response, closed) = try await Self.exchange(port: port, Array((head + rest).utf8))
                #expect(!response.hasPrefix("HTTP/1.1 5") || response.hasPrefix("HTTP/1.1 501"), "\(name): \(response.prefix(80))")
                #expect(response.hasPrefix("HTTP/1.1 4") || response.hasPrefix("HTTP/1.1 501"), "\(name): \(response.prefix(80))")
                if !status.isEmpty {
                    #expect(response.hasPrefix("HTTP/1.1 \(status)"), "\(name): \(response.prefix(80))")
                    #expect(response.contains(#""code":"\#(code)""#), "\(name): \(response.suffix(200))")
                }
                #expect(closed, "\(name): the connection is closed after the error")
            }
            let (ok, _) = try await Self.exchange(port: port, Array("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(ok.hasPrefix("HTTP/1.1 200"))
        }
    }

    /// Behind a proxy every connection comes from the proxy's address: with it trusted, each client is counted by its
    /// own, so that a flood from one cannot lock out the others.
    @Test func behindATrustedProxyEachClientIsThrottledByItsOwnAddress() async throws {
        try await withServer(trustedProxies: try TrustedProxies(parsing: "127.0.0.1, ::1")) { port in
            let call: @Sendable (String, String, String) async throws -> String = { path, json, client in
                let request =
                    "POST \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(json.utf8.count)\r\nX-Forwarded-For: \(client)\r\n\r\n\(json)"
                return String(try await Self.exchange(port: port, Array(request.utf8)).response.prefix(12))
            }
            let user = #"{"email": "amina@example.org", "password": "a long passphrase"}"#
            let wrong = #"{"email": "amina@example.org", "password": "a guessed password"}"#
            var answers: [String] = []
            answers.append(try await call("/v1/accounts", user, "198.51.100.2"))
            // Random emails from one address: that address is refused after five attempts.
            for n in 0..<5 {
                answers.append(try await call("/v1/sessions", #"{"email": "user\#(n)@example.org", "password": "a guess"}"#, "203.0.113.7"))
            }
            answers.append(try await call("/v1/sessions", wrong, "203.0.113.7"))
            // The user, from another address (through a chain of trusted proxies), signs in.
            answers.append(try await call("/v1/sessions", user, "198.51.100.2, 127.0.0.1"))
            // Guesses at her email from five more addresses: each fails, and none locks her out.
            for n in 0..<5 { answers.append(try await call("/v1/sessions", wrong, "192.0.2.\(n + 1)")) }
            answers.append(try await call("/v1/sessions", user, "198.51.100.2"))
            let statuses = answers.map { $0.dropFirst(9) }
            #expect(statuses == ["201"] + Array(repeating: "401", count: 5) + ["429", "200"] + Array(repeating: "401", count: 5) + ["200"])
        }
    }

    /// New guests are limited per client: an IPv6 client by its /64, whichever of its addresses it sends from.
    @Test func guestsFromOneIPv6NetworkShareTheirLimit() async throws {
        try await withServer(trustedProxies: try TrustedProxies(parsing: "127.0.0.1, ::1")) { port in
            var statuses: [String] = []
            for client in (1...11).map({ "2001:db8:1:2::\(String($0, radix: 16))" }) + ["2001:db8:1:3::1"] {
                let request = "POST /v1/guests HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\nX-Forwarded-For: \(client)\r\n\r\n"
                statuses.append(String(try await Self.exchange(port: port, Array(request.utf8)).response.prefix(12).dropFirst(9)))
            }
            #expect(statuses == Array(repeating: "201", count: 10) + ["429", "201"])
        }
    }

    @Test func aBodyOverTheLimitSentInChunksIsRefused() async throws {
        try await withServer { port in
            var request = "POST /v1/guests HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
            for _ in 0..<40 { request += "400\r\n" + String(repeating: " ", count: 1024) + "\r\n" }
            request += "0\r\n\r\n"
            let bytes = Array(request.utf8)
            let response = try await Self.blocking {
                let socket = try RawSocket(port: port, timeout: 60)
                defer { socket.close() }
                try socket.send(bytes)
                return socket.readUntilClosed(stopAfterHead: true).response
            }
            #expect(response.hasPrefix("HTTP/1.1 413"), "\(response.prefix(80))")
        }
    }
}

/// The bound port, handed from `onServerRunning` to the test.
final class PortBox: Sendable {
    private let port = Mutex<Int?>(nil)
    func set(_ value: Int) { port.withLock { $0 = value } }
    func wait() async throws -> Int {
        // Generous: other suites' blocking work can hold the cooperative pool for a while on two cores.
        let deadline = Date().addingTimeInterval(300)
        while Date() < deadline {
            if let port = port.withLock({ $0 }) { return port }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        throw CancellationError()
    }
}

/// A blocking TCP client on 127.0.0.1 with a receive timeout, to send bytes no HTTP client would.
struct RawSocket {
    let descriptor: Int32

    init(port: Int, timeout: TimeInterval) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The server may close while we still send (it refused the head early): what it answered is read next.
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Sends one byte; false when the peer has closed the connection.
    func sendOne(_ byte: UInt8) -> Bool {
        var value = byte
        return Glibc.send(descriptor, &value, 1, Int32(MSG_NOSIGNAL)) == 1
    }

    /// Reads until the peer closes (closed: true) or the receive timeout passes (closed: false).
    func readUntilClosed(stopAfterHead: Bool = false) -> (response: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[0..<count]
                if stopAfterHead, String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                    return (String(decoding: received, as: UTF8.self), false)
                }
                continue
            }
            // 0: the peer closed; -1 with ECONNRESET: closed too (it discarded what we sent); else the timeout.
            let closed = count == 0 || errno == ECONNRESET
            return (String(decoding: received, as: UTF8.self), closed)
        }
    }

    func close() { Glibc.close(descriptor) }
}
