import Crypto
import Encodings
import Foundation
import NIOCore

/// Web Push (RFC 8030) with aes128gcm encryption (RFC 8291) and VAPID (RFC 8292).
public struct WebPushSender: Sendable {
    /// The push services of the browsers people use; a subscription's endpoint must be on one of them (or on a host
    /// the operator adds), so that a registered "endpoint" cannot make this server post to anywhere else.
    public static let knownServices = WebPushHosts.knownServices

    public let client: PushClient
    public let vapid: VAPIDKey
    /// The hosts an endpoint may be on: the rule registering a subscription follows too (`WebPushHosts.allows`).
    public let hosts: WebPushHosts
    let state: WebPushState

    /// `store` keeps the subscriptions known to accept this key, shared by every process of the installation.
    public init(client: PushClient, vapid: VAPIDKey, allowedHosts: [String] = WebPushSender.knownServices, store: any CredentialStore) {
        self.init(client: client, vapid: vapid, hosts: WebPushHosts(allowedHosts), store: store)
    }

    public init(client: PushClient, vapid: VAPIDKey, hosts: WebPushHosts, store: any CredentialStore) {
        self.client = client
        self.vapid = vapid
        self.hosts = hosts
        self.state = WebPushState(vapid: vapid, store: store)
    }

    /// After this many 403s in a row, with none accepted between, the VAPID key may be wrong: it is paused if no
    /// subscription has ever accepted this key and subject (a new or replaced key), or if the run has reached a
    /// subscription that accepted them before. Otherwise the 403s are the subscriptions' own: a subscription made with
    /// another server's key (anyone can register one) is refused by its service, and a run of them must not stop
    /// Web Push for everyone. (A key that stops working after it worked is refused by every subscription, and the run
    /// goes on until it reaches one of the known ones.)
    public static let forbiddenInARow = 10

    /// Whether `endpoint` is an https URL on an allowed host: the rule its registration was checked by. A device
    /// stored before that check, or with another `web_push_hosts`, is refused here at every send.
    public func allows(_ endpoint: String) -> Bool { hosts.allows(endpoint) }

    /// Encrypts `plaintext` for the subscription and posts it. `ttl`, `urgency` and `topic` as rendered.
    public func send(
        endpoint: String, p256dh: String, auth: String, ttl: Int, urgency: String, topic: String, plaintext: Data, now: Date
    ) async -> PushOutcome {
        guard allows(endpoint), let origin = VAPIDKey.origin(of: endpoint) else {
            return .failed(reason: "Web Push endpoint is not on an allowed push service (web_push_hosts)")
        }
        guard let key = Base64URL.decode(p256dh), let secret = Base64URL.decode(auth) else {
            return .unregistered(reason: "Web Push subscription keys are not base64url")
        }
        let body: Data
        do { body = try WebPushEncryption.encrypt(plaintext, p256dh: key, auth: secret) } catch let failure as WebPushEncryption.Failure {
            if case .tooLarge = failure { return .failed(reason: "Web Push: \(failure)") }
            return .unregistered(reason: "Web Push subscription: \(failure)")
        } catch {
            return .failed(reason: "Web Push encryption: \(error)")
        }
        let authorization: String
        do { authorization = try await state.authorization(origin: origin, now: now) } catch {
            return .configuration(reason: "VAPID: \(error)")
        }
        let answer: ServiceAnswer
        do {
            answer = try await client.send(
                endpoint,
                headers: [
                    ("authorization", authorization), ("ttl", String(max(0, ttl))), ("urgency", urgency), ("topic", topic),
                    ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"),
                ], body: ByteBuffer(bytes: body))
        } catch {
            return .retry(reason: "Web Push: \(PushClient.describe(error))", after: nil)
        }
        let outcome = Answers.webPush(answer, now: now)
        if await state.record(status: answer.status, endpoint: endpoint, now: now), case .failed(let reason) = outcome {
            return .configuration(reason: reason + " on every request: check the VAPID key and subject")
        }
        return outcome
    }
}

/// VAPID tokens per origin (12 hours, renewed with an hour left), the run of 403s, and the subscriptions known to
/// accept this key and subject.
///
/// The known ones are some (`knownLimit`) of the subscriptions that accepted a push, as digests of their endpoints,
/// kept in the store under the key's and subject's digest: every process reads them once, and adds to them until
/// they are that many.
actor WebPushState {
    let vapid: VAPIDKey
    let store: any CredentialStore
    /// The store's name for the known subscriptions of this key and subject.
    let name: String
    var tokens: [String: (header: String, expires: Date)] = [:]
    /// The current run of 403s, and whether it has reached a subscription known to accept the key.
    var forbidden = 0
    var runHasKnown = false
    /// The known subscriptions as stored (nil until read), and when the stored list was written (whole seconds, which
    /// come back from either database as they went in).
    var known: Set<String>?
    var knownWritten: Date?

    static let knownLimit = 1000

    init(vapid: VAPIDKey, store: any CredentialStore) {
        self.vapid = vapid
        self.store = store
        let digest = Hex.encode(SHA256.hash(data: Data((vapid.publicKeyBase64URL + " " + vapid.subject).utf8)).prefix(6))
        self.name = "webpush/accepted/\(digest)"
    }

    func authorization(origin: String, now: Date) throws -> String {
        if let cached = tokens[origin], now < cached.expires.addingTimeInterval(-3600) { return cached.header }
        let header = try vapid.authorization(audience: origin, now: now)
        if tokens.count > 1000 { tokens.removeAll() }
        tokens[origin] = (header, now.addingTimeInterval(12 * 3600))
        return header
    }

    /// Records an answer from `endpoint`; true when the run of 403s it ends or extends says the key is wrong. While
    /// the known subscriptions cannot be read (the database is away), a run says nothing.
    func record(status: Int, endpoint: String, now: Date) async -> Bool {
        let digest = Self.digest(endpoint)
        guard status == 403 else {
            (forbidden, runHasKnown) = (0, false)
            if (200..<300).contains(status) { await remember(digest, now: now) }
            // A subscription gone from its service answers nothing again: it makes room for another.
            if status == 404 || status == 410 { await forget(digest, now: now) }
            return false
        }
        forbidden += 1
        guard let known = await knownSubscriptions() else { return false }
        if known.contains(digest) { runHasKnown = true }
        return forbidden >= WebPushSender.forbiddenInARow && (known.isEmpty || runHasKnown)
    }

    /// The known subscriptions, read from the store the first time; nil while it cannot be read.
    func knownSubscriptions() async -> Set<String>? {
        if let known { return known }
        let stored: StoredCredential?
        do { stored = try await store.load(name) } catch { return nil }
        if known == nil {
            known = Set(stored?.value.split(separator: ",").map(String.init) ?? [])
            knownWritten = stored?.issuedAt
        }
        return known
    }

    /// Adds a subscription that accepted a push to the known ones, until they are `knownLimit`.
    func remember(_ digest: String, now: Date) async {
        guard let current = await knownSubscriptions(), current.count < Self.knownLimit, !current.contains(digest) else { return }
        await keep(current.union([digest]), now: now)
    }

    /// Takes a subscription its service no longer knows off the known ones.
    func forget(_ digest: String, now: Date) async {
        guard let current = await knownSubscriptions(), current.contains(digest) else { return }
        await keep(current.subtracting([digest]), now: now)
    }

    /// Keeps `list` as the known subscriptions, here and in the store (merged with what another process stored since).
    func keep(_ list: Set<String>, now: Date) async {
        known = list
        let second = now.timeIntervalSince1970.rounded(.down)
        let written = Date(timeIntervalSince1970: max(second, (knownWritten?.timeIntervalSince1970 ?? 0) + 1))
        guard
            let stored = try? await store.save(
                StoredCredential(name: name, value: list.sorted().joined(separator: ","), issuedAt: written, expiresAt: .distantFuture),
                unlessNewerThan: knownWritten)
        else { return }
        // Another process wrote its list since: both lists are known here, and the next subscription writes them.
        known = (known ?? []).union(stored.value.split(separator: ",").map(String.init))
        knownWritten = stored.issuedAt
    }

    static func digest(_ endpoint: String) -> String { Hex.encode(SHA256.hash(data: Data(endpoint.utf8)).prefix(12)) }
}
