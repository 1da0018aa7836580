import Foundation
import GRDB
import Testing

@Suite struct FunnelCLITests {
    @Test func theFunnelCountsUsersPerScreen() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-funnel-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("funnel.sqlite").path
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: path).status == 0)
        // Three users on 1 March: one goes through every screen and completes, one skips from `mission` and
        // completes, one stops after `hadith`; a fourth came the day before.
        let queue = try DatabaseQueue(path: path)
        let day = 1_740_787_200.0  // 2025-03-01T00:00:00Z
        try queue.write { db in
            func event(_ user: String, _ name: String, _ screen: String?, _ at: Double) throws {
                try db.execute(
                    sql: "INSERT INTO analytics_event (user_id, name, screen, properties, at) VALUES (?, ?, ?, '{}', ?)",
                    arguments: [user, name, screen, at])
            }
            for (n, screen) in ["hadith", "mission", "layers", "daily_verse", "begin"].enumerated() {
                try event("u1", "onboarding_screen_viewed", screen, day + 100 + Double(n))
            }
            try event("u1", "onboarding_started", "hadith", day + 100)
            try event("u1", "onboarding_completed", "begin", day + 200)
            try event("u2", "onboarding_started", "hadith", day + 300)
            try event("u2", "onboarding_screen_viewed", "hadith", day + 300)
            try event("u2", "onboarding_screen_viewed", "mission", day + 301)
            try event("u2", "onboarding_skipped", "mission", day + 302)
            try event("u2", "onboarding_screen_viewed", "begin", day + 303)
            try event("u2", "onboarding_completed", "begin", day + 304)
            try event("u3", "onboarding_started", "hadith", day + 400)
            try event("u3", "onboarding_screen_viewed", "hadith", day + 400)
            try event("u4", "onboarding_started", "hadith", day - 10)
            try event("u4", "onboarding_screen_viewed", "hadith", day - 10)
        }
        let result = CLI.run(["onboarding", "funnel", "--from", "2025-03-01", "--to", "2025-03-01", "--json"], database: path)
        #expect(result.status == 0, "\(result.stderr)")
        let json = result.json
        #expect(json["started"] as? Int == 3)
        #expect(json["completed"] as? Int == 2)
        let screens = try #require(json["screens"] as? [[String: Any]])
        #expect(screens.map { $0["screen"] as? String } == ["hadith", "mission", "layers", "daily_verse", "begin"])
        #expect(screens.map { $0["reached"] as? Int } == [3, 2, 1, 1, 2])
        #expect(screens.map { $0["skipped"] as? Int } == [0, 1, 0, 0, 0])
        #expect(screens.map { $0["completed"] as? Int } == [2, 2, 1, 1, 2])
        let text = CLI.run(["onboarding", "funnel", "--from", "2025-02-28", "--to", "2025-03-01"], database: path)
        #expect(text.stdout.contains("4 started, 2 completed"))
        let backwards = CLI.run(["onboarding", "funnel", "--from", "2025-03-02", "--to", "2025-03-01"], database: path)
        #expect(backwards.status != 0)
        #expect(backwards.stderr.contains("2025-03-02") && backwards.stderr.split(separator: "\n").count == 1)
    }

    @Test func guestsArePurgedAfterTheRetention() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-purge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("purge.sqlite").path
        #expect(CLI.run(["today", "--date", "2025-03-01"], database: path).status == 0)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for (id, mode, seen) in [("g-old", "guest", "2025-01-01"), ("g-new", "guest", "2025-02-20"), ("a-old", "account", "2025-01-01")] {
                let at = ISO8601DateFormatter().date(from: seen + "T00:00:00Z")!.timeIntervalSince1970
                try db.execute(
                    sql: "INSERT INTO user (id, mode, email, created_at, last_active_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [id, mode, mode == "account" ? "\(id)@example.org" : nil, at, at])
            }
        }
        let purged = CLI.run(["guests", "purge", "--retention", "30d", "--now", "2025-03-01T00:00:00Z", "--json"], database: path)
        #expect(purged.status == 0, "\(purged.stderr)")
        #expect(purged.json["purged"] as? Int == 1)
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT id FROM user ORDER BY id") } == ["a-old", "g-new"])
        let bad = CLI.run(["guests", "purge", "--retention", "a month"], database: path)
        #expect(bad.status != 0 && bad.stderr.contains("'a month'"))
    }
}
