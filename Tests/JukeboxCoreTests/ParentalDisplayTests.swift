// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The day's listening left on the panel (issue 30): a mark on the status row (`L2`) from the
/// warning's time on, kept alone when the other marks do not all fit.
final class ParentalDisplayTests: XCTestCase {
    /// Ten minutes a day, the warning two minutes before the end.
    private static let limit = ParentalSettings(dailyLimit: 600, warnBefore: 120)

    /// `playing(2)` under `limit` on `layout`, at 1:23 of track 1, `listened` seconds counted.
    private func state(_ layout: PanelLayout = .lcd16x2, listened: Double, rules: ParentalSettings = limit) -> State {
        var settings = Settings()
        settings.parental = rules
        settings.display = layout
        var s = playing(2, settings: settings)
        s.position = 83
        s.parental.clock = LocalTime(day: 100, minute: 600)
        s.parental.clockSynchronized = true
        s.parental.listening = Listening(seconds: listened, day: 100)
        return s
    }

    func testTheMarkShowsFromTheWarningOnAndAloneWhenTheOthersDoNotFit() {
        var s = state(listened: 470)
        XCTAssertNil(s.listeningPanelMark, "130 s left: before the warning")
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows, ["Song 1          ", "▶ 1:23/1:40     "])
        s.parental.listening.seconds = 481
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows, ["Song 1          ", "▶ 1:23/1:40   L2"])
        s.shuffle = true
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40  L2🔀")
        s.sleep = SleepTimer(request: .after(1800), endsAt: 1800, seenAt: 60)
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40   L2", "L2z29🔀 does not fit: the limit alone")
        // A track of ten minutes or more: the row has room for the mark only.
        s.queue[0].info.duration = 754
        s.position = 683
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 11:23/12:34 L2")
        s.sleep = nil
        s.shuffle = false
        // The last seconds round up; the limit reached shows L0 (the player pauses).
        s.parental.listening.seconds = 599.5
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 11:23/12:34 L1")
        s.parental.listening.seconds = 600
        s.phase = .paused
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "⏸ 11:23/12:34 L0")
        // Without a daily limit (quiet hours only): no mark.
        s.settings.parental = ParentalSettings(quietHours: QuietHours(window: DayWindow(from: 1200, to: 420)))
        XCTAssertNil(s.listeningPanelMark)
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "⏸ 11:23/12:34   ")
    }

    func testBiggerPanelsShowItBesideTheOtherMarks() {
        var s = state(.lcd20x4, listened: 481)
        s.shuffle = true
        s.sleep = SleepTimer(request: .after(1800), endsAt: 1800, seenAt: 60)
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd20x4).rows,
                       ["Song 1              ", "Band                ", "                    ", "▶ 1:23/1:40   L2z29🔀"])
        let oled = state(.oled128x64, listened: 481)
        XCTAssertEqual(DisplayFrame.make(oled, layout: .oled128x64).rows[7], "▶ 1:23/1:40    L2 100")
        // A warning of 120 min shows at most 99.
        var long = state(listened: 0, rules: ParentalSettings(dailyLimit: 7200, warnBefore: 7200))
        XCTAssertEqual(long.listeningPanelMark, "L99")
        long.parental.listening.seconds = 7200 - 61
        XCTAssertEqual(long.listeningPanelMark, "L2")
    }

    /// Played to the warning on a 16x2: the warning's message takes the status row for its
    /// time, then the row comes back with the mark.
    func testTheWarningsMessageThenTheMarkOnA16x2() {
        var start = state(listened: 470)
        start.position = 0
        let playingRow = DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40     "])
        start.shownFrame = playingRow
        start.titleShown = "Song 1"
        let h = CoreHarness(start)
        h.send(.tick(now: 1000), { $0.now = 1000; $0.parental.countedAt = 1000 }, commands: [])
        let warning = "2 min of listening left today"
        let warned = DisplayFrame(rows: ["Song 1          ", "2 min of listeni"])
        h.send(.tick(now: 1011), {
            $0.now = 1011
            $0.parental.countedAt = 1011
            $0.parental.listening.seconds = 481
            $0.parental.warned = true
            $0.message = warning
            $0.messageShown = warning
            $0.messageSince = 1011
            $0.messageUntil = 1017
            $0.shown = status("playing", song: 1, index: 1, of: 2, message: warning)
            $0.shownFrame = warned
        }, commands: [
            .report("daily listening limit: " + warning),
            .render(status("playing", song: 1, index: 1, of: 2, message: warning)),
            .show(warned),
        ])
        let marked = DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40   L2"])
        h.send(.tick(now: 1018), {
            $0.now = 1018
            $0.parental.countedAt = 1018
            $0.parental.listening.seconds = 488
            $0.shownFrame = marked
        }, commands: [.show(marked)])
    }
}
