import Foundation

/// The zones of one evening's crescent over the world, as the astronomical centres draw them: at each point of a grid,
/// the evening of that civil day (local mean time) judged by Odeh's criterion at the best time.
public struct VisibilityMap: Sendable {
    /// The civil day whose evening is drawn, as a day number (days since 1970-01-01).
    public let dayNumber: Int
    /// The conjunction the crescent follows (a Julian day of UT).
    public let conjunction: Double
    /// Grid spacing, degrees; the rows run from `latitudes.lowerBound` north, the columns from −180° east.
    public let spacing: Double
    public let latitudes: ClosedRange<Double>
    /// `zones[row][column]`: nil where the Sun or the Moon does not set that evening.
    public let zones: [[VisibilityZone?]]

    /// The latitudes drawn: farther from the equator the Sun may not set, and maps of crescent visibility stop there.
    public static let latitudeLimit = 60.0

    public var rows: Int { zones.count }
    public var columns: Int { zones.first?.count ?? 0 }

    /// The centre of a cell.
    public func latitude(row: Int) -> Double { latitudes.lowerBound + (Double(row) + 0.5) * spacing }
    public func longitude(column: Int) -> Double { -180 + (Double(column) + 0.5) * spacing }

    /// The map of the evening of `dayNumber`, on a grid of `spacing` degrees (1 to 10); `progress` is told each row done.
    public init(dayNumber: Int, spacing: Double = 2, progress: ((Int, Int) -> Void)? = nil) {
        precondition((1.0...10.0).contains(spacing))
        self.dayNumber = dayNumber
        self.spacing = spacing
        latitudes = -Self.latitudeLimit...Self.latitudeLimit
        // Evenings run from 18:00 local time at 180° E (06:00 UT) to moonsets after midnight at 180° W (the next
        // day, 12:00 UT and later): one table covers them all.
        let midnight = JulianDay.unixEpoch + Double(dayNumber)
        let table = SkyTable(from: midnight - 1, to: midnight + 2.5)
        let conjunction = Conjunction.nearest(evening: dayNumber)
        self.conjunction = conjunction
        let rows = Int((2 * Self.latitudeLimit / spacing).rounded())
        let columns = Int((360 / spacing).rounded())
        var zones: [[VisibilityZone?]] = []
        zones.reserveCapacity(rows)
        for row in 0..<rows {
            let latitude = -Self.latitudeLimit + (Double(row) + 0.5) * spacing
            var line: [VisibilityZone?] = []
            line.reserveCapacity(columns)
            for column in 0..<columns {
                let longitude = -180 + (Double(column) + 0.5) * spacing
                let site = Site(name: "", latitude: latitude, longitude: longitude)
                let evening = Crescent.evening(
                    site: site, localMidnight: midnight - longitude / 360, conjunction: conjunction, sky: table.sky)
                line.append(evening?.zone)
            }
            zones.append(line)
            progress?(row + 1, rows)
        }
        self.zones = zones
    }

    /// The zone at the cell holding `latitude`, `longitude`, or nil outside the grid or where nothing sets.
    public func zone(latitude: Double, longitude: Double) -> VisibilityZone? {
        let row = Int(((latitude - latitudes.lowerBound) / spacing).rounded(.down))
        let column = Int(((Angle.signed(longitude) + 180) / spacing).rounded(.down))
        guard (0..<rows).contains(row), (0..<columns).contains(column) else { return nil }
        return zones[row][column]
    }
}
