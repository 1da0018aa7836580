import Diagnostics

/// A single verse (`2:183`) or a passage within one sura (`96:1-5`).
public struct VerseRange: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let surah: Int
    public let start: Int
    public let end: Int

    public init(surah: Int, start: Int, end: Int? = nil) {
        self.surah = surah
        self.start = start
        self.end = end ?? start
    }

    /// Parses `S:A` or `S:A-B`. Whether the verses exist is the store's question (it knows the suras' lengths).
    /// Each number is written as the key prints it, without leading zeros (`02:255` and `2:0255` are refused alike;
    /// `002:255` was taken where `2:0255` was not).
    public init(parsing text: String) throws(SelectionError) {
        let halves = text.split(separator: ":", omittingEmptySubsequences: false)
        guard halves.count == 2 else { throw .invalidVerseKey(text) }
        let ayat = halves[1].split(separator: "-", omittingEmptySubsequences: false)
        func number(_ part: Substring) -> Int? {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (48...57).contains($0) }), part.utf8.first != UInt8(ascii: "0")
            else { return nil }
            return Int(part)
        }
        guard let surah = number(halves[0]), (1...114).contains(surah), (1...2).contains(ayat.count),
            let start = number(ayat[0]), start >= 1
        else { throw .invalidVerseKey(text) }
        var end = start
        if ayat.count == 2 {
            guard let last = number(ayat[1]), last > start else { throw .invalidVerseKey(text) }
            end = last
        }
        self.init(surah: surah, start: start, end: end)
    }

    public var isPassage: Bool { end != start }
    public var ayahCount: Int { end - start + 1 }

    /// `2:183` or `96:1-5`.
    public var key: String { isPassage ? "\(surah):\(start)-\(end)" : "\(surah):\(start)" }
    public var description: String { key }

    public static func < (lhs: VerseRange, rhs: VerseRange) -> Bool {
        (lhs.surah, lhs.start, lhs.end) < (rhs.surah, rhs.start, rhs.end)
    }
}

extension VerseRange: Codable {
    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(key)
    }
}

public enum SelectionError: UserFacingError, Equatable, Sendable {
    case invalidVerseKey(String)
    case invalidCalendarData(String)

    public var description: String {
        switch self {
        case .invalidVerseKey(let text):
            "invalid verse '\(text)': expected SURAH:AYAH or SURAH:AYAH-AYAH without leading zeros, e.g. 2:255 or 96:1-5 (suras 1-114)"
        case .invalidCalendarData(let detail): "invalid verse calendar data: \(detail)"
        }
    }
}
