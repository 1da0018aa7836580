import NIOCore

/// Rows for PostgreSQL's `COPY … FROM STDIN` in its text format, written into one buffer: a tab between values, a
/// newline after each row, `\N` for NULL, and in a value the backslash, tab, newline and carriage return escaped
/// (PostgreSQL's own escapes), so that any text arrives as it was.
public struct CopyTextRows: Sendable {
    public private(set) var buffer = ByteBuffer()
    var rowStarted = false

    public init(capacity: Int = 0) { buffer.reserveCapacity(capacity) }

    /// A text value, its bytes escaped where COPY's format needs it: the runs between those bytes written whole.
    public mutating func text(_ bytes: some Collection<UInt8>) {
        separate()
        let written: Void? = bytes.withContiguousStorageIfAvailable { escape(UnsafeRawBufferPointer($0)) }
        if written == nil { Array(bytes).withUnsafeBytes { escape($0) } }
    }

    mutating func escape(_ bytes: UnsafeRawBufferPointer) {
        var start = 0
        for index in 0..<bytes.count {
            let escaped: StaticString
            switch bytes[index] {
            case UInt8(ascii: "\\"): escaped = "\\\\"
            case UInt8(ascii: "\t"): escaped = "\\t"
            case UInt8(ascii: "\n"): escaped = "\\n"
            case UInt8(ascii: "\r"): escaped = "\\r"
            default: continue
            }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            buffer.writeStaticString(escaped)
            start = index + 1
        }
        buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[start...]))
    }

    public mutating func text(_ value: String) { text(value.utf8) }

    public mutating func integer(_ value: Int64) {
        separate()
        buffer.writeString(String(value))
    }

    /// A number, written as the shortest text that reads back as the same `Double` (the infinities and NaN as
    /// PostgreSQL spells them).
    public mutating func real(_ value: Double) {
        separate()
        if value.isFinite {
            buffer.writeString(value.description)
        } else {
            buffer.writeStaticString(value.isNaN ? "NaN" : value > 0 ? "Infinity" : "-Infinity")
        }
    }

    public mutating func null() {
        separate()
        buffer.writeStaticString("\\N")
    }

    /// A value as `StoreCopy` carries it, in its column's kind.
    mutating func value(_ value: StoreCopy.Value) {
        switch value {
        case .null: null()
        case .integer(let number): integer(number)
        case .real(let number): real(number)
        case .text(let text): self.text(text)
        }
    }

    public mutating func endRow() {
        buffer.writeInteger(UInt8(ascii: "\n"))
        rowStarted = false
    }

    mutating func separate() {
        if rowStarted { buffer.writeInteger(UInt8(ascii: "\t")) }
        rowStarted = true
    }
}
