import Accounts
import AppSchema
import ContentStore
import DailyVerseTestSupport
import Encodings
import Engagement
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Onboarding
import Storage
import Testing
import VerseOfTheDay

@testable import HTTPAPI

/// The API as production builds it, on an in-memory database, with cheap password hashing and a fixed clock.
func makeApp(now: Date) throws -> some ApplicationProtocol { try makeApp(clock: { now }) }

func makeApp(clock: @escaping @Sendable () -> Date, hashing: HashingGate = HashingGate()) throws -> some ApplicationProtocol {
    Application(router: buildRouter(try makeEnvironment(clock: clock, hashing: hashing)))
}

/// The environment as `serve` builds it, on an in-memory database, with cheap password hashing.
func makeEnvironment(
    clock: @escaping @Sendable () -> Date, hashing: HashingGate = HashingGate(), vapidPublicKey: String? = nil,
    webPushHosts: WebPushHosts = WebPushHosts(), trustedProxies: TrustedProxies = .none
) throws -> APIEnvironment {
    let database = try AppDatabase.inMemory()
    try database.seed(bundledContent)
    let machine = try OnboardingMachine(flow: OnboardingFlow.load(from: dataDirectory), database: database)
    let users: (any UserStore)? = try StoreKind.postgres.map { PostgresUserStore(store: $0, themes: Set(try database.displayThemes().map(\.id))) }
    // On PostgreSQL the attempt counts are the database's, as serve has them.
    let throttles = StoreKind.postgres.map { Throttles().shared(in: PostgresThrottleCounter(store: $0)) } ?? Throttles()
    return try APIEnvironment(
        reports: DailyVerseReports(database: database), clock: clock, passwordHasher: PasswordHasher(.scrypt(logN: 8, r: 8, p: 1)),
        onboarding: machine, copy: try OnboardingCopy.load(from: dataDirectory), hints: try HintCatalog.load(from: dataDirectory),
        throttles: throttles,
        hashing: hashing,
        openAPI: try OpenAPIDocument.load(from: dataDirectory), vapidPublicKey: vapidPublicKey, webPushHosts: webPushHosts,
        trustedProxies: trustedProxies, users: users)
}

/// The store a route test's users, sessions, devices and hints are kept in: each such test runs on SQLite, and on
/// PostgreSQL too when `DAILYVERSE_TEST_POSTGRES` names a server (`PostgresTesting`), each time on a new database.
enum StoreKind: String, CustomTestStringConvertible, Sendable {
    case sqlite, postgresql

    static let available: [StoreKind] = PostgresTesting.isAvailable ? [.sqlite, .postgresql] : [.sqlite]

    var testDescription: String { rawValue }

    /// The PostgreSQL store the test running now uses, if it runs on PostgreSQL (`makeEnvironment` reads it).
    @TaskLocal static var postgres: PostgresStore?

    /// Runs a test's body on this store.
    func run(_ body: () async throws -> Void) async throws {
        guard self == .postgresql else { return try await body() }
        try await PostgresTesting.withDatabase { address in
            let store = try await PostgresStore.open(address, password: PostgresTesting.password, schema: .dailyVerse, logger: PostgresTesting.logger)
            do {
                try await StoreKind.$postgres.withValue(store) { try await body() }
                await store.close()
            } catch {
                await store.close()
                throw error
            }
        }
    }
}

@Suite struct PublicRoutesTests {
    /// 2025-02-28T20:00Z: already 1 Ramadan in Tokyo, still 29 Sha'ban in Los Angeles.
    static let now = instant("2025-02-28T20:00:00Z")

    func app() throws -> some ApplicationProtocol { try makeApp(now: Self.now) }

    func object(_ buffer: ByteBuffer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any])
    }

    @Test func health() async throws {
        try await app().test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                let json = try object(response.body)
                #expect(json["status"] as? String == "ok")
            }
        }
    }

    @Test func theVAPIDPublicKeyIsServedWhenWebPushIsConfigured() async throws {
        let key = "B" + String(repeating: "A", count: 86)
        try await Application(router: buildRouter(try makeEnvironment(clock: { Self.now }, vapidPublicKey: key))).test(.router) { client in
            try await client.execute(uri: "/v1/push/vapid-public-key", method: .get) { response in
                #expect(response.status == .ok)
                let json = try object(response.body)
                #expect(json["public_key"] as? String == key)
                #expect(response.headers[.eTag] != nil)
            }
        }
        try await app().test(.router) { client in
            try await client.execute(uri: "/v1/push/vapid-public-key", method: .get) { response in
                #expect(response.status == .notFound)
                let error = try object(response.body)["error"] as? [String: Any]
                #expect(error?["code"] as? String == "web_push_not_configured")
            }
        }
    }

    @Test func todayFollowsTheZoneAndCachesUntilItsMidnight() async throws {
        try await app().test(.router) { client in
            // By default the predicted calendar (Iran began Ramadan 1446 on 2 March): 1 March is still Sha'ban.
            try await client.execute(uri: "/v1/today?tz=Asia/Tokyo", method: .get) { response in
                let hijri = try object(response.body)["hijri"] as? [String: Any]
                #expect(hijri?["calendar"] as? String == "predicted" && hijri?["month_name"] as? String == "Sha'ban" && hijri?["day"] as? Int == 30)
            }
            try await client.execute(uri: "/v1/today?tz=Asia/Tokyo&calendar=umm-al-qura", method: .get) { response in
                #expect(response.status == .ok)
                let json = try object(response.body)
                #expect(json["date"] as? String == "2025-03-01")
                #expect((json["hijri"] as? [String: Any])?["month_name"] as? String == "Ramadan")
                #expect((json["layers"] as? [Any])?.count == 5)
                // 20:00Z is 05:00 on 1 March in Tokyo: 19 hours until its midnight.
                #expect(response.headers[.cacheControl] == "public, max-age=68400")
                #expect(response.headers[.eTag]?.hasPrefix("\"") == true)
            }
            try await client.execute(uri: "/v1/today?tz=America/Los_Angeles&calendar=umm-al-qura", method: .get) { response in
                let json = try object(response.body)
                #expect(json["date"] as? String == "2025-02-28")
                #expect((json["hijri"] as? [String: Any])?["month_name"] as? String == "Sha'ban")
                #expect(response.headers[.cacheControl] == "public, max-age=43200")  // 12:00 there
            }
            try await client.execute(uri: "/v1/today?tz=Asia/Baghdad&date=2025-06-15", method: .get) { response in
                let json = try object(response.body)
                #expect((json["occasion"] as? [String: Any])?["id"] as? String == "ghadir")
                #expect((json["occasion"] as? [String: Any])?["tonight"] as? Bool == false)
            }
            // The eve of 23 Ramadan 1446 (predicted: 23 March) shows the night as tonight; with --adjust -1 it is a day later.
            for (uri, tonight) in [
                ("/v1/today?tz=Asia/Baghdad&date=2025-03-23", true), ("/v1/today?tz=Asia/Baghdad&date=2025-03-24", false),
                ("/v1/today?tz=Asia/Baghdad&date=2025-03-24&adjust=-1", true),
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    let occasion = try object(response.body)["occasion"] as? [String: Any]
                    #expect((occasion?["id"] as? String == "qadr-23") == tonight, "\(uri)")
                    if tonight { #expect(occasion?["tonight"] as? Bool == true && occasion?["observed"] as? String == "night") }
                }
            }
        }
    }

    @Test func etagsAnswer304() async throws {
        try await app().test(.router) { client in
            let tag = try await client.execute(uri: "/v1/verses/2:255", method: .get) { $0.headers[.eTag] }
            let etag = try #require(tag)
            try await client.execute(uri: "/v1/verses/2:255", method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
        }
    }

    @Test func versesCalendarAndThemes() async throws {
        try await app().test(.router) { client in
            try await client.execute(uri: "/v1/verses/96:1-5", method: .get) { response in
                let json = try object(response.body)
                #expect((json["verse"] as? [String: Any])?["ayah_end"] as? Int == 5)
                #expect((json["attribution"] as? String)?.contains("Tanzil") == true)
            }
            try await client.execute(uri: "/v1/calendar/1446", method: .get) { response in
                let json = try object(response.body)
                #expect((json["months"] as? [Any])?.count == 12)
            }
            try await client.execute(uri: "/v1/themes", method: .get) { response in
                let json = try object(response.body)
                #expect((json["display"] as? [[String: Any]])?.map { $0["id"] as? String } == ["parchment", "midnight", "emerald", "dawn"])
                #expect((json["months"] as? [Any])?.count == 12)
            }
        }
    }

    @Test func theOnboardingFlowServesTheRepairedCopyAndTodaysVerse() async throws {
        try await app().test(.router) { client in
            try await client.execute(uri: "/v1/onboarding/flow?tz=Asia/Tokyo", method: .get) { response in
                #expect(response.status == .ok)
                let json = try object(response.body)
                let screens = try #require(json["screens"] as? [[String: Any]])
                #expect(screens.map { $0["id"] as? String } == ["hadith", "mission", "layers", "daily_verse", "begin"])
                let hadith = try #require(screens[0]["content"] as? [String: Any])
                #expect(hadith["arabic"] as? String == "إني تارك فيكم الثقلين: كتاب الله وعترتي أهل بيتي، ما إن تمسكتم بهما لن تضلوا بعدي أبداً")
                #expect(screens[0]["auto_advance_after_seconds"] as? Double == 4)
                #expect(
                    (screens[2]["layers"] as? [[String: Any]])?.map { $0["id"] as? String } == [
                        "foundation", "classical_shia", "contemporary", "ahlul_bayt", "comparative",
                    ])
                // The predicted calendar's day (Tokyo, 1 March 2025): 30 Sha'ban 1446.
                #expect(((screens[3]["today"] as? [String: Any])?["hijri"] as? [String: Any])?["month_name"] as? String == "Sha'ban")
                #expect((screens[4]["themes"] as? [Any])?.count == 4)
                #expect(screens[4]["skippable"] as? Bool == false)
                // No mojibake anywhere in the copy.
                let text = String(buffer: response.body)
                for damaged in ["Ø", "Ù", "â€", "ðŸ"] { #expect(!text.contains(damaged)) }
            }
            try await client.execute(uri: "/v1/onboarding/flow?tz=Nowhere/Land", method: .get) { #expect($0.status == .badRequest) }
        }
    }

    @Test(arguments: [
        ("/v1/today?tz=Mars/Olympus", 400, "bad_zone"),
        ("/v1/today?tz=UTC&date=2025-02-30", 400, "bad_date"),
        ("/v1/today?tz=UTC&adjust=7", 400, "bad_calendar"),
        ("/v1/today?tz=UTC&adjust=one", 400, "bad_calendar"),
        ("/v1/calendar/1446?adjust=one", 400, "bad_calendar"),
        ("/v1/today?tz=UTC&calendar=lunar", 400, "bad_calendar"),
        ("/v1/today?tz=UTC&date=2200-01-01", 400, "out_of_range"),
        ("/v1/today?tz=UTC&translation=xx.none", 404, "translation_not_found"),
        ("/v1/verses/2:300", 404, "verse_not_found"),
        ("/v1/verses/115:1", 400, "bad_verse"),
        ("/v1/verses/abc", 400, "bad_verse"),
        // A verse key is written without leading zeros, on either side, as the command line reads it.
        ("/v1/verses/002:255", 400, "bad_verse"),
        ("/v1/verses/2:0255", 400, "bad_verse"),
        ("/v1/verses/96:1-05", 400, "bad_verse"),
        ("/v1/calendar/01446", 400, "bad_year"),
        ("/v1/calendar/+1446", 400, "bad_year"),
        ("/v1/calendar/abc", 400, "bad_year"),
        ("/v1/calendar/1700", 400, "out_of_range"),
        ("/v1/nothing-here", 404, "not_found"),
    ])
    func badInputIsA4xxWithAJSONError(uri: String, status: Int, code: String) async throws {
        try await app().test(.router) { client in
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status.code == status, "\(uri)")
                let error = try #require(try object(response.body)["error"] as? [String: Any])
                #expect(error["code"] as? String == code, "\(uri)")
                #expect((error["message"] as? String)?.isEmpty == false)
            }
        }
    }
}
