import Crypto
import CryptoExtras
import Encodings
import Foundation
import Testing

@testable import PushServices

@Suite("Web Push encryption (RFC 8291)")
struct WebPushEncryptionTests {
    // RFC 8291 §5 and Appendix A.
    static let plaintext = "When I grow up, I want to be a watermelon"
    static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let senderPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let receiverPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let receiverPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"
        + "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
        + "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func bytes(_ text: String) throws -> Data { try #require(Base64URL.decode(text)) }

    @Test func reproducesTheRFCExampleByteForByte() throws {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(Self.senderPrivate))
        #expect(Base64URL.encode(sender.publicKey.x963Representation) == Self.senderPublic)
        let body = try WebPushEncryption.encrypt(
            Data(Self.plaintext.utf8), p256dh: Self.bytes(Self.receiverPublic), auth: Self.bytes(Self.auth), senderKey: sender,
            salt: Self.bytes(Self.salt))
        #expect(Base64URL.encode(body) == Self.body)
    }

    @Test func theBrowserSideDecryptsTheRFCExample() throws {
        let receiver = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(Self.receiverPrivate))
        let plaintext = try WebPushEncryption.decrypt(Self.bytes(Self.body), receiverKey: receiver, auth: Self.bytes(Self.auth))
        #expect(String(decoding: plaintext, as: UTF8.self) == Self.plaintext)
    }

    @Test func freshKeysAndSaltEachMessageAndTheLargestPlaintextFillsOneRecord() throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { UInt8($0) })
        let largest = Data(repeating: 0x41, count: WebPushEncryption.maximumPlaintextBytes)
        #expect(WebPushEncryption.maximumPlaintextBytes == 3993)
        let first = try WebPushEncryption.encrypt(largest, p256dh: receiver.publicKey.x963Representation, auth: auth)
        let second = try WebPushEncryption.encrypt(largest, p256dh: receiver.publicKey.x963Representation, auth: auth)
        #expect(first.count == 4096)
        #expect(first.prefix(16) != second.prefix(16))  // salt
        #expect(first[21..<86] != second[21..<86])  // sender key
        #expect(try WebPushEncryption.decrypt(first, receiverKey: receiver, auth: auth) == largest)
        #expect(throws: WebPushEncryption.Failure.tooLarge(3994)) {
            try WebPushEncryption.encrypt(largest + [0x41], p256dh: receiver.publicKey.x963Representation, auth: auth)
        }
    }

    @Test func badSubscriptionKeysAreRefusedNotTrapped() throws {
        let receiver = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        let auth = Data(count: 16)
        #expect(throws: WebPushEncryption.Failure.badAuthSecret) {
            try WebPushEncryption.encrypt(Data("x".utf8), p256dh: receiver, auth: Data(count: 15))
        }
        var offCurve = receiver
        offCurve[40] ^= 0xFF
        for key in [Data(), receiver.prefix(33), Data(repeating: 4, count: 65), offCurve, Data([0x02]) + receiver.dropFirst()] {
            #expect(throws: WebPushEncryption.Failure.badSubscriptionKey) { try WebPushEncryption.encrypt(Data("x".utf8), p256dh: key, auth: auth) }
        }
    }
}

@Suite("Provider tokens and VAPID")
struct TokenTests {
    @Test func es256TokensVerifyAndCarryTheirClaims() throws {
        let key = P256.Signing.PrivateKey()
        let token = try JWT.es256(
            header: JWTFields(strings: ["kid": "ABC123DEFG"]), claims: JWTFields(strings: ["iss": "DEF123GHIJ"], numbers: ["iat": 1_700_000_000]),
            key: key)
        let parts = try JWT.verifyES256(token, key: key.publicKey)
        #expect(parts.header["alg"] as? String == "ES256")
        #expect(parts.header["kid"] as? String == "ABC123DEFG")
        #expect(parts.claims["iss"] as? String == "DEF123GHIJ")
        #expect(parts.claims["iat"] as? Int == 1_700_000_000)
        #expect(parts.signature.count == 64)
        #expect(throws: JWTError.badSignature) { try JWT.verifyES256(token, key: P256.Signing.PrivateKey().publicKey) }
        // A changed claim no longer verifies.
        let pieces = token.split(separator: ".")
        let forged = pieces[0] + "." + Base64URL.encode(Data(#"{"iat":1700000000,"iss":"EVIL"}"#.utf8)) + "." + pieces[2]
        #expect(throws: JWTError.badSignature) { try JWT.verifyES256(String(forged), key: key.publicKey) }
    }

    @Test func rs256UsesPKCS1v15NotPSS() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let claims = JWTFields(
            strings: ["iss": "sender@example-project.iam.gserviceaccount.com", "scope": "https://www.googleapis.com/auth/firebase.messaging"],
            numbers: ["iat": 1_700_000_000, "exp": 1_700_003_600])
        let first = try JWT.rs256(header: JWTFields(strings: ["typ": "JWT"]), claims: claims, key: key)
        let second = try JWT.rs256(header: JWTFields(strings: ["typ": "JWT"]), claims: claims, key: key)
        // PKCS #1 v1.5 is deterministic; PSS (which Google refuses) is salted and never signs the same twice.
        #expect(first == second)
        let parts = try JWT.verifyRS256(first, key: key.publicKey)
        #expect(parts.claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(
            key.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: parts.signature), for: parts.signingInput, padding: .insecurePKCS1v1_5))
        #expect(
            !key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: parts.signature), for: parts.signingInput, padding: .PSS))
    }

    @Test func malformedTokensAreErrorsNotTraps() {
        for token in ["", "a.b", "a.b.c.d", "!!.??.**", "e30.e30.", "bm90IGpzb24.e30.AA"] {
            #expect(throws: (any Error).self) { try JWT.verifyES256(token, key: P256.Signing.PrivateKey().publicKey) }
        }
    }

    @Test func vapidAuthorizationNamesTheOriginAndExpiresWithinADay() throws {
        let key = try VAPIDKey(privateKey: P256.Signing.PrivateKey(), subject: "mailto:push@example.org")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let header = try key.authorization(audience: "https://push.example.net", now: now)
        let match = try #require(header.wholeMatch(of: /vapid t=([A-Za-z0-9_\-.]+), k=([A-Za-z0-9_\-]+)/))
        #expect(String(match.2) == key.publicKeyBase64URL)
        let parts = try JWT.verifyES256(String(match.1), key: key.privateKey.publicKey)
        #expect(parts.claims["aud"] as? String == "https://push.example.net")
        #expect(parts.claims["sub"] as? String == "mailto:push@example.org")
        #expect(parts.claims["exp"] as? Int == 1_800_000_000 + 12 * 3600)
        let long = try JWT.parse(
            String(try key.authorization(audience: "https://a.example", now: now, lifetime: 7 * 86_400).dropFirst(8).prefix { $0 != "," }))
        #expect(long.claims["exp"] as? Int == 1_800_000_000 + 86_400)
        #expect(try #require(Base64URL.decode(key.publicKeyBase64URL)).count == 65)
    }

    @Test func origins() {
        #expect(VAPIDKey.origin(of: "https://fcm.googleapis.com/fcm/send/abc:def") == "https://fcm.googleapis.com")
        #expect(VAPIDKey.origin(of: "https://Updates.Push.Services.Mozilla.com:443/wpush/v2/x") == "https://updates.push.services.mozilla.com:443")
        #expect(VAPIDKey.origin(of: "http://127.0.0.1:8443/push/1") == "http://127.0.0.1:8443")
        #expect(VAPIDKey.origin(of: "ftp://example.org/x") == nil)
        #expect(VAPIDKey.origin(of: "not a url") == nil)
    }

    @Test func subjectsPushServicesRefuseAreRefusedAtStart() {
        for good in ["mailto:ops@example.org", "https://example.org/contact", "mailto:a@b.co"] {
            #expect(throws: Never.self) { try VAPIDKey.checkSubject(good) }
        }
        for bad in [
            "", "ops@example.org", "http://example.org", "mailto:", "mailto:ops", "mailto:ops@", "mailto:ops@localhost", "https://localhost",
            "https://app.local", "mailto:me@example.invalid", "https://LOCALHOST./x", "https://", "mailto:x@host.local.",
        ] {
            #expect(throws: VAPIDKey.Failure.self, "\(bad)") { try VAPIDKey.checkSubject(bad) }
        }
    }

    @Test func keyFilesInEitherFormAndMalformedOnesNamed() throws {
        let key = P256.Signing.PrivateKey()
        #expect(try VAPIDKey.privateKey(fromFile: key.pemRepresentation).rawRepresentation == key.rawRepresentation)
        #expect(try VAPIDKey.privateKey(fromFile: "\n" + Base64URL.encode(key.rawRepresentation) + "\n").rawRepresentation == key.rawRepresentation)
        let generated = VAPIDKey.generate()
        let parsed = try VAPIDKey.privateKey(fromFile: generated.privateKeyPEM)
        #expect(Base64URL.encode(parsed.publicKey.x963Representation) == generated.publicKey)
        for bad in [
            "", "hello", Base64URL.encode(Data(count: 31)), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
            Base64URL.encode(Data(count: 32)),
        ] {
            #expect(throws: VAPIDKey.Failure.self) { try VAPIDKey.privateKey(fromFile: bad) }
        }
    }

    @Test func base64URL() {
        #expect(Base64URL.encode(Data([0xFB, 0xFF])) == "-_8")
        #expect(Base64URL.decode("-_8") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decode("-_8=") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("a b") == nil)
        #expect(Base64URL.decode("") == Data())
    }
}
