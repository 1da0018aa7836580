import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization

/// The routes' paths and methods, for 405's `Allow` header. Filled once, when the router is built, before any request.
final class RouteTable: Sendable {
    private let routes = Mutex<[(segments: [String], method: String)]>([])

    /// `paths`: Hummingbird's route paths (`/v1/devices/:id`) with their methods.
    func fill(_ paths: [(path: String, method: String)]) {
        let parsed = paths.map { (segments: $0.path.split(separator: "/").map(String.init), method: $0.method) }
        routes.withLock { $0 = parsed }
    }

    /// `{id}` (as Hummingbird describes a capture) or `:id` (as routes are written).
    static func isCapture(_ segment: String) -> Bool { segment.hasPrefix("{") || segment.hasPrefix(":") }

    /// The methods some route answers at `path` (HEAD wherever GET is), sorted; empty when no route has this path.
    func methods(at path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods: Set<String> = routes.withLock { routes in
            Set(
                routes.filter { route in
                    route.segments.count == segments.count
                        && zip(route.segments, segments).allSatisfy { pattern, segment in Self.isCapture(pattern) || pattern == segment }
                }.map(\.method))
        }
        if methods.contains("GET") { methods.insert("HEAD") }
        return methods.sorted()
    }
}

/// What every request meets before its route: the body limit, whatever the route does with the body, and 405 with
/// `Allow` for a method a known path does not take (Hummingbird's router says 404 for both).
struct EdgeMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        // Over the limit, the collection throws NIO's too-many-bytes error, which ErrorMiddleware answers with 413
        // `body_too_large`, as it does for a route that decodes its body; a declared length over it is refused
        // before reading. (The HTTP parser has already refused a Content-Length that is not a number.)
        if let length = request.headers[.contentLength].flatMap(Int.init), length > context.maxUploadSize {
            throw HTTPError(.contentTooLarge)
        }
        // Only `chunked` is understood (RFC 9112 6.1: 501 for a coding the server does not implement); the body is
        // left unread, so the connection is closed after the answer.
        if let coding = request.headers[.transferEncoding], coding.trimmingCharacters(in: .whitespaces).lowercased() != "chunked" {
            var refusal = APIError(
                .notImplemented, code: "unsupported_transfer_coding",
                "Transfer-Encoding '\(coding.prefix(100))' is not supported: send the body with Content-Length or chunked alone")
            refusal.headers[.connection] = "close"
            throw refusal
        }
        // Read here for every route, whether or not it reads a body, sent with a length or in chunks.
        if request.headers[.contentLength] != nil || request.headers[.transferEncoding] != nil {
            _ = try await request.collectBody(upTo: context.maxUploadSize)
        }
        do { return try await next(request, context) } catch let error as HTTPError where error.status == .notFound {
            let allowed = routes.methods(at: request.uri.path)
            guard !allowed.isEmpty else { throw error }
            var refusal = APIError(
                .methodNotAllowed, code: "method_not_allowed",
                "\(request.method) is not allowed on \(request.uri.path): use \(allowed.joined(separator: ", "))")
            refusal.headers[.allow] = allowed.joined(separator: ", ")
            throw refusal
        }
    }
}

// MARK: - Requests the router never sees

/// Answers a request that cannot be parsed (over 1,000 headers, over 80 KiB of request line and headers in all, raw
/// non-ASCII bytes in the URL) with the API's JSON error and closes the connection: Hummingbird would answer an empty
/// 400. It sits between the HTTP codec and Hummingbird's handler, and only speaks when no request is being answered,
/// so two responses never cross. It also closes the connection after any response that says `Connection: close`.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var inFlight = 0
    private var answered = false
    private var closeAfterResponse = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { inFlight += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            if response.headerFields[.connection]?.lowercased() == "close" { closeAfterResponse = true }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            inFlight = max(0, inFlight - 1)
            guard closeAfterResponse else { return context.write(data, promise: promise) }
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.cascade(to: promise)
            written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
            context.writeAndFlush(data, promise: written)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if answered { return }  // the decoder reports every later byte too
        guard let parseError = error as? HTTPParserError, inFlight == 0 else { return context.fireErrorCaught(error) }
        answered = true
        let (status, code, message) = Self.describe(parseError)
        answerAndClose(context, status: status, code: code, message: message)
    }

    static func describe(_ error: HTTPParserError) -> (HTTPResponse.Status, String, String) {
        switch error {
        case .headerOverflow:
            (.requestHeaderFieldsTooLarge, "headers_too_large", "the request line and headers are over the limit (80 KiB in all, 1000 headers)")
        case .invalidURL:
            (.badRequest, "bad_url", "the request target is not a valid URL: bytes outside ASCII must be percent-encoded")
        default:
            (.badRequest, "bad_request", "malformed HTTP request (\(error))")
        }
    }
}

/// Closes a connection whose request does not arrive in time, whatever it sends meanwhile: its head must be complete
/// `limit` after the connection opened (or after the previous response was sent), and its body `limit` after its
/// head. The idle timeout restarts with every byte, so a client trickling a header that never ends, or a byte of body
/// now and then, would otherwise hold the connection for as long as it likes. While a request is being answered, no
/// deadline runs.
final class RequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let limit: TimeAmount
    private var pending: Scheduled<Void>?

    init(limit: TimeAmount) { self.limit = limit }

    private func arm(_ context: ChannelHandlerContext) {
        pending?.cancel()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        pending = context.eventLoop.scheduleTask(in: limit) { bound.value.close(promise: nil) }
    }

    func handlerAdded(context: ChannelHandlerContext) { arm(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            arm(context)  // the body's deadline
        case .end:
            pending?.cancel()  // answering
            pending = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A response sent: the next head's deadline (a connection kept alive).
        if case .end = unwrapOutboundIn(data) { arm(context) }
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) { pending?.cancel() }
}

/// The API's open connections, counted across the server: one over `maximum` is answered 503 `busy` and closed at
/// once, so that a flood of connections cannot take the descriptors the scheduler needs (the database, the spool,
/// the push services' connections).
public final class ConnectionLimit: Sendable {
    public let maximum: Int
    private let open = Atomic<Int>(0)

    public init(maximum: Int) { self.maximum = max(1, maximum) }

    /// How many are open now (the refused ones included, until they are closed).
    public var current: Int { open.load(ordering: .relaxed) }

    func enter() -> Bool { open.wrappingAdd(1, ordering: .relaxed).newValue <= maximum }
    func leave() { open.wrappingSubtract(1, ordering: .relaxed) }
}

/// Counts its connection in a `ConnectionLimit`, and refuses it when it is one too many.
final class ConnectionLimitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let limit: ConnectionLimit
    private var counted = false
    private var refused = false
    private var answered = false

    init(limit: ConnectionLimit) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        refused = !limit.enter()
        if refused, context.channel.isActive { refuse(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if counted { limit.leave() }
        counted = false
    }

    func channelActive(context: ChannelHandlerContext) {
        if refused { refuse(context) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !refused { context.fireChannelRead(data) }
    }

    private func refuse(_ context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        answerAndClose(
            context, status: .serviceUnavailable, code: "busy", message: "too many connections; try again shortly", headers: [.retryAfter: "1"])
    }
}

/// A handler that answers a connection itself, before or instead of the router.
protocol ConnectionAnswering: ChannelOutboundHandler where OutboundOut == HTTPResponsePart {}

extension ConnectionAnswering {
    /// Writes the API's JSON error (with `Connection: close`) and closes the connection once it is written.
    func answerAndClose(
        _ context: ChannelHandlerContext, status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:]
    ) {
        let body = (try? JSONText.encoder.encode(APIError.Body(error: .init(code: code, message: message)))) ?? Data()
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.connection] = "close"
        fields[.contentLength] = String(body.count)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    }
}

extension MalformedRequestHandler: ConnectionAnswering {}
extension ConnectionLimitHandler: ConnectionAnswering {}

/// How `serve` (and the tests that start a real server) run HTTP/1: at most `connections` open at once (one more is
/// answered 503 and closed); an idle timeout, which also bounds how long a request's head may take to arrive (a
/// connection that sends no complete request is closed, however slowly it sends) and, from its head, how long its
/// body may take; and JSON for requests that cannot be parsed.
public func apiServer(idleTimeout: TimeInterval, connections: ConnectionLimit = ConnectionLimit(maximum: 1024)) -> HTTPServerBuilder {
    let timeout = TimeAmount.milliseconds(Int64((min(max(idleTimeout, 0.001), 86_400) * 1000).rounded()))
    return .http1(
        configuration: .init(
            additionalChannelHandlers: [
                ConnectionLimitHandler(limit: connections), MalformedRequestHandler(), RequestDeadline(limit: timeout),
            ],
            idleTimeout: timeout))
}

/// The API as one Hummingbird application, as `serve`, the `http` bench and the live-server tests run it: the router
/// over `environment`, the server's edges (`apiServer`), listening on `host` and `port` (0: any free port);
/// `onListening` is told the port once it listens.
public func buildApplication(
    _ environment: APIEnvironment, host: String, port: Int, idleTimeout: TimeInterval = 60,
    connections: ConnectionLimit = ConnectionLimit(maximum: 1024),
    serverName: String = "dailyverse", logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    Application(
        router: buildRouter(environment), server: apiServer(idleTimeout: idleTimeout, connections: connections),
        configuration: .init(address: .hostname(host, port: port), serverName: serverName),
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) }, logger: logger)
}
