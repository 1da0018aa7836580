import Dispatch

/// Runs the tasks that prefer it on a thread of their own rather than on the shared pool. On two cores that pool has
/// two threads, and the suites run at once: one suite's synchronous work (a GRDB write, a password hash) can hold
/// both for many seconds. A server a test talks to over a socket runs here (`withTaskExecutorPreference`), so that its
/// answers, and the deadlines it keeps, never wait for other suites' work.
public final class OwnThreadExecutor: TaskExecutor {
    /// The thread the tests' servers (the API on a real port, the push stand-ins) run on.
    public static let servers = OwnThreadExecutor(label: "test-servers")

    private let queue: DispatchQueue

    public init(label: String) { queue = DispatchQueue(label: label) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
