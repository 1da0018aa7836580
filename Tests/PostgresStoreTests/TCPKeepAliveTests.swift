import AppSchema
import DailyVerseTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import Storage

#if canImport(Glibc)
import Glibc
#endif

/// The address's TCP keep-alive is on the sockets themselves: read back from the system, for the socket whose local
/// port the server names as its client's (`inet_client_port()`), for a pooled connection and for a connection of its
/// own; and on the server's end of each, as the server reads its socket back. (A silent network cannot be made here
/// without privileges: `scripts/silent-network-check.sh` makes one.)
@Suite(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
struct TCPKeepAliveTests {
    /// The options a socket carries, as the system reports them.
    struct SocketOptions: Equatable, CustomStringConvertible {
        var keepAlive, idle, interval, count, userTimeout: CInt
        var description: String {
            "keepalive=\(keepAlive) idle=\(idle) interval=\(interval) count=\(count) user_timeout=\(userTimeout)"
        }
    }

    /// The options of this process's TCP socket from local port `port` to `peer`, found among its open descriptors.
    static func options(ofSocketFrom port: Int, to peer: Int) throws -> SocketOptions? {
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let descriptor = CInt(name) else { continue }
            // A local port may be the same for connections to different places: the peer's port too.
            guard Self.port(descriptor, getsockname) == port, Self.port(descriptor, getpeername) == peer else { continue }
            func option(_ level: CInt, _ name: CInt) -> CInt {
                var value: CInt = -1
                var size = socklen_t(MemoryLayout<CInt>.size)
                return getsockopt(descriptor, level, name, &value, &size) == 0 ? value : -1
            }
            let tcp = CInt(IPPROTO_TCP)
            return SocketOptions(
                keepAlive: option(SOL_SOCKET, SO_KEEPALIVE), idle: option(tcp, TCP_KEEPIDLE), interval: option(tcp, TCP_KEEPINTVL),
                count: option(tcp, TCP_KEEPCNT), userTimeout: option(tcp, CInt(TCP_USER_TIMEOUT)))
        }
        return nil
    }

    /// The port of the socket `descriptor`'s own end (`getsockname`) or its peer's (`getpeername`); nil for another
    /// kind of descriptor.
    static func port(_ descriptor: CInt, _ name: (CInt, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> CInt) -> Int? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(descriptor, $0, &length) } }
        guard named == 0 else { return nil }
        switch CInt(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default: return nil
        }
    }

    /// The options of `transaction`'s connection's socket, and its local port.
    static func options(of transaction: PostgresTransaction) async throws -> SocketOptions? {
        try await socket(of: transaction).options
    }

    /// `transaction`'s connection's local port, as the server sees its client, and its socket's options.
    static func socket(of transaction: PostgresTransaction) async throws -> (port: Int, options: SocketOptions?) {
        let row = try #require(try await transaction.rows("SELECT inet_client_port(), inet_server_port()").first)
        let (client, server) = try row.decode((Int32, Int32).self)
        return (Int(client), try options(ofSocketFrom: Int(client), to: Int(server)))
    }

    /// The server's end of `transaction`'s connection: its keep-alive settings, as the server reads them back (its
    /// `tcp_keepalives_*` from its socket), and how often a running statement looks for its client.
    static func serverSettings(of transaction: PostgresTransaction) async throws -> [String: String] {
        var settings: [String: String] = [:]
        for row in try await transaction.rows(
            """
            SELECT name, setting FROM pg_settings WHERE name IN ('tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count',
                'tcp_user_timeout', 'client_connection_check_interval')
            """)
        {
            let (name, setting) = try row.decode((String, String).self)
            settings[name] = setting
        }
        return settings
    }

    /// `address` on the test server with `parameters` added.
    static func address(_ address: PostgresAddress, _ parameters: String) throws -> PostgresAddress {
        try PostgresAddress(address.description + "&" + parameters, environment: [:])
    }

    @Test func theAddressesKeepAliveIsOnEachPooledConnectionsSocket() async throws {
        try await PostgresTesting.withDatabase { database in
            let address = try Self.address(database, "keepalives_idle=37&keepalives_interval=7&keepalives_count=4&tcp_user_timeout=23000")
            let store = try await PostgresStore.open(
                address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger, maximumConnections: 2)
            let expected = SocketOptions(keepAlive: 1, idle: 37, interval: 7, count: 4, userTimeout: 23_000)
            do {
                // A transaction, and a statement outside one; and two at once, so that the pool's second connection is used too.
                #expect(try await store.transaction { try await Self.options(of: $0) } == expected)
                #expect(try await store.withoutTransaction { try await Self.options(of: $0) } == expected)
                async let one = store.transaction { transaction in
                    try await transaction.rows("SELECT pg_sleep(0.2)")
                    return try await Self.socket(of: transaction)
                }
                async let two = store.transaction { transaction in
                    try await transaction.rows("SELECT pg_sleep(0.2)")
                    return try await Self.socket(of: transaction)
                }
                let (first, second) = try await (one, two)
                #expect(first.port != second.port, "both on one connection")
                #expect(first.options == expected && second.options == expected)
                // The server's end of each connection gives up on a silent client as soon.
                let server = try await store.transaction { try await Self.serverSettings(of: $0) }
                #expect(
                    server == [
                        "tcp_keepalives_idle": "37", "tcp_keepalives_interval": "7", "tcp_keepalives_count": "4", "tcp_user_timeout": "23000",
                        "client_connection_check_interval": "7000",
                    ])
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    /// A connection of its own to a new database, with `parameters` added to the address: its socket's options and
    /// its server end's settings.
    static func ownConnection(_ parameters: String) async throws -> (options: SocketOptions?, server: [String: String]) {
        try await PostgresTesting.withDatabase { database in
            let session = PostgresTransaction(
                connection: try await PostgresStore.connect(
                    try Self.address(database, parameters), password: PostgresTesting.password, logger: PostgresTesting.logger),
                logger: PostgresTesting.logger)
            do {
                let found = (try await Self.options(of: session), try await Self.serverSettings(of: session))
                try await session.connection.close()
                return found
            } catch {
                try? await session.connection.close()
                throw error
            }
        }
    }

    @Test func aConnectionOfItsOwnHasItToo() async throws {
        let (options, server) = try await Self.ownConnection("keepalives_idle=41&keepalives_count=2&tcp_user_timeout=9000")
        #expect(options == SocketOptions(keepAlive: 1, idle: 41, interval: 10, count: 2, userTimeout: 9_000))
        #expect(server["tcp_keepalives_idle"] == "41" && server["tcp_keepalives_count"] == "2" && server["tcp_user_timeout"] == "9000", "\(server)")
    }

    /// `keepalives=0` leaves the socket as the system makes it, as libpq does (no user timeout either, unless given).
    @Test func offLeavesTheSocketAsTheSystemMakesIt() async throws {
        let (options, server) = try await Self.ownConnection("keepalives=0")
        #expect(options?.keepAlive == 0 && options?.userTimeout == 0, "\(options.map { "\($0)" } ?? "no socket")")
        #expect(server["client_connection_check_interval"] == "0" && server["tcp_user_timeout"] == "0", "\(server)")
    }
}
