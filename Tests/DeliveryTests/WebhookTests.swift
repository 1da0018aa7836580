import ContentStore
import DailyVerseTestSupport
import Foundation
import Storage
import Synchronization
import Testing

@testable import Delivery

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A loopback HTTP/1.1 server answering from a script, one response per request, and keeping the request bodies.
final class ScriptedHTTPServer: Sendable {
    typealias Reply = (status: Int, headers: [String: String])
    let port: UInt16
    private let listener: Int32
    /// What is left of the script (its last reply is repeated) and the bodies received so far.
    private let state: Mutex<(script: [Reply], bodies: [Data])>

    init(script: [Reply]) throws {
        state = Mutex((script: script, bodies: []))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw SinkError("cannot listen on loopback")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in self.serve() }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    var requestCount: Int { state.withLock { $0.bodies.count } }
    var bodies: [Data] { state.withLock { $0.bodies } }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 { return }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // Read the head, then as many body bytes as Content-Length says.
        while true {
            let n = recv(connection, &buffer, buffer.count, 0)
            if n <= 0 { return }
            received.append(contentsOf: buffer[0..<n])
            guard let headEnd = received.range(of: Data("\r\n\r\n".utf8)) else { continue }
            let head = String(decoding: received[..<headEnd.lowerBound], as: UTF8.self).lowercased()
            let length =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if received.count - headEnd.upperBound >= length {
                let body = received[headEnd.upperBound..<(headEnd.upperBound + length)]
                let reply = state.withLock { state -> Reply in
                    state.bodies.append(Data(body))
                    return state.script.count > 1 ? state.script.removeFirst() : state.script[0]
                }
                var response = "HTTP/1.1 \(reply.0) Scripted\r\nContent-Length: 0\r\nConnection: close\r\n"
                for (name, value) in reply.1 { response += "\(name): \(value)\r\n" }
                response += "\r\n"
                _ = response.withCString { send(connection, $0, strlen($0), 0) }
                return
            }
        }
    }
}

@Suite struct WebhookTests {
    func pending(_ database: AppDatabase, devices: Int) throws -> [OutboxRecord] {
        for n in 0..<devices {
            _ = try database.addDevice(DeviceSettings(token: try apnsToken(100 + n), timeZone: "UTC"), now: instant("2025-02-01T00:00:00Z"))
        }
        _ = try Emitter(database: database, configuration: configuration).run(now: instant("2025-03-01T08:05:00Z"))
        return try database.outbox(status: .pending)
    }

    @Test func failsThrottlesAndRecovers() async throws {
        let server = try ScriptedHTTPServer(script: [(500, [:]), (429, ["Retry-After": "30"]), (200, [:])])
        let database = try seededDatabase()
        let records = try pending(database, devices: 3)
        var deliverer = Deliverer(database: database, sink: try WebhookSink(url: URL(string: "http://127.0.0.1:\(server.port)/push")!))
        deliverer.random = { 1.0 }
        let start = instant("2025-03-01T08:06:00Z")
        // 500: retried after the backoff (2 s for a first attempt).
        #expect(try await deliverer.run(now: start).retrying == 3)
        #expect(try await deliverer.run(now: start.addingTimeInterval(1)) == DeliverySummary())
        // 429 with Retry-After: 30 s, longer than the 4 s backoff.
        #expect(try await deliverer.run(now: start.addingTimeInterval(2)).retrying == 3)
        #expect(try await deliverer.run(now: start.addingTimeInterval(20)) == DeliverySummary())
        #expect(try await deliverer.run(now: start.addingTimeInterval(33)).delivered == 3)
        #expect(server.requestCount == 3)
        // Each POST carried the whole batch with the spool's keys.
        let body = try #require(try JSONSerialization.jsonObject(with: server.bodies[2]) as? [String: Any])
        let sent = try #require(body["records"] as? [[String: Any]])
        #expect(Set(sent.compactMap { $0["idempotency_key"] as? String }) == Set(records.map(\.idempotencyKey)))
        #expect(sent.allSatisfy { $0["payload"] is [String: Any] && $0["headers"] is [String: Any] })
    }

    @Test func aClientErrorIsPermanent() async throws {
        let server = try ScriptedHTTPServer(script: [(400, [:])])
        let database = try seededDatabase()
        _ = try pending(database, devices: 2)
        let deliverer = Deliverer(database: database, sink: try WebhookSink(url: URL(string: "http://127.0.0.1:\(server.port)/push")!))
        #expect(try await deliverer.run(now: instant("2025-03-01T08:06:00Z")).failed == 2)
        #expect(try database.outbox(status: .failed).allSatisfy { $0.lastError == "webhook: HTTP 400" })
        #expect(server.requestCount == 1)
    }

    @Test func anUnreachableGatewayIsRetried() async throws {
        // A port nothing listens on: bound, never listened on, then closed.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        close(fd)
        let port = UInt16(bigEndian: address.sin_port)
        let database = try seededDatabase()
        _ = try pending(database, devices: 1)
        let deliverer = Deliverer(database: database, sink: try WebhookSink(url: URL(string: "http://127.0.0.1:\(port)/push")!, timeout: 5))
        #expect(try await deliverer.run(now: instant("2025-03-01T08:06:00Z")).retrying == 1)
        #expect(try database.outbox(status: .pending).first?.lastError?.hasPrefix("webhook:") == true)
    }

    @Test func retryAfterTakesSecondsOrAnHTTPDate() {
        let now = instant("2015-10-21T07:27:00Z")
        #expect(WebhookSink.retryAfter("120", now: now) == 120)
        #expect(WebhookSink.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 60)
        #expect(WebhookSink.retryAfter("soon", now: now) == nil)
        #expect(WebhookSink.retryAfter(nil, now: now) == nil)
        // Past every range: a day at most, never a trap.
        #expect(WebhookSink.retryAfter("\(Int.max)", now: now) == 86_400)
        #expect(WebhookSink.retryAfter("99999999999999999999999", now: now) == 86_400)
        #expect(WebhookSink.retryAfter("-5", now: now) == nil)
        #expect(WebhookSink.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == 86_400)
        #expect(throws: SinkError.self) { try WebhookSink(url: URL(string: "ftp://example.org/x")!) }
    }

    @Test func credentialsInTheURLAreNeverShown() async throws {
        let sink = try WebhookSink(url: try #require(URL(string: "http://user:secret@gateway.example:8080/hook?api_key=abc123#frag")))
        #expect(sink.name == "webhook:http://***@gateway.example:8080/hook?***")
        #expect(!sink.name.contains("secret") && !sink.name.contains("abc123"))
        let plain = try WebhookSink(url: try #require(URL(string: "https://gateway.example/hook")))
        #expect(plain.name == "webhook:https://gateway.example/hook")
        let error = #expect(throws: SinkError.self) { try WebhookSink(url: try #require(URL(string: "ftp://u:pw@host/x?k=v"))) }
        #expect(error?.description.contains("pw") == false)
        #expect(error?.description.contains("k=v") == false)
        // A refused connection's error, as kept in last_error, names the redacted URL at most.
        let unreachable = try WebhookSink(url: try #require(URL(string: "http://u:pw@127.0.0.1:9/hook?token=t0p")), timeout: 2)
        let database = try seededDatabase()
        _ = try pending(database, devices: 1)
        #expect(try await Deliverer(database: database, sink: unreachable).run(now: instant("2025-03-01T08:06:00Z")).retrying == 1)
        let kept = try #require(try database.outbox(status: .pending).first?.lastError)
        #expect(kept.hasPrefix("webhook:") && !kept.contains("pw") && !kept.contains("t0p"))
    }
}
