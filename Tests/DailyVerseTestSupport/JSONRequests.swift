import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting

/// JSON requests to the API under test, through HummingbirdTesting's client, and their answers as dictionaries. A
/// suite adopts it to call `post`, `get`, `token`… directly; other code uses `JSONAPI()`.
public protocol JSONRequests {}

/// A body that was not the JSON object a test expected.
public struct NotAJSONObject: Error, CustomStringConvertible {
    public let description: String
}

extension JSONRequests {
    public func object(_ buffer: ByteBuffer) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] else {
            throw NotAJSONObject(description: "not a JSON object: \(String(buffer: buffer).prefix(200))")
        }
        return object
    }

    public func body(_ object: [String: Any]) throws -> ByteBuffer { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object)) }

    public func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)", .contentType: "application/json"] }

    /// POSTs JSON, returns (status, body).
    public func post(
        _ client: some TestClientProtocol, _ uri: String, _ json: [String: Any], token: String? = nil
    ) async throws -> (Int, [String: Any]) {
        try await client.execute(uri: uri, method: .post, headers: token.map(bearer) ?? [.contentType: "application/json"], body: try body(json)) {
            response in
            (response.status.code, response.body.readableBytes > 0 ? try object(response.body) : [:])
        }
    }

    public func get(_ client: some TestClientProtocol, _ uri: String, token: String?) async throws -> (Int, [String: Any]) {
        try await client.execute(uri: uri, method: .get, headers: token.map(bearer) ?? [:]) { response in
            (response.status.code, response.body.readableBytes > 0 ? try object(response.body) : [:])
        }
    }

    /// Any method, with a bearer token and an optional JSON body; returns (status, body).
    public func send(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ json: [String: Any]? = nil, token: String
    ) async throws -> (Int, [String: Any]) {
        try await client.execute(uri: uri, method: method, headers: bearer(token), body: try json.map { try body($0) }) { response in
            (response.status.code, response.body.readableBytes > 0 ? try object(response.body) : [:])
        }
    }

    public func token(_ json: [String: Any]) -> String { json["token"] as? String ?? "" }
    public func user(_ json: [String: Any]) -> [String: Any] { json["user"] as? [String: Any] ?? [:] }
}

/// `JSONRequests` on its own.
public struct JSONAPI: JSONRequests, Sendable {
    public init() {}
}
