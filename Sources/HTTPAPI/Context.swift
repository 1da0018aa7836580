import Accounts
import Engagement
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Each request's context: who is calling, once the bearer token has been checked.
public struct APIContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: User?
    public var token: String?
    /// The client's address: the peer's, or, from a trusted proxy, the one its forwarding headers name (never a
    /// forwarded header from anyone else, which a client could forge); "local" when there is none.
    public var client: String

    /// The key the per-address throttles count this client under: its address, or an IPv6 address's /64 network.
    public var throttleKey: String { AddressRange.throttleKey(client) }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        identity = nil
        token = nil
        client = source.channel.remoteAddress?.ipAddress ?? "local"
    }

    /// Request bodies are small JSON objects.
    public var maxUploadSize: Int { 16 * 1024 }

    /// A path parameter, percent-decoded (`2%3A255` is `2:255`); 400 naming it when its encoding is not valid UTF-8
    /// or it holds a NUL character (`%00`), which no id or key has and PostgreSQL cannot take.
    public func pathParameter(_ name: String) throws -> String {
        let raw = parameters.get(name) ?? ""
        guard let decoded = raw.removingPercentEncoding else {
            throw APIError.badRequest("bad_path", "the path parameter '\(name)' is not valid percent-encoded UTF-8")
        }
        guard !decoded.contains("\u{0}") else { throw APIError.badRequest("bad_path", "the path parameter '\(name)' holds a NUL character") }
        return decoded
    }

    /// The caller, or 401.
    public func requireIdentity() throws -> User {
        guard let identity else { throw APIError(.unauthorized, code: "unauthorized", "a valid bearer token is required") }
        return identity
    }

    /// The caller and the token it signed in with (tutorial mode belongs to the session), or 401.
    public func requireSession() throws -> (User, String) {
        let user = try requireIdentity()
        guard let token else { throw APIError(.unauthorized, code: "unauthorized", "a valid bearer token is required") }
        return (user, token)
    }
}

/// Reads `Authorization: Bearer …`; an unknown or malformed token is a 401 rather than an anonymous request.
struct AuthenticationMiddleware: RouterMiddleware {
    let environment: APIEnvironment

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else { return try await next(request, context) }
        // The scheme name is case-insensitive (RFC 9110 §11.1): "bearer" is "Bearer".
        guard header.count > 7, header.prefix(7).lowercased() == "bearer ", case let token = String(header.dropFirst(7)),
            let user = try await environment.users.authenticate(token: token, now: environment.clock(), policy: environment.sessions)
        else { throw APIError(.unauthorized, code: "unauthorized", "invalid or expired token") }
        // Writes are limited per session: one user cannot keep the database's one writer busy for everyone.
        if request.method != .get, request.method != .head,
            let wait = try await environment.throttles.writes.admit("session " + SessionToken.hash(token), now: environment.clock())
        {
            throw APIError.tooManyRequests(wait, "too many changes from this session; try again later")
        }
        var context = context
        context.identity = user
        context.token = token
        return try await next(request, context)
    }
}

/// Reads the client's address through `trusted_proxies` before any route or throttle sees it.
struct ClientAddressMiddleware: RouterMiddleware {
    let proxies: TrustedProxies

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard !proxies.ranges.isEmpty else { return try await next(request, context) }
        var context = context
        context.client = proxies.client(
            peer: context.client, forwarded: request.headers[.forwarded], forwardedFor: request.headers[.xForwardedFor])
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let forwarded = HTTPField.Name("Forwarded")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
