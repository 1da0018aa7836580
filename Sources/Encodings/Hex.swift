/// Bytes as lowercase hexadecimal: two digits a byte, most significant first.
///
/// Written digit by digit into the string's own storage: `String(format: "%02x")` a byte goes through Foundation's
/// formatter and took a sixth of every authenticated request's time, since a bearer token is looked up by its hash.
public enum Hex {
    public static func encode(_ sequence: some Sequence<UInt8>) -> String {
        let bytes = Array(sequence)
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            digits.withUTF8Buffer { digit in
                var index = 0
                for byte in bytes {
                    buffer[index] = digit[Int(byte >> 4)]
                    buffer[index + 1] = digit[Int(byte & 0x0f)]
                    index += 2
                }
            }
            return bytes.count * 2
        }
    }
}
