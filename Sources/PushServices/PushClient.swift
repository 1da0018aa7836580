import AsyncHTTPClient
import Diagnostics
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// The one HTTP client the senders share: HTTP/2 where the server offers it (ALPN), one connection per host reused
/// for many concurrent streams, certificate checks always on. The daemon makes it once and passes it in, like the
/// database; `shutdown()` when done.
public final class PushClient: Sendable {
    public let http: HTTPClient
    /// How long one request may take, connection included.
    public let timeout: TimeInterval
    /// Whether `shutdown()` shuts the HTTP client down (not the process-wide one `shared(timeout:)` uses).
    let owned: Bool

    /// A client over AsyncHTTPClient's process-wide one (the system's certificates, never shut down): for the
    /// webhook, which needs no settings of its own.
    public static func shared(timeout: TimeInterval = 30) -> PushClient { PushClient(http: .shared, timeout: timeout) }

    init(http: HTTPClient, timeout: TimeInterval) {
        self.http = http
        self.timeout = min(max(timeout, 1), 300)
        self.owned = false
    }

    /// `caFile`: a PEM file of certificates trusted beside the system's (a proxy's, a test's stand-in).
    public init(caFile: String? = nil, timeout: TimeInterval = 30) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            // Read as every file handed to the program is (a FIFO or a device is refused, not waited on or read
            // without end), then parsed from its bytes.
            let bytes: [UInt8]
            do { bytes = try InputFile.contents(of: caFile, maximumBytes: InputFile.maximumCertificateFileBytes) } catch {
                throw PushConfigurationError("push_ca_file", caFile, InputFile.settingReason(error))
            }
            let certificates: [NIOSSLCertificate]
            do { certificates = try NIOSSLCertificate.fromPEMBytes(bytes) } catch {
                throw PushConfigurationError("push_ca_file", caFile, "is not a PEM certificate file")
            }
            guard !certificates.isEmpty else { throw PushConfigurationError("push_ca_file", caFile, "is not a PEM certificate file") }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(10))
        configuration.redirectConfiguration = .disallow
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = min(max(timeout, 1), 300)
        self.owned = true
    }

    public func shutdown() async throws { if owned { try await http.shutdown() } }

    /// Sends a request and reads the answer (a body of at most 64 KiB is kept); a connection failure or a timeout
    /// throws.
    public func send(_ url: String, method: HTTPMethod = .POST, headers: [(String, String)], body: ByteBuffer?) async throws -> ServiceAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(body) }
        let response = try await http.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
        let bytes = try await response.body.collect(upTo: 64 * 1024)
        return ServiceAnswer(
            status: Int(response.status.code), body: Data(bytes.readableBytesView), retryAfter: response.headers.first(name: "retry-after"),
            id: response.headers.first(name: "apns-id") ?? response.headers.first(name: "location"), httpMajorVersion: response.version.major)
    }

    /// A failed request's reason as it may be stored: the error's kind, never a URL with its secrets.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let error as HTTPClientError: return "\(error)"
        case let error as NIOSSLError: return "TLS: \(error)"
        case let error as IOError: return "connection: \(error.description)"
        default: return String(describing: type(of: error)) + ": " + Answers.clean("\(error)")
        }
    }
}

/// A push setting that cannot be used: which, its value (never a key's content), and why.
public struct PushConfigurationError: UserFacingError, Equatable {
    public let description: String
    /// Why, without the setting and the value an error of a setting names: for the command line to say with where
    /// the value came from (the whole description when it names none).
    public let reason: String
    public init(_ setting: String, _ value: String, _ reason: String) {
        description = "invalid \(setting) '\(value)': \(reason)"
        self.reason = reason
    }
    public init(_ description: String) { (self.description, self.reason) = (description, description) }
}
