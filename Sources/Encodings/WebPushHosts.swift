import Foundation

/// The push services a Web Push subscription's endpoint may be on: the browsers' own and the hosts an installation
/// adds (`web_push_hosts`). One rule, `allows`, for registering a subscription (the command line, the API) and for
/// sending to it, so that a registered "endpoint" cannot make the server post anywhere else, and an endpoint every
/// send would refuse is refused when it is registered. Here because both the devices' checks (`Notifications`) and
/// the sender (`PushServices`) read it, and neither depends on the other.
public struct WebPushHosts: Hashable, Sendable {
    /// The push services of the browsers people use.
    public static let knownServices = [
        "fcm.googleapis.com", "updates.push.services.mozilla.com", "push.services.mozilla.com", "web.push.apple.com", "notify.windows.com",
    ]

    /// Host names (or their parent domains) an endpoint may be on, in lower case.
    public let hosts: [String]

    /// These hosts alone (the tests' and the benchmark's stand-ins on loopback).
    public init(_ hosts: [String]) { self.hosts = hosts.map { $0.lowercased() }.filter { !$0.isEmpty } }

    /// The known services and `extra` (the `web_push_hosts` setting).
    public init(adding extra: [String] = []) { self.init(Self.knownServices + extra) }

    /// The known services and the hosts a `web_push_hosts` setting names: host names separated by commas (blank ones
    /// ignored). An entry that is not a host name (a URL, a port, a space inside) is refused, naming it.
    public init(setting text: String) throws(Refusal) {
        let added = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        if let bad = added.first(where: { !$0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") } }) {
            throw Refusal(reason: "the entry '\(bad)' is not a host name: expected host names separated by commas")
        }
        self.init(adding: added)
    }

    /// Why a `web_push_hosts` setting was refused.
    public struct Refusal: Error, Equatable {
        public let reason: String
        public init(reason: String) { self.reason = reason }
    }

    /// The host of `endpoint` as the rule reads it, in lower case; nil unless it is an https URL with a host. (Read by
    /// `URL`, as a subscription's endpoint is checked when it is registered: one parser, so the host refused is the
    /// host named.)
    public static func host(of endpoint: String) -> String? {
        guard let url = URL(string: endpoint), url.scheme?.lowercased() == "https", let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        return host
    }

    /// Whether `endpoint` is an https URL on an allowed host or a subdomain of one.
    public func allows(_ endpoint: String) -> Bool {
        guard let host = Self.host(of: endpoint) else { return false }
        return hosts.contains { host == $0 || host.hasSuffix("." + $0) }
    }
}
