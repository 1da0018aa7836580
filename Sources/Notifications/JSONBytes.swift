/// JSON text written by hand into a byte buffer: strings escaped as JSONEncoder does (quotes, backslashes and
/// control characters; slashes and non-ASCII left as they are).
public struct JSONBytes: Sendable {
    public var bytes: [UInt8] = []

    public init() {}

    public mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func append(_ fragment: [UInt8]) { bytes.append(contentsOf: fragment) }

    /// A whole number in decimal.
    public mutating func append(_ number: Int) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }

    /// Appends `text` as a JSON string, in quotes.
    public mutating func appendQuoted(_ text: some StringProtocol) {
        bytes.append(UInt8(ascii: "\""))
        appendEscaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `text` escaped for the inside of a JSON string (escaping works byte by byte, since no byte of a
    /// multi-byte UTF-8 sequence is below 0x80, so the pieces of one string may be appended one after another).
    public mutating func appendEscaped(_ text: some StringProtocol) {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            bytes.append(contentsOf: utf8)
            return
        }
        for byte in utf8 {
            switch byte {
            case 0x22: append("\\\"")
            case 0x5C: append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                append("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
    }

    static func quoted(_ text: String) -> [UInt8] {
        var out = JSONBytes()
        out.appendQuoted(text)
        return out.bytes
    }
}

/// JSON strings for text output.
public enum JSON {
    public static func quoted(_ text: String) -> String {
        var out = JSONBytes()
        out.appendQuoted(text)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
