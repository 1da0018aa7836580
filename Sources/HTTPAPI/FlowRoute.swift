import ContentStore
import Foundation
import HijriCalendar
import Hummingbird
import Onboarding
import Storage
import VerseOfTheDay

/// Any JSON value, to carry the onboarding copy from data/ into responses unchanged.
public enum JSONValue: Codable, Sendable, Equatable {
    case string(String), number(Double), bool(Bool), array([JSONValue]), object([String: JSONValue]), null

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

/// `data/onboarding/copy.json`: each screen's words, by screen id.
public struct OnboardingCopy: Decodable, Sendable {
    public let screens: [String: [String: JSONValue]]

    public static func load(from directory: URL) throws -> OnboardingCopy {
        try decodeDataFile("onboarding/copy.json", in: directory)
    }
}

extension OnboardingMachine {
    /// The flow, with the layer and theme ids the database holds.
    public init(flow: OnboardingFlow, database: AppDatabase) throws {
        self.init(flow: flow, layers: Set(try database.layerIDs()), themes: Set(try database.displayThemes().map(\.id)))
    }
}

struct FlowReport: Encodable {
    let flowVersion: Int
    let screens: [Screen]
    enum CodingKeys: String, CodingKey { case flowVersion = "flow_version", screens }

    struct Screen: Encodable {
        let id: String
        let skippable: Bool
        let autoAdvanceAfterSeconds: Double?
        let content: [String: JSONValue]
        let layers: [Layer]?
        let today: TodayReport?
        let themes: [DisplayTheme]?
        enum CodingKeys: String, CodingKey {
            case id, skippable, autoAdvanceAfterSeconds = "auto_advance_after_seconds", content, layers, today, themes
        }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(skippable, forKey: .skippable)
            try container.encodeIfPresent(autoAdvanceAfterSeconds, forKey: .autoAdvanceAfterSeconds)
            try container.encode(content, forKey: .content)
            try container.encodeIfPresent(layers, forKey: .layers)
            try container.encodeIfPresent(today, forKey: .today)
            try container.encodeIfPresent(themes, forKey: .themes)
        }
    }
}

func addFlowRoute(_ router: Router<APIContext>, _ environment: APIEnvironment) {
    // GET /v1/onboarding/flow?tz=IANA: the screens, their copy, and what each shows live (the layers, today's verse
    // for that zone, the display themes).
    router.get("/v1/onboarding/flow") { request, _ -> Response in
        let zoneName = request.uri.queryParameters["tz"].map(String.init) ?? "UTC"
        guard let zone = TimeZone.iana(zoneName) else {
            throw APIError.badRequest("bad_zone", "unknown time zone '\(zoneName)': expected an IANA name such as Asia/Baghdad")
        }
        let database = environment.reports.database
        let today = try answering(.answer) {
            try environment.reports.today(TodayRequest(date: CivilDate(instant: environment.clock(), timeZone: zone), timeZone: zone.identifier))
        }
        let screens = try environment.onboarding.flow.screens.map { screen in
            FlowReport.Screen(
                id: screen.id, skippable: screen.skippable, autoAdvanceAfterSeconds: screen.autoAdvanceAfterSeconds,
                content: environment.copy.screens[screen.id] ?? [:],
                layers: screen.allows.contains("preview_layer") ? try database.layers() : nil,
                today: screen.allows.contains("notification_permission") ? today : nil,
                themes: screen.allows.contains("select_theme") ? try database.displayThemes() : nil)
        }
        return try conditional(request, FlowReport(flowVersion: environment.onboarding.flow.version, screens: screens), maxAge: 300)
    }
}
