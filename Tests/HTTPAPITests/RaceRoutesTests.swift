import AppSchema
import DailyVerseTestSupport
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Storage
import Testing

@testable import HTTPAPI

/// Requests that race each other over one user: each answers a 4xx from the API document, never a 500.
@Suite struct RaceRoutesTests: JSONRequests {
    @Test(arguments: StoreKind.available) func upgradesOfOneGuestSentAtOnceMakeOneAccount(_ store: StoreKind) async throws {
        // Three trials, each on a new server and database (attempt counts are the database's on PostgreSQL): four
        // attempts, within the accounts' throttle of five an hour.
        for trial in 0..<3 {
            try await store.run {
                try await makeApp(now: fixedNow).test(.router) { client in
                    let guest = token(try await post(client, "/v1/guests", [:]).1)
                    let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                        for n in 0..<4 {
                            group.addTask {
                                let (status, reply) = try await post(
                                    client, "/v1/accounts", ["email": "race\(trial)-\(n)@example.org", "password": "a long passphrase"], token: guest)
                                return (status, (reply["error"] as? [String: Any])?["code"] as? String)
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(statuses.filter { $0.0 == 201 }.count == 1, "\(statuses)")
                    #expect(statuses.filter { $0.0 != 201 }.allSatisfy { $0.0 == 409 && $0.1 == "already_an_account" }, "\(statuses)")
                }
            }
        }
    }

    @Test func aWriteWhoseUserWentMeanwhileIsUnauthorized() async throws {
        // The error SQLite gives a bookmark of a user removed under the request (merged into an account by a sign-in).
        let database = try seededDatabase()
        let refused = #expect(throws: DatabaseError.self) {
            try database.write { db in
                try db.execute(sql: "INSERT INTO bookmark (user_id, verse_key, created_at) VALUES ('gone', '1:1', 0)")
            }
        }
        let error = try #require(refused)
        #expect(AppDatabase.isMissingReference(error))
        #expect(!AppDatabase.isMissingReference(DatabaseError(resultCode: .SQLITE_FULL)))
        // The API's edge answers it as the next request with that token would be answered.
        let router = Router()
        router.add(middleware: ErrorMiddleware())
        router.put("/race") { _, _ -> Response in throw error }
        try await Application(router: router).test(.router) { client in
            let (status, reply) = try await send(client, .put, "/race", token: "any")
            #expect(status == 401)
            #expect((reply["error"] as? [String: Any])?["code"] as? String == "unauthorized")
        }
    }
}
