import Foundation

/// The contextual hints, as `data/hints/hints.json` defines them, in order of priority.
public struct HintCatalog: Sendable, Decodable {
    public struct Hint: Hashable, Sendable, Codable {
        public struct Trigger: Hashable, Sendable, Codable {
            /// An app event (`POST /v1/events`)…
            public let event: String
            /// …that must have been recorded at least this many times.
            public let count: Int
        }

        public let id: String
        public let title: String
        public let body: String
        public let after: Trigger?
        /// The event that shows the user already knows what the hint would teach.
        public let invalidatedBy: String?

        enum CodingKeys: String, CodingKey {
            case id, title, body, after, invalidatedBy = "invalidated_by"
        }

        public init(id: String, title: String, body: String, after: Trigger?, invalidatedBy: String?) {
            self.id = id
            self.title = title
            self.body = body
            self.after = after
            self.invalidatedBy = invalidatedBy
        }
    }

    public let version: Int
    public let hints: [Hint]

    public init(version: Int, hints: [Hint]) throws(OnboardingError) {
        guard Set(hints.map(\.id)).count == hints.count else { throw .invalidFlow("a hint id is used twice") }
        for hint in hints {
            guard HintRules.isEventName(hint.id) else { throw .invalidFlow("hint id '\(hint.id)' must be lowercase letters, digits and _") }
            if let after = hint.after, after.count < 1 || !HintRules.isEventName(after.event) {
                throw .invalidFlow("hint \(hint.id): 'after' needs an event name and a count of at least 1")
            }
        }
        self.version = version
        self.hints = hints
    }

    public init(from decoder: Decoder) throws {
        enum Keys: String, CodingKey { case version, hints }
        let container = try decoder.container(keyedBy: Keys.self)
        try self.init(version: try container.decode(Int.self, forKey: .version), hints: try container.decode([Hint].self, forKey: .hints))
    }

    /// `data/hints/hints.json`.
    public static func load(from dataDirectory: URL) throws(OnboardingError) -> HintCatalog {
        try decodeDataFile("hints/hints.json", in: dataDirectory)
    }

    public func hint(_ id: String) -> Hint? { hints.first { $0.id == id } }
}

/// One user's history with one hint.
public struct HintRecord: Hashable, Sendable {
    public var shownAt: Date?
    public var dismissedAt: Date?
    /// Shown while tutorial mode was on: it does not count as the day's new hint.
    public var shownInTutorial: Bool

    public init(shownAt: Date? = nil, dismissedAt: Date? = nil, shownInTutorial: Bool = false) {
        self.shownAt = shownAt
        self.dismissedAt = dismissedAt
        self.shownInTutorial = shownInTutorial
    }
}

/// Which hints a user may see now — TipKit's rules, kept by the server. Pure: the records, the event counts, the
/// clock and the user's zone come in as values.
///
/// - A hint shows at most once per user: once shown (or dismissed) it is not eligible again.
/// - It becomes eligible once its `after` event has been recorded `count` times, and never after its
///   `invalidated_by` event has been recorded (the user has done what it would teach).
/// - At most one new hint per user per local day: after a hint was first shown today, no other is eligible
///   until the next local midnight.
/// - Tutorial mode (per session) replays every hint, in order, whatever has been shown, dismissed or recorded.
public enum HintRules {
    public static func eligible(
        catalog: HintCatalog, records: [String: HintRecord], eventCounts: [String: Int], tutorial: Bool, now: Date, zone: TimeZone
    ) -> [HintCatalog.Hint] {
        if tutorial { return catalog.hints }
        let today = localDay(now, zone)
        let shownToday = records.values.contains { record in
            guard let shown = record.shownAt, !record.shownInTutorial else { return false }
            return localDay(shown, zone) == today
        }
        if shownToday { return [] }
        let first = catalog.hints.first { hint in
            let record = records[hint.id]
            guard record?.shownAt == nil, record?.dismissedAt == nil else { return false }
            if let invalidating = hint.invalidatedBy, (eventCounts[invalidating] ?? 0) > 0 { return false }
            if let after = hint.after, (eventCounts[after.event] ?? 0) < after.count { return false }
            return true
        }
        return first.map { [$0] } ?? []
    }

    /// Event and hint names: 1 to 64 of a-z, 0-9 and _.
    public static func isEventName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: "_")
            }
    }

    static func localDay(_ instant: Date, _ zone: TimeZone) -> Int {
        // Clamped before the conversion, which would trap on an instant past Int's range (or NaN).
        let raw = instant.timeIntervalSince1970
        let whole = raw.isNaN ? 0 : Int(min(max(raw, -0x1p50), 0x1p50).rounded(.down))
        let seconds = whole + zone.secondsFromGMT(for: instant)
        return seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }
}
