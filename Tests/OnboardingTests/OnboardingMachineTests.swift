import Foundation
import Testing

@testable import Onboarding

@Suite struct OnboardingMachineTests {
    static let flowFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("data/onboarding/flow.json")
    static let layers: Set<String> = ["foundation", "classical_shia", "contemporary", "ahlul_bayt", "comparative"]
    static let themes: Set<String> = ["parchment", "midnight", "emerald", "dawn"]

    let machine: OnboardingMachine
    let start = Date(timeIntervalSince1970: 1_740_800_000)

    init() throws {
        let flow = try OnboardingFlow.load(from: Self.flowFile.deletingLastPathComponent().deletingLastPathComponent())
        machine = OnboardingMachine(flow: flow, layers: Self.layers, themes: Self.themes)
    }

    /// A data folder without the flow, or with a flow that is not one, is a one-line error naming the file.
    @Test func aMissingOrMalformedFlowFileIsNamed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dv-flow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("onboarding"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = #expect(throws: OnboardingError.self) { try OnboardingFlow.load(from: folder) }
        #expect(missing?.description == "missing data file '\(folder.appendingPathComponent("onboarding/flow.json").path)'")
        try Data(#"{"version": "one"}"#.utf8).write(to: folder.appendingPathComponent("onboarding/flow.json"))
        let malformed = #expect(throws: OnboardingError.self) { try OnboardingFlow.load(from: folder) }
        #expect(malformed?.description.hasPrefix("onboarding/flow.json: ") == true)
        #expect(malformed?.description.contains("\n") == false)
        // The hints are read by the same rule.
        let hints = #expect(throws: OnboardingError.self) { try HintCatalog.load(from: folder) }
        #expect(hints?.description == "missing data file '\(folder.appendingPathComponent("hints/hints.json").path)'")
    }

    /// Applies events in order, one second apart, and returns the state and every analytics event name.
    func run(_ events: [OnboardingEvent], from state: OnboardingState? = nil) throws -> (OnboardingState, [String]) {
        var current = state ?? OnboardingState(flow: machine.flow)
        var names: [String] = []
        for (i, event) in events.enumerated() {
            let (next, analytics) = try machine.apply(event, to: current, at: start.addingTimeInterval(Double(i)))
            current = next
            names += analytics.map(\.name)
        }
        return (current, names)
    }

    func refused(_ event: OnboardingEvent, after events: [OnboardingEvent], at offset: Double = 100) throws -> OnboardingError? {
        let (state, _) = try run(events)
        do {
            _ = try machine.apply(event, to: state, at: start.addingTimeInterval(offset))
            return nil
        } catch { return error }
    }

    @Test func theFlowHasTheFiveScreensInOrder() {
        #expect(machine.flow.screens.map(\.id) == ["hadith", "mission", "layers", "daily_verse", "begin"])
        #expect(machine.flow.screens.map(\.skippable) == [true, true, true, true, false])
    }

    @Test func aFullWalkThroughCompletes() throws {
        let (state, names) = try run([
            .view, .advance, .view, .advance, .view, .previewLayer("ahlul_bayt"), .previewLayer("foundation"), .previewLayer("ahlul_bayt"),
            .advance, .view, .notificationPermission(.primed), .notificationPermission(.granted), .advance, .view,
            .selectTheme("midnight"), .chooseAccount(.guest), .complete,
        ])
        #expect(state.isCompleted)
        #expect(state.screensSeen == ["hadith", "mission", "layers", "daily_verse", "begin"])
        #expect(state.layersPreviewed == ["ahlul_bayt", "foundation"])
        #expect(state.notificationPermission == .granted)
        #expect(state.theme == "midnight")
        #expect(state.accountChoice == .guest)
        #expect(state.skipped == false)
        #expect(state.startedAt == start)
        #expect(names.first == "onboarding_started")
        #expect(names.filter { $0 == "onboarding_screen_viewed" }.count == 5)
        #expect(names.contains("notification_permission_primed") && names.contains("notification_permission_granted"))
        #expect(names.suffix(3) == ["theme_selected", "account_mode_chosen", "onboarding_completed"])
    }

    @Test func skipLandsOnBeginFromAnyScreenButTheLast() throws {
        for advances in 0..<4 {
            let (state, names) = try run([.view] + Array(repeating: .advance, count: advances) + [.skip])
            #expect(state.currentScreen == "begin")
            #expect(state.skipped)
            #expect(state.skippedFrom == machine.flow.screens[advances].id)
            #expect(names.last == "onboarding_skipped")
        }
        #expect(try refused(.skip, after: [.skip]) == .invalidTransition("skip is not offered on begin"))
    }

    @Test func autoAdvanceOnlyFromTheHadithAndOnlyAfterFourSeconds() throws {
        let viewed = try run([.view]).0
        // 3.9 s later: refused, and nothing changes.
        #expect(throws: OnboardingError.self) { try machine.apply(.autoAdvance, to: viewed, at: start.addingTimeInterval(3.9)) }
        let (after, _) = try machine.apply(.autoAdvance, to: viewed, at: start.addingTimeInterval(4))
        #expect(after.currentScreen == "mission")
        // Not before the screen was viewed, and not from another screen.
        #expect(throws: OnboardingError.self) { try machine.apply(.autoAdvance, to: OnboardingState(flow: machine.flow), at: start) }
        let error = try refused(.autoAdvance, after: [.view, .advance, .view])
        #expect(error == .invalidTransition("mission does not advance by itself"))
    }

    @Test func screenOnlyActionsAreRefusedElsewhere() throws {
        #expect(
            try refused(.previewLayer("foundation"), after: [.view]) == .invalidTransition("preview_layer is allowed only on layers, not on hadith"))
        #expect(try refused(.notificationPermission(.primed), after: [.view, .advance]) != nil)
        #expect(try refused(.selectTheme("dawn"), after: [.view]) != nil)
        #expect(try refused(.chooseAccount(.signIn), after: [.view, .advance, .advance]) != nil)
        #expect(try refused(.complete, after: [.view]) != nil)
        #expect(try refused(.previewLayer("tafsir"), after: [.advance, .advance]) == .invalidTransition("unknown layer 'tafsir'"))
        #expect(try refused(.selectTheme("neon"), after: [.skip]) == .invalidTransition("unknown theme 'neon'"))
    }

    @Test func navigationStopsAtTheEnds() throws {
        #expect(try refused(.back, after: []) == .invalidTransition("hadith is the first screen"))
        #expect(try refused(.advance, after: [.skip]) != nil)
        let (state, _) = try run([.advance, .advance, .back])
        #expect(state.currentScreen == "mission")
    }

    @Test func notificationPrimingGoesPrimedThenAnswered() throws {
        let onDailyVerse: [OnboardingEvent] = [.advance, .advance, .advance]
        #expect(
            try refused(.notificationPermission(.granted), after: onDailyVerse)
                == .invalidTransition("notification permission cannot go from not asked to granted"))
        #expect(try refused(.notificationPermission(.primed), after: onDailyVerse + [.notificationPermission(.primed)]) != nil)
        #expect(
            try refused(
                .notificationPermission(.denied), after: onDailyVerse + [.notificationPermission(.primed), .notificationPermission(.granted)]) != nil)
        // Deferred may be asked again.
        let (state, _) = try run(
            onDailyVerse + [
                .notificationPermission(.primed), .notificationPermission(.deferred), .notificationPermission(.primed),
                .notificationPermission(.denied),
            ])
        #expect(state.notificationPermission == .denied)
    }

    @Test func completeNeedsAThemeAndAnAccountChoice() throws {
        #expect(try refused(.complete, after: [.skip]) == .invalidTransition("choose a theme before completing"))
        #expect(try refused(.complete, after: [.skip, .selectTheme("dawn")]) != nil)
        let (done, _) = try run([.skip, .selectTheme("dawn"), .chooseAccount(.createAccount), .complete])
        #expect(done.isCompleted)
        // After completion only reset is accepted.
        #expect(throws: OnboardingError.self) { try machine.apply(.back, to: done, at: start) }
        let (reset, names) = try machine.apply(.reset, to: done, at: start)
        #expect(reset == OnboardingState(flow: machine.flow))
        #expect(names.map(\.name) == ["onboarding_reset"])
    }

    @Test func aRefusedEventChangesNothing() throws {
        let (state, _) = try run([.view, .advance, .view])
        for event: OnboardingEvent in [.autoAdvance, .previewLayer("foundation"), .complete, .selectTheme("dawn")] {
            #expect(throws: OnboardingError.self) { try machine.apply(event, to: state, at: start.addingTimeInterval(50)) }
        }
        #expect(state.currentScreen == "mission")
    }

    @Test func aNewScreenIsADataChange() throws {
        var screens = machine.flow.screens
        screens.insert(.init(id: "community", skippable: true), at: 2)
        let longer = OnboardingMachine(flow: try OnboardingFlow(version: 2, screens: screens), layers: Self.layers, themes: Self.themes)
        var state = OnboardingState(flow: longer.flow)
        for _ in 0..<2 { state = try longer.apply(.advance, to: state, at: start).0 }
        #expect(state.currentScreen == "community")
        #expect(state.flowVersion == 2)
        #expect(throws: OnboardingError.self) { try OnboardingFlow(version: 3, screens: [.init(id: "x", skippable: true, allows: ["dance"])]) }
        #expect(throws: OnboardingError.self) { try OnboardingFlow(version: 3, screens: [.init(id: "x", skippable: true)]) }
    }
}
