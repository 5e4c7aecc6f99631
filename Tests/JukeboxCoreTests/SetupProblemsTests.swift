// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The appliance image's boot-time problems (issue 32, item 3): the lines as they enter the core,
/// and the panel's notice that shows a while after the splash and then goes; nothing else changes.
final class SetupProblemsTests: XCTestCase {
    static let psk = "wifi.txt: psk= must be a WPA passphrase of 8 to 63 printable characters: Wi-Fi off"
    static let zone = "timezone.txt: 'Mars/Base' is not a time zone (such as Europe/Berlin); using UTC"
    static let idle = DisplayFrame(rows: ["jukebox         ", "queue empty     "])

    /// A stopped player with an empty queue on a 16x2 at `now`, its status and frame shown;
    /// `splashUntil`: the splash still showing until then.
    func player(now: Double = 0, splashUntil: Double = 0, panel: Bool = true) -> CoreHarness {
        var settings = Settings()
        if panel { settings.display = .lcd16x2 }
        var s = State(settings: settings)
        s.now = now
        s.splashUntil = splashUntil
        s.shown = StatusView(s)
        if panel { s.shownFrame = DisplayFrame.make(s, layout: .lcd16x2) }
        return CoreHarness(s)
    }

    func testTheNoticeShowsAWhileThenGoesAndNothingElseChanges() {
        let h = player(now: 100)
        XCTAssertEqual(h.state.shownFrame, Self.idle)
        let notice = DisplayFrame(rows: ["2 setup problems", "wifi.txt: psk= m"])
        h.send(.setupProblems([Self.psk, Self.zone]), {
            $0.setupProblems = [Self.psk, Self.zone]
            $0.setupNoticeSince = 100
            $0.setupNoticeUntil = 112
            $0.shownFrame = notice
        }, commands: [.show(notice)])
        // The first problem scrolls after its rest (3 characters a second).
        let scrolled = DisplayFrame(rows: ["2 setup problems", "i.txt: psk= must"])
        h.send(.tick(now: 102.5), {
            $0.now = 102.5
            $0.shownFrame = scrolled
        }, commands: [.show(scrolled)])
        // The time is up: the panel is as it was.
        h.send(.tick(now: 112), {
            $0.now = 112
            $0.shownFrame = Self.idle
        }, commands: [.show(Self.idle)])
        // The same lines again (a reload): not shown again.
        h.send(.setupProblems([Self.psk, Self.zone]), commands: [])
        // Fewer: shown again, one problem.
        let one = DisplayFrame(rows: ["1 setup problem ", "timezone.txt: 'M"])
        h.send(.setupProblems([Self.zone]), {
            $0.setupProblems = [Self.zone]
            $0.setupNoticeSince = 112
            $0.setupNoticeUntil = 124
            $0.shownFrame = one
        }, commands: [.show(one)])
        // None (the builder fixed the card and the file is empty): the notice goes at once.
        h.send(.setupProblems([]), {
            $0.setupProblems = []
            $0.setupNoticeUntil = 0
            $0.shownFrame = Self.idle
        }, commands: [.show(Self.idle)])
    }

    func testTheNoticeWaitsForTheSplash() {
        let h = player(now: 0.5, splashUntil: 3)
        let splash = DisplayFrame(rows: ["jukebox         ", "starting…       "])
        XCTAssertEqual(h.state.shownFrame, splash)
        h.send(.setupProblems([Self.zone]), {
            $0.setupProblems = [Self.zone]
            $0.setupNoticeSince = 3
            $0.setupNoticeUntil = 15
        }, commands: [])
        let one = DisplayFrame(rows: ["1 setup problem ", "timezone.txt: 'M"])
        h.send(.tick(now: 3), {
            $0.now = 3
            $0.shownFrame = one
        }, commands: [.show(one)])
    }

    func testWithoutAPanelOnlyTheLinesAreKept() {
        let h = player(panel: false)
        h.send(.setupProblems([Self.psk]), {
            $0.setupProblems = [Self.psk]
            $0.setupNoticeSince = 0
            $0.setupNoticeUntil = 12
        }, commands: [])
    }

    func testAnEventsLinesAreBoundedAndInertAgain() {
        let h = player(panel: false)
        let hostile = "\u{1B}[2J" + String(repeating: "x", count: 1000)
        let many = [hostile] + (1...30).map { "problem \($0)" }
        h.send(.setupProblems(many), {
            $0.setupProblems = ["\u{FFFD}[2J" + String(repeating: "x", count: 391) + "…"] + (1...20).map { "problem \($0)" }
            $0.setupNoticeSince = 0
            $0.setupNoticeUntil = 12
        }, commands: [])
    }

    func testTheFilesLinesAreInertBoundedAndCounted() {
        func lines(_ text: String, cut: Bool = false) -> [String] { SetupProblems.lines(Array(text.utf8), cut: cut) }
        XCTAssertEqual(lines(""), [], "an empty file: no problems")
        XCTAssertEqual(lines("\n  \n\r\n"), [], "blank lines are none")
        XCTAssertEqual(lines("a\nb\r\n\nc"), ["a", "b", "c"], "a line end of a PC's")
        XCTAssertEqual(lines("a\rb\n"), ["a\u{FFFD}b"], "a CR in a line is a control character: shown")
        XCTAssertEqual(lines("bell\u{07} esc\u{1B}]0;title\u{07} bidi\u{202E}x\n"),
                       ["bell\u{FFFD} esc\u{FFFD}]0;title\u{FFFD} bidi\u{FFFD}x"])
        XCTAssertEqual(SetupProblems.lines([0x61, 0xFF, 0xFE, 0x62, 0x0A], cut: false), ["a\u{FFFD}\u{FFFD}b"], "not UTF-8")
        let long = lines(String(repeating: "é", count: 50_000))
        XCTAssertEqual(long.count, 2)
        XCTAssertEqual(long[0], String(repeating: "é", count: 198) + "…", "cut at 400 bytes on a character")
        XCTAssertEqual(long[1], SetupProblems.moreText, "16 KiB read of 100 KB: the rest is said")
        let many = lines((1...25).map { "p\($0)" }.joined(separator: "\n"))
        XCTAssertEqual(many, (1...20).map { "p\($0)" } + [SetupProblems.moreText])
        XCTAssertEqual(lines("one", cut: true), ["one", SetupProblems.moreText])
        XCTAssertEqual(SetupProblems.heading(many), "20+ setup problems")
        XCTAssertEqual(SetupProblems.heading(["a"]), "1 setup problem")
        XCTAssertEqual(SetupProblems.heading(["a", "b"]), "2 setup problems")
    }
}
