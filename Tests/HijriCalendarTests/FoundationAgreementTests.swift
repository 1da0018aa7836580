import Foundation
import Testing

@testable import HijriCalendar

/// The tables must equal Foundation's calendars on every day they cover.
@Suite struct FoundationAgreementTests {
    static func foundationCalendar(_ identifier: Calendar.Identifier) -> Calendar {
        var calendar = Calendar(identifier: identifier)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    static func foundationHijri(_ calendar: Calendar, dayNumber: Int) -> HijriDate {
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(dayNumber) * 86_400))
        return HijriDate(year: parts.year!, month: parts.month!, day: parts.day!)
    }

    @Test func ummAlQuraEqualsFoundationOnEveryDayOfTheRange() throws {
        let foundation = Self.foundationCalendar(.islamicUmmAlQura)
        let range = IslamicCalendar.ummAlQura.supportedRange
        #expect(range.lowerBound.description == "1882-11-12")
        #expect(range.upperBound.description == "2174-11-25")
        var mismatches: [String] = []
        for day in range.lowerBound.dayNumber...range.upperBound.dayNumber {
            let ours = try IslamicCalendar.ummAlQura.hijriDate(dayNumber: day)
            let theirs = Self.foundationHijri(foundation, dayNumber: day)
            if ours != theirs, mismatches.count < 5 { mismatches.append("\(CivilDate(dayNumber: day)): \(ours) vs \(theirs)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test func ummAlQuraMonthStartsEqualFoundation() throws {
        let foundation = Self.foundationCalendar(.islamicUmmAlQura)
        for year in 1300...1600 {
            for month in 1...12 {
                let ours = try IslamicCalendar.ummAlQura.firstDay(year: year, month: month)
                let date = foundation.date(from: DateComponents(year: year, month: month, day: 1))!
                #expect(ours == Int((date.timeIntervalSince1970 / 86_400).rounded(.down)), "\(year)-\(month)")
            }
        }
    }

    @Test func tabularEqualsFoundationIslamicCivil() throws {
        let foundation = Self.foundationCalendar(.islamicCivil)
        let start = IslamicCalendar.tabular.supportedRange.lowerBound.dayNumber
        let end = try CivilDate(year: 9999, month: 12, day: 31).dayNumber
        // Every day of 1850–2250, and every 11th day over the whole range (both month ends and leap days included).
        let dense = try CivilDate(year: 1850, month: 1, day: 1).dayNumber...CivilDate(year: 2250, month: 12, day: 31).dayNumber
        var days = Array(dense)
        days += Array(stride(from: start, through: end, by: 11))
        days += [start, start + 1, end]
        for day in days {
            let ours = try IslamicCalendar.tabular.hijriDate(dayNumber: day)
            let theirs = Self.foundationHijri(foundation, dayNumber: day)
            try #require(ours == theirs, "\(CivilDate(dayNumber: day))")
        }
    }

    @Test func tabularEpochIsFridayJulySixteenth622Julian() throws {
        // 16 July 622 Julian is 19 July 622 proleptic Gregorian, a Friday.
        let epoch = IslamicCalendar.tabular.supportedRange.lowerBound
        #expect(epoch.description == "0622-07-19")
        #expect(epoch.isoWeekday == 5)
        #expect(try IslamicCalendar.tabular.hijriDate(for: epoch) == HijriDate(year: 1, month: 1, day: 1))
    }

    @Test func tabularLeapYearsFollowTheCycle() {
        let leap = (1...30).filter { Tabular.isLeapYear($0) }
        #expect(leap == [2, 5, 7, 10, 13, 16, 18, 21, 24, 26, 29])
        #expect(Tabular.isLeapYear(1447 + 30) == Tabular.isLeapYear(1447))
    }
}
