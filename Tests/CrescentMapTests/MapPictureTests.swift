import Astronomy
import Foundation
import Testing

@testable import CrescentMap

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The map as a picture: well-formed SVG with the zones, coastlines and sites; a PNG that an independent decoder
/// (Python's zlib) reads back pixel for pixel; and what a bad coastline file gets.
@Suite struct MapPictureTests {
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("data")

    static let region = CrescentRegion(
        id: "test", name: "Test <&> \"region\"",
        sites: [
            Site(name: "Tehran", latitude: 35.6892, longitude: 51.3890, height: 1190), Site(name: "A&B <i>", latitude: 32.0, longitude: 44.3),
        ], rule: VisibilityRule(zone: .b))

    static let day17 = JulianDay.dayNumber(year: 2026, month: 2, day: 17)

    /// The first and last days a map is drawn for, and the Gregorian dates the captions print, before 1970 too.
    @Test func theCaptionsDatesAreTheCivilDays() {
        #expect(MapPicture.isoDate(MapPicture.dayNumbers.lowerBound) == "1900-01-01")
        #expect(MapPicture.isoDate(MapPicture.dayNumbers.upperBound) == "2100-12-31")
        #expect(MapPicture.longDate(-1) == "31 December 1969" && MapPicture.longDate(0) == "1 January 1970")
        for day in stride(from: MapPicture.dayNumbers.lowerBound, through: MapPicture.dayNumbers.upperBound, by: 997) {
            let (year, month, date) = JulianDay.civil(day)
            #expect(JulianDay.dayNumber(year: year, month: month, day: date) == day)
        }
    }

    static func coastlines() throws -> Coastlines {
        try Coastlines(geoJSON: Data(contentsOf: data.appendingPathComponent(Coastlines.file)))
    }

    /// Counts the elements of an SVG document, failing on anything that is not well-formed XML.
    final class Elements: NSObject, XMLParserDelegate {
        var counts: [String: Int] = [:]
        var fills: Set<String> = []
        var texts: [String] = []
        var current = ""
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
            counts[name, default: 0] += 1
            if name == "rect", let fill = attributes["fill"] { fills.insert(fill) }
            current = ""
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "text" || name == "title" { texts.append(current) }
        }
    }

    @Test func theSVGIsWellFormedWithZonesCoastlinesAndSites() throws {
        let picture = MapPicture.evening(dayNumber: Self.day17, region: Self.region, coastlines: try Self.coastlines(), spacing: 3)
        let parser = XMLParser(data: Data(picture.svg.utf8))
        let elements = Elements()
        parser.delegate = elements
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(elements.counts["svg"] == 1)
        #expect(elements.counts["circle"] == 2)
        #expect((elements.counts["polyline"] ?? 0) > 100)
        // Zone D (red) covers most of the world that evening; the legend shows all four zones.
        for zone in VisibilityZone.allCases { #expect(elements.fills.contains(MapPicture.hex(zone)), "\(zone)") }
        #expect(elements.texts.contains("Crescent visibility on the evening of 17 February 2026"))
        #expect(elements.texts.contains { $0.hasPrefix("Conjunction 2026-02-17 12:01 UT") })
        #expect(elements.texts.contains { $0.hasPrefix("Test <&> \"region\" (odeh-b): not seen") }, "\(elements.texts)")
        #expect(elements.texts.contains("A&B <i>"))
        #expect(!picture.svg.contains("<i>") && picture.svg.contains("A&amp;B &lt;i&gt;"))
    }

    /// The PNG decoded by Python's zlib (not our code): its size, and the colour of the cell over Tehran (zone D) and
    /// of a cell where the crescent could be seen with optical aid (zone C or better, in the Americas that evening).
    @Test func thePNGDecodesToTheZonesColours() throws {
        let picture = MapPicture.evening(dayNumber: Self.day17, region: nil, coastlines: nil, spacing: 2)
        let png = picture.png
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dailyverse-map-\(UUID().uuidString).png")
        try Data(png).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import struct, sys, zlib
            data = open(sys.argv[1], 'rb').read()
            pos, idat, size = 8, b'', None
            while pos < len(data):
                length, kind = struct.unpack('>I4s', data[pos:pos + 8])
                body = data[pos + 8:pos + 8 + length]
                if zlib.crc32(kind + body) != struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])[0]: sys.exit('bad crc')
                if kind == b'IHDR': size = struct.unpack('>II', body[:8])
                if kind == b'IDAT': idat += body
                pos += 12 + length
            raw = zlib.decompress(idat)
            w, h = size
            assert len(raw) == h * (3 * w + 1)
            for arg in sys.argv[2:]:
                x, y = map(int, arg.split(','))
                row = raw[y * (3 * w + 1):(y + 1) * (3 * w + 1)]
                assert row[0] == 0
                print('%d,%d,%d' % tuple(row[1 + 3 * x:4 + 3 * x]))
            print('%dx%d' % (w, h))
            """
        func pixel(_ latitude: Double, _ longitude: Double) -> String {
            "\(Int(MapPicture.x(longitude))),\(Int(MapPicture.y(latitude)))"
        }
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let map = picture.map
        let visible = try #require(
            (0..<map.rows).lazy.flatMap { row in (0..<map.columns).lazy.map { (row, $0) } }.first { map.zones[$0.0][$0.1].map { $0 <= .c } == true })
        let (row, column) = visible
        python.arguments = [
            "python3", "-c", script, file.path, pixel(35.69, 51.39), pixel(map.latitude(row: row), map.longitude(column: column)),
        ]
        let out = Pipe()
        python.standardOutput = out
        try python.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        python.waitUntilExit()
        #expect(python.terminationStatus == 0, "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.last == "1200x\(Int(MapPicture.height))")
        func paint(_ zone: VisibilityZone?) -> String {
            let c = MapPicture.paint(zone)
            return "\(c.0),\(c.1),\(c.2)"
        }
        #expect(lines.first == paint(.d), "Tehran: \(lines)")
        #expect(lines.dropFirst().first == paint(map.zones[row][column]), "cell \(row), \(column): \(lines)")
        // Uniform areas compress: far smaller than the raw pixels.
        #expect(png.count < 1200 * Int(MapPicture.height) * 3 / 20, "\(png.count) bytes")
    }

    @Test func aBadCoastlineFileIsRefusedNamingTheFault() {
        func refusal(_ text: String) -> String {
            do {
                _ = try Coastlines(geoJSON: Data(text.utf8))
                return "accepted"
            } catch { return error.description }
        }
        #expect(refusal("{}").contains("FeatureCollection"))
        #expect(refusal(#"{"type": "FeatureCollection", "features": [{"geometry": {"type": "Point", "coordinates": [0, 0]}}]}"#).contains("Point"))
        #expect(
            refusal(#"{"type": "FeatureCollection", "features": [{"geometry": {"type": "LineString", "coordinates": [[200, 0]]}}]}"#).contains(
                "range"))
        #expect(refusal(#"{"type": "FeatureCollection", "features": [{}]}"#).contains("no geometry"))
        let line =
            #"{"type": "FeatureCollection", "features": [{"geometry": {"type": "MultiLineString", "coordinates": [[[170, 0], [-170, 1]], [[0, 0], [1, 1]]]}}]}"#
        let coast = try? Coastlines(geoJSON: Data(line.utf8))
        #expect(coast?.lines.count == 2)
        // A line across the antimeridian is drawn as two pieces, not across the map.
        #expect(MapPicture.pieces(coast?.lines[0] ?? []).count == 2)
    }
}
