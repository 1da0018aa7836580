import Crypto
import Encodings
import Foundation
import Testing

@testable import PushServices

/// The one rule for a Web Push endpoint's host (`WebPushHosts`), which registering a device and sending to it both
/// follow: the sender refuses what the rule refuses, without a request, and takes what it takes.
@Suite struct WebPushHostsTests {
    static let hosts = WebPushHosts(adding: ["Push.Example.ORG"])

    static let cases: [(endpoint: String, allowed: Bool)] = [
        ("https://fcm.googleapis.com/fcm/send/abc:def", true),
        ("https://updates.push.services.mozilla.com/wpush/v2/x", true),
        ("https://web.push.apple.com/QGx", true),
        ("https://db5p.notify.windows.com/w/?token=x", true),
        ("https://FCM.googleapis.com:443/fcm/send/x", true),
        ("https://push.example.org/send/1", true),
        ("https://a.push.example.org/send/1", true),
        // Another host, however it is spelt, is not a push service.
        ("https://169.254.169.254/latest/meta-data/", false),
        ("https://localhost/x", false),
        ("https://127.0.0.1:8443/x", false),
        ("https://evilfcm.googleapis.com.example.net/x", false),
        ("https://fcm.googleapis.com.evil.example/x", false),
        ("https://notpush.example.org/x", false),
        // Not https, or no host.
        ("http://fcm.googleapis.com/fcm/send/x", false),
        ("http://localhost/", false),
        ("https:///x", false),
        ("not a url", false),
    ]

    /// The setting's form: host names separated by commas, blanks ignored, case folded; anything else refused, naming
    /// the entry.
    @Test func theSettingIsHostNamesSeparatedByCommas() throws {
        #expect(try WebPushHosts(setting: " Push.Example.ORG, ,a-b.example ") == WebPushHosts(adding: ["push.example.org", "a-b.example"]))
        #expect(try WebPushHosts(setting: "") == WebPushHosts())
        for (text, entry) in [
            ("https://push.example.org", "https://push.example.org"), ("a.example, b.example:443", "b.example:443"), ("a b", "a b"),
        ] {
            #expect(throws: WebPushHosts.Refusal(reason: "the entry '\(entry)' is not a host name: expected host names separated by commas")) {
                try WebPushHosts(setting: text)
            }
        }
    }

    @Test func knownServicesAndAddedHostsAreAllowedAndNothingElse() {
        for (endpoint, allowed) in Self.cases {
            #expect(Self.hosts.allows(endpoint) == allowed, "\(endpoint)")
        }
        // The known services alone, without the added host; the host named as the rule reads it.
        #expect(!WebPushHosts().allows("https://push.example.org/send/1"))
        #expect(WebPushHosts().allows("https://fcm.googleapis.com/fcm/send/x"))
        #expect(WebPushHosts.host(of: "https://Push.Example.ORG:8443/a/b") == "push.example.org")
        #expect(WebPushHosts.host(of: "http://push.example.org/") == nil)
        #expect(WebPushSender.knownServices == WebPushHosts.knownServices)
    }

    /// The sender holds the same rule: an endpoint it refuses is refused before any request (no network here), and
    /// one it takes is one registration takes.
    @Test func theSenderFollowsTheSameRule() async throws {
        let sender = WebPushSender(
            client: .shared(), vapid: try VAPIDKey(privateKey: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org"), hosts: Self.hosts,
            store: MemoryCredentialStore())
        let key = "B" + String(repeating: "A", count: 86)
        for (endpoint, allowed) in Self.cases {
            #expect(sender.allows(endpoint) == allowed, "\(endpoint)")
            guard !allowed else { continue }
            let outcome = await sender.send(
                endpoint: endpoint, p256dh: key, auth: "AAAAAAAAAAAAAAAAAAAAAA", ttl: 60, urgency: "normal", topic: "t", plaintext: Data("{}".utf8),
                now: Date(timeIntervalSince1970: 1_800_000_000))
            #expect(outcome == .failed(reason: "Web Push endpoint is not on an allowed push service (web_push_hosts)"), "\(endpoint)")
        }
    }
}
