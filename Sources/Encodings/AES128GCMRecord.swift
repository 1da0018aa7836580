/// The one record of the `aes128gcm` content coding (RFC 8188) as Web Push (RFC 8291) sends it: how large a message
/// may be before it is encrypted. Here rather than beside the encryption, so that the payloads, which must fit it, need
/// not depend on the push services' code.
public enum AES128GCMRecord {
    /// The record size written in the header: a push service takes bodies of at most 4096 bytes.
    public static let size = 4096
    /// salt (16) ‖ rs (4) ‖ idlen (1) ‖ the sender's public key (65).
    public static let headerBytes = 86
    /// The AES-GCM tag.
    public static let tagBytes = 16
    /// The largest plaintext that fits one 4096-byte record: 4096 − 86 − 16 − 1 (the last record's delimiter).
    public static let maximumPlaintextBytes = size - headerBytes - tagBytes - 1
}
