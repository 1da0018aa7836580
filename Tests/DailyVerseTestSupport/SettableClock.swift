import Foundation
import NIOConcurrencyHelpers

/// A clock a test moves by hand: the code under test reads `now` through a closure (`{ clock.now }`), from any thread.
public final class SettableClock: Sendable {
    private let value: NIOLockedValueBox<Date>

    public init(_ start: Date = fixedNow) { value = NIOLockedValueBox(start) }

    public var now: Date {
        get { value.withLockedValue { $0 } }
        set { value.withLockedValue { $0 = newValue } }
    }

    /// Moves the clock on by `seconds`.
    public func advance(by seconds: TimeInterval) { value.withLockedValue { $0 = $0.addingTimeInterval(seconds) } }
}
