import Accounts
import DailyVerseTestSupport
import Foundation
import HummingbirdTesting
import Testing

@testable import HTTPAPI

/// The throttles, in memory (SQLite's one process) and in PostgreSQL (every process's): the same expectations hold for
/// both.
@Suite struct ThrottleTests {
    /// A throttle of `limit` in `window`, kept where `store` keeps them.
    func throttle(limit: Int, window: TimeInterval, on store: StoreKind) throws -> Throttle {
        let memory = Throttle(limit: limit, window: window)
        guard store == .postgresql else { return memory }
        return Throttle(memory, sharedIn: PostgresThrottleCounter(store: try #require(StoreKind.postgres)), as: "test")
    }

    @Test(arguments: StoreKind.available) func admitCountsOnlyWhatItLetsThroughEvenUnderConcurrency(_ store: StoreKind) async throws {
        try await store.run {
            let throttle = try throttle(limit: 5, window: 3600, on: store)
            let now = Date(timeIntervalSince1970: 1_740_000_000)
            // Fifty requests at once from one address: exactly the limit gets in.
            let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<50 { group.addTask { try await throttle.admit("client", now: now) == nil } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(admitted == 5)
            // The refused ones counted nothing: the wait runs from the first admitted attempt.
            #expect(try await throttle.admit("client", now: now.addingTimeInterval(600)) == 3000)
            #expect(try await throttle.admit("client", now: now.addingTimeInterval(3600)) == nil)
            #expect(try await throttle.admit("other", now: now) == nil)
        }
    }

    /// In memory the keys are bounded: when every key is busy, a flood of new keys (one attempt each, from many
    /// addresses) pushes out the keys with the fewest attempts, never one that is at its limit, which would come back
    /// with a fresh count (an email's failed guesses forgotten). The oldest was pushed out first.
    @Test func aFloodOfNewKeysNeverFreesAKeyAtItsLimit() async throws {
        let throttle = Throttle(limit: 3, window: 3600, maximumKeys: 10)
        let start = Date(timeIntervalSince1970: 1_740_000_000)
        for n in 0..<3 { #expect(try await throttle.admit("email victim", now: start.addingTimeInterval(Double(n))) == nil) }
        #expect(try await throttle.admit("email victim", now: start.addingTimeInterval(10)) != nil)
        for n in 0..<50 { #expect(try await throttle.admit("email flood\(n)", now: start.addingTimeInterval(20 + Double(n))) == nil) }
        #expect(try await throttle.admit("email victim", now: start.addingTimeInterval(100)) != nil)
    }

    @Test(arguments: StoreKind.available) func aSuccessfulSignInGivesTheClientItsAttemptBack(_ store: StoreKind) async throws {
        try await store.run {
            let throttle = try throttle(limit: 2, window: 60, on: store)
            let now = fixedNow
            #expect(try await throttle.admit(["email a", "client"], now: now) == nil)
            try await throttle.release("client", reservedAt: now)
            #expect(try await throttle.admit(["email b", "client"], now: now) == nil)
            #expect(try await throttle.admit(["email c", "client"], now: now) == nil)
            // Two attempts counted for the client: the third waits, and counts nothing for its email.
            #expect(try await throttle.admit(["email d", "client"], now: now) == 60)
            #expect(try await throttle.admit(["email d"], now: now) == nil)
            #expect(try await throttle.admit(["email d"], now: now) == nil)
            #expect(try await throttle.admit(["email d"], now: now) != nil)
            try await throttle.reset("email d")
            #expect(try await throttle.admit(["email d"], now: now) == nil)
        }
    }

    /// Two processes behind one load balancer (two APIs on one PostgreSQL database): the new-guest limit of one
    /// address is one limit, whichever process a request reaches.
    @Test(.enabled(if: PostgresTesting.isAvailable, Comment(rawValue: PostgresTesting.skipped)))
    func twoProcessesEnforceOneLimit() async throws {
        try await StoreKind.postgresql.run {
            let first = try makeApp(now: fixedNow)
            let second = try makeApp(now: fixedNow)
            try await first.test(.router) { one in
                try await second.test(.router) { two in
                    var statuses: [Int] = []
                    for n in 0..<12 {
                        let status =
                            n.isMultiple(of: 2)
                            ? try await JSONAPI().post(one, "/v1/guests", [:]).0 : try await JSONAPI().post(two, "/v1/guests", [:]).0
                        statuses.append(status)
                    }
                    #expect(statuses.filter { $0 == 201 }.count == 10, "\(statuses)")
                    #expect(statuses.suffix(2) == [429, 429], "\(statuses)")
                }
            }
        }
    }
}
