import Diagnostics
import Foundation

/// The onboarding's screens and what each allows, as `data/onboarding/flow.json` defines them.
public struct OnboardingFlow: Hashable, Sendable, Codable {
    public struct Screen: Hashable, Sendable, Codable {
        public let id: String
        /// Skip is offered on every screen but the last, where the choices are made.
        public let skippable: Bool
        /// Seconds after the screen was viewed from which it may advance by itself.
        public let autoAdvanceAfterSeconds: Double?
        /// The actions only this screen accepts: preview_layer, notification_permission, select_theme, choose_account, complete.
        public let allows: Set<String>

        enum CodingKeys: String, CodingKey {
            case id, skippable, autoAdvanceAfterSeconds = "auto_advance_after_seconds", allows
        }

        public init(id: String, skippable: Bool, autoAdvanceAfterSeconds: Double? = nil, allows: Set<String> = []) {
            self.id = id
            self.skippable = skippable
            self.autoAdvanceAfterSeconds = autoAdvanceAfterSeconds
            self.allows = allows
        }
    }

    public let version: Int
    public let screens: [Screen]

    public static let actions: Set<String> = ["preview_layer", "notification_permission", "select_theme", "choose_account", "complete"]

    public init(version: Int, screens: [Screen]) throws(OnboardingError) {
        guard !screens.isEmpty else { throw .invalidFlow("no screens") }
        guard Set(screens.map(\.id)).count == screens.count else { throw .invalidFlow("a screen id is used twice") }
        for screen in screens {
            if let unknown = screen.allows.subtracting(Self.actions).sorted().first {
                throw .invalidFlow("screen \(screen.id) allows unknown action '\(unknown)'")
            }
        }
        guard screens.last?.allows.contains("complete") == true else { throw .invalidFlow("the last screen must allow complete") }
        self.version = version
        self.screens = screens
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(version: container.decode(Int.self, forKey: .version), screens: container.decode([Screen].self, forKey: .screens))
    }

    enum CodingKeys: String, CodingKey { case version, screens }

    public func index(of screen: String) -> Int? { screens.firstIndex { $0.id == screen } }
    public var first: Screen { screens[0] }
    public var last: Screen { screens[screens.count - 1] }

    /// The screen that accepts `action`.
    public func screen(allowing action: String) -> Screen? { screens.first { $0.allows.contains(action) } }
}

extension OnboardingFlow {
    /// `data/onboarding/flow.json`.
    public static func load(from directory: URL) throws(OnboardingError) -> OnboardingFlow {
        try decodeDataFile("onboarding/flow.json", in: directory)
    }
}

/// The largest of the onboarding's data files read (each a few KiB).
let maximumDataFileBytes = 1 << 20

/// A JSON file of the onboarding's part of data/ (the flow, its copy, the hints), decoded; a missing or malformed
/// file is an error naming it.
public func decodeDataFile<T: Decodable>(_ path: String, in directory: URL) throws(OnboardingError) -> T {
    let file = directory.appendingPathComponent(path)
    let data: [UInt8]
    do { data = try InputFile.contents(of: file.path, maximumBytes: maximumDataFileBytes) } catch {
        throw .unreadableFile(error.isMissing ? "missing data file '\(file.path)'" : "cannot read data file \(error)")
    }
    do { return try JSONDecoder().decode(T.self, from: Data(data)) } catch {
        throw .unreadableFile("\(path): \(error)")
    }
}
