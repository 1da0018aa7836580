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
/// `interval`) and gives up on one whose probes or data go unanswered for `userTimeout`; the connection is then closed,
/// the statement on it fails as unavailable (a request answers 503, a pass is tried again) and the pool makes another.
/// libpq leaves the first three to the system (two hours before the first probe, on Linux); here they are a minute in
/// all, as a service that answers requests needs.
///
/// The server's end of the connection gets the same (its `tcp_keepalives_idle`, `tcp_keepalives_interval`,
/// `tcp_keepalives_count` and `tcp_user_timeout`, which a session may set), and `client_connection_check_interval`, so
/// that a process gone silently (its machine powered off mid-batch) has its transaction rolled back and its locks
/// released within about a minute, not the two hours of the server's defaults: the devices a batch share-locked would
/// otherwise keep every change to them waiting that long. (Behind PgBouncer these reach the socket between PgBouncer
/// and the server: the client's end is PgBouncer's own `tcp_keepalive` settings to give.)
public struct TCPKeepAlive: Sendable, Equatable {
    /// Probes are sent (`keepalives`, any number but 0; the default).
    public var isOn: Bool
    /// Seconds a connection is idle before the first probe; 0 leaves it to the system (7200 on Linux).
    public var idle: Int
    /// Seconds between probes; 0 leaves it to the system (75).
    public var interval: Int
    /// Probes unanswered before the connection is given up; 0 leaves it to the system (9). Linux counts them only
    /// without a `userTimeout`: with one, that time decides, which is why its default is the probes' time.
    public var count: Int
    /// Milliseconds sent data or probes may go unanswered before the connection is given up; 0 leaves it to the
    /// system (about fifteen minutes of retransmissions on Linux). Unless given: with probes, the time they take
    /// (`idle` + `interval` × `count`, so that `count` means what it says), else 0.
    public var userTimeout: Int

    /// A silent connection is given up within about a minute: probes from 30 s idle, every 10 s, 3 of them, 60 s in
    /// all.
    public static let standard = TCPKeepAlive(isOn: true, idle: 30, interval: 10, count: 3, userTimeout: 60_000)

    public init(isOn: Bool, idle: Int, interval: Int, count: Int, userTimeout: Int) {
        (self.isOn, self.idle, self.interval, self.count, self.userTimeout) = (isOn, idle, interval, count, userTimeout)
    }

    /// The address parameters that set it.
    static let parameters = ["keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout"]

    /// Linux's own values for what is left to the system: idle, interval and count.
    static let system = (idle: 7_200, interval: 75, count: 9)

    /// The `userTimeout` an address that does not give one gets: the probes' time, or 0 without probes.
    static func defaultUserTimeout(isOn: Bool, idle: Int, interval: Int, count: Int) -> Int {
        guard isOn else { return 0 }
        let seconds = (idle > 0 ? idle : system.idle) + (interval > 0 ? interval : system.interval) * (count > 0 ? count : system.count)
        return seconds * 1000
    }

    /// A parameter's value it cannot take, in a few words naming it.
    struct Refusal: Error {
        let reason: String
    }

    /// From an address's parameters (libpq's names), `standard` where one is not given. Each range is what Linux
    /// takes for its option (the user timeout: any number of milliseconds an `int` holds).
    init(parameters: [String: String]) throws(Refusal) {
        func number(_ name: String, _ range: ClosedRange<Int>, _ unit: String) throws(Refusal) -> Int? {
            guard let text = parameters[name] else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw Refusal(reason: "\(name)='\(text)' is not a whole number \(unit)from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let standard = Self.standard
        if let text = parameters["keepalives"] {
            guard let number = Int(text) else { throw Refusal(reason: "keepalives='\(text)' is not 1 (on) or 0 (off)") }
            isOn = number != 0
        } else {
            isOn = true
        }
        idle = try number("keepalives_idle", 0...32_767, "of seconds ") ?? standard.idle
        interval = try number("keepalives_interval", 0...32_767, "of seconds ") ?? standard.interval
        count = try number("keepalives_count", 0...127, "") ?? standard.count
        userTimeout =
            try number("tcp_user_timeout", 0...Int(Int32.max), "of milliseconds ")
            ?? Self.defaultUserTimeout(isOn: isOn, idle: idle, interval: interval, count: count)
    }

    /// The parameters that would read back as this, leaving out what would be read by default: for the address as it
    /// is shown.
    var parametersShown: [String] {
        var shown: [String] = []
        if !isOn { shown.append("keepalives=0") }
        if idle != Self.standard.idle { shown.append("keepalives_idle=\(idle)") }
        if interval != Self.standard.interval { shown.append("keepalives_interval=\(interval)") }
        if count != Self.standard.count { shown.append("keepalives_count=\(count)") }
        if userTimeout != Self.defaultUserTimeout(isOn: isOn, idle: idle, interval: interval, count: count) {
            shown.append("tcp_user_timeout=\(userTimeout)")
        }
        return shown
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
                ("client_connection_check_interval", (interval > 0 ? interval : Self.standard.interval) * 1000),
            ]
        }
        if userTimeout > 0 { settings.append(("tcp_user_timeout", userTimeout)) }
        guard !settings.isEmpty else { return nil }
        // Names and whole numbers of its own: nothing here comes from outside as text.
        return PostgresQuery(unsafeSQL: "SELECT " + settings.map { "set_config('\($0.0)', '\($0.1)', false)" }.joined(separator: ", "))
    }

    /// The socket options that carry it, with their values (those left to the system not set).
    var socketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] {
        func tcp(_ name: CInt) -> ChannelOptions.Types.SocketOption {
            .init(level: NIOBSDSocket.OptionLevel(rawValue: CInt(IPPROTO_TCP)), name: NIOBSDSocket.Option(rawValue: name))
        }
        var options: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = []
        if isOn {
            options.append((ChannelOptions.Types.SocketOption(level: .socket, name: .so_keepalive), 1))
            for (name, value) in [(TCP_KEEPIDLE, idle), (TCP_KEEPINTVL, interval), (TCP_KEEPCNT, count)] where value > 0 {
                options.append((tcp(name), value))
            }
        }
        if userTimeout > 0 { options.append((tcp(CInt(TCP_USER_TIMEOUT)), userTimeout)) }
        return options
    }
}

/// Sets an address's `TCPKeepAlive` on connections to its server: each pooled connection once, when it is first used
/// (`prepare`), or a connection of its own as it is made (`apply`).
///
/// postgres-nio (1.33) makes its sockets itself and takes no socket option, and a connection's channel is internal
/// to it: the channel is found by reflection, under the name it has in that version. Should a later version rename
/// it, no option is set and one warning says so; `TCPKeepAliveTests` reads the options back from the system's
/// sockets, so the suite fails first.
final class KeepAliveSetter: Sendable {
    private let socketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)]
    private let serverSettings: PostgresQuery?
    /// The pooled connections already set, by the pool's number for each (never given twice; each forgotten when
    /// its connection closes), and whether the warning was given.
    private let state = Mutex<(set: Set<PostgresConnection.ID>, warned: Bool)>(([], false))

    init(_ keepAlive: TCPKeepAlive?) {
        socketOptions = keepAlive?.socketOptions ?? []
        serverSettings = keepAlive?.serverSettings
    }

    /// Sets the options on pooled `connection` unless they are set already (or were tried: a connection that failed
    /// them is not asked again at each use).
    func prepare(_ connection: PostgresConnection, logger: Logger) async {
        guard !socketOptions.isEmpty || serverSettings != nil else { return }
        let key = connection.id
        guard state.withLock({ $0.set.insert(key).inserted }) else { return }
        connection.closeFuture.whenComplete { _ in self.state.withLock { _ = $0.set.remove(key) } }
        await apply(to: connection, logger: logger)
    }

    /// Sets the options on `connection`'s socket, then on the server's end of it; what could not be set is said once.
    func apply(to connection: PostgresConnection, logger: Logger) async {
        func failed(_ problem: String) {
            let first = state.withLock { state in
                defer { state.warned = true }
                return !state.warned
            }
            guard first else { return }
            logger.warning(
                "TCP keep-alive could not be set on a connection to the database: a server, a network or a process gone without a word may go unnoticed for hours",
                metadata: ["reason": "\(problem)"])
        }
        if !socketOptions.isEmpty {
            if let channel = Mirror(reflecting: connection).descendant("channel") as? any Channel {
                do {
                    for (option, value) in socketOptions { try await channel.setOption(option, value: value).get() }
                } catch {
                    // A connection that closed meanwhile has nothing to set.
                    if !connection.isClosed { failed("\(error)") }
                }
            } else {
                failed("this version of postgres-nio does not show its connection's channel")
            }
        }
        guard let serverSettings else { return }
        do { try await PostgresTransaction(connection: connection, logger: logger).rows(serverSettings) } catch {
            // A connection lost meanwhile fails the statement that follows, as it should; a server that refuses the
            // settings (a pooler's own) is said once, and the work goes on.
            if !connection.isClosed, !(error is PostgresConnectionLost) { failed("the server's end: \(PostgresStore.reason(error))") }
        }
    }
}
