import Astronomy
import Foundation

extension MapPicture {
    /// The civil days a map can be drawn for: the years the astronomy is checked over (JPL's DE421 and PyEphem).
    public static let dayNumbers = JulianDay.dayNumber(year: 1900, month: 1, day: 1)...JulianDay.dayNumber(year: 2100, month: 12, day: 31)

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]

    /// `18 February 2026`.
    static func longDate(_ dayNumber: Int) -> String {
        let (year, month, day) = JulianDay.civil(dayNumber)
        return "\(day) \(monthNames[month - 1]) \(year)"
    }

    /// `2026-02-17`.
    static func isoDate(_ dayNumber: Int) -> String {
        let (year, month, day) = JulianDay.civil(dayNumber)
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// The map of the evening of `dayNumber` with its caption: the conjunction, and the region's verdict that evening.
    public static func evening(
        dayNumber: Int, region: CrescentRegion?, coastlines: Coastlines?, spacing: Double = 2, progress: ((Int, Int) -> Void)? = nil
    ) -> MapPicture {
        let map = VisibilityMap(dayNumber: dayNumber, spacing: spacing, progress: progress)
        let conjunction = JulianDay.iso(map.conjunction, seconds: false)
        var caption = [
            "Crescent visibility on the evening of \(longDate(dayNumber))",
            "Conjunction \(conjunction) · Odeh's criterion, zones A to D, at each place's best time · grid \(Int(spacing))°",
        ]
        if let region {
            let verdict = region.verdict(dayNumber: dayNumber, conjunction: map.conjunction)
            let detail =
                verdict.deciding.map { "\($0.site.name), V \(String(format: "%.2f", $0.v)), zone \($0.zone.rawValue)" } ?? "no evening at its sites"
            caption.append(
                "\(region.name) (\(region.rule.name)): \(verdict.seen ? "seen" : "not seen") (\(verdict.seen ? "" : "nearest: ")\(detail))")
        }
        return MapPicture(map: map, coastlines: coastlines, region: region, caption: caption)
    }
}
