import AppSchema
import DailyVerseTestSupport
import Foundation
import GRDB
import Storage
import Testing

@testable import Accounts

/// One account for what reads the same: emails composed, lowercased, without invisible characters, compared with
/// compatibility characters folded; display names without bidirectional controls.
@Suite struct IdentityTests {
    let hash = "scrypt$not-verified-here"

    @Test func composedAndDecomposedCapitalsAndFullwidthAreOneAccount() throws {
        let composed = try Email.normalize("José@Example.org")
        #expect(composed == "jos\u{E9}@example.org")
        #expect(try Email.normalize("Jose\u{301}@example.org") == composed)
        #expect(Email.key(try Email.normalize("ｊｏｓé@ｅｘａｍｐｌｅ.ｏｒｇ")) == Email.key(composed))
        let database = try AppDatabase.inMemory()
        _ = try database.createAccount(email: composed, passwordHash: hash, displayName: nil, upgrading: nil, now: fixedNow)
        for spelling in ["Jose\u{301}@example.org", "JOSÉ@EXAMPLE.ORG", "ｊｏｓé@example.org"] {
            #expect(throws: SignInError.emailTaken, "\(spelling)") {
                try database.createAccount(email: try Email.normalize(spelling), passwordHash: hash, displayName: nil, upgrading: nil, now: fixedNow)
            }
            #expect(try database.passwordHash(emails: Email.signInForms(spelling))?.hash == hash, "\(spelling)")
        }
    }

    @Test(arguments: [
        "bob\u{200B}@example.com", "b\u{AD}ob@example.com", "bob\u{200E}@example.com", "bo\u{202E}b@example.com", "bob@exa\u{E0041}mple.com",
    ])
    func invisibleCharactersAreRefusedByName(email: String) {
        #expect {
            try Email.normalize(email)
        } throws: { error in
            "\(error)".contains("invisible character (U+") && !"\(error)".unicodeScalars.contains(where: Email.isInvisible)
        }
    }

    @Test func displayNamesRefuseBidirectionalControls() throws {
        try DisplayName.check("Zahrā ‌خانم")  // a zero-width non-joiner belongs in Persian names
        #expect(throws: AccountError.invalidDisplayName) { try DisplayName.check("evil\u{202E}gpj.exe") }
        #expect(throws: AccountError.invalidDisplayName) { try DisplayName.check("\u{2067}x") }
        #expect(throws: AccountError.invalidDisplayName) { try DisplayName.check("") }
    }

    /// Accounts made under the old rule (trimmed and lowercased only) sign in after the migration: a decomposed email
    /// is renamed composed unless that spelling is taken, and one the new rule refuses keeps its spelling.
    @Test func accountsMadeUnderTheOldRuleStillSignIn() throws {
        let queue = try DatabaseQueue()
        try Schema.dailyVerse.migrator.migrate(queue, upTo: "v11-schedule-problems")
        let old = [
            ("a", "jose\u{301}@example.org"), ("b", "maria@example.org"), ("c", "zo\u{EB}@example.org"), ("d", "zoe\u{308}@example.org"),
            ("e", "bob\u{200B}@example.com"), ("f", "ｂｏｂ@example.com"),
        ]
        try queue.write { db in
            for (n, (id, email)) in old.enumerated() {
                try db.execute(
                    sql: "INSERT INTO user (id, mode, email, password_hash, created_at, last_active_at) VALUES (?, 'account', ?, ?, ?, 0)",
                    arguments: [id, email, "hash-\(id)", Double(n)])
            }
        }
        try Schema.dailyVerse.migrator.migrate(queue)
        let emails = try queue.read { db in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, email FROM user").map { ($0[0] as String, $0[1] as String) })
        }
        #expect(emails["a"] == "jos\u{E9}@example.org")
        #expect(emails["c"] == "zo\u{EB}@example.org")
        #expect(emails["d"] == "zoe\u{308}@example.org", "the composed spelling was taken: kept as it was")
        let database = try AppDatabase(queue, schema: .dailyVerse)
        func signIn(_ typed: String) throws -> String? { try database.passwordHash(emails: Email.signInForms(typed))?.hash }
        #expect(try signIn("José@example.org") == "hash-a")
        #expect(try signIn("jose\u{301}@example.org") == "hash-a")
        #expect(try signIn("zoë@example.org") == "hash-c")
        #expect(try signIn("bob\u{200B}@example.com") == "hash-e", "refused for a new account, still an old one's way in")
        #expect(try signIn("ｂｏｂ@example.com") == "hash-f")
    }
}
