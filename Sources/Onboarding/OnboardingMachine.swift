import Diagnostics
import Foundation

/// Where a user is in the onboarding, as the server keeps it.
public struct OnboardingState: Hashable, Sendable, Codable {
    public enum Permission: String, Hashable, Sendable, Codable, CaseIterable { case primed, granted, denied, deferred }
    public enum AccountChoice: String, Hashable, Sendable, Codable, CaseIterable {
        case guest
        case createAccount = "create_account"
        case signIn = "sign_in"
    }

    public var currentScreen: String
    public var screensSeen: [String] = []
    public var skipped = false
    public var skippedFrom: String? = nil
    public var layersPreviewed: [String] = []
    public var notificationPermission: Permission? = nil
    public var theme: String? = nil
    public var accountChoice: AccountChoice? = nil
    public var startedAt: Date? = nil
    public var completedAt: Date? = nil
    /// When the current screen was last viewed: the server's clock decides auto-advance.
    public var viewedAt: Date? = nil
    public var flowVersion: Int

    public init(flow: OnboardingFlow) {
        currentScreen = flow.first.id
        flowVersion = flow.version
    }

    public var isCompleted: Bool { completedAt != nil }
}

/// What a client reports.
public enum OnboardingEvent: Hashable, Sendable {
    case view
    case advance
    case back
    case skip
    case autoAdvance
    case previewLayer(String)
    case notificationPermission(OnboardingState.Permission)
    case selectTheme(String)
    case chooseAccount(OnboardingState.AccountChoice)
    case complete
    case reset

    public var type: String {
        switch self {
        case .view: "view"
        case .advance: "advance"
        case .back: "back"
        case .skip: "skip"
        case .autoAdvance: "auto_advance"
        case .previewLayer: "preview_layer"
        case .notificationPermission: "notification_permission"
        case .selectTheme: "select_theme"
        case .chooseAccount: "choose_account"
        case .complete: "complete"
        case .reset: "reset"
        }
    }
}

/// An analytics event a transition appends.
public struct AnalyticsEvent: Hashable, Sendable {
    /// The events the accounts record beside the flow's: a guest turned into an account in place, a guest merged into
    /// the account it signed in to.
    public static let guestUpgraded = "guest_upgraded"
    public static let guestMerged = "guest_merged"

    public let name: String
    public let screen: String?
    public let properties: [String: String]
    public let at: Date

    public init(name: String, screen: String?, properties: [String: String] = [:], at: Date) {
        self.name = name
        self.screen = screen
        self.properties = properties
        self.at = at
    }
}

public enum OnboardingError: UserFacingError, Equatable, Sendable {
    /// The flow does not allow this event now; nothing changed.
    case invalidTransition(String)
    case invalidFlow(String)
    /// A file of data/ that is missing or cannot be read as its format; the message names it.
    case unreadableFile(String)

    public var code: String {
        switch self {
        case .invalidTransition: "invalid_transition"
        case .invalidFlow: "invalid_flow"
        case .unreadableFile: "unreadable_file"
        }
    }

    public var description: String {
        switch self {
        case .invalidTransition(let message): message
        case .invalidFlow(let message): "invalid onboarding flow: \(message)"
        case .unreadableFile(let message): message
        }
    }
}

/// The onboarding as a state machine. Pure: the flow, the valid layer and theme ids and the clock come in as values.
public struct OnboardingMachine: Sendable {
    public let flow: OnboardingFlow
    public let layers: Set<String>
    public let themes: Set<String>

    public init(flow: OnboardingFlow, layers: Set<String>, themes: Set<String>) {
        self.flow = flow
        self.layers = layers
        self.themes = themes
    }

    /// The state after `event`, and the analytics it records; or `invalidTransition`, and no change.
    public func apply(
        _ event: OnboardingEvent, to state: OnboardingState, at now: Date
    ) throws(OnboardingError) -> (OnboardingState, [AnalyticsEvent]) {
        var next = state
        var analytics: [AnalyticsEvent] = []
        func record(_ name: String, _ properties: [String: String] = [:], screen: String? = state.currentScreen) {
            analytics.append(AnalyticsEvent(name: name, screen: screen, properties: properties, at: now))
        }
        func refuse(_ message: String) -> OnboardingError { .invalidTransition(message) }
        let index = flow.index(of: state.currentScreen) ?? 0
        let screen = flow.screens[index]

        if case .reset = event {
            return (OnboardingState(flow: flow), [AnalyticsEvent(name: "onboarding_reset", screen: nil, at: now)])
        }
        guard !state.isCompleted else { throw refuse("onboarding is already completed; reset to start again") }

        // Reaching a screen is recorded however the user got there (advance, back, skip, auto-advance), so that the
        // funnel counts it even when the app sends no view.
        func move(to target: Int) {
            next.currentScreen = flow.screens[target].id
            next.viewedAt = nil
            record("onboarding_screen_reached", screen: flow.screens[target].id)
        }
        func require(_ action: String) throws(OnboardingError) {
            guard screen.allows.contains(action) else {
                let place = flow.screen(allowing: action).map { "only on \($0.id)" } ?? "on no screen"
                throw refuse("\(action) is allowed \(place), not on \(screen.id)")
            }
        }

        switch event {
        case .view:
            if next.startedAt == nil {
                next.startedAt = now
                record("onboarding_started")
            }
            if !next.screensSeen.contains(screen.id) { next.screensSeen.append(screen.id) }
            next.viewedAt = now
            record("onboarding_screen_viewed")
        case .advance:
            guard index + 1 < flow.screens.count else { throw refuse("\(screen.id) is the last screen: complete instead") }
            move(to: index + 1)
        case .back:
            guard index > 0 else { throw refuse("\(screen.id) is the first screen") }
            move(to: index - 1)
        case .skip:
            guard screen.skippable, index + 1 < flow.screens.count else { throw refuse("skip is not offered on \(screen.id)") }
            next.skipped = true
            next.skippedFrom = screen.id
            move(to: flow.screens.count - 1)
            record("onboarding_skipped", ["from": screen.id])
        case .autoAdvance:
            guard let seconds = screen.autoAdvanceAfterSeconds else { throw refuse("\(screen.id) does not advance by itself") }
            guard let viewed = state.viewedAt else { throw refuse("\(screen.id) has not been viewed") }
            let elapsed = now.timeIntervalSince(viewed)
            guard elapsed >= seconds else {
                throw refuse(String(format: "%@ advances by itself %.0f s after it is viewed; %.1f s have passed", screen.id, seconds, elapsed))
            }
            guard index + 1 < flow.screens.count else { throw refuse("\(screen.id) is the last screen") }
            move(to: index + 1)
        case .previewLayer(let layer):
            try require("preview_layer")
            guard layers.contains(layer) else { throw refuse("unknown layer '\(layer)'") }
            if !next.layersPreviewed.contains(layer) { next.layersPreviewed.append(layer) }
        case .notificationPermission(let permission):
            try require("notification_permission")
            switch (state.notificationPermission, permission) {
            case (nil, .primed), (.deferred?, .primed): break
            case (.primed?, .granted), (.primed?, .denied), (.primed?, .deferred): break
            default:
                let from = state.notificationPermission?.rawValue ?? "not asked"
                throw refuse("notification permission cannot go from \(from) to \(permission.rawValue)")
            }
            next.notificationPermission = permission
            record("notification_permission_\(permission.rawValue)")
        case .selectTheme(let theme):
            try require("select_theme")
            guard themes.contains(theme) else { throw refuse("unknown theme '\(theme)'") }
            next.theme = theme
            record("theme_selected", ["theme": theme])
        case .chooseAccount(let choice):
            try require("choose_account")
            next.accountChoice = choice
            record("account_mode_chosen", ["mode": choice.rawValue])
        case .complete:
            try require("complete")
            guard state.theme != nil else { throw refuse("choose a theme before completing") }
            guard let choice = state.accountChoice else { throw refuse("choose guest, create account or sign in before completing") }
            next.completedAt = now
            record("onboarding_completed", ["theme": state.theme ?? "", "account_mode": choice.rawValue, "skipped": String(state.skipped)])
        case .reset:
            break  // handled above
        }
        return (next, analytics)
    }
}
