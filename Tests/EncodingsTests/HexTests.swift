import Encodings
import Foundation
import Testing

@Suite("Hex")
struct HexTests {
    @Test("every byte is written as Foundation's %02x writes it")
    func everyByte() {
        let bytes = (0...255).map(UInt8.init)
        #expect(Hex.encode(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
    }

    @Test("a SHA-256 sized input, an empty one and a lazy sequence")
    func shapes() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0xde, 0xad, 0xbe, 0xef]) == "deadbeef")
        #expect(Hex.encode((0..<32).lazy.map { UInt8($0 * 8) }).count == 64)
        #expect(Hex.encode([0x00, 0x0f, 0xf0, 0xff].prefix(3)) == "000ff0")
    }
}
