import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority and a server certificate for 127.0.0.1 and localhost, made afresh: the stand-ins serve
/// TLS with them, and the senders trust the authority through their CA file, as an operator behind a proxy would.
public struct TestCertificates: Sendable {
    public let authorityPEM: String
    public let serverChain: [NIOSSLCertificate]
    public let serverKey: NIOSSLPrivateKey

    public init(now: Date = Date()) throws {
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName { CommonName("DailyVerse test authority") }
        let authority = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(authorityKey.publicKey), notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(86_400 * 2), issuer: authorityName, subject: authorityName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            }, issuerPrivateKey: .init(authorityKey))
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey), notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(86_400 * 2), issuer: authorityName,
            subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            }, issuerPrivateKey: .init(authorityKey))
        self.authorityPEM = try authority.serializeAsPEM().pemString
        self.serverChain = [try NIOSSLCertificate(bytes: Array(try server.serializeAsPEM().pemString.utf8), format: .pem)]
        self.serverKey = try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)
    }

    /// Writes the authority to a file in `folder`, for `push_ca_file`.
    public func writeAuthority(in folder: URL) throws -> String {
        let url = folder.appendingPathComponent("stand-in-ca.pem")
        try authorityPEM.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    public var serverTLS: TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(certificateChain: serverChain.map { .certificate($0) }, privateKey: .privateKey(serverKey))
    }
}
