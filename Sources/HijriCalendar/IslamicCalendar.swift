import Astronomy

/// One of the Hijri calendars, ready to convert in both directions.
///
/// Value type: build it once (the sighted calendar from the published starts in the store) and share it.
public struct IslamicCalendar: Sendable {
    public let kind: CalendarKind
    private let table: MonthTable?  // nil for the tabular calendar

    private init(kind: CalendarKind, table: MonthTable?) {
        self.kind = kind
        self.table = table
    }

    public static let ummAlQura = IslamicCalendar(kind: .ummAlQura, table: .ummAlQura)
    public static let tabular = IslamicCalendar(kind: .tabular, table: nil)

    /// Umm al-Qura with the operator's published month starts (see `SightedMonthStarts` for the rule).
    public static func sighted(published: [PublishedMonthStart]) throws(CalendarError) -> IslamicCalendar {
        IslamicCalendar(kind: .sighted, table: try SightedMonthStarts.table(published: published))
    }

    /// The predicted calendar of `region` from its table (`PredictedTable`), with the published starts put in
    /// (see `PredictedMonthStarts` for the rule).
    public static func predicted(
        table: PredictedTable, region: CrescentRegion, published: [PublishedMonthStart]
    ) throws(CalendarError) -> IslamicCalendar {
        guard table.regionID == region.id else { throw .predictedUnavailable(region.id) }
        let starts = try PredictedMonthStarts.applying(published, to: table.starts, firstYear: table.firstYear, region: region)
        return IslamicCalendar(kind: .predicted, table: MonthTable(firstYear: table.firstYear, starts: starts))
    }

    /// The calendar of `kind`; `published` is read only by the sighted and predicted calendars, `predicted` (a
    /// region and its table) only by the predicted one.
    public static func make(
        _ kind: CalendarKind, published: [PublishedMonthStart] = [], predicted: (table: PredictedTable, region: CrescentRegion)? = nil
    ) throws(CalendarError)
        -> IslamicCalendar
    {
        switch kind {
        case .ummAlQura: return .ummAlQura
        case .tabular: return .tabular
        case .sighted: return try .sighted(published: published)
        case .predicted:
            guard let predicted else { throw .predictedUnavailable(nil) }
            return try .predicted(table: predicted.table, region: predicted.region, published: published)
        }
    }

    /// The Gregorian days this calendar covers.
    public var supportedRange: ClosedRange<CivilDate> {
        if let table {
            return CivilDate(dayNumber: table.firstDay)...CivilDate(dayNumber: table.lastDay)
        }
        return CivilDate(dayNumber: Tabular.epoch)...CivilDate(dayNumber: Self.lastCivilDay)
    }

    private var supportedDescription: String {
        let range = supportedRange
        if let table {
            return "\(range.lowerBound) to \(range.upperBound), 1 Muharram \(table.firstYear) to the end of \(table.lastYear) AH"
        }
        return "\(range.lowerBound) to \(range.upperBound), from 1 Muharram 1 AH"
    }

    private static let lastCivilDay = Tabular.lastCivilDay

    // MARK: - Gregorian -> Hijri

    /// The Hijri date of a civil day, with the adjustment applied.
    @inline(__always)
    public func hijriDate(for date: CivilDate, adjustment: Adjustment = .zero) throws(CalendarError) -> HijriDate {
        let day = date.dayNumber + adjustment.days
        if let hijri = lookUp(dayNumber: day) { return hijri }
        guard adjustment.days != 0 else { throw outOfRange(shown: date.description) }
        // An adjusted date can leave the range when the given one is inside it: the error names both.
        let days = abs(adjustment.days) == 1 ? "day" : "days"
        throw outOfRange(shown: "\(date) adjusted by \(adjustment.days > 0 ? "+" : "")\(adjustment.days) \(days) (\(CivilDate(dayNumber: day)))")
    }

    /// The hot path: a day number in, a Hijri date out.
    @inline(__always)
    public func hijriDate(dayNumber: Int) throws(CalendarError) -> HijriDate {
        if let hijri = lookUp(dayNumber: dayNumber) { return hijri }
        throw outOfRange(shown: CivilDate.dayNumberRange.contains(dayNumber) ? CivilDate(dayNumber: dayNumber).description : "day \(dayNumber)")
    }

    /// The Hijri date of a day number, or nil outside this calendar's range (checked before any arithmetic).
    @inline(__always)
    private func lookUp(dayNumber: Int) -> HijriDate? {
        if let table { return table.hijri(dayNumber: dayNumber) }
        guard dayNumber >= Tabular.epoch && dayNumber <= Self.lastCivilDay else { return nil }
        return Tabular.hijri(dayNumber: dayNumber)
    }

    private func outOfRange(shown: String) -> CalendarError {
        .outOfRange(date: shown, calendar: kind, supported: supportedDescription)
    }

    // MARK: - Hijri -> Gregorian

    /// The civil day that shows `date` under this calendar and adjustment.
    public func civilDate(for date: HijriDate, adjustment: Adjustment = .zero) throws(CalendarError) -> CivilDate {
        let length = try monthLength(year: date.year, month: date.month)
        guard (1...length).contains(date.day) else { throw .dayNotInMonth(date, monthLength: length) }
        let day = try firstDay(year: date.year, month: date.month) + date.day - 1 - adjustment.days
        guard (CivilDate.yearRange.lowerBound...CivilDate.yearRange.upperBound) ~= CivilDate(dayNumber: day).year else {
            throw .outOfRange(date: "AH \(date)", calendar: kind, supported: supportedDescription)
        }
        return CivilDate(dayNumber: day)
    }

    /// 29 or 30.
    public func monthLength(year: Int, month: Int) throws(CalendarError) -> Int {
        guard (1...12).contains(month) else { throw .invalidHijriDate("\(year)-\(month)") }
        if let table {
            guard let index = table.index(year: year, month: month) else { throw outOfRange(year: year, month: month) }
            return table.monthLength(index: index)
        }
        // The year is checked before the arithmetic: a year from outside can be any integer.
        guard Tabular.yearRange.contains(year), Tabular.dayNumber(year: year, month: month, day: 1) <= Self.lastCivilDay
        else {
            throw outOfRange(year: year, month: month)
        }
        return Tabular.monthLength(year: year, month: month)
    }

    /// The civil day on which `month` of `year` begins (before any adjustment), as a day number.
    public func firstDay(year: Int, month: Int) throws(CalendarError) -> Int {
        if let table {
            guard let index = table.index(year: year, month: month) else { throw outOfRange(year: year, month: month) }
            return table.starts[index]
        }
        _ = try monthLength(year: year, month: month)
        return Tabular.dayNumber(year: year, month: month, day: 1)
    }

    private func outOfRange(year: Int, month: Int) -> CalendarError {
        .outOfRange(date: "AH \(year)-\(month < 10 ? "0" : "")\(month)", calendar: kind, supported: supportedDescription)
    }
}
