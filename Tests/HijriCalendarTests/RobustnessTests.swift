import Foundation
import Testing

@testable import HijriCalendar

/// Values from outside: every integer an attacker might send, the bounds of every documented range and the values
/// just past them, and random 64-bit integers.
enum Hostile {
    static let edges: [Int] = [
        .min, .min + 1, -(1 << 62), -1_000_000_000_000, -2_932_897, -719_163, -719_162, -10_000, -3, -2, -1, 0, 1, 2, 3, 11, 12, 13, 29, 30, 31,
        59, 60, 1299, 1300, 1600, 1601, 9999, 10_000, 10_323, 10_324, 719_468, 2_932_896, 2_932_897, 1_000_000_000_000, 1 << 62, .max - 1, .max,
    ]

    static func integers(count: Int, seed: UInt64) -> [Int] {
        var generator = SplitMix64(seed: seed)
        return edges
            + (0..<count).map { index in
                switch index % 3 {
                case 0: Int(truncatingIfNeeded: generator.next())
                case 1: Int.random(in: -20_000...20_000, using: &generator)
                default: Int.random(in: -3_000_000...3_000_000, using: &generator)
                }
            }
    }

    static let alphabet = Array("0123456789-:+ eE.,/xX٠١٢٣abcTZW\"\\%\u{0}\u{FEFF}é")

    static func strings(count: Int, seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        let fixed = [
            "", "-", "--", "1-1-1", "0000-00-00", "9999-12-31", "10000-01-01", "2025-02-29", "2024-02-29", "2025-13-01", "99999999999999999999-01-01",
            "9223372036854775807-01-01", "-2025-01-01", "+2025-01-01", "2025-1-01", "２０２５-０１-０１", "1446-09-30", "1446-9-1", "0-0-0",
            "1e3-01-01", "2:255", "2:255-300", "114:6", "115:1", "0:1", "1:0", "2:2-1", "08:00", "24:00", "23:60", "7:5",
            String(repeating: "9", count: 400),
        ]
        return fixed
            + (0..<count).map { _ in
                String((0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            }
    }
}

/// No value from outside can trap: every parse function and conversion entry point returns a value or throws.
/// (A trap would end the test process; the expectations check that what comes back is sane.)
@Suite struct RobustnessTests {
    static let calendars: [IslamicCalendar] = [.ummAlQura, .tabular, try! .sighted(published: [])]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func integersIntoEveryConversion(seed: UInt64) throws {
        let values = Hostile.integers(count: 3000, seed: seed)
        var generator = SplitMix64(seed: seed &* 31)
        for value in values {
            // Day numbers, checked and unchecked.
            let checked = try? CivilDate(validatingDayNumber: value)
            #expect((checked != nil) == CivilDate.dayNumberRange.contains(value))
            if let checked { #expect(checked.dayNumber == value && CivilDate.yearRange.contains(checked.year)) }
            _ = CivilDate(dayNumber: value).description
            if let checked { _ = checked.adding(days: value) }
            _ = CivilDate(dayNumber: 0).adding(days: value)
            // Gregorian fields.
            let other = Hostile.edges.randomElement(using: &generator)!
            if let date = try? CivilDate(year: value, month: other, day: value) { #expect(CivilDate.yearRange.contains(date.year)) }
            _ = try? CivilDate(year: 2025, month: value, day: 1)
            _ = try? CivilDate(year: 2025, month: 1, day: value)
            // Adjustments.
            let adjustment = try? Adjustment(value)
            #expect((adjustment != nil) == Adjustment.range.contains(value))
            for calendar in Self.calendars {
                // Day number -> Hijri, and Hijri fields -> day.
                if let hijri = try? calendar.hijriDate(dayNumber: value) {
                    #expect((1...12).contains(hijri.month) && (1...30).contains(hijri.day))
                }
                _ = try? calendar.monthLength(year: value, month: other)
                _ = try? calendar.monthLength(year: other, month: value)
                _ = try? calendar.firstDay(year: value, month: 1)
                let hijri = HijriDate(year: value, month: Int.random(in: -1...14, using: &generator), day: other)
                if let civil = try? calendar.civilDate(for: hijri, adjustment: adjustment ?? .zero) {
                    #expect(CivilDate.yearRange.contains(civil.year))
                }
                if let checked {
                    _ = try? calendar.hijriDate(for: checked, adjustment: adjustment ?? .zero)
                }
            }
            // Published month starts (the sighted calendar's input).
            if let checked {
                _ = try? SightedMonthStarts.validate(PublishedMonthStart(year: value, month: other, firstDay: checked))
                _ = try? IslamicCalendar.sighted(published: [PublishedMonthStart(year: value, month: 9, firstDay: checked)])
            }
        }
    }

    @Test(arguments: [4, 5] as [UInt64])
    func instantsIntoEveryConversion(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let specials: [Double] = [.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1e300, -1e300, 0, -0.5]
        let zones = ["UTC", "Asia/Tokyo", "America/Los_Angeles", "Pacific/Kiritimati", "Pacific/Pago_Pago"].compactMap(TimeZone.init(identifier:))
        for seconds in specials + (0..<2000).map({ _ in Double(bitPattern: generator.next()) }) {
            let instant = Date(timeIntervalSince1970: seconds)
            _ = instant.iso8601UTC
            for zone in zones { _ = CivilDate(instant: instant, timeZone: zone).description }
            #expect(instant.isInSupportedRange == CivilDate.secondsRange.contains(seconds))
        }
    }

    @Test(arguments: [6, 7] as [UInt64])
    func stringsIntoEveryParser(seed: UInt64) {
        for text in Hostile.strings(count: 4000, seed: seed) {
            if let date = try? CivilDate(parsing: text) {
                #expect(CivilDate.yearRange.contains(date.year))
                #expect(date.description == text)
            }
            if let hijri = try? HijriDate(parsing: text) { #expect((1...12).contains(hijri.month) && (1...30).contains(hijri.day)) }
            _ = try? CalendarKind(parsing: text)
        }
    }

    @Test func theSupportedRangesAreWhatTheyClaim() throws {
        #expect(try CivilDate(parsing: "0001-01-01").dayNumber == CivilDate.dayNumberRange.lowerBound)
        #expect(try CivilDate(parsing: "9999-12-31").dayNumber == CivilDate.dayNumberRange.upperBound)
        #expect(CivilDate.secondsRange.contains(Double(try CivilDate(parsing: "9999-12-31").dayNumber * 86_400 + 86_399)))
        #expect(!CivilDate.secondsRange.contains(Double(CivilDate.dayNumberRange.upperBound + 1) * 86_400))
        // The tabular calendar's last year still has a day in 9999; the next one has none and is refused before any arithmetic.
        let last = Tabular.yearRange.upperBound
        #expect(try IslamicCalendar.tabular.monthLength(year: last, month: 1) >= 29)
        #expect(throws: CalendarError.self) { try IslamicCalendar.tabular.monthLength(year: last + 1, month: 1) }
        #expect(throws: CalendarError.self) { try IslamicCalendar.tabular.monthLength(year: .max, month: 12) }
        #expect(throws: CalendarError.self) { try IslamicCalendar.ummAlQura.monthLength(year: .max, month: 12) }
        #expect(throws: CalendarError.self) {
            try IslamicCalendar.ummAlQura.civilDate(for: HijriDate(year: 768_614_336_404_565_951, month: 1, day: 1))
        }
    }

    @Test func anAdjustedDateOutsideTheRangeIsNamedWithItsAdjustment() throws {
        let first = try CivilDate(parsing: "1882-11-12")
        #expect(try IslamicCalendar.ummAlQura.hijriDate(for: first) == HijriDate(year: 1300, month: 1, day: 1))
        let error = #expect(throws: CalendarError.self) { try IslamicCalendar.ummAlQura.hijriDate(for: first, adjustment: try Adjustment(-1)) }
        let message = error?.description ?? ""
        #expect(message.contains("1882-11-12 adjusted by -1 day (1882-11-11)"), "\(message)")
        #expect(message.contains("outside"))
    }
}
