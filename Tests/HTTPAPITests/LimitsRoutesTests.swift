import Accounts
import DailyVerseTestSupport
import Delivery
import Engagement
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Notifications
import Onboarding
import Storage
import Testing

@testable import HTTPAPI

/// What one user may have and do, and how long what they leave is kept: devices per user, changes per session,
/// sessions that expire, analytics events that go with their user and with time.
@Suite struct LimitsRoutesTests: JSONRequests {
    func fcm(_ n: Int) -> [String: Any] {
        ["platform": "fcm", "token": "fcm-token-\(String(format: "%020d", n))", "timezone": "UTC"]
    }

    @Test(arguments: StoreKind.available) func aUserHasAtMostTwentyDevices(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let guest = token(try await post(client, "/v1/guests", [:]).1)
                for n in 0..<20 { #expect(try await post(client, "/v1/devices", fcm(n), token: guest).0 == 201) }
                let (status, reply) = try await post(client, "/v1/devices", fcm(20), token: guest)
                #expect(status == 409)
                #expect((reply["error"] as? [String: Any])?["code"] as? String == "too_many_devices")
                // A token the user registered before is that device, as always.
                #expect(try await post(client, "/v1/devices", fcm(3), token: guest).0 == 200)
                // Another user is not limited by this one.
                let other = token(try await post(client, "/v1/guests", [:]).1)
                #expect(try await post(client, "/v1/devices", fcm(21), token: other).0 == 201)
            }
        }
    }

    /// A guest signing into an account brings its devices, but never past the limit: the sign-in is refused, naming
    /// the numbers, and changes nothing (the guest keeps its device, the account its twenty); with one of the account's
    /// removed, it goes through.
    @Test(arguments: StoreKind.available) func aGuestSigningInNeverTakesAnAccountPastTwentyDevices(_ store: StoreKind) async throws {
        try await store.run {
            try await makeApp(now: fixedNow).test(.router) { client in
                let credentials = ["email": "amina@example.org", "password": "a long passphrase"]
                let account = token(try await post(client, "/v1/accounts", credentials).1)
                for n in 0..<20 { #expect(try await post(client, "/v1/devices", fcm(n), token: account).0 == 201) }
                let guest = token(try await post(client, "/v1/guests", [:]).1)
                #expect(try await post(client, "/v1/devices", fcm(100), token: guest).0 == 201)
                let (status, reply) = try await post(client, "/v1/sessions", credentials, token: guest)
                #expect(status == 409)
                let error = reply["error"] as? [String: Any]
                #expect(error?["code"] as? String == "too_many_devices")
                #expect(
                    (error?["message"] as? String)?.hasPrefix("signing in would give the account 21 devices (20 of its own and 1 of this guest's)")
                        == true, "\(reply)")
                let guestDevices = try await get(client, "/v1/devices", token: guest).1["devices"] as? [[String: Any]]
                #expect(guestDevices?.count == 1)
                let accountDevices = try #require(try await get(client, "/v1/devices", token: account).1["devices"] as? [[String: Any]])
                #expect(accountDevices.count == 20)
                let removed = try #require(accountDevices.first?["id"] as? String)
                #expect(try await send(client, .delete, "/v1/devices/\(removed)", token: account).0 == 204)
                #expect(try await post(client, "/v1/sessions", credentials, token: guest).0 == 200)
                #expect((try await get(client, "/v1/devices", token: account).1["devices"] as? [Any])?.count == 20)
            }
        }
    }

    /// A user has at most `maximumBookmarks`: one more is 409 and stores nothing, as many sent at once on the last
    /// places let through exactly as many as fit, a guest whose bookmarks would take its account past the limit is not
    /// merged (nothing changes), and with room made the sign-in goes through. (There was no limit: one user could keep
    /// every passage key, a third of a million rows, returned whole and merged whole.)
    @Test(arguments: StoreKind.available) func aUserHasAtMostTenThousandBookmarks(_ store: StoreKind) async throws {
        try await store.run {
            let environment = try makeEnvironment(clock: { fixedNow })
            try await Application(router: buildRouter(environment)).test(.router) { client in
                let credentials = ["email": "hafiz@example.org", "password": "a long passphrase"]
                let (_, created) = try await post(client, "/v1/accounts", credentials)
                let account = token(created)
                let accountID = try #require((created["user"] as? [String: Any])?["id"] as? String)
                // All but three places taken, directly in the store (through the API it would take hours of throttle).
                let filler = maximumBookmarks - 3
                if let postgres = StoreKind.postgres {
                    try await postgres.withoutTransaction { transaction in
                        try await transaction.rows(
                            "INSERT INTO bookmark (user_id, verse_key, created_at) SELECT \(accountID), 'filler:' || g, 0 FROM generate_series(1, \(filler)) g"
                        )
                    }
                } else {
                    try await environment.database.write { db in
                        for n in 1...filler {
                            try db.execute(
                                sql: "INSERT INTO bookmark (user_id, verse_key, created_at) VALUES (?, ?, 0)", arguments: [accountID, "filler:\(n)"])
                        }
                    }
                }
                // Five at once for the last three places: three are stored, two refused.
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for verse in 1...5 { group.addTask { try await send(client, .put, "/v1/bookmarks/1:\(verse)", token: account).0 } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.sorted() == [201, 201, 201, 409, 409])
                let (status, reply) = try await send(client, .put, "/v1/bookmarks/2:255", token: account)
                #expect(status == 409)
                #expect((reply["error"] as? [String: Any])?["code"] as? String == "too_many_bookmarks")
                #expect((try await get(client, "/v1/bookmarks", token: account).1["bookmarks"] as? [Any])?.count == maximumBookmarks)
                // One already kept is still answered as kept.
                let kept = try #require(
                    (try await get(client, "/v1/bookmarks", token: account).1["bookmarks"] as? [[String: Any]])?.last?["verse_key"] as? String)
                #expect(try await send(client, .put, "/v1/bookmarks/\(kept)", token: account).0 == 200)
                // A guest with a bookmark of its own cannot sign into the full account; it keeps it.
                let guest = token(try await post(client, "/v1/guests", [:]).1)
                #expect(try await send(client, .put, "/v1/bookmarks/2:255", token: guest).0 == 201)
                let (refused, why) = try await post(client, "/v1/sessions", credentials, token: guest)
                #expect(refused == 409)
                #expect((why["error"] as? [String: Any])?["code"] as? String == "too_many_bookmarks")
                #expect((try await get(client, "/v1/bookmarks", token: guest).1["bookmarks"] as? [Any])?.count == 1)
                // Room made: the guest signs in, and its bookmark is the account's.
                #expect(try await send(client, .delete, "/v1/bookmarks/\(kept)", token: account).0 == 204)
                #expect(try await post(client, "/v1/sessions", credentials, token: guest).0 == 200)
                let all = try #require(try await get(client, "/v1/bookmarks", token: account).1["bookmarks"] as? [[String: Any]])
                #expect(all.count == maximumBookmarks && all.contains { $0["verse_key"] as? String == "2:255" })
            }
        }
    }

    /// A user keeps at most `maximumSessions`: a sign-in past it signs out the least recently used, and keeps the
    /// sessions in use, and always the one it opens (even below sessions a clock ahead stamped later).
    @Test(arguments: StoreKind.available) func aUserKeepsAtMostAHundredSessions(_ store: StoreKind) async throws {
        try await store.run {
            let environment = try makeEnvironment(clock: { fixedNow })
            try await Application(router: buildRouter(environment)).test(.router) { client in
                let credentials = ["email": "many@example.org", "password": "a long passphrase"]
                let (_, created) = try await post(client, "/v1/accounts", credentials)
                let first = token(created)
                let userID = try #require((created["user"] as? [String: Any])?["id"] as? String)
                // 120 other sessions, the n-th last used n seconds into 2025; the last ten stamped a year ahead.
                let old = (0..<120).map { n in (String(format: "old-%03d", n), 1_735_689_600.0 + Double(n) + (n >= 110 ? 4e7 : 0)) }
                if let postgres = StoreKind.postgres {
                    try await postgres.withoutTransaction { transaction in
                        for (hash, at) in old {
                            try await transaction.rows(
                                "INSERT INTO session (token_hash, user_id, created_at, last_used_at) VALUES (\(hash), \(userID), \(at), \(at))")
                        }
                    }
                } else {
                    try await environment.database.write { db in
                        for (hash, at) in old {
                            try db.execute(
                                sql: "INSERT INTO session (token_hash, user_id, created_at, last_used_at) VALUES (?, ?, ?, ?)",
                                arguments: [hash, userID, at, at])
                        }
                    }
                }
                let signedIn = token(try await post(client, "/v1/sessions", credentials).1)
                let kept: [String]
                if let postgres = StoreKind.postgres {
                    kept = try await postgres.withoutTransaction { transaction in
                        try await transaction.rows("SELECT token_hash FROM session WHERE user_id = \(userID)").map { try $0.decode(String.self) }
                    }
                } else {
                    kept = try await environment.database.read { db in
                        try String.fetchAll(db, sql: "SELECT token_hash FROM session WHERE user_id = ?", arguments: [userID])
                    }
                }
                #expect(kept.count == maximumSessions)
                // The new one, and the 99 most recently used of the others: the ten ahead, the first (used now), 88 old.
                #expect(Set(kept.filter { $0.hasPrefix("old-") }) == Set(old.suffix(maximumSessions - 2).map(\.0)))
                for bearer in [first, signedIn] { #expect(try await get(client, "/v1/me", token: bearer).0 == 200) }
            }
        }
    }

    /// A sign-in with a guest's token merges the guest and opens the session in one transaction: when the session
    /// cannot be opened, the guest is as it was (its token signs it in, its device is its own) and the account has
    /// nothing of it. (In two transactions, the guest was merged and gone while the client was told the sign-in
    /// failed, and its retry with the guest's token was refused.)
    /// A seeded database and the user store of the store under test (PostgreSQL's, given the database's themes).
    func seededUserStore() throws -> (AppDatabase, any UserStore) {
        let database = try AppDatabase.inMemory()
        try database.seed(bundledContent)
        let users: any UserStore =
            try StoreKind.postgres.map { PostgresUserStore(store: $0, themes: Set(try database.displayThemes().map(\.id))) }
            ?? SQLiteUserStore(database)
        return (database, users)
    }

    @Test(arguments: StoreKind.available) func aSignInThatFailsLeavesTheGuestAsItWas(_ store: StoreKind) async throws {
        try await store.run {
            let (database, users) = try seededUserStore()
            let flow = try OnboardingFlow.load(from: dataDirectory)
            let (guest, guestToken) = try await users.createGuest(now: fixedNow)
            let (account, _) = try await users.createAccount(
                email: "amina@example.org", passwordHash: "x", displayName: nil, upgrading: nil, now: fixedNow)
            let settings = DeviceSettings(token: try .apns(validating: String(format: "%064x", 5)), timeZone: "UTC")
            _ = try await users.registerDevice(settings, userID: guest.id, now: fixedNow, maximum: 20)
            // Sessions refused from now on.
            if let postgres = StoreKind.postgres {
                _ = try await postgres.rows(
                    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$")
                _ = try await postgres.rows(
                    "CREATE TRIGGER no_sessions BEFORE INSERT ON session FOR EACH ROW EXECUTE FUNCTION refuse()")
            } else {
                try await database.write { db in
                    try db.execute(sql: "CREATE TRIGGER no_sessions BEFORE INSERT ON session BEGIN SELECT RAISE(ABORT, 'refused'); END")
                }
            }
            await #expect(throws: (any Error).self) {
                try await users.signIn(userID: account.id, mergingGuest: guest.id, flow: flow, maximumDevices: 20, now: fixedNow)
            }
            #expect(try await users.authenticate(token: guestToken, now: fixedNow, policy: SessionPolicy())?.id == guest.id)
            #expect(try await users.devices(userID: guest.id, now: fixedNow).count == 1)
            #expect(try await users.devices(userID: account.id, now: fixedNow).isEmpty)
        }
    }

    /// A guest's upgrade to an account and its `guest_upgraded` event are one transaction: an event refused leaves the
    /// guest a guest (so a reply lost after the commit can never leave an upgrade without its event).
    @Test(arguments: StoreKind.available) func aGuestsUpgradeAndItsEventAreOneTransaction(_ store: StoreKind) async throws {
        try await store.run {
            let (database, users) = try seededUserStore()
            let upgraded = { (userID: String) async throws -> Int in
                if let postgres = StoreKind.postgres {
                    return try await postgres.rows(
                        "SELECT count(*)::int8 FROM analytics_event WHERE name = 'guest_upgraded' AND user_id = \(userID)"
                    ).first?.decode(Int.self) ?? -1
                }
                return try await database.read { db in
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM analytics_event WHERE name = 'guest_upgraded' AND user_id = ?", arguments: [userID])
                        ?? -1
                }
            }
            let (first, _) = try await users.createGuest(now: fixedNow)
            let (account, _) = try await users.createAccount(
                email: "first@example.org", passwordHash: "x", displayName: nil, upgrading: first.id, now: fixedNow)
            #expect(account.id == first.id && account.mode == .account)
            #expect(try await upgraded(first.id) == 1)
            let (plain, _) = try await users.createAccount(
                email: "plain@example.org", passwordHash: "x", displayName: nil, upgrading: nil, now: fixedNow)
            #expect(try await upgraded(plain.id) == 0, "a new account is no upgrade")
            // Events refused from now on.
            if let postgres = StoreKind.postgres {
                _ = try await postgres.rows(
                    "CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$")
                _ = try await postgres.rows(
                    "CREATE TRIGGER no_events BEFORE INSERT ON analytics_event FOR EACH ROW EXECUTE FUNCTION refuse_event()")
            } else {
                try await database.write { db in
                    try db.execute(sql: "CREATE TRIGGER no_events BEFORE INSERT ON analytics_event BEGIN SELECT RAISE(ABORT, 'refused'); END")
                }
            }
            let (second, secondToken) = try await users.createGuest(now: fixedNow)
            await #expect(throws: (any Error).self) {
                try await users.createAccount(email: "second@example.org", passwordHash: "x", displayName: nil, upgrading: second.id, now: fixedNow)
            }
            #expect(try await users.authenticate(token: secondToken, now: fixedNow, policy: SessionPolicy())?.mode == .guest)
            #expect(try await users.passwordHash(emails: ["second@example.org"]) == nil)
        }
    }

    @Test(arguments: StoreKind.available) func aSessionsChangesAreLimitedItsReadsAreNot(_ store: StoreKind) async throws {
        try await store.run {
            let clock = SettableClock()
            try await makeApp(clock: { clock.now }).test(.router) { client in
                let guest = token(try await post(client, "/v1/guests", [:]).1)
                let other = token(try await post(client, "/v1/guests", [:]).1)
                for _ in 0..<120 { #expect(try await send(client, .put, "/v1/bookmarks/1:1", token: guest).0 < 300) }
                let refused = try await client.execute(uri: "/v1/bookmarks/2:255", method: .put, headers: bearer(guest)) {
                    ($0.status.code, $0.headers[.retryAfter])
                }
                #expect(refused.0 == 429)
                #expect(refused.1 == "60")
                // Reads go on; so do other sessions' changes; and this session's, a minute later.
                #expect(try await get(client, "/v1/bookmarks", token: guest).0 == 200)
                #expect(try await send(client, .put, "/v1/bookmarks/1:1", token: other).0 < 300)
                clock.advance(by: 61)
                #expect(try await send(client, .put, "/v1/bookmarks/2:255", token: guest).0 < 300)
            }
        }
    }

    @Test(arguments: StoreKind.available) func sessionsExpireIdleAndAccountsAlsoByAge(_ store: StoreKind) async throws {
        try await store.run {
            let clock = SettableClock()
            try await makeApp(clock: { clock.now }).test(.router) { client in
                let account = token(try await post(client, "/v1/accounts", ["email": "amina@example.org", "password": "a long passphrase"]).1)
                let guest = token(try await post(client, "/v1/guests", [:]).1)
                // Used every 80 days, neither is idle for 90; at 365 days the account's token has lived its life.
                for _ in 0..<4 {
                    clock.advance(by: 80 * 86_400)
                    #expect(try await get(client, "/v1/me", token: account).0 == 200)
                    #expect(try await get(client, "/v1/me", token: guest).0 == 200)
                }
                clock.advance(by: 46 * 86_400)  // 366 days
                #expect(try await get(client, "/v1/me", token: account).0 == 401)
                #expect(try await get(client, "/v1/me", token: guest).0 == 200)
                // 91 days unused: the guest's token is idle.
                clock.advance(by: 91 * 86_400)
                #expect(try await get(client, "/v1/me", token: guest).0 == 401)
            }
            let policy = SessionPolicy(idle: 90 * 86_400, lifetime: 365 * 86_400)
            #expect(policy.isExpired(mode: .guest, createdAt: fixedNow, lastUsedAt: fixedNow, now: fixedNow.addingTimeInterval(90 * 86_400 + 1)))
            #expect(
                !policy.isExpired(
                    mode: .guest, createdAt: fixedNow, lastUsedAt: fixedNow.addingTimeInterval(400 * 86_400),
                    now: fixedNow.addingTimeInterval(400 * 86_400)))
        }
    }

    @Test func expiredSessionsArePurged() throws {
        let database = try AppDatabase.inMemory()
        let (_, old) = try database.createGuest(now: fixedNow)
        let (_, recent) = try database.createGuest(now: fixedNow.addingTimeInterval(80 * 86_400))
        #expect(try database.purgeExpiredSessions(now: fixedNow.addingTimeInterval(91 * 86_400), policy: SessionPolicy()) == 1)
        #expect(try database.authenticate(token: old, now: fixedNow.addingTimeInterval(91 * 86_400)) == nil)
        #expect(try database.authenticate(token: recent, now: fixedNow.addingTimeInterval(91 * 86_400)) != nil)
    }

    @Test func eventsGoWithTheirUserAndWithTime() throws {
        let database = try AppDatabase.inMemory()
        let (guest, _) = try database.createGuest(now: fixedNow)
        let (kept, _) = try database.createGuest(now: fixedNow)
        for n in 0..<3 {
            try database.recordEvent(userID: guest.id, name: "onboarding_screen_viewed", screen: "welcome", properties: [:], at: fixedNow)
            try database.recordEvent(
                userID: kept.id, name: "onboarding_screen_viewed", screen: "welcome", properties: [:], at: fixedNow.addingTimeInterval(Double(n)))
        }
        func events(_ user: String) throws -> Int {
            try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM analytics_event WHERE user_id = ?", arguments: [user]) ?? 0 }
        }
        // The kept guest stays active; the other is purged with its events.
        _ = try database.authenticate(
            token: try database.openSession(userID: kept.id, now: fixedNow.addingTimeInterval(40 * 86_400)).token,
            now: fixedNow.addingTimeInterval(40 * 86_400))
        #expect(try database.purgeGuests(inactiveBefore: fixedNow.addingTimeInterval(10 * 86_400)) == 1)
        #expect(try events(guest.id) == 0)
        #expect(try events(kept.id) == 3)
        // Past the retention, events go whoever made them.
        #expect(try database.pruneEvents(before: fixedNow.addingTimeInterval(1.5)) == 2)
        #expect(try events(kept.id) == 1)
    }
}
