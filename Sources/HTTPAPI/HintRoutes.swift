import Delivery
import Engagement
import Foundation
import Hummingbird
import Onboarding

/// Contextual hints and the app events their rules count.
func addHintRoutes(_ router: Router<APIContext>, _ environment: APIEnvironment) {
    let users = environment.users
    let catalog = environment.hints

    router.get("/v1/hints") { _, context -> Response in
        let (user, token) = try context.requireSession()
        let hintContext = try await users.hintContext(userID: user.id, token: token)
        return json(HintsReport(hints: hintContext.eligible(catalog, now: environment.clock()), tutorial: hintContext.tutorial))
    }

    for (path, change) in [("shown", HintChange.shown), ("dismissed", .dismissed)] {
        router.post("/v1/hints/:id/\(path)") { _, context -> Response in
            let (user, token) = try context.requireSession()
            let id = try context.pathParameter("id")
            guard let hint = catalog.hint(id) else { throw APIError.notFound("hint_not_found", "no hint '\(id)'") }
            let record = try await answering(.answer) {
                try await users.changeHint(hint, change, catalog: catalog, userID: user.id, token: token, now: environment.clock())
            }
            return json(HintStateReport(id: hint.id, record: record))
        }
    }

    // {"enabled": true|false}; no body turns tutorial mode on. It lasts as long as this session.
    router.post("/v1/hints/tutorial") { request, context -> Response in
        let (_, token) = try context.requireSession()
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        var enabled = true
        if body.readableBytes > 0 {
            let object = try jsonObject(body)
            if let unknown = Set(object.keys).subtracting(["enabled"]).sorted().first {
                throw APIError.badRequest("unknown_field", "unknown field '\(unknown)'")
            }
            if let value = object["enabled"] {
                guard let flag = JSONFlag.bool(value) else { throw APIError.badRequest("bad_request", "'enabled' must be true or false") }
                enabled = flag
            }
        }
        try await users.setTutorial(enabled, token: token)
        return json(["tutorial": enabled])
    }

    router.post("/v1/hints/reset") { _, context -> Response in
        let user = try context.requireIdentity()
        try await users.resetHints(userID: user.id)
        return json(["reset": true])
    }

    // {"name": "verse_opened"}: counted for the hint rules.
    router.post("/v1/events") { request, context -> Response in
        let user = try context.requireIdentity()
        let object = try await jsonObject(request, context)
        if let unknown = Set(object.keys).subtracting(["name"]).sorted().first {
            throw APIError.badRequest("unknown_field", "unknown field '\(unknown)'")
        }
        guard let name = object["name"] as? String, HintRules.isEventName(name) else {
            throw APIError.badRequest("bad_event", "'name' must be 1 to 64 of a-z, 0-9 and _")
        }
        let count = try await answering(.answer) { try await users.recordAppEvent(name, userID: user.id, now: environment.clock()) }
        return json(EventCountReport(name: name, count: count))
    }
}

struct HintsReport: Encodable {
    let hints: [HintCatalog.Hint]
    let tutorial: Bool

    enum CodingKeys: String, CodingKey { case hints, tutorial }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hints.map { ["id": $0.id, "title": $0.title, "body": $0.body] }, forKey: .hints)
        try container.encode(tutorial, forKey: .tutorial)
    }
}

struct HintStateReport: Encodable {
    let id: String
    let record: HintRecord

    enum CodingKeys: String, CodingKey { case id, shownAt = "shown_at", dismissedAt = "dismissed_at" }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(record.shownAt?.iso8601UTC, forKey: .shownAt)
        try container.encode(record.dismissedAt?.iso8601UTC, forKey: .dismissedAt)
    }
}

struct EventCountReport: Encodable {
    let name: String
    let count: Int
}
