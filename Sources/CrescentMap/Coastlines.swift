import Foundation

/// The coastlines drawn under a map: lines of (longitude, latitude) points, degrees, read from a GeoJSON
/// FeatureCollection of LineStrings (Natural Earth's `ne_110m_coastline.geojson`, in `data/map/`).
public struct Coastlines: Sendable {
    public let lines: [[Point]]

    public struct Point: Sendable, Hashable {
        public let longitude: Double
        public let latitude: Double
    }

    /// The file's size limit: the 1:110m coastline is about a tenth of this.
    public static let maximumBytes = 4 << 20
    public static let file = "map/ne_110m_coastline.geojson"

    public init(lines: [[Point]]) { self.lines = lines }

    /// Reads LineString and MultiLineString features; anything else in the file is an error naming it.
    public init(geoJSON: Data) throws(CoastlineError) {
        guard geoJSON.count <= Self.maximumBytes else { throw CoastlineError("larger than \(Self.maximumBytes >> 20) MiB") }
        guard let root = try? JSONSerialization.jsonObject(with: geoJSON) as? [String: Any], root["type"] as? String == "FeatureCollection",
            let features = root["features"] as? [[String: Any]]
        else { throw CoastlineError("not a GeoJSON FeatureCollection") }
        var lines: [[Point]] = []
        func line(_ value: Any?) throws(CoastlineError) -> [Point] {
            guard let pairs = value as? [[Any]] else { throw CoastlineError("a line is not a list of positions") }
            var points: [Point] = []
            for pair in pairs {
                guard pair.count >= 2, let lon = (pair[0] as? NSNumber)?.doubleValue, let lat = (pair[1] as? NSNumber)?.doubleValue,
                    (-180...180).contains(lon), (-90...90).contains(lat)
                else { throw CoastlineError("a position is not a longitude and latitude in range") }
                points.append(Point(longitude: lon, latitude: lat))
            }
            return points
        }
        for (index, feature) in features.enumerated() {
            guard let geometry = feature["geometry"] as? [String: Any], let type = geometry["type"] as? String else {
                throw CoastlineError("feature \(index) has no geometry")
            }
            switch type {
            case "LineString": lines.append(try line(geometry["coordinates"]))
            case "MultiLineString":
                guard let parts = geometry["coordinates"] as? [Any] else { throw CoastlineError("feature \(index) has no coordinates") }
                for part in parts { lines.append(try line(part)) }
            default: throw CoastlineError("feature \(index) is a \(type), not a line")
            }
        }
        self.lines = lines
    }
}

/// Why a coastline file could not be read.
public struct CoastlineError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = "coastline file: \(description)" }
}
