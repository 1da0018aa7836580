import HijriCalendar
import VerseCalendar

/// What a notification says about a day: its Hijri date, verse, theme and occasion, in both languages.
public struct DailyContent: Hashable, Sendable {
    public let localDate: CivilDate
    public let hijri: HijriDate
    public let verseKey: String
    public let surahName: String
    public let surahNameArabic: String
    public let arabic: String
    public let translation: String
    public let themeID: String
    public let themeName: String
    /// The occasion whose verse the day shows.
    public let occasion: Occasion?
    /// Other occasions the day meets, carried in the payload's data beside the one that leads.
    public let otherOccasions: [Occasion]

    public struct Occasion: Hashable, Sendable {
        public let id: String
        public let name: String
        public let nameArabic: String
        /// A night that begins this evening: the title says "Tonight".
        public let tonight: Bool

        public init(id: String, name: String, nameArabic: String, tonight: Bool = false) {
            self.id = id
            self.name = name
            self.nameArabic = nameArabic
            self.tonight = tonight
        }
    }

    public init(
        localDate: CivilDate, hijri: HijriDate, verseKey: String, surahName: String, surahNameArabic: String, arabic: String,
        translation: String, themeID: String, themeName: String, occasion: Occasion?, otherOccasions: [Occasion] = []
    ) {
        self.localDate = localDate
        self.hijri = hijri
        self.verseKey = verseKey
        self.surahName = surahName
        self.surahNameArabic = surahNameArabic
        self.arabic = arabic
        self.translation = translation
        self.themeID = themeID
        self.themeName = themeName
        self.occasion = occasion
        self.otherOccasions = otherOccasions
    }
}

/// The words of a notification in one locale.
struct NotificationText: Equatable {
    let title: String
    let subtitle: String
    let body: String

    /// A title fits one line of a lock screen: on an ordinary day the Hijri date and "Verse of the Day"; on an
    /// occasion its short name alone, capitalised ("The Birth of the Prophet"), with the date leading the subtitle; on
    /// the evening a night begins, "Tonight: the Third Night of Qadr" ("الليلة: …").
    init(_ content: DailyContent, locale: DeviceLocale) {
        switch locale {
        case .en:
            let date = "\(content.hijri.day) \(content.hijri.monthName.englishName) \(content.hijri.year)"
            let reference = "\(content.surahName) \(content.verseKey)"
            if let occasion = content.occasion {
                title = occasion.tonight ? "Tonight: " + Self.shortName(occasion.name, capitalised: false) : Self.shortName(occasion.name)
                subtitle = "\(date) · \(reference)"
            } else {
                title = "\(date) · Verse of the Day"
                subtitle = "\(content.themeName) · \(reference)"
            }
            body = content.translation
        case .ar:
            let date = "\(Self.arabicDigits(content.hijri.day)) \(content.hijri.monthName.arabicName) \(Self.arabicDigits(content.hijri.year))"
            let reference = "سورة \(content.surahNameArabic) \(Self.arabicDigits(verseKey: content.verseKey))"
            if let occasion = content.occasion {
                title = occasion.tonight ? "الليلة: " + occasion.nameArabic : occasion.nameArabic
                subtitle = "\(date) · \(reference)"
            } else {
                title = "\(date) · آية اليوم"
                subtitle = reference
            }
            body = content.arabic
        }
    }

    /// "17 Rabi al-Awwal: the Birth of the Prophet" → "The Birth of the Prophet": the date goes in the subtitle.
    static func shortName(_ name: String, capitalised: Bool = true) -> String {
        let short = VerseCalendar.Occasion.shortName(name)
        guard capitalised, let first = short.first else { return short }
        return first.uppercased() + short.dropFirst()
    }

    static func arabicDigits(_ number: Int) -> String { arabicDigits(verseKey: String(number)) }

    static func arabicDigits(verseKey text: String) -> String {
        String(
            text.unicodeScalars.map { $0.value >= 0x30 && $0.value <= 0x39 ? Character(Unicode.Scalar($0.value - 0x30 + 0x0660)!) : Character($0) })
    }
}
