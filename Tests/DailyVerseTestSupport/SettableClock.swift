import Foundation
import Synchronization

/// A clock a test moves by hand: the code under test reads `now` through a closure (`{ clock.now }`), from any thread.
public final class SettableClock: Sendable {
    private let value: Mutex<Date>

    public init(_ start: Date = fixedNow) { value = Mutex(start) }

    public var now: Date {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }

    /// Moves the clock on by `seconds`.
    public func advance(by seconds: TimeInterval) { value.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
