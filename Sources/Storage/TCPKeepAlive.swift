import Logging
import NIOCore
import PostgresNIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a connection to PostgreSQL notices that the server, or the network to it, is gone without a word (a machine
/// powered off, a network cut, a NAT or firewall that forgot the connection): libpq's `keepalives`, `keepalives_idle`,
/// `keepalives_interval`, `keepalives_count` and `tcp_user_timeout`, with the same names and units.
///
/// Without them a statement waiting on such a connection waits for ever: nothing closes it, so `ConnectionWatch` has
/// nothing to see. With them the system probes an idle connection (`idle` seconds after its last packet, then every
/// `interval`, `count` times) and gives up on one whose data goes unacknowledged for `userTimeout`; the connection is
/// then closed, the statement on it fails as unavailable (a request answers 503, a pass is tried again) and the pool
/// makes another. libpq leaves the first three to the system (two hours before the first probe, on Linux); here they
/// are a minute in all, as a service that answers requests needs.
///
/// The server's end of the connection gets the same (its `tcp_keepalives_idle`, `tcp_keepalives_interval`,
/// `tcp_keepalives_count` and `tcp_user_timeout`, which a session may set), and `client_connection_check_interval`, so
/// that a process gone silently (its machine powered off mid-batch) has its transaction rolled back and its locks
/// released within about a minute, not the two hours of the server's defaults: the devices a batch share-locked would
/// otherwise keep every change to them waiting that long.
public struct TCPKeepAlive: Sendable, Equatable {
    /// Probes are sent (`keepalives=1`, the default).
    public var isOn: Bool
    /// Seconds a connection is idle before the first probe.
    public var idle: Int
    /// Seconds between probes.
    public var interval: Int
    /// Probes unanswered before the connection is given up.
    public var count: Int
    /// Milliseconds sent data may stay unacknowledged (or probes unanswered) before the connection is given up; 0
    /// leaves it to the system (about fifteen minutes of retransmissions on Linux).
    public var userTimeout: Int

    /// A silent connection is given up within about a minute: probes from 30 s idle, every 10 s, 3 of them; data
    /// unacknowledged for 60 s.
    public static let standard = TCPKeepAlive(isOn: true, idle: 30, interval: 10, count: 3, userTimeout: 60_000)

    public init(isOn: Bool, idle: Int, interval: Int, count: Int, userTimeout: Int) {
        (self.isOn, self.idle, self.interval, self.count, self.userTimeout) = (isOn, idle, interval, count, userTimeout)
    }

    /// The address parameters that set it.
    static let parameters = ["keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout"]

    /// A parameter's value it cannot take, in a few words naming it.
    struct Refusal: Error {
        let reason: String
    }

    /// From an address's parameters (libpq's names), `standard` where one is not given. The ranges are Linux's own
    /// limits for each option.
    init(parameters: [String: String]) throws(Refusal) {
        func number(_ name: String, _ range: ClosedRange<Int>, _ unit: String, default value: Int) throws(Refusal) -> Int {
            guard let text = parameters[name] else { return value }
            guard let number = Int(text), range.contains(number) else {
                throw Refusal(reason: "\(name)='\(text)' is not a whole number \(unit)from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let standard = Self.standard
        switch parameters["keepalives"] {
        case nil, "1": isOn = true
        case "0": isOn = false
        case let other?: throw Refusal(reason: "keepalives='\(other)' is not 1 (on) or 0 (off)")
        }
        idle = try number("keepalives_idle", 1...32_767, "of seconds ", default: standard.idle)
        interval = try number("keepalives_interval", 1...32_767, "of seconds ", default: standard.interval)
        count = try number("keepalives_count", 1...127, "", default: standard.count)
        userTimeout = try number("tcp_user_timeout", 0...3_600_000, "of milliseconds ", default: standard.userTimeout)
    }

    /// Its parameters whose values differ from `other`'s, as an address writes them.
    func differences(from other: TCPKeepAlive) -> [String] {
        let values = [isOn ? 1 : 0, idle, interval, count, userTimeout]
        let others = [other.isOn ? 1 : 0, other.idle, other.interval, other.count, other.userTimeout]
        return zip(Self.parameters, zip(values, others)).filter { $0.1.0 != $0.1.1 }.map { "\($0.0)=\($0.1.0)" }
    }

    /// The settings that give the server's end of a connection the same (nil when there are none): the session's own,
    /// set by one statement when the connection is first used (a start-up parameter would be refused by PgBouncer).
    /// `client_connection_check_interval`, every `interval`, has a backend that is running a statement look whether its
    /// client is still there, as it otherwise learns only when it next reads or writes.
    var serverSettings: PostgresQuery? {
        var settings: [(String, Int)] = []
        if isOn {
            settings += [
                ("tcp_keepalives_idle", idle), ("tcp_keepalives_interval", interval), ("tcp_keepalives_count", count),
                ("client_connection_check_interval", interval * 1000),
            ]
        }
        if userTimeout > 0 { settings.append(("tcp_user_timeout", userTimeout)) }
        guard !settings.isEmpty else { return nil }
        // Names and whole numbers of its own: nothing here comes from outside as text.
        return PostgresQuery(unsafeSQL: "SELECT " + settings.map { "set_config('\($0.0)', '\($0.1)', false)" }.joined(separator: ", "))
    }

    /// The socket options that carry it, with their values.
    var socketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] {
        func tcp(_ name: CInt) -> ChannelOptions.Types.SocketOption {
            .init(level: NIOBSDSocket.OptionLevel(rawValue: CInt(IPPROTO_TCP)), name: NIOBSDSocket.Option(rawValue: name))
        }
        var options: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = []
        if isOn {
            options += [
                (ChannelOptions.Types.SocketOption(level: .socket, name: .so_keepalive), 1), (tcp(TCP_KEEPIDLE), idle),
                (tcp(TCP_KEEPINTVL), interval), (tcp(TCP_KEEPCNT), count),
            ]
        }
        if userTimeout > 0 { options.append((tcp(CInt(TCP_USER_TIMEOUT)), userTimeout)) }
        return options
    }
}

/// Sets an address's `TCPKeepAlive` on each connection to its server, once, when the connection is first used.
///
/// postgres-nio (1.33) makes its sockets itself and takes no socket option, and a connection's channel is internal
/// to it: the channel is found by reflection, under the name it has in that version. Should a later version rename
/// it, no option is set and one warning says so; `TCPKeepAliveTests` reads the options back from the system's
/// sockets, so the suite fails first.
final class KeepAliveSetter: Sendable {
    let keepAlive: TCPKeepAlive?
    /// The connections already set (each forgotten when it closes), and whether the warning was given.
    private let state = Mutex<(set: Set<ObjectIdentifier>, warned: Bool)>(([], false))

    init(_ keepAlive: TCPKeepAlive?) { self.keepAlive = keepAlive }

    /// Sets the options on `connection` unless they are set already.
    func prepare(_ connection: PostgresConnection, logger: Logger) async {
        guard let keepAlive, !keepAlive.socketOptions.isEmpty else { return }
        let key = ObjectIdentifier(connection)
        let first = state.withLock { $0.set.insert(key).inserted }
        guard first else { return }
        connection.closeFuture.whenComplete { _ in self.state.withLock { _ = $0.set.remove(key) } }
        await Self.apply(keepAlive, to: connection, logger: logger) { problem in
            let warn = state.withLock { state in
                defer { state.warned = true }
                return !state.warned
            }
            if warn {
                logger.warning(
                    "TCP keep-alive could not be set on a connection to the database: a server, a network or a process gone without a word may go unnoticed for hours",
                    metadata: ["reason": "\(problem)"])
            }
        }
    }

    /// Sets `keepAlive`'s options on `connection`'s socket, then the server's end of it; `failed` with why, for what
    /// could not be set.
    static func apply(_ keepAlive: TCPKeepAlive, to connection: PostgresConnection, logger: Logger, failed: (String) -> Void) async {
        if let channel = Mirror(reflecting: connection).descendant("channel") as? any Channel {
            do {
                for (option, value) in keepAlive.socketOptions { try await channel.setOption(option, value: value).get() }
            } catch {
                // A connection that closed meanwhile has nothing to set.
                if !connection.isClosed { failed("\(error)") }
            }
        } else {
            failed("this version of postgres-nio does not show its connection's channel")
        }
        guard let settings = keepAlive.serverSettings else { return }
        do { try await PostgresTransaction(connection: connection, logger: logger).rows(settings) } catch {
            // A connection lost meanwhile fails the statement that follows, as it should; a server that refuses the
            // settings (a pooler's own) is said once, and the work goes on.
            if !connection.isClosed, !(error is PostgresConnectionLost) { failed("the server's end: \(PostgresStore.reason(error))") }
        }
    }
}
