import Astronomy
import Foundation

/// A crescent visibility map drawn as SVG (and PNG): the world in an equirectangular projection, each grid cell
/// coloured by its zone, the coastlines over it, the region's sites marked, a title and a legend.
public struct MapPicture: Sendable {
    public let map: VisibilityMap
    public let coastlines: Coastlines?
    public let region: CrescentRegion?
    /// Lines under the title: what the map shows, in words.
    public let caption: [String]

    public init(map: VisibilityMap, coastlines: Coastlines?, region: CrescentRegion?, caption: [String]) {
        self.map = map
        self.coastlines = coastlines
        self.region = region
        self.caption = caption
    }

    static let width = 1200.0
    static let mapHeight = 600.0
    static let top = 70.0
    static let legendHeight = 64.0
    static var height: Double { top + mapHeight + legendHeight }

    /// The zones' colours, as the astronomical centres' maps use them: green for the naked eye, blue where optical
    /// aid helps, magenta for optical aid only, red for not visible.
    public static func colour(_ zone: VisibilityZone?) -> (red: UInt8, green: UInt8, blue: UInt8) {
        switch zone {
        case .a: (0x3c, 0xa5, 0x4a)
        case .b: (0x4a, 0x86, 0xd8)
        case .c: (0xc8, 0x5c, 0xc8)
        case .d: (0xd9, 0x52, 0x46)
        case nil: (0xd8, 0xd8, 0xd8)
        }
    }

    static func hex(_ zone: VisibilityZone?) -> String {
        let c = colour(zone)
        return String(format: "#%02x%02x%02x", c.red, c.green, c.blue)
    }

    static func x(_ longitude: Double) -> Double { (longitude + 180) / 360 * width }
    static func y(_ latitude: Double) -> Double { top + (90 - latitude) / 180 * mapHeight }

    static func number(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // Control characters have no place in XML 1.0.
                if character.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\t" }) { out.append(character) }
            }
        }
        return out
    }

    /// The SVG document.
    public var svg: String {
        let w = Self.width, h = Self.height
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(w))" height="\(Int(h))" viewBox="0 0 \(Int(w)) \(Int(h))" font-family="sans-serif">
            <title>\(Self.escaped(caption.first ?? "Crescent visibility"))</title>
            <rect width="\(Int(w))" height="\(Int(h))" fill="#ffffff"/>

            """
        for (index, line) in caption.prefix(3).enumerated() {
            let size = index == 0 ? 20 : 13
            out +=
                "<text x=\"12\" y=\"\(24 + index * 20)\" font-size=\"\(size)\"\(index == 0 ? " font-weight=\"bold\"" : "")>\(Self.escaped(line))</text>\n"
        }
        // The cells: each row's runs of one zone as one rectangle, under the coastlines.
        out += "<g shape-rendering=\"crispEdges\" fill-opacity=\"0.75\">\n"
        out += "<rect x=\"0\" y=\"\(Self.number(Self.top))\" width=\"\(Int(w))\" height=\"\(Int(Self.mapHeight))\" fill=\"\(Self.hex(nil))\"/>\n"
        for row in 0..<map.rows {
            let top = Self.y(map.latitudes.lowerBound + Double(row + 1) * map.spacing)
            let height = map.spacing / 180 * Self.mapHeight
            var column = 0
            while column < map.columns {
                let zone = map.zones[row][column]
                var end = column + 1
                while end < map.columns, map.zones[row][end] == zone { end += 1 }
                if zone != nil {
                    let left = Self.x(-180 + Double(column) * map.spacing)
                    let width = Double(end - column) * map.spacing / 360 * w
                    out +=
                        "<rect x=\"\(Self.number(left))\" y=\"\(Self.number(top))\" width=\"\(Self.number(width))\" height=\"\(Self.number(height))\" fill=\"\(Self.hex(zone))\"/>\n"
                }
                column = end
            }
        }
        out += "</g>\n"
        // The graticule, every 30°.
        out += "<g stroke=\"#ffffff\" stroke-opacity=\"0.6\" stroke-width=\"0.6\">\n"
        for longitude in stride(from: -150.0, through: 150, by: 30) {
            out +=
                "<line x1=\"\(Self.number(Self.x(longitude)))\" y1=\"\(Self.number(Self.top))\" x2=\"\(Self.number(Self.x(longitude)))\" y2=\"\(Self.number(Self.top + Self.mapHeight))\"/>\n"
        }
        for latitude in stride(from: -60.0, through: 60, by: 30) {
            out += "<line x1=\"0\" y1=\"\(Self.number(Self.y(latitude)))\" x2=\"\(Int(w))\" y2=\"\(Self.number(Self.y(latitude)))\"/>\n"
        }
        out += "</g>\n"
        if let coastlines {
            out += "<g fill=\"none\" stroke=\"#222222\" stroke-width=\"0.8\" stroke-linejoin=\"round\">\n"
            for line in coastlines.lines {
                for piece in Self.pieces(line) where piece.count > 1 {
                    out += "<polyline points=\""
                    out += piece.map { "\(Self.number(Self.x($0.longitude))),\(Self.number(Self.y($0.latitude)))" }.joined(separator: " ")
                    out += "\"/>\n"
                }
            }
            out += "</g>\n"
        }
        if let region {
            out += "<g font-size=\"11\">\n"
            for site in region.sites {
                let cx = Self.number(Self.x(site.longitude)), cy = Self.number(Self.y(site.latitude))
                out += "<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"3.5\" fill=\"#ffffff\" stroke=\"#000000\" stroke-width=\"1.2\"/>\n"
                out +=
                    "<text x=\"\(Self.number(Self.x(site.longitude) + 5))\" y=\"\(Self.number(Self.y(site.latitude) - 4))\" paint-order=\"stroke\" stroke=\"#ffffff\" stroke-width=\"2.5\">\(Self.escaped(site.name))</text>\n"
            }
            out += "</g>\n"
        }
        // The legend.
        let legendTop = Self.top + Self.mapHeight + 14
        var x = 12.0
        for zone in VisibilityZone.allCases + [nil] {
            let label = zone.map { "\($0.rawValue): \($0.meaning)" } ?? "not computed: beyond 60° the Sun may not set"
            out +=
                "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(legendTop))\" width=\"14\" height=\"14\" fill=\"\(Self.hex(zone))\" fill-opacity=\"0.75\"/>\n"
            out += "<text x=\"\(Self.number(x + 19))\" y=\"\(Self.number(legendTop + 12))\" font-size=\"12\">\(Self.escaped(label))</text>\n"
            x += Double(label.count) * 6.4 + 40
        }
        out +=
            "<text x=\"12\" y=\"\(Self.number(legendTop + 38))\" font-size=\"11\" fill=\"#555555\">Odeh's criterion at the best time (sunset + 4/9 of the lag), airless topocentric. Coastlines: Natural Earth (public domain). Drawn by DailyVerse.</text>\n"
        out += "</svg>\n"
        return out
    }

    /// A line split where it crosses the antimeridian, so that no segment is drawn across the whole map.
    static func pieces(_ line: [Coastlines.Point]) -> [[Coastlines.Point]] {
        var pieces: [[Coastlines.Point]] = [[]]
        for point in line {
            if let last = pieces[pieces.count - 1].last, abs(point.longitude - last.longitude) > 180 { pieces.append([]) }
            pieces[pieces.count - 1].append(point)
        }
        return pieces
    }
}
