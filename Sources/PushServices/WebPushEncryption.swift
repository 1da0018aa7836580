import Crypto
import Encodings
import Foundation

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188): one record, no padding.
///
/// Each message has a fresh P-256 key pair and a fresh 16-byte salt; ECDH with the subscription's `p256dh` key and
/// HKDF-SHA-256 keyed by its `auth` secret give the content key and nonce.
public enum WebPushEncryption {
    /// The record size written in the header (`AES128GCMRecord`, where the payloads find it too).
    public static let recordSize = AES128GCMRecord.size
    public static let headerBytes = AES128GCMRecord.headerBytes
    public static let tagBytes = AES128GCMRecord.tagBytes
    public static let maximumPlaintextBytes = AES128GCMRecord.maximumPlaintextBytes

    public enum Failure: Error, CustomStringConvertible, Equatable {
        case badSubscriptionKey
        case badAuthSecret
        case tooLarge(Int)

        public var description: String {
            switch self {
            case .badSubscriptionKey: return "the subscription's p256dh is not an uncompressed P-256 public key"
            case .badAuthSecret: return "the subscription's auth secret is not 16 bytes"
            case .tooLarge(let bytes): return "payload of \(bytes) bytes exceeds Web Push's \(maximumPlaintextBytes)"
            }
        }
    }

    /// The encrypted body for `plaintext`. `senderKey` and `salt` are fresh per message; they are parameters so that
    /// RFC 8291's example can be reproduced.
    public static func encrypt(
        _ plaintext: some DataProtocol, p256dh: Data, auth: Data, senderKey: P256.KeyAgreement.PrivateKey = .init(),
        salt: Data = randomSalt()
    ) throws -> Data {
        guard plaintext.count <= maximumPlaintextBytes else { throw Failure.tooLarge(plaintext.count) }
        guard auth.count == 16 else { throw Failure.badAuthSecret }
        guard p256dh.count == 65, p256dh.first == 0x04, let receiver = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh) else {
            throw Failure.badSubscriptionKey
        }
        precondition(salt.count == 16, "a Web Push salt is 16 bytes")
        let senderPublic = senderKey.publicKey.x963Representation
        let shared = try senderKey.sharedSecretFromKeyAgreement(with: receiver)
        let (cek, nonce) = try contentKeys(shared: shared, auth: auth, receiverPublic: p256dh, senderPublic: senderPublic, salt: salt)
        var record = Data(plaintext)
        record.append(0x02)  // the last (and only) record's delimiter, no padding
        let sealed = try AES.GCM.seal(record, using: cek, nonce: nonce)
        var body = Data(capacity: headerBytes + record.count + tagBytes)
        body.append(salt)
        withUnsafeBytes(of: UInt32(recordSize).bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(senderPublic.count))
        body.append(senderPublic)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }

    /// RFC 8291 §3.4 (the auth secret and both public keys make the input keying material), then RFC 8188 §2.2–2.3
    /// (the content key and nonce from the salt).
    static func contentKeys(
        shared: SharedSecret, auth: Data, receiverPublic: Data, senderPublic: Data, salt: Data
    ) throws -> (SymmetricKey, AES.GCM.Nonce) {
        let ecdhSecret = shared.withUnsafeBytes { Data($0) }
        let keyInfo = Data("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        let prkKey = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: ecdhSecret), salt: auth)
        let ikm = HKDF<SHA256>.expand(pseudoRandomKey: prkKey, info: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        return (cek, try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }))
    }

    public static func randomSalt() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Decrypts a body as the browser does, with the subscription's private key and auth secret: for the stand-ins
    /// and the tests (the CI oracle is an independent implementation, Python's http_ece).
    public static func decrypt(_ body: Data, receiverKey: P256.KeyAgreement.PrivateKey, auth: Data) throws -> Data {
        let bytes = [UInt8](body)
        guard bytes.count > headerBytes + tagBytes, bytes[20] == 65 else { throw Failure.badSubscriptionKey }
        let salt = Data(bytes[0..<16])
        let senderPublic = Data(bytes[21..<86])
        let sender = try P256.KeyAgreement.PublicKey(x963Representation: senderPublic)
        let receiverPublic = receiverKey.publicKey.x963Representation
        let shared = try receiverKey.sharedSecretFromKeyAgreement(with: sender)
        let (cek, nonce) = try contentKeys(shared: shared, auth: auth, receiverPublic: receiverPublic, senderPublic: senderPublic, salt: salt)
        let ciphertext = Data(bytes[86..<(bytes.count - tagBytes)])
        let tag = Data(bytes[(bytes.count - tagBytes)...])
        let box = try AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
        var record = try AES.GCM.open(box, using: cek)
        // Padding (zeros) after the delimiter is removed with it.
        while let last = record.last, last == 0 { record.removeLast() }
        guard record.last == 0x02 else { throw Failure.badAuthSecret }
        record.removeLast()
        return record
    }
}
