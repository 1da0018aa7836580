import AppSchema
import ContentStore
import DailyVerseTestSupport
import Foundation
import GRDB
import HijriCalendar
import Notifications
import Storage
import Testing

@testable import Accounts

@Suite struct PasswordHasherTests {
    let cheap = PasswordHasher(.scrypt(logN: 10, r: 8, p: 1))

    @Test func hashesVerifyAndEveryHashIsSalted() throws {
        let first = try cheap.hash("correct horse battery")
        let second = try cheap.hash("correct horse battery")
        #expect(first != second)  // a new salt each time
        #expect(first.hasPrefix("scrypt$ln=10,r=8,p=1$"))
        #expect(PasswordHasher.verify("correct horse battery", against: first))
        #expect(PasswordHasher.verify("correct horse battery", against: second))
        #expect(!PasswordHasher.verify("correct horse batterz", against: first))
        #expect(!PasswordHasher.verify("", against: first))
        #expect(!first.contains("correct"))
    }

    @Test func pbkdf2WorksToo() throws {
        let hasher = PasswordHasher(.pbkdf2SHA256(rounds: 1000))
        let encoded = try hasher.hash("a long passphrase")
        #expect(encoded.hasPrefix("pbkdf2-sha256$i=1000$"))
        #expect(PasswordHasher.verify("a long passphrase", against: encoded))
        #expect(!PasswordHasher.verify("a long passphrasE", against: encoded))
        #expect(hasher.needsRehash(try cheap.hash("a long passphrase")))
        #expect(!hasher.needsRehash(encoded))
    }

    @Test func theProductionCostsRun() throws {
        for algorithm in [PasswordHasher.Algorithm.owaspScrypt, .owaspPBKDF2] {
            let encoded = try PasswordHasher(algorithm).hash("production cost")
            #expect(PasswordHasher.verify("production cost", against: encoded))
        }
        #expect(PasswordHasher.Algorithm.owaspScrypt == .scrypt(logN: 17, r: 8, p: 1))
        #expect(PasswordHasher.Algorithm.owaspPBKDF2 == .pbkdf2SHA256(rounds: 600_000))
    }

    @Test func refusesWeakOrHugePasswordsAndMalformedHashes() throws {
        #expect(throws: AccountError.self) { try cheap.hash("short") }
        #expect(throws: AccountError.self) { try cheap.hash(String(repeating: "x", count: 1025)) }
        let good = try cheap.hash("password123")
        for bad in [
            "", "scrypt", "scrypt$ln=10,r=8,p=1$$", "md5$x$y$z", good.replacingOccurrences(of: "ln=10", with: "ln=40"),
            String(good.dropLast(3)), "pbkdf2-sha256$i=0$AAAA$" + String(repeating: "A", count: 43),
        ] {
            #expect(!PasswordHasher.verify("password123", against: bad), "\(bad)")
        }
        #expect(!PasswordHasher.verify(String(repeating: "x", count: 5000), against: good))
    }

    @Test func constantTimeComparison() {
        #expect(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2]))
    }
}

@Suite struct TokenTests {
    @Test func tokensCarry256RandomBitsAndAreStoredHashed() {
        var seen = Set<String>()
        for _ in 0..<200 {
            let (token, hash) = SessionToken.generate()
            #expect(SessionToken.isWellFormed(token))
            #expect(PasswordHasher.unbase64url(token)?.count == 32)
            #expect(hash.count == 64 && hash != token && !hash.contains(token))
            #expect(SessionToken.matches(token, storedHash: hash))
            #expect(seen.insert(token).inserted)
        }
        let (token, hash) = SessionToken.generate()
        #expect(!SessionToken.matches(token + "x", storedHash: hash))
        // SHA-256 of "abc", the standard test vector.
        #expect(SessionToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        for bad in ["", "short", String(repeating: "a", count: 42), String(repeating: "a", count: 42) + "+", String(repeating: "é", count: 43)] {
            #expect(!SessionToken.isWellFormed(bad))
        }
    }

    @Test func emailsAreNormalizedAndChecked() throws {
        #expect(try Email.normalize("  Amina@Example.ORG ") == "amina@example.org")
        for bad in ["", "no-at", "a@b", "@example.org", "a@.org", "a@example.", "a b@example.org", "a@@example.org"] {
            #expect(throws: AccountError.self) { try Email.normalize(bad) }
        }
    }
}

@Suite struct SessionStoreTests {
    @Test func authenticationWritesLastUsedOnlyWhenItIsStale() throws {
        let database = try AppDatabase.inMemory()
        let start = Date(timeIntervalSince1970: 1_740_000_000)
        let (user, token) = try database.createGuest(now: start)
        func lastUsed() throws -> Double? {
            try database.read { db in try Double.fetchOne(db, sql: "SELECT last_used_at FROM session") }
        }
        #expect(try database.authenticate(token: token, now: start.addingTimeInterval(30))?.id == user.id)
        #expect(try lastUsed() == start.timeIntervalSince1970)
        #expect(try database.authenticate(token: token, now: start.addingTimeInterval(61))?.id == user.id)
        #expect(try lastUsed() == start.timeIntervalSince1970 + 61)
        #expect(try database.authenticate(token: token + "x", now: start) == nil)
        try database.closeSession(token: token)
        #expect(try database.authenticate(token: token, now: start) == nil)
    }

    @Test func settingsAreTypedAndAStoredValueNoLongerValidReadsAsTheDefault() throws {
        let database = try AppDatabase.inMemory()
        let (user, _) = try database.createGuest(now: Date(timeIntervalSince1970: 1_740_000_000))
        let stored = try database.updateSettings(userID: user.id, now: Date(timeIntervalSince1970: 1_740_000_000)) {
            $0.reminderTime = try ReminderTime(parsing: "05:45")
            $0.calendar = .sighted
            $0.adjustment = try Adjustment(-1)
            $0.locale = .ar
        }
        #expect(try database.settings(userID: user.id) == stored)
        // As the row keeps them: text and a number, as the API shows them.
        let row = try #require(
            try database.read { db in try Row.fetchOne(db, sql: "SELECT * FROM settings WHERE user_id = ?", arguments: [user.id]) })
        #expect(row["reminder_time"] as String == "05:45" && row["calendar"] as String == "sighted")
        #expect(row["adjustment"] as Int == -1 && row["locale"] as String == "ar")
        // Values a rule no longer allows (written by hand here) read as the defaults, field by field; the rest stay.
        try database.write { db in
            try db.execute(
                sql: "UPDATE settings SET reminder_time = '25:00', calendar = 'lunar', adjustment = 9, locale = 'fr' WHERE user_id = ?",
                arguments: [user.id])
        }
        let read = try database.settings(userID: user.id)
        #expect(read.reminderTime == .default && read.calendar == .installationDefault && read.adjustment == .zero && read.locale == .en)
        #expect(read.timezone == stored.timezone && read.displayTheme == stored.displayTheme)
    }

    @Test func inactiveGuestsArePurgedWithTheirDataAndAccountsNever() throws {
        let database = try AppDatabase.inMemory()
        let start = Date(timeIntervalSince1970: 1_740_000_000)
        let (idle, _) = try database.createGuest(now: start)
        let (active, activeToken) = try database.createGuest(now: start)
        let (account, _) = try database.createAccount(
            email: "old@example.org", passwordHash: "x", displayName: nil, upgrading: nil, now: start)
        _ = try database.addBookmark(userID: idle.id, verseKey: "2:255", now: start)
        _ = try database.updateSettings(userID: idle.id, now: start) { $0.locale = .ar }
        // 29 days later the active guest comes back; 31 days after the start the idle one is past a 30-day retention.
        _ = try database.authenticate(token: activeToken, now: start.addingTimeInterval(29 * 86_400))
        let cutoff = start.addingTimeInterval(31 * 86_400 - 30 * 86_400)
        #expect(try database.purgeGuests(inactiveBefore: cutoff.addingTimeInterval(1)) == 1)
        let left = try database.read { db in try String.fetchAll(db, sql: "SELECT id FROM user ORDER BY id") }
        #expect(Set(left) == [active.id, account.id])
        let orphans = try database.read { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT (SELECT count(*) FROM bookmark WHERE user_id = ?1) + (SELECT count(*) FROM settings WHERE user_id = ?1) + (SELECT count(*) FROM session WHERE user_id = ?1)",
                arguments: [idle.id])
        }
        #expect(orphans == 0)
        #expect(try database.purgeGuests(inactiveBefore: start.addingTimeInterval(1)) == 0)
    }
}
