import ArgumentParser
import ContentStore
import Engagement
import Foundation
import HijriCalendar

struct OnboardingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboarding", abstract: "Reports on the story onboarding.", subcommands: [OnboardingFunnelCommand.self])
}

struct OnboardingFunnelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "funnel", abstract: "Per screen: how many users reached it, skipped from it and went on to complete.",
        discussion: """
            Counts distinct users in the analytics events from the start of --from to the end of --to (UTC dates, \
            both included; default: the last 30 days up to --now).
            """)
    @OptionGroup var global: GlobalOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("First day, YYYY-MM-DD (UTC).", valueName: "date")) var from: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Last day, YYYY-MM-DD (UTC).", valueName: "date")) var to: String?

    func run() async throws {
        let now = try global.clock()
        let today = CivilDate(instant: now, timeZone: TimeZone(identifier: "UTC")!)
        let last = try to.map { try CivilDate(parsing: $0) } ?? today
        // Events are no older than the service (and kept a year at most): a date before 2000 is a mistyped one.
        let earliest = try CivilDate(parsing: "2000-01-01")
        let first = try from.map { try CivilDate(parsing: $0) } ?? max(last.adding(days: -29), earliest)
        if let early = [last, first].first(where: { $0 < earliest }) {
            throw CLIError("invalid date \(early): the funnel counts events from 2000-01-01 on")
        }
        guard first <= last else { throw CLIError("--from \(first) is after --to \(last)") }
        let start = Date(timeIntervalSince1970: Double(first.dayNumber) * 86_400)
        let end = Date(timeIntervalSince1970: Double(last.dayNumber + 1) * 86_400)
        let flow = try global.onboardingFlow()
        let funnel =
            try await global.withPostgres { try await $0.onboardingFunnel(flow: flow, from: start, to: end) }
            ?? global.openDatabase().onboardingFunnel(flow: flow, from: start, to: end)
        if global.json { return try printJSON(funnel) }
        print("onboarding \(first) to \(last): \(funnel.started) started, \(funnel.completed) completed")
        print("screen        reached  skipped  completed")
        for step in funnel.screens {
            let name = step.screen.padding(toLength: 12, withPad: " ", startingAt: 0)
            print("\(name) \(String(format: "%8d %8d %10d", step.reached, step.skipped, step.completed))")
        }
    }
}
