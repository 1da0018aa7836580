import DailyVerseTestSupport
import Foundation
import Testing

@testable import Accounts

@Suite struct HashingGateTests {

    @Test func atMostLimitRunAndTheRestWaitOrAreRefused() async throws {
        let gate = HashingGate(limit: 1, waiting: 1)
        let first = Latch()
        let running = Task {
            try await gate.run {
                first.hold()
                return 1
            }
        }
        await first.waitUntilStarted()
        #expect(gate.load.running == 1)
        // The second waits its turn…
        let second = Task { try await gate.run { 2 } }
        while gate.load.waiting == 0 { await Task.yield() }
        // …and a third, with the queue full, is refused at once.
        await #expect(throws: HashingGate.Busy.self) { try await gate.run { 3 } }
        first.letGo()
        #expect(try await running.value == 1)
        #expect(try await second.value == 2)
        #expect(gate.load.running == 0 && gate.load.waiting == 0)
        // Errors from the work come through, and free the place.
        await #expect(throws: AccountError.self) { try await gate.run { throw AccountError.weakPassword("x") } }
        #expect(try await gate.run { 4 } == 4)
    }
}
