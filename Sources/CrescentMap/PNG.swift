import Astronomy

/// The map drawn into pixels and written as a PNG: the zones, the graticule, the coastlines and the sites, with the
/// legend's colours (the words are the SVG's; a PNG carries no font). Encoded here (a fixed-Huffman DEFLATE stream
/// whose matches repeat the pixel before or the row above), so no image library is needed.
extension MapPicture {
    public var png: [UInt8] {
        var canvas = Canvas(width: Int(Self.width), height: Int(Self.height))
        canvas.fill(x: 0, y: 0, width: canvas.width, height: canvas.height, colour: (255, 255, 255))
        let cellHeight = map.spacing / 180 * Self.mapHeight
        canvas.fill(x: 0, y: Int(Self.top), width: canvas.width, height: Int(Self.mapHeight), colour: Self.paint(nil))
        for row in 0..<map.rows {
            let top = Self.y(map.latitudes.lowerBound + Double(row + 1) * map.spacing)
            for column in 0..<map.columns where map.zones[row][column] != nil {
                let left = Self.x(-180 + Double(column) * map.spacing)
                let right = Self.x(-180 + Double(column + 1) * map.spacing)
                canvas.fill(
                    x: Int(left.rounded()), y: Int(top.rounded()), width: Int(right.rounded()) - Int(left.rounded()),
                    height: Int((top + cellHeight).rounded()) - Int(top.rounded()), colour: Self.paint(map.zones[row][column]))
            }
        }
        for longitude in stride(from: -150.0, through: 150, by: 30) {
            canvas.line(Self.x(longitude), Self.top, Self.x(longitude), Self.top + Self.mapHeight, colour: (245, 245, 245))
        }
        for latitude in stride(from: -60.0, through: 60, by: 30) {
            canvas.line(0, Self.y(latitude), Self.width - 1, Self.y(latitude), colour: (245, 245, 245))
        }
        for line in coastlines?.lines ?? [] {
            for piece in Self.pieces(line) {
                for (a, b) in zip(piece, piece.dropFirst()) {
                    canvas.line(Self.x(a.longitude), Self.y(a.latitude), Self.x(b.longitude), Self.y(b.latitude), colour: (34, 34, 34))
                }
            }
        }
        for site in region?.sites ?? [] {
            canvas.disc(Self.x(site.longitude), Self.y(site.latitude), radius: 4.5, colour: (0, 0, 0))
            canvas.disc(Self.x(site.longitude), Self.y(site.latitude), radius: 3, colour: (255, 255, 255))
        }
        let legendTop = Int(Self.top + Self.mapHeight + 14)
        for (index, zone) in (VisibilityZone.allCases + [nil]).enumerated() {
            canvas.fill(x: 12 + index * 40, y: legendTop, width: 28, height: 14, colour: Self.paint(zone))
        }
        return PNGFile.encode(width: canvas.width, height: canvas.height, rgb: canvas.pixels)
    }

    /// A zone's colour at 75 % over white, as the SVG shows it.
    static func paint(_ zone: VisibilityZone?) -> (UInt8, UInt8, UInt8) {
        let c = colour(zone)
        func over(_ value: UInt8) -> UInt8 { UInt8((255 + 0.75 * (Double(value) - 255)).rounded()) }
        return (over(c.red), over(c.green), over(c.blue))
    }
}

/// RGB pixels, row by row.
struct Canvas {
    let width: Int
    let height: Int
    var pixels: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 3)
    }

    mutating func set(_ x: Int, _ y: Int, _ colour: (UInt8, UInt8, UInt8)) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = (y * width + x) * 3
        pixels[i] = colour.0
        pixels[i + 1] = colour.1
        pixels[i + 2] = colour.2
    }

    mutating func fill(x: Int, y: Int, width w: Int, height h: Int, colour: (UInt8, UInt8, UInt8)) {
        for row in max(y, 0)..<min(y + h, height) {
            for column in max(x, 0)..<min(x + w, width) { set(column, row, colour) }
        }
    }

    /// Bresenham's line between two points.
    mutating func line(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, colour: (UInt8, UInt8, UInt8)) {
        var x = Int(x0.rounded()), y = Int(y0.rounded())
        let xEnd = Int(x1.rounded()), yEnd = Int(y1.rounded())
        let dx = abs(xEnd - x), dy = -abs(yEnd - y)
        let sx = x < xEnd ? 1 : -1, sy = y < yEnd ? 1 : -1
        var error = dx + dy
        for _ in 0...(dx - dy) {
            set(x, y, colour)
            if x == xEnd && y == yEnd { break }
            let twice = 2 * error
            if twice >= dy {
                error += dy
                x += sx
            }
            if twice <= dx {
                error += dx
                y += sy
            }
        }
    }

    mutating func disc(_ cx: Double, _ cy: Double, radius: Double, colour: (UInt8, UInt8, UInt8)) {
        let r = Int(radius.rounded(.up))
        for dy in -r...r {
            for dx in -r...r where Double(dx * dx + dy * dy) <= radius * radius {
                set(Int(cx.rounded()) + dx, Int(cy.rounded()) + dy, colour)
            }
        }
    }
}

/// PNG (RGB, 8 bits a channel) with a zlib stream of one fixed-Huffman DEFLATE block (RFC 1950, 1951, PNG 2nd ed.).
enum PNGFile {
    static func encode(width: Int, height: Int, rgb: [UInt8]) -> [UInt8] {
        let stride = width * 3 + 1
        var raw = [UInt8]()
        raw.reserveCapacity(stride * height)
        for row in 0..<height {
            raw.append(0)  // filter: none
            raw.append(contentsOf: rgb[(row * width * 3)..<((row + 1) * width * 3)])
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]
        chunk("IHDR", header, into: &out)
        chunk("IDAT", zlib(raw, matchDistances: [3, stride]), into: &out)
        chunk("IEND", [], into: &out)
        return out
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
        out += bigEndian(UInt32(data.count))
        let body = Array(type.utf8) + data
        out += body
        out += bigEndian(crc32(body))
    }

    static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    /// Bits least significant first, as DEFLATE packs them.
    struct BitWriter {
        var bytes: [UInt8] = []
        var current: UInt32 = 0
        var count: UInt32 = 0

        mutating func write(_ value: UInt32, bits: UInt32) {
            current |= value << count
            count += bits
            while count >= 8 {
                bytes.append(UInt8(current & 0xFF))
                current >>= 8
                count -= 8
            }
        }

        /// A Huffman code, which DEFLATE stores most significant bit first.
        mutating func writeCode(_ code: UInt32, bits: UInt32) {
            var reversed: UInt32 = 0
            for i in 0..<bits where code & (1 << i) != 0 { reversed |= 1 << (bits - 1 - i) }
            write(reversed, bits: bits)
        }

        mutating func finish() -> [UInt8] {
            if count > 0 { bytes.append(UInt8(current & 0xFF)) }
            return bytes
        }
    }

    static let lengthBase: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
    ]
    static let lengthExtra: [UInt32] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase: [Int] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra: [UInt32] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    static func literal(_ value: Int, _ writer: inout BitWriter) {
        switch value {
        case 0...143: writer.writeCode(UInt32(0x30 + value), bits: 8)
        case 144...255: writer.writeCode(UInt32(0x190 + value - 144), bits: 9)
        case 256...279: writer.writeCode(UInt32(value - 256), bits: 7)
        default: writer.writeCode(UInt32(0xC0 + value - 280), bits: 8)
        }
    }

    /// A zlib stream of `data`: one fixed-Huffman block whose matches copy from `matchDistances` back (at most 32 KiB).
    static func zlib(_ data: [UInt8], matchDistances: [Int]) -> [UInt8] {
        var writer = BitWriter()
        writer.write(1, bits: 1)  // the final block
        writer.write(1, bits: 2)  // fixed Huffman codes
        var i = 0
        while i < data.count {
            var bestLength = 0, bestDistance = 0
            for distance in matchDistances where distance <= i && distance <= 32768 {
                var length = 0
                while length < 258, i + length < data.count, data[i + length] == data[i + length - distance] { length += 1 }
                if length > bestLength { (bestLength, bestDistance) = (length, distance) }
            }
            if bestLength >= 3 {
                let code = lengthBase.lastIndex { $0 <= bestLength }!
                literal(257 + code, &writer)
                writer.write(UInt32(bestLength - lengthBase[code]), bits: lengthExtra[code])
                let distanceCode = distanceBase.lastIndex { $0 <= bestDistance }!
                writer.writeCode(UInt32(distanceCode), bits: 5)
                writer.write(UInt32(bestDistance - distanceBase[distanceCode]), bits: distanceExtra[distanceCode])
                i += bestLength
            } else {
                literal(Int(data[i]), &writer)
                i += 1
            }
        }
        literal(256, &writer)  // end of block
        return [0x78, 0x01] + writer.finish() + bigEndian(adler32(data))
    }
}
