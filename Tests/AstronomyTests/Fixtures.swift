import Foundation
import Testing

/// The oracle's fixtures (see `Fixtures/README.md`): gzipped JSON Lines, unpacked with gzip and decoded line by line.
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func rows<Row: Decodable>(_ name: String, as type: Row.Type = Row.self) throws -> [Row] {
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-dc", folder.appendingPathComponent(name).path]
        let pipe = Pipe()
        gzip.standardOutput = pipe
        try gzip.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        gzip.waitUntilExit()
        try #require(gzip.terminationStatus == 0, "gzip could not unpack \(name)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try data.split(separator: UInt8(ascii: "\n")).map { try decoder.decode(Row.self, from: Data($0)) }
    }

    struct Place: Decodable {
        let lon: Double
        let lat: Double
        let ra: Double
        let dec: Double
        let distKm: Double
    }

    /// A line of `sun-moon.jsonl.gz` (JPL DE421) or `pyephem-sun-moon.jsonl.gz` (PyEphem).
    struct SunMoon: Decodable {
        let jdUt: Double
        let deltaT: Double
        let jdTt: Double
        let sun: Place
        let moon: Place
        let dpsiArcsec: Double?
        let epsTrue: Double?
        let gast: Double?
    }

    /// A line of `horizon.jsonl.gz`.
    struct Evening: Decodable {
        let site: String
        let lat: Double
        let lon: Double
        let heightM: Double
        let date: String
        let sunsetJdUt: Double
        let moonsetJdUt: Double
        let lagMin: Double
        let ageH: Double
        let bestJdUt: Double
        let sunAlt: Double
        let moonAlt: Double
        let moonDistKm: Double
        let sdArcmin: Double
        let arcl: Double
        let arcv: Double
        let daz: Double
        let wArcmin: Double
        let v: Double
        let zone: String
    }

    /// A line of `conjunctions.jsonl.gz`.
    struct NewMoon: Decodable {
        let jdUt: Double
        let ut: String
        let deltaT: Double
    }
}

/// The largest of a set of differences, and where it was found, for a failure message that names the worst case.
struct Worst: CustomStringConvertible {
    private(set) var value = 0.0
    private(set) var at = ""

    mutating func record(_ difference: Double, at place: @autoclosure () -> String) {
        if abs(difference) > value {
            value = abs(difference)
            at = place()
        }
    }

    var description: String { "\(value) at \(at)" }
}

/// a − b in degrees, brought into (−180, 180], in arcseconds.
func arcseconds(_ a: Double, _ b: Double) -> Double {
    var d = (a - b).truncatingRemainder(dividingBy: 360)
    if d > 180 { d -= 360 }
    if d <= -180 { d += 360 }
    return d * 3600
}
