import Foundation
import HTTPTypes
import Hummingbird

/// Every error the API returns: `{"error": {"code", "message"}}` with a 4xx (or, for a bug, a 500 that says nothing
/// more than that). Thrown by routes; turned into a response here, in one place.
public struct APIError: HTTPResponseError, Sendable {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public static func badRequest(_ code: String, _ message: String) -> APIError { APIError(.badRequest, code: code, message) }
    public static func notFound(_ code: String, _ message: String) -> APIError { APIError(.notFound, code: code, message) }

    struct Body: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
        }
        let error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        let body = (try? JSONText.encoder.encode(Body(error: .init(code: code, message: message)))) ?? Data()
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

enum JSONText {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
