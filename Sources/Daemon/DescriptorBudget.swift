import Diagnostics

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many API connections the process's open-file limit allows, with descriptors kept for everything else: the
/// database and its log, the spool's files, the push services' connections, the lock files. Past the limit a process
/// cannot open a file, and the scheduler's spool write would fail with `Too many open files`.
public enum DescriptorBudget {
    /// Descriptors never given to API connections.
    public static let reserve = 128
    /// The fewest connections worth serving.
    public static let minimumConnections = 16
    /// The default when the limit allows more.
    public static let defaultConnections = 4096

    /// Raises the soft open-file limit to the hard one (systemd's default soft limit is 1,024; the unit sets both) and
    /// returns it.
    public static func raiseSoftLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// The connection limit: `requested` if the open-file limit leaves room for it beside the reserve, else an error
    /// naming both; without a request, the default within that room.
    public static func connections(requested: Int?, openFileLimit: Int) throws(DescriptorBudgetError) -> Int {
        let room = openFileLimit - reserve
        guard room >= minimumConnections else { throw DescriptorBudgetError(requested: requested, openFileLimit: openFileLimit) }
        guard let requested else { return min(defaultConnections, room) }
        guard (1...room).contains(requested) else { throw DescriptorBudgetError(requested: requested, openFileLimit: openFileLimit) }
        return requested
    }
}

/// A connection limit the open-file limit cannot hold.
public struct DescriptorBudgetError: UserFacingError, Equatable {
    public let requested: Int?
    public let openFileLimit: Int
    public var description: String {
        if let requested, let reason = requestedReason { return "invalid max_connections \(requested): \(reason)" }
        return "the open-file limit \(openFileLimit) leaves fewer than \(DescriptorBudget.minimumConnections) descriptors for API connections "
            + "after the \(DescriptorBudget.reserve) kept for the database, the spool and the push services: raise it (LimitNOFILE=65536 in the unit)"
    }

    /// Why the limit asked for cannot be had, when it is that rather than the open-file limit itself that is at fault:
    /// for the command line to say with where `max_connections` came from.
    public var requestedReason: String? {
        let room = openFileLimit - DescriptorBudget.reserve
        guard requested != nil, room >= DescriptorBudget.minimumConnections else { return nil }
        return "expected 1 to \(room) (the open-file limit \(openFileLimit) less \(DescriptorBudget.reserve) kept for the database, the spool and "
            + "the push services); raise LimitNOFILE to allow more"
    }
}
