import ArgumentParser
import ContentStore
import Diagnostics
import Foundation
import HijriCalendar
import VerseCalendar
import VerseOfTheDay

/// `dailyverse`: the command tree.
@available(macOS 10.15, macCatalyst 13, iOS 13, tvOS 13, watchOS 6, *)
public struct DailyVerseCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "dailyverse",
        abstract: "A daily Quran verse chosen by the Hijri calendar, with five layers of commentary.",
        discussion: """
            The database is created and seeded from data/ on first use (default: a SQLite file in the XDG data \
            directory; override with --db, DAILYVERSE_DB or 'database', which may name PostgreSQL). Every command \
            takes --json, and all but migrate-store (which names both databases itself) the shared options: --db, \
            --data, --now, --region, --layers, --config.
            """,
        subcommands: [
            TodayCommand.self, HijriCommand.self, GregorianCommand.self, VerseCommand.self, CalendarCommand.self, ImportCommand.self,
            SightingCommand.self, CrescentCommand.self,
            DevicesCommand.self, ServeCommand.self, OutboxCommand.self, StatusCommand.self, PushCommand.self, VapidCommand.self, ContentCommand.self,
            OnboardingCommand.self, GuestsCommand.self, MigrateStoreCommand.self,
        ],
        defaultSubcommand: TodayCommand.self)

    public init() {}
}

@available(macOS 10.15, macCatalyst 13, iOS 13, tvOS 13, watchOS 6, *)
extension DailyVerseCommand {
    /// The program's entry point. (From a `main.swift`, `main()` would resolve to the synchronous overload, which
    /// cannot run `serve`.)
    public static func runAsMain() async {
        // The database, its log and the spool hold device tokens, emails and password hashes: whatever this process
        // creates is readable by its owner only, as under the shipped unit (UMask=0077).
        umask(0o077)
        let command: any ParsableCommand
        do { try checkHelpPath(Array(CommandLine.arguments.dropFirst())) } catch { exit(for: error, fromParser: false) }
        do { command = try await asyncParseAsRoot() } catch { exit(for: error, fromParser: true) }
        do {
            // The global flags, checked for every command, whether or not it reads them.
            for child in Mirror(reflecting: command).children {
                if let global = child.value as? OptionGroup<GlobalOptions> { try global.wrappedValue.checkFlags() }
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var command = command
                try command.run()
            }
        } catch {
            exit(for: error, fromParser: error is ValidationError)
        }
    }

    /// `help NAME…` names commands that exist. swift-argument-parser's `help` stops at the first name it does not know
    /// and prints the help of the command before it, exit status 0: `help nosuch` printed the whole tool's help and
    /// named nothing. An unknown name is refused in one line, as an unknown command is. The names end at the first
    /// option (`help import --db x` asks for `import`'s help; `x` is the option's value, not a command).
    static func checkHelpPath(_ arguments: [String]) throws {
        guard arguments.first == "help" else { return }
        var command: any ParsableCommand.Type = Self.self
        var path = ["help"]
        for name in arguments.dropFirst().prefix(while: { !$0.hasPrefix("-") }) {
            let subcommands = command.configuration.subcommands
            guard let next = subcommands.first(where: { $0._commandName == name || $0.configuration.aliases.contains(name) }) else {
                let known = subcommands.map { $0._commandName }
                throw CLIError(
                    "unknown command '\(name)' after '\(path.joined(separator: " "))'"
                        + (known.isEmpty ? ": that command has no subcommands" : ": expected one of \(known.joined(separator: ", "))"))
            }
            command = next
            path.append(name)
        }
    }

    /// The one place a command's error ends the process. --help and --version print as the parser does (exit 0),
    /// and an exit status a command chose stands; every other error is one line on stderr and exit status 1, the
    /// README's contract: the parser's in its words (a bad flag, a `ValidationError`), pointing at --help; the rest
    /// as `oneLine` words them.
    static func exit(for error: any Error, fromParser: Bool) -> Never {
        if error is ExitCode || exitCode(for: error) == .success { exit(withError: error) }
        // A value quoted whole (a 120 KB argument) is cut, and a control character in it cannot reach the terminal.
        let line = ErrorLine.shortened(fromParser ? oneLineMessage(for: error) : oneLine(error))
        FileHandle.standardError.write(Data("dailyverse: \(line)\n".utf8))
        Foundation.exit(1)
    }

    /// The parser's message for `error` on one line, with a pointer to `--help` in place of the usage block.
    static func oneLineMessage(for error: Error) -> String {
        var text = message(for: error).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("Usage:") && !$0.hasPrefix("See '") }.joined(separator: " ")
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        return text + " (see --help)"
    }
}
