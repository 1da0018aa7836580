import Accounts
import ContentStore
import Crypto
import Encodings
import Engagement
import Foundation
import HTTPTypes
import HijriCalendar
import Hummingbird
import NIOHTTP1
import Onboarding
import Prometheus
import Storage
import VerseCalendar
import VerseOfTheDay

/// What the routes need, passed in so tests build the same router as production.
public struct APIEnvironment: Sendable {
    public let reports: DailyVerseReports
    public let clock: @Sendable () -> Date
    public let passwordHasher: PasswordHasher
    public let onboarding: OnboardingMachine
    public let copy: OnboardingCopy
    public let throttles: Throttles
    public let hints: HintCatalog
    /// Password hashing, a few at a time.
    public let hashing: HashingGate
    /// Where the API's metrics are kept (and `GET /metrics` reads them); bootstrap swift-metrics with
    /// `metricsFactory` to have the rest of the process report there too.
    public let metrics: PrometheusCollectorRegistry
    public var metricsFactory: PrometheusMetricsFactory { PrometheusMetricsFactory(registry: metrics) }
    /// `data/openapi.yaml`, served at `GET /openapi.yaml`.
    public let openAPI: String?
    /// The VAPID public key a web app subscribes with (`applicationServerKey`), when Web Push is configured.
    public let vapidPublicKey: String?
    /// The push services a Web Push subscription's endpoint may be on (the known ones and `web_push_hosts`), as the
    /// sender has them: an endpoint it would refuse at every send is refused when it is registered.
    public let webPushHosts: WebPushHosts
    /// Encoded public reads (today's verse per zone), kept for a minute.
    public let responses = ResponseCache()
    /// The crescent maps drawn, and the gate they are drawn through.
    public let crescentMaps = CrescentMaps()
    /// Verified against when an email is unknown, so that both refusals take the same time.
    let decoyHash: String
    /// The proxies whose `Forwarded` and `X-Forwarded-For` headers name the client (`trusted_proxies`).
    public let trustedProxies: TrustedProxies
    /// When bearer tokens expire.
    public let sessions: SessionPolicy
    /// What one user may have.
    public let limits: UserLimits
    /// Users, sessions, devices, onboarding and hints: the content database's own tables (SQLite), or PostgreSQL.
    public let users: any UserStore

    /// The content: today's verse, verses, layers, themes (on PostgreSQL, this process's copy).
    public var database: AppDatabase { reports.database }

    public init(
        reports: DailyVerseReports, clock: @escaping @Sendable () -> Date, passwordHasher: PasswordHasher = PasswordHasher(),
        onboarding: OnboardingMachine, copy: OnboardingCopy, hints: HintCatalog, throttles: Throttles = Throttles(),
        hashing: HashingGate = HashingGate(), metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), openAPI: String? = nil,
        vapidPublicKey: String? = nil, webPushHosts: WebPushHosts = WebPushHosts(), trustedProxies: TrustedProxies = .none,
        sessions: SessionPolicy = SessionPolicy(), limits: UserLimits = UserLimits(), users: (any UserStore)? = nil
    ) throws {
        self.users = users ?? SQLiteUserStore(reports.database)
        self.webPushHosts = webPushHosts
        self.trustedProxies = trustedProxies
        self.sessions = sessions
        self.limits = limits
        self.vapidPublicKey = vapidPublicKey
        self.metrics = metrics
        self.openAPI = openAPI
        self.hints = hints
        self.hashing = hashing
        self.throttles = throttles
        self.reports = reports
        self.clock = clock
        self.passwordHasher = passwordHasher
        self.onboarding = onboarding
        self.copy = copy
        self.decoyHash = try passwordHasher.hash("decoy password, never valid")
    }
}

/// All routes: public reads, accounts and sessions, onboarding.
public func buildRouter(_ environment: APIEnvironment) -> Router<APIContext> {
    // HEAD is answered wherever GET is, with GET's headers and no body.
    let router = Router(context: APIContext.self, options: .autoGenerateHeadEndpoints)
    let routes = RouteTable()
    router.add(middleware: RequestMetricsMiddleware(factory: environment.metricsFactory))
    router.add(middleware: ClientAddressMiddleware(proxies: environment.trustedProxies))
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: EdgeMiddleware(routes: routes))
    router.add(middleware: AuthenticationMiddleware(environment: environment))
    addAccountRoutes(router, environment)
    addFlowRoute(router, environment)
    addUserDataRoutes(router, environment)
    addDeviceRoutes(router, environment)
    addHintRoutes(router, environment)
    addMetaRoutes(router, environment)

    router.get("/health") { _, _ in
        // A database file removed or replaced under the process, or a server that cannot be reached, is not healthy:
        // answered as every route answers it (ErrorMiddleware); the scheduler stops the process on a file replaced.
        try environment.database.checkFile()
        try await environment.users.check()
        return json(["status": "ok"])
    }

    // GET /v1/today?tz=Asia/Baghdad[&date=YYYY-MM-DD][&calendar=…][&adjust=N][&translation=ID]
    router.get("/v1/today") { request, _ -> Response in
        let query = request.uri.queryParameters
        let zoneName = query["tz"].map(String.init) ?? "UTC"
        guard let zone = environment.responses.zone(zoneName) else {
            throw APIError.badRequest("bad_zone", "unknown time zone '\(zoneName)': expected an IANA name such as Asia/Baghdad")
        }
        let now = environment.clock()
        let date = try answering(.url) { try query["date"].map { try CivilDate(parsing: String($0)) } ?? CivilDate(instant: now, timeZone: zone) }
        let (calendar, adjustment) = try calendarChoice(request)
        let translation = query["translation"].map(String.init) ?? BundledContent.pickthall.id
        let language = try readerLanguage(request)
        let key = "today \(zone.identifier) \(date) \(calendar.rawValue) \(adjustment.days) \(translation) \(language ?? "-")"
        let entry = try environment.responses.entry(key, now: now) {
            let report = try answering(.answer) {
                try environment.reports.today(
                    TodayRequest(
                        date: date, timeZone: zone.identifier, calendar: calendar, adjustment: adjustment, translation: translation,
                        language: language))
            }
            return (try JSONText.encoder.encode(report), Calendar.gregorianUTC.nextMidnight(after: now, in: zone))
        }
        // The verse is the same until the next local midnight in that zone: cache until then.
        let maxAge = query["date"] == nil ? max(0, Int(entry.midnight.timeIntervalSince(now))) : 86_400
        return conditional(request, body: entry.body, tag: entry.tag, maxAge: maxAge)
    }

    router.get("/v1/verses/:key") { request, context -> Response in
        let key = try context.pathParameter("key")
        let range = try answering(.url) { try VerseRange(parsing: key) }
        let translation = request.uri.queryParameters["translation"].map(String.init) ?? BundledContent.pickthall.id
        let language = try readerLanguage(request)
        return try conditional(
            request, try answering(.answer) { try environment.reports.verse(range, translation: translation, language: language) }, maxAge: 86_400)
    }

    router.get("/v1/occasions/:id") { request, context -> Response in
        let id = try context.pathParameter("id")
        let translation = request.uri.queryParameters["translation"].map(String.init) ?? BundledContent.pickthall.id
        let language = try readerLanguage(request)
        return try conditional(
            request, try answering(.answer) { try environment.reports.occasion(id, translation: translation, language: language) }, maxAge: 3600)
    }

    router.get("/v1/verses/:key/commentary/:layer") { request, context -> Response in
        let key = try context.pathParameter("key")
        let layer = try context.pathParameter("layer")
        let range = try answering(.url) { try VerseRange(parsing: key) }
        let language = try readerLanguage(request)
        return try conditional(
            request, try answering(.answer) { try environment.reports.commentary(range, layer: layer, language: language) }, maxAge: 86_400)
    }

    router.get("/v1/calendar/:year") { request, context -> Response in
        // Parsed before any arithmetic, as every Hijri year is (at most four digits, 1 to 9999); whether the calendar
        // covers it is its question.
        let text = try context.pathParameter("year")
        guard let year = HijriDate.year(parsing: text) else {
            throw APIError.badRequest("bad_year", "invalid Hijri year '\(text.prefix(40))': expected a whole number from 1 to 9999, such as 1446")
        }
        let (calendar, adjustment) = try calendarChoice(request)
        return try conditional(
            request, try answering(.answer) { try environment.reports.year(year, calendar: calendar, adjustment: adjustment) }, maxAge: 3600)
    }

    router.get("/v1/themes") { request, _ -> Response in
        let database = environment.reports.database
        let themes = try answering(.answer) {
            ThemesReport(
                display: try database.displayThemes(), months: try database.verseCalendar().months.map { .init(month: $0.month, theme: $0.theme) })
        }
        return try conditional(request, themes, maxAge: 3600)
    }
    addCrescentRoutes(to: router, environment)
    router.get("/v1/push/vapid-public-key") { request, _ -> Response in
        guard let key = environment.vapidPublicKey else {
            throw APIError.notFound("web_push_not_configured", "this server sends no Web Push: vapid_key_file is not set")
        }
        return try conditional(request, ["public_key": key], maxAge: 3600)
    }
    routes.fill(router.routes.map { (path: $0.path.description, method: $0.method.rawValue) })
    return router
}

/// `calendar` and `adjust` from a query string (defaults: the predicted calendar, 0); an error names the value at fault.
func calendarChoice(_ request: Request) throws -> (CalendarKind, Adjustment) {
    let query = request.uri.queryParameters
    let calendar = try answering(.url) { try CalendarKind(parsing: query["calendar"].map(String.init) ?? CalendarKind.installationDefault.rawValue) }
    let text = query["adjust"].map(String.init) ?? "0"
    guard let days = Int(text) else {
        let range = Adjustment.range
        throw APIError.badRequest(
            "bad_calendar", "invalid adjustment '\(text)': expected a whole number of days from \(range.lowerBound) to \(range.upperBound)")
    }
    return (calendar, try answering(.url) { try Adjustment(days) })
}

struct ThemesReport: Encodable {
    let display: [DisplayTheme]
    let months: [MonthEntry]
    struct MonthEntry: Encodable {
        let month: Int
        let theme: Theme
    }
}

/// A JSON response with Cache-Control and an ETag; 304 when the client already has it.
func conditional<T: Encodable>(_ request: Request, _ value: T, maxAge: Int) throws -> Response {
    let body = try JSONText.encoder.encode(value)
    return conditional(request, body: ByteBuffer(bytes: body), tag: entityTag(body), maxAge: maxAge)
}

/// A strong ETag for a body: the first 128 bits of its SHA-256, in hex and quotes.
func entityTag(_ body: Data) -> String {
    "\"" + Hex.encode(SHA256.hash(data: body).prefix(16)) + "\""
}

func conditional(
    _ request: Request, body: ByteBuffer, tag: String, maxAge: Int, contentType: String = "application/json; charset=utf-8"
) -> Response {
    var headers: HTTPFields = [.contentType: contentType, .cacheControl: "public, max-age=\(maxAge)", .eTag: tag]
    if let header = request.headers[.ifNoneMatch], ifNoneMatch(header, matches: tag) {
        headers[.contentType] = nil
        return Response(status: .notModified, headers: headers)
    }
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
}

/// `If-None-Match` against our (strong) tag, by RFC 9110's weak comparison (§13.1.2): `*` matches any current
/// representation, and `W/"x"` matches `"x"`.
func ifNoneMatch(_ header: String, matches tag: String) -> Bool {
    header.split(separator: ",").contains { candidate in
        var value = candidate.trimmingCharacters(in: .whitespaces)
        if value == "*" { return true }
        if value.hasPrefix("W/") { value.removeFirst(2) }
        return value == tag
    }
}

func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
    let body = (try? JSONText.encoder.encode(value)) ?? Data("{}".utf8)
    return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
}

/// Any error that is not already an API error becomes a bare 500 with the JSON shape, and is not described.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do { return try await next(request, context) } catch let error as HTTPResponseError {
            if let api = error as? APIError { throw api }
            // Hummingbird's own errors get the same JSON shape, and say what was wrong: 404 for an unknown route, 413
            // for a body over the limit, 400 for a body that does not decode (its message names the key at fault).
            let detail = (error as? HTTPError)?.body
            switch error.status {
            case .notFound: throw APIError(.notFound, code: "not_found", "no route \(request.method) \(request.uri.path)")
            case .contentTooLarge:
                throw APIError(.contentTooLarge, code: "body_too_large", "the body is over the limit of \(context.maxUploadSize) bytes")
            case .badRequest:
                throw APIError(.badRequest, code: "bad_json", "the body is not the JSON this route takes" + (detail.map { ": \($0)" } ?? ""))
            default: throw APIError(error.status, code: "http_\(error.status.code)", detail ?? error.status.reasonPhrase)
            }
        } catch let error as HTTPParserError {
            // A body the HTTP parser refused after the head was read (a chunk size that is not hex, or too long):
            // the client's mistake, and the connection cannot be read further.
            context.logger.info("malformed request body", metadata: ["error": "\(error)"])
            var answer = APIError(.badRequest, code: "bad_request", "malformed HTTP request body (\(error))")
            answer.headers[.connection] = "close"
            throw answer
        } catch let error as StorageError where error.isFileChange {
            // The database file was removed or replaced: the process is stopping.
            // The log names the file; the answer does not (no path of the server reaches a client).
            context.logger.error("database file gone", metadata: ["error": "\(error)"])
            throw APIError(
                .serviceUnavailable, code: "database_gone", "the server's database was removed or replaced: it is stopping; try again shortly")
        } catch  where PostgresStore.isUnavailable(error) {
            // PostgreSQL cannot be reached, is restarting, or gave the transaction up: nothing was written; the client
            // tries again (the pool reconnects meanwhile).
            context.logger.warning("database unavailable", metadata: ["error": "\(PostgresStore.reason(error, detail: false))"])
            var answer = APIError(.serviceUnavailable, code: "database_unavailable", "the database cannot be reached just now; try again shortly")
            answer.headers[.retryAfter] = "2"
            throw answer
        } catch  where PostgresStore.isDataException(error) {
            // A value of the request PostgreSQL cannot hold (a NUL character, a number past its column) that no check
            // before it caught: the request's fault. The server's own words (its message, detail and code) go to the
            // log, not to the client.
            context.logger.info("a value the database cannot hold", metadata: ["error": "\(PostgresStore.reason(error, detail: false))"])
            throw APIError.badRequest("bad_request", "a value of the request cannot be stored (a character or a number out of range)")
        } catch  where AppDatabase.isMissingReference(error) || PostgresStore.isMissingReference(error) || error is UserStoreError {
            // The caller's user went while the request ran (a guest merged into an account by a sign-in, or purged):
            // their token is no longer valid, as the next request would find.
            context.logger.info("the caller's user was removed during the request", metadata: ["error": "\(error)"])
            throw APIError(.unauthorized, code: "unauthorized", "this token's user was signed in to an account or removed meanwhile: sign in again")
        } catch {
            // A domain error a route did not answer itself (`answering`) is still answered by the one table: a request's
            // fault is never a 500. (A limit a store enforced came out as 500 where its route forgot to.)
            if let answer = APIError(error, in: .answer) {
                // Logged as an error all the same: the route should answer it itself, and a fault of the server's own data
                // (a verse the selection chose and the store has not) must reach whoever watches the errors.
                context.logger.error("a domain error its route did not answer", metadata: ["error": "\(PostgresStore.reason(error, detail: false))"])
                throw answer
            }
            context.logger.error("unexpected error", metadata: ["error": "\(PostgresStore.reason(error, detail: false))"])
            throw APIError(.internalServerError, code: "internal", "internal error")
        }
    }
}

extension Calendar {
    static let gregorianUTC: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The next local midnight in `zone` after `now`.
    func nextMidnight(after now: Date, in zone: TimeZone) -> Date {
        var calendar = self
        calendar.timeZone = zone
        let startOfDay = calendar.startOfDay(for: now)
        return calendar.date(byAdding: .day, value: 1, to: startOfDay) ?? now.addingTimeInterval(86_400)
    }
}

/// What one user may have and do: devices (a registration past it is 409 `too_many_devices`); requests that change
/// something, per session, in `Throttles.writes`.
public struct UserLimits: Sendable, Equatable {
    public var devicesPerUser: Int

    public init(devicesPerUser: Int = 20) { self.devicesPerUser = max(1, devicesPerUser) }
}

/// The reader's language from `?lang=` (en or ar), nil when not given; anything else is 400 `bad_language`.
func readerLanguage(_ request: Request) throws -> String? {
    guard let value = request.uri.queryParameters["lang"].map(String.init) else { return nil }
    guard AppDatabase.readerLanguages.contains(value) else {
        throw APIError.badRequest(
            "bad_language", "unknown language '\(value.prefix(40))': expected one of \(AppDatabase.readerLanguages.joined(separator: ", "))")
    }
    return value
}
