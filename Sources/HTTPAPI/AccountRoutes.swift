import Accounts
import Engagement
import Foundation
import HTTPTypes
import HijriCalendar
import Hummingbird
import Onboarding

struct AccountRequest: Decodable {
    let email: String
    let password: String
    let displayName: String?
    enum CodingKeys: String, CodingKey { case email, password, displayName = "display_name" }
}

struct SessionRequest: Decodable {
    let email: String
    let password: String
}

struct Me: Encodable {
    let user: User
    let settings: UserSettings
}

struct SignedIn: Encodable {
    let user: User
    let token: String
}

func addAccountRoutes(_ router: Router<APIContext>, _ environment: APIEnvironment) {
    let accounts = environment.users

    router.post("/v1/guests") { _, context -> Response in
        let now = environment.clock()
        let key = "guest " + context.throttleKey
        if let wait = try await environment.throttles.guests.admit(key, now: now) {
            throw APIError.tooManyRequests(wait, "too many new guests from this address")
        }
        let (user, token) = try await accounts.createGuest(now: now)
        return json(SignedIn(user: user, token: token), status: .created)
    }

    router.post("/v1/accounts") { request, context -> Response in
        let body = try await request.decode(as: AccountRequest.self, context: context)
        let email = try answering(.body) { try Email.normalize(body.email) }
        if let name = body.displayName { try answering(.body) { try DisplayName.check(name) } }
        // Each attempt costs a password hash: limited per client address.
        let key = "account " + context.throttleKey
        if let wait = try await environment.throttles.accounts.admit(key, now: environment.clock()) {
            throw APIError.tooManyRequests(wait, "too many new accounts from this address")
        }
        let hasher = environment.passwordHasher
        let password = body.password
        let hash = try await hashing(environment) { try answering(.body) { try hasher.hash(password) } }
        // Called by a guest, it upgrades that guest in place.
        let guest = context.identity?.mode == .guest ? context.identity?.id : nil
        if context.identity?.mode == .account { throw APIError(.conflict, code: "already_an_account", "this token belongs to an account") }
        let (user, token) = try await answering(.body) {
            try await accounts.createAccount(
                email: email, passwordHash: hash, displayName: body.displayName, upgrading: guest, now: environment.clock())
        }
        return json(SignedIn(user: user, token: token), status: .created)
    }

    router.post("/v1/sessions") { request, context -> Response in
        let body = try await request.decode(as: SessionRequest.self, context: context)
        let now = environment.clock()
        let forms = Email.signInForms(body.email)
        // Counted under the email's key: spelled in fullwidth letters it is still the same email.
        let email = Email.key(forms[0])
        // An attempt is reserved before any hashing, atomically (requests sent at once cannot all pass a check made
        // before the count): for the email from this address, for this address, and for the email from anywhere.
        // Repeated failures are refused for a while, whatever the password.
        let keys = ["email " + email + " from " + context.throttleKey, "client " + context.throttleKey]
        let throttles = environment.throttles
        if let wait = try await throttles.signInPerEmail.admit("email " + email, now: now) {
            throw APIError.tooManyRequests(wait, "too many failed sign-ins for this email; try again later")
        }
        if let wait = try await throttles.signIn.admit(keys, now: now) {
            try await throttles.signInPerEmail.release("email " + email, reservedAt: now)
            throw APIError.tooManyRequests(wait, "too many sign-in attempts; try again later")
        }
        let refused = APIError(.unauthorized, code: "invalid_credentials", "the email or the password is wrong")
        // No account was ever stored under a spelling with a NUL character (PostgreSQL cannot hold one): not asked.
        let stored = try await accounts.passwordHash(emails: forms.filter { !$0.contains("\u{0}") })
        // The same work and answer whether or not the email exists.
        let password = body.password
        let encoded = stored?.hash ?? environment.decoyHash
        // A failure keeps its reservation; so does an attempt the hashing gate turned away (503), which cost no hash
        // but was an attempt all the same.
        guard try await hashing(environment, { PasswordHasher.verify(password, against: encoded) }), let stored else { throw refused }
        // A success clears the email's failures; the address keeps its attempt (each costs a hash).
        try await throttles.signIn.reset(keys[0])
        try await throttles.signInPerEmail.release("email " + email, reservedAt: now)
        // Called with a guest's token, the guest is merged into the account and retired, in the transaction that opens
        // the session: refused, changing nothing, when the guest's devices would take the account past its limit (409).
        let guest = context.identity.flatMap { $0.mode == .guest ? $0.id : nil }
        let (user, token) = try await answering(.answer) {
            try await accounts.signIn(
                userID: stored.userID, mergingGuest: guest, flow: environment.onboarding.flow, maximumDevices: environment.limits.devicesPerUser,
                now: now)
        }
        return json(SignedIn(user: user, token: token), status: .ok)
    }

    router.delete("/v1/sessions") { _, context -> Response in
        _ = try context.requireIdentity()
        if let token = context.token { try await accounts.closeSession(token: token) }
        return Response(status: .noContent)
    }

    router.get("/v1/me") { _, context -> Response in
        let user = try context.requireIdentity()
        return json(Me(user: user, settings: try await accounts.settings(userID: user.id)), status: .ok)
    }

    router.get("/v1/onboarding") { _, context -> Response in
        let user = try context.requireIdentity()
        return json(OnboardingStateJSON(try await accounts.onboardingState(userID: user.id, flow: environment.onboarding.flow)), status: .ok)
    }

    router.post("/v1/onboarding/events") { request, context -> Response in
        let user = try context.requireIdentity()
        let event = try OnboardingEventJSON.decode(try await request.decode(as: OnboardingEventJSON.self, context: context))
        let state = try await answering(.body) {
            try await accounts.applyOnboarding(event, userID: user.id, machine: environment.onboarding, now: environment.clock())
        }
        return json(OnboardingStateJSON(state), status: .ok)
    }
}

/// `{"type": …}` with `layer`, `state`, `theme` or `mode` as the type needs.
struct OnboardingEventJSON: Decodable {
    let type: String
    let layer: String?
    let state: String?
    let theme: String?
    let mode: String?

    static func decode(_ body: OnboardingEventJSON) throws -> OnboardingEvent {
        func missing(_ key: String) -> APIError { .badRequest("bad_event", "\(body.type) needs '\(key)'") }
        switch body.type {
        case "view": return .view
        case "advance": return .advance
        case "back": return .back
        case "skip": return .skip
        case "auto_advance": return .autoAdvance
        case "complete": return .complete
        case "reset": return .reset
        case "preview_layer":
            guard let layer = body.layer else { throw missing("layer") }
            return .previewLayer(layer)
        case "notification_permission":
            guard let state = body.state.flatMap(OnboardingState.Permission.init(rawValue:)) else { throw missing("state") }
            return .notificationPermission(state)
        case "select_theme":
            guard let theme = body.theme else { throw missing("theme") }
            return .selectTheme(theme)
        case "choose_account":
            guard let mode = body.mode.flatMap(OnboardingState.AccountChoice.init(rawValue:)) else { throw missing("mode") }
            return .chooseAccount(mode)
        default: throw APIError.badRequest("bad_event", "unknown event type '\(body.type)'")
        }
    }
}

/// The state as `GET /v1/onboarding` shows it.
struct OnboardingStateJSON: Encodable {
    let state: OnboardingState
    init(_ state: OnboardingState) { self.state = state }

    enum CodingKeys: String, CodingKey {
        case currentScreen = "current_screen", screensSeen = "screens_seen", skipped, skippedFrom = "skipped_from"
        case layersPreviewed = "layers_previewed", notificationPermission = "notification_permission", theme
        case accountChoice = "account_choice", startedAt = "started_at", completedAt = "completed_at", flowVersion = "flow_version"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state.currentScreen, forKey: .currentScreen)
        try container.encode(state.screensSeen, forKey: .screensSeen)
        try container.encode(state.skipped, forKey: .skipped)
        try container.encode(state.skippedFrom, forKey: .skippedFrom)
        try container.encode(state.layersPreviewed, forKey: .layersPreviewed)
        try container.encode(state.notificationPermission?.rawValue, forKey: .notificationPermission)
        try container.encode(state.theme, forKey: .theme)
        try container.encode(state.accountChoice?.rawValue, forKey: .accountChoice)
        try container.encode(state.startedAt?.iso8601UTC, forKey: .startedAt)
        try container.encode(state.completedAt?.iso8601UTC, forKey: .completedAt)
        try container.encode(state.flowVersion, forKey: .flowVersion)
    }
}

/// Password work through the environment's gate: a few at a time, 503 with Retry-After when too many are queued.
func hashing<T: Sendable>(_ environment: APIEnvironment, _ work: @escaping @Sendable () throws -> T) async throws -> T {
    do { return try await environment.hashing.run(work) } catch is HashingGate.Busy {
        var error = APIError(.serviceUnavailable, code: "busy", "too many sign-ins and sign-ups at once; try again in a moment")
        error.headers[.retryAfter] = "1"
        throw error
    }
}
