import ContentStore
import Diagnostics
import Foundation
import Hummingbird
import Metrics
import Prometheus

/// Counts requests and times them per route (its pattern, never the raw path: ids would make a label per user)
/// and status, through swift-metrics into the environment's Prometheus registry.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let factory: PrometheusMetricsFactory

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var status = 500
        defer {
            let route = context.endpointPath ?? "unmatched"
            let dimensions = [("method", request.method.rawValue), ("route", route), ("status", String(status))]
            Counter(label: "http_requests_total", dimensions: dimensions, factory: factory).increment()
            let elapsed = ContinuousClock.now - start
            Timer(label: "http_request_duration_seconds", dimensions: [("method", request.method.rawValue), ("route", route)], factory: factory)
                .recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        }
        do {
            let response = try await next(request, context)
            status = response.status.code
            return response
        } catch let error as HTTPResponseError {
            status = error.status.code
            throw error
        }
    }
}

func addMetaRoutes(_ router: Router<APIContext>, _ environment: APIEnvironment) {
    router.get("/metrics") { _, _ -> Response in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: environment.metrics.emitToBuffer())))
    }

    router.get("/openapi.yaml") { _, _ -> Response in
        guard let document = environment.openAPI else { throw APIError.notFound("not_found", "no OpenAPI document was loaded") }
        return Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(string: document)))
    }
}

/// `data/openapi.yaml`, the API's contract, served as it is.
public enum OpenAPIDocument {
    /// The largest document read (it is under 100 KiB).
    static let maximumBytes = 4 << 20

    /// The document's text; a missing or unreadable file is an error naming it.
    public static func load(from directory: URL) throws -> String {
        let file = directory.appendingPathComponent("openapi.yaml")
        let bytes: [UInt8]
        do { bytes = try InputFile.contents(of: file.path, maximumBytes: maximumBytes) } catch {
            throw error.isMissing ? StoreError.missingDataFile(file.path) : StoreError.unreadableFile(error)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw StoreError.malformedData(file: "openapi.yaml", reason: "not UTF-8 text")
        }
        return text
    }
}
