import Foundation
import Testing

@testable import DailyVerseCLI

/// The progress of a long stage, off a terminal (a log, a pipe, systemd): a line every `interval` and one at the end
/// of a stage that said something; a stage done sooner says nothing, so a quick command's error is its one line. On a
/// clock the test moves.
@Suite struct ProgressBarTests {
    final class Lines: @unchecked Sendable {
        var written: [String] = []
        var now = Date(timeIntervalSince1970: 1_740_000_000)
    }

    func bar(_ lines: Lines) -> ProgressBar {
        ProgressBar("rows", isTerminal: false, interval: 5, now: { lines.now }, write: { lines.written.append($0) })
    }

    @Test func aStageDoneWithinTheIntervalSaysNothing() {
        let lines = Lines()
        let bar = bar(lines)
        for done in stride(from: 0, through: 100, by: 10) {
            bar.update(done, 100)
            lines.now += 0.4
        }
        #expect(lines.written.isEmpty)
    }

    @Test func aLongStageSaysHowFarItIsEveryIntervalAndWhenItEnds() {
        let lines = Lines()
        let bar = bar(lines)
        bar.update(0, 100)
        lines.now += 6
        bar.update(30, 100)
        lines.now += 2
        bar.update(50, 100)
        lines.now += 4
        bar.update(80, 100)
        lines.now += 1
        bar.update(100, 100)
        bar.update(100, 100)
        #expect(lines.written == ["rows: 30/100 (30%)\n", "rows: 80/100 (80%)\n", "rows: 100/100 (100%)\n"])
    }
}
