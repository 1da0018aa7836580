import DailyVerseTestSupport
import Foundation
import HTTPTypes
import HijriCalendar
import Hummingbird
import HummingbirdTesting
import Notifications
import Testing
import Yams

@testable import Accounts
@testable import HTTPAPI

/// `data/openapi.yaml` against the running router: the same routes, every operation exercised, every status
/// documented and every JSON body valid against its schema.
@Suite struct ContractTests {
    let helper = JSONAPI()
    let spec: [String: Any]

    init() throws {
        let text = try OpenAPIDocument.load(from: dataDirectory)
        spec = try #require(try Yams.load(yaml: text) as? [String: Any])
    }

    var paths: [String: [String: Any]] { spec["paths"] as? [String: [String: Any]] ?? [:] }

    /// The kinds the document lists are the code's, in both directions: a platform, calendar or locale added on one
    /// side only fails here (CONTRIBUTING, "Adding a push service, a calendar or a store").
    @Test func theDocumentsKindsAreTheCodes() throws {
        let schemas = try #require((spec["components"] as? [String: Any])?["schemas"] as? [String: Any])
        func values(_ schema: Any?) -> Set<String> { Set(((schema as? [String: Any])?["enum"] as? [Any] ?? []).compactMap { $0 as? String }) }
        let device = (schemas["Device"] as? [String: Any])?["properties"] as? [String: Any]
        let patch = (schemas["DevicePatch"] as? [String: Any])?["properties"] as? [String: Any]
        #expect(values(device?["platform"]) == Set(Platform.allCases.map(\.rawValue)))
        #expect(values(patch?["platform"]) == Set(Platform.allCases.map(\.rawValue)))
        #expect(values(schemas["CalendarKind"]) == Set(CalendarKind.allCases.map(\.rawValue)))
        #expect(values(schemas["Locale"]) == Set(DeviceLocale.allCases.map(\.rawValue)))
    }

    /// The document's email pattern refuses every character the server refuses as invisible, and takes the rest: a
    /// client (or Schemathesis) that follows the document is never refused for a character it could not know of.
    @Test func theEmailPatternRefusesWhatTheServerRefuses() throws {
        let schemas = try #require((spec["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let pattern = try #require((schemas["Email"] as? [String: Any])?["pattern"] as? String)
        let regex = try NSRegularExpression(pattern: pattern)
        func matches(_ text: String) -> Bool {
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        var invisible = 0
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let email = "a\(Character(scalar))b@example.org"
            // Every scalar the server refuses is refused by the pattern; of the rest, a sample (every 97th) matches.
            if Email.isInvisible(scalar) {
                invisible += 1
                #expect(!matches(email), "U+\(String(value, radix: 16)) is refused by the server but not by the document")
                #expect((try? Email.normalize(email)) == nil)
            } else if value % 97 == 0, !scalar.properties.isWhitespace, scalar.properties.generalCategory != .control,
                (try? Email.normalize(email)) != nil
            {
                #expect(matches(email), "U+\(String(value, radix: 16)) is taken by the server but refused by the document")
            }
        }
        #expect(invisible > 4000)
    }

    /// "GET /v1/devices/{id}" for every operation in the document.
    var operations: Set<String> {
        var all: Set<String> = []
        for (path, item) in paths {
            for method in ["get", "put", "post", "patch", "delete"] where item[method] != nil { all.insert("\(method.uppercased()) \(path)") }
        }
        return all
    }

    @Test func theDocumentAndTheRouterHaveTheSameRoutes() throws {
        #expect(spec["openapi"] as? String == "3.1.0")
        let router = buildRouter(try makeEnvironment(clock: { fixedNow }))
        let routes = Set(
            router.routes.map { route in
                // Hummingbird writes captures as ":name"; OpenAPI as "{name}".
                let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                return "\(route.method.rawValue) /" + path.joined(separator: "/")
            })
        #expect(routes.subtracting(operations).isEmpty, "routes not in openapi.yaml: \(routes.subtracting(operations).sorted())")
        #expect(operations.subtracting(routes).isEmpty, "documented but not routed: \(operations.subtracting(routes).sorted())")
    }

    /// One call: the template it exercises, and what came back.
    struct Call {
        let method: HTTPRequest.Method
        let template: String
        let status: Int
        let contentType: String?
        let body: Data
    }

    final class Calls: @unchecked Sendable { var list: [Call] = [] }

    @Test func everyOperationAnswersAsDocumented() async throws {
        let recorded = Calls()
        let helper = self.helper
        try await makeApp(now: fixedNow).test(.router) { client in
            func call(
                _ method: HTTPRequest.Method, _ template: String, _ uri: String? = nil, _ json: [String: Any]? = nil, token: String? = nil
            ) async throws -> [String: Any] {
                var headers: HTTPFields = [.contentType: "application/json"]
                if let token { headers[.authorization] = "Bearer \(token)" }
                let result = try await client.execute(
                    uri: uri ?? template, method: method, headers: headers, body: try json.map { try helper.body($0) }
                ) {
                    Call(
                        method: method, template: template, status: $0.status.code, contentType: $0.headers[.contentType], body: Data(buffer: $0.body)
                    )
                }
                recorded.list.append(result)
                return (try? JSONSerialization.jsonObject(with: result.body)) as? [String: Any] ?? [:]
            }
            _ = try await call(.get, "/health")
            _ = try await call(.get, "/metrics")
            _ = try await call(.get, "/openapi.yaml")
            _ = try await call(.get, "/v1/today", "/v1/today?tz=Asia/Baghdad")
            _ = try await call(.get, "/v1/today", "/v1/today?tz=Mars/Olympus")
            _ = try await call(.get, "/v1/today", "/v1/today?tz=Asia/Baghdad&lang=ar")
            _ = try await call(.get, "/v1/today", "/v1/today?tz=Asia/Baghdad&lang=fr")
            _ = try await call(.get, "/v1/verses/{key}", "/v1/verses/97:1-5?lang=ar")
            _ = try await call(.get, "/v1/occasions/{id}", "/v1/occasions/ghadir?lang=xx")
            _ = try await call(.get, "/v1/verses/{key}", "/v1/verses/2:255")
            _ = try await call(.get, "/v1/verses/{key}", "/v1/verses/2:999")
            _ = try await call(.get, "/v1/occasions/{id}", "/v1/occasions/birth-of-imam-al-sadiq")
            _ = try await call(.get, "/v1/occasions/{id}", "/v1/occasions/no-such-day")
            _ = try await call(.get, "/v1/verses/{key}/commentary/{layer}", "/v1/verses/97:1-5/commentary/classical_shia")
            _ = try await call(.get, "/v1/verses/{key}/commentary/{layer}", "/v1/verses/2:255/commentary/foundation")
            _ = try await call(.get, "/v1/verses/{key}/commentary/{layer}", "/v1/verses/2:255/commentary/tafsir")
            _ = try await call(.get, "/v1/verses/{key}/commentary/{layer}", "/v1/verses/2:999/commentary/foundation")
            _ = try await call(.get, "/v1/verses/{key}/commentary/{layer}", "/v1/verses/2:0/commentary/foundation")
            _ = try await call(.get, "/v1/calendar/{year}", "/v1/calendar/1446")
            _ = try await call(.get, "/v1/calendar/{year}", "/v1/calendar/1446?calendar=lunar")
            _ = try await call(.get, "/v1/crescent/{file}", "/v1/crescent/2026-02-17.svg")
            _ = try await call(.get, "/v1/crescent/{file}", "/v1/crescent/2026-02-17.gif")
            _ = try await call(.get, "/v1/themes")
            _ = try await call(.get, "/v1/push/vapid-public-key")
            _ = try await call(.get, "/v1/onboarding/flow", "/v1/onboarding/flow?tz=Asia/Baghdad")
            let guest = helper.token(try await call(.post, "/v1/guests"))
            let account = helper.token(try await call(.post, "/v1/accounts", nil, ["email": "c@example.org", "password": "a long passphrase"]))
            _ = try await call(.post, "/v1/accounts", nil, ["email": "c@example.org", "password": "a long passphrase"])
            _ = try await call(.post, "/v1/sessions", nil, ["email": "c@example.org", "password": "wrong password!"])
            let second = helper.token(try await call(.post, "/v1/sessions", nil, ["email": "c@example.org", "password": "a long passphrase"]))
            _ = try await call(.get, "/v1/me", token: guest)
            _ = try await call(.get, "/v1/me")
            _ = try await call(.patch, "/v1/me/settings", nil, ["reminder_time": "06:00"], token: guest)
            _ = try await call(.patch, "/v1/me/settings", nil, ["reminder_time": "6am"], token: guest)
            _ = try await call(.get, "/v1/onboarding", token: guest)
            _ = try await call(.post, "/v1/onboarding/events", nil, ["type": "view"], token: guest)
            _ = try await call(.post, "/v1/onboarding/events", nil, ["type": "complete"], token: guest)
            _ = try await call(.get, "/v1/bookmarks", token: guest)
            _ = try await call(.put, "/v1/bookmarks/{key}", "/v1/bookmarks/2:255", token: guest)
            _ = try await call(.put, "/v1/bookmarks/{key}", "/v1/bookmarks/2:255", token: guest)
            _ = try await call(.delete, "/v1/bookmarks/{key}", "/v1/bookmarks/2:255", token: guest)
            _ = try await call(.delete, "/v1/bookmarks/{key}", "/v1/bookmarks/2:255", token: guest)
            let created = try await call(
                .post, "/v1/devices", nil, ["platform": "apns", "token": String(repeating: "ab", count: 32), "timezone": "UTC"], token: guest)
            let id = (created["device"] as? [String: Any])?["id"] as? String ?? ""
            _ = try await call(
                .post, "/v1/devices", nil, ["platform": "apns", "token": String(repeating: "ab", count: 32), "timezone": "UTC"], token: guest)
            _ = try await call(.post, "/v1/devices", nil, ["platform": "apns", "token": "x", "timezone": "UTC"], token: guest)
            _ = try await call(
                .post, "/v1/devices", nil,
                [
                    "platform": "webpush", "timezone": "UTC",
                    "token": [
                        "endpoint": "https://fcm.googleapis.com/fcm/send/1", "p256dh": "BA" + String(repeating: "A", count: 85),
                        "auth": "AAAAAAAAAAAAAAAAAAAAAA",
                    ],
                ],
                token: guest)
            // An endpoint off the push services: 400 push_service_not_allowed.
            _ = try await call(
                .post, "/v1/devices", nil,
                [
                    "platform": "webpush", "timezone": "UTC",
                    "token": [
                        "endpoint": "https://169.254.169.254/latest", "p256dh": "BA" + String(repeating: "A", count: 85),
                        "auth": "AAAAAAAAAAAAAAAAAAAAAA",
                    ],
                ],
                token: guest)
            _ = try await call(.get, "/v1/devices", token: guest)
            _ = try await call(.patch, "/v1/devices/{id}", "/v1/devices/\(id)", ["locale": "ar"], token: guest)
            _ = try await call(.patch, "/v1/devices/{id}", "/v1/devices/\(id)", ["locale": "ar"], token: account)
            _ = try await call(.delete, "/v1/devices/{id}", "/v1/devices/\(id)", token: account)
            _ = try await call(.delete, "/v1/devices/{id}", "/v1/devices/\(id)", token: guest)
            _ = try await call(.post, "/v1/events", nil, ["name": "verse_opened"], token: guest)
            _ = try await call(.post, "/v1/events", nil, ["name": "Verse Opened"], token: guest)
            _ = try await call(.get, "/v1/hints", token: guest)
            _ = try await call(.post, "/v1/hints/{id}/shown", "/v1/hints/layers_swipe/shown", token: guest)
            _ = try await call(.post, "/v1/hints/{id}/dismissed", "/v1/hints/layers_swipe/dismissed", token: guest)
            _ = try await call(.post, "/v1/hints/{id}/shown", "/v1/hints/bookmark_verse/shown", token: guest)
            _ = try await call(.post, "/v1/hints/{id}/dismissed", "/v1/hints/nonsense/dismissed", token: guest)
            _ = try await call(.post, "/v1/hints/tutorial", nil, ["enabled": true], token: second)
            _ = try await call(.post, "/v1/hints/reset", token: second)
            _ = try await call(.delete, "/v1/sessions", token: second)
            _ = try await call(.delete, "/v1/sessions", token: second)
        }
        var exercised: Set<String> = []
        for call in recorded.list {
            let name = "\(call.method.rawValue) \(call.template)"
            exercised.insert(name)
            let operation = try #require(paths[call.template]?[call.method.rawValue.lowercased()] as? [String: Any], "\(name) is not documented")
            let responses = operation["responses"] as? [String: Any] ?? [:]
            guard let documented = responses[String(call.status)] else {
                Issue.record("\(name) answered \(call.status), which openapi.yaml does not list")
                continue
            }
            let response = resolve(documented)
            guard let content = response["content"] as? [String: Any] else {
                #expect(call.body.isEmpty, "\(name) \(call.status) has a body openapi.yaml does not describe")
                continue
            }
            if let json = content["application/json"] as? [String: Any], let schema = json["schema"] {
                #expect(call.contentType?.hasPrefix("application/json") == true, "\(name) \(call.status): \(call.contentType ?? "no content type")")
                let value = try JSONSerialization.jsonObject(with: call.body, options: [.fragmentsAllowed])
                for problem in validate(value, against: schema, at: "\(name) \(call.status)") { Issue.record("\(problem)") }
            } else {
                let type = try #require(content.keys.first)
                #expect(call.contentType?.hasPrefix(type) == true, "\(name): \(call.contentType ?? "no content type") is not \(type)")
            }
        }
        #expect(operations.subtracting(exercised).isEmpty, "not exercised: \(operations.subtracting(exercised).sorted())")
    }

    /// `serve` refuses to start without the document, rather than answering 404 for it.
    @Test func aMissingDocumentIsAnErrorNamingTheFile() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-no-openapi-\(getpid())")
        #expect {
            try OpenAPIDocument.load(from: empty)
        } throws: { error in
            "\(error)" == "missing data file '\(empty.appendingPathComponent("openapi.yaml").path)'"
        }
    }

    @Test func theValidatorRefusesWhatTheSchemasDoNotAllow() {
        let signedIn: [String: Any] = ["$ref": "#/components/schemas/SignedIn"]
        #expect(validate(["user": ["id": "u", "mode": "guest"], "token": "t"], against: signedIn, at: "ok").isEmpty)
        #expect(!validate(["user": ["id": "u", "mode": "robot"], "token": "t"], against: signedIn, at: "enum").isEmpty)
        #expect(!validate(["user": ["id": "u", "mode": "guest"]], against: signedIn, at: "required").isEmpty)
        #expect(!validate(["user": ["id": 7, "mode": "guest"], "token": "t"], against: signedIn, at: "type").isEmpty)
        let flag: [String: Any] = ["type": "boolean"]
        #expect(validate(true, against: flag, at: "bool").isEmpty)
        #expect(!validate(NSNumber(value: 1), against: flag, at: "one").isEmpty)
    }

    /// Follows a `$ref` within the document.
    func resolve(_ node: Any) -> [String: Any] {
        guard let object = node as? [String: Any] else { return [:] }
        guard let reference = object["$ref"] as? String, reference.hasPrefix("#/") else { return object }
        var current: Any = spec
        for part in reference.dropFirst(2).split(separator: "/") { current = (current as? [String: Any])?[String(part)] ?? [:] }
        return resolve(current)
    }

    /// The subset of JSON Schema the document uses: type (one or several), required, properties, items, enum, oneOf.
    func validate(_ value: Any, against node: Any, at place: String) -> [String] {
        let schema = resolve(node)
        if let choices = schema["oneOf"] as? [Any] {
            let matching = choices.filter { validate(value, against: $0, at: place).isEmpty }
            return matching.count == 1 ? [] : ["\(place): matches \(matching.count) of oneOf"]
        }
        if let allowed = schema["enum"] as? [Any] {
            let text = (value as? String) ?? (value is NSNull ? "null" : "\(value)")
            let names = allowed.map { $0 is NSNull ? "null" : "\($0)" }
            if !names.contains(text) { return ["\(place): '\(text)' is not one of \(names)"] }
        }
        let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map { [$0] } ?? []
        if !types.isEmpty && !types.contains(where: { Self.isType(value, $0) }) {
            return ["\(place): \(type(of: value)) \(String(describing: value).prefix(60)) is not \(types)"]
        }
        var problems: [String] = []
        if let object = value as? [String: Any] {
            for key in schema["required"] as? [String] ?? [] where object[key] == nil { problems.append("\(place): missing '\(key)'") }
            for (key, property) in schema["properties"] as? [String: Any] ?? [:] {
                if let child = object[key] { problems += validate(child, against: property, at: "\(place).\(key)") }
            }
        }
        if let array = value as? [Any], let items = schema["items"] {
            for (index, element) in array.enumerated() { problems += validate(element, against: items, at: "\(place)[\(index)]") }
        }
        return problems
    }

    static func isType(_ value: Any, _ type: String) -> Bool {
        switch type {
        case "null": return value is NSNull
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        // JSONSerialization gives booleans as numbers whose type code is "c" (and integers "i" or "q").
        case "boolean": return (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
        case "integer":
            guard let number = value as? NSNumber, !isType(value, "boolean") else { return false }
            return number.doubleValue == number.doubleValue.rounded()
        case "number": return value is NSNumber && !isType(value, "boolean")
        default: return false
        }
    }
}

@Suite struct MetricsRouteTests {
    @Test func requestsAreCountedPerRoutePatternAndStatus() async throws {
        try await makeApp(now: fixedNow).test(.router) { client in
            for uri in ["/v1/today?tz=UTC", "/v1/today?tz=Asia/Tokyo", "/v1/verses/2:255", "/v1/verses/1:1", "/v1/today?tz=Mars/Olympus"] {
                _ = try await client.execute(uri: uri, method: .get) { $0.status }
            }
            let text = try await client.execute(uri: "/metrics", method: .get) { response -> String in
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                return String(buffer: response.body)
            }
            #expect(text.contains(#"http_requests_total{method="GET",route="/v1/today",status="200"} 2"#), "\(text.prefix(2000))")
            #expect(text.contains(#"http_requests_total{method="GET",route="/v1/today",status="400"} 1"#))
            // The route's pattern, not the raw path: a verse key never becomes a label of its own.
            #expect(
                text.contains(#"http_requests_total{method="GET",route="/v1/verses/{key}",status="200"} 2"#)
                    || text.contains(#"route="/v1/verses/:key",status="200"} 2"#))
            #expect(!text.contains("2:255"))
            #expect(text.contains("http_request_duration_seconds_bucket"))
        }
    }
}

@Suite struct TodayCacheTests {
    @Test func todayIsWorkedOutOncePerZoneAndDayAndRefreshedAfterAMinute() async throws {
        let clock = SettableClock()  // 2025-03-01T08:00Z
        let environment = try makeEnvironment(clock: { clock.now })
        try await Application(router: buildRouter(environment)).test(.router) { client in
            func today() async throws -> (String?, String?, String) {
                try await client.execute(uri: "/v1/today?tz=Asia/Baghdad&calendar=sighted", method: .get) {
                    ($0.headers[.eTag], $0.headers[.cacheControl], String(buffer: $0.body))
                }
            }
            let first = try await today()
            clock.now = clock.now.addingTimeInterval(30)
            let second = try await today()
            #expect(first.0 == second.0)
            // The body is kept; the time left until midnight in Baghdad (21:00Z) is not.
            #expect(first.1 == "public, max-age=46800")
            #expect(second.1 == "public, max-age=46770")
            // A sighting published for Ramadan 1446 a day later moves the Hijri date; within a minute the new day shows.
            try environment.database.publishMonthStart(
                PublishedMonthStart(year: 1446, month: 9, firstDay: try CivilDate(parsing: "2025-03-02")), at: clock.now)
            #expect(try await today().0 == first.0)
            clock.now = clock.now.addingTimeInterval(31)
            let refreshed = try await today()
            #expect(refreshed.0 != first.0)
            #expect(refreshed.2.contains("\"month\":8"))
        }
    }
}
