// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Buttons and panels through the same paths as on a board: GPIO edge records through libgpiod's
/// read path into the loop and the core; frames into the panel driver and its simulator.
final class BoardWiringTests: XCTestCase {
    /// The loop with one fed button line, playing a.flac (b.flac next), driven one pass at a time
    /// on the test's thread and on a manual clock: a person holding a button is the clock moving
    /// on, not a sleep. (The edge-to-command latency is timed by `jukebox-bench`, not here.)
    final class Loop {
        let feed: GPIOEventFeed
        let audio = RecordingAudio()
        let clock = ManualClock()
        let runtime: Runtime

        init(_ button: Button, line: String = "GPIO17") throws {
            feed = try GPIOEventFeed([GPIOLineSpec(name: line)])
            let source = GPIOSource(lines: feed.lines, roles: [.button(button)], log: Log(level: .error))
            runtime = Runtime(state: State(), audio: audio, store: nil, status: LogStatus(log: Log(level: .error)),
                              log: Log(level: .error), sources: [source], clock: clock.read)
            runtime.start(initial: [.replaceQueue([TrackInfo(path: "/m/a.flac"), TrackInfo(path: "/m/b.flac")])])
        }

        /// The kernel's time stamp `after` seconds from the clock's now, in nanoseconds.
        func stamp(_ after: Double = 0) -> UInt64 { UInt64(((clock.now + after) * 1e9).rounded()) }

        /// Moves the clock on by `seconds`, then runs one pass of the loop: the edges fed so far
        /// and every timer due by then.
        func pass(after seconds: Double = 0) {
            clock.advance(by: seconds)
            XCTAssertTrue(runtime.step(wait: false), "the loop ended")
        }

        /// The transport calls so far (not the `stop` that quitting makes); ends the loop.
        func quit() -> [AudioCall] {
            let calls = audio.transport
            runtime.dispatch(.quit)
            XCTAssertFalse(runtime.step(wait: false), "the loop did not end")
            XCTAssertEqual(runtime.finish(), 0)
            return calls
        }
    }

    func testAPressOnTheNextLineReachesTheCoreAndTheEngineOnce() throws {
        let loop = try Loop(.next, line: "GPIO27")
        XCTAssertEqual(loop.audio.transport, [.play(id: 1, file: "a.flac", at: 0, next: 2, nextFile: "b.flac")])
        // A bouncy press (active-low line: falling = pressed); next also has a hold action, so its
        // short press acts on release: a bouncy release 150 ms later.
        let t = loop.stamp()
        try loop.feed.feed([(0, false, t), (0, true, t + 800_000), (0, false, t + 1_500_000)])
        loop.pass()
        loop.pass(after: 0.15)  // the person holds the button
        XCTAssertEqual(loop.audio.transport.count, 1, "nothing happens while next is held")
        try loop.feed.feed([(0, true, t + 150_000_000), (0, false, t + 150_900_000), (0, true, t + 151_500_000)])
        loop.pass()
        loop.pass(after: 0.1)  // the release's window ends and its level is read
        let plays = loop.quit().compactMap { call -> String? in
            if case .play(_, let file, _, _, _, _) = call { return file } else { return nil }
        }
        XCTAssertEqual(plays, ["a.flac", "b.flac"], "one skip for one bouncy press")
    }

    /// `count` edges of contact bounce on line 0 from `start`, 100 µs apart, alternating from
    /// `first` (physical: false = low = pressed on an active-low line); an odd count ends at `first`.
    func bounce(_ count: Int, first: Bool, from start: UInt64) -> [(line: Int, rising: Bool, timestampNs: UInt64)] {
        (0..<count).map { (0, $0 % 2 == 0 ? first : !first, start + UInt64($0) * 100_000) }
    }

    func testABurstOnPressLongerThanTheKernelQueueTogglesPlayOnceOnRelease() throws {
        let loop = try Loop(.play)
        XCTAssertEqual(loop.audio.transport, [.play(id: 1, file: "a.flac", at: 0, next: 2, nextFile: "b.flac")])
        // 41 edges on press: the kernel keeps the first 16, whose last says released; the line is low.
        let t = loop.stamp()
        try loop.feed.feed(bounce(41, first: false, from: t), kernelQueue: 16)
        loop.pass()
        loop.pass(after: 0.3)  // the person holds the button: the press's window ends, its level is read
        XCTAssertEqual(loop.audio.transport.count, 1, "nothing toggles while play is held")
        try loop.feed.feed(bounce(3, first: true, from: t + 300_000_000))
        loop.pass()
        XCTAssertEqual(loop.audio.transport.last, .pause, "the release did not pause")
        loop.pass(after: 0.2)  // the release's window ends and its level is read
        XCTAssertEqual(loop.quit().count, 2, "one toggle for one press")
    }

    func testBurstsOnPressAndReleaseLongerThanTheKernelQueueNeverMakeALongPress() throws {
        let loop = try Loop(.play)
        let t = loop.stamp()
        try loop.feed.feed(bounce(41, first: false, from: t), kernelQueue: 16)
        loop.pass()
        loop.pass(after: 0.3)
        // 41 edges on release: the 16 kept end pressed (low); the line is high: released.
        try loop.feed.feed(bounce(41, first: true, from: t + 300_000_000), kernelQueue: 16)
        loop.pass()
        loop.pass(after: 0.05)  // the release's window ends: the level read says released
        XCTAssertEqual(loop.audio.transport.last, .pause, "the release did not pause")
        loop.pass(after: 1.2)  // past play's 0.8 s long press
        XCTAssertEqual(loop.quit().count, 2, "no long press (stop) after the release")
    }

    func testAButtonWithoutALineToReadSettlesOnItsLastEdge() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(name: "GPIO27")])
        let source = GPIOSource(lines: feed.lines, roles: [.button(.next)], log: Log(level: .error))
        let runtime = Runtime(state: State(), audio: RecordingAudio(), store: nil, status: LogStatus(log: Log(level: .error)), log: Log(level: .error),
                              sources: [source])
        // Stop has no line here (a simulated press): its level read answers nil.
        runtime.dispatch(.buttonEdge(.stop, pressed: true, at: 1.000))
        runtime.dispatch(.buttonEdge(.stop, pressed: false, at: 1.010))
        runtime.dispatch(.timerFired(.debounce(.stop), at: 1.020))
        XCTAssertEqual(runtime.state.buttons[.stop]?.pressed, false)
        XCTAssertEqual(runtime.state.buttons[.stop]?.settling, true, "the release opened a window of its own")
        // Next has one: its level is the line's.
        runtime.dispatch(.buttonEdge(.next, pressed: true, at: 2.000))
        runtime.dispatch(.timerFired(.debounce(.next), at: 2.020))
        XCTAssertEqual(runtime.state.buttons[.next]?.pressed, false, "the fed line was never pressed")
    }

    func testAFailingPanelNeverStopsPlayback() throws {
        let sim = HD44780Simulator()
        sim.failure = DeviceError(kind: .noDevice, message: "no device answers at 0x27")
        let panel = PanelSink(link: DisplayLink(driver: HD44780(transport: sim)), log: Log(level: .error))
        let audio = RecordingAudio()
        var settings = Settings()
        settings.display = .lcd16x2
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: nil, status: LogStatus(log: Log(level: .error)),
                              log: Log(level: .error), display: panel)
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac")]))
        for t in stride(from: 0.0, to: 3.0, by: 0.1) { panel.tick(now: monotonicNow() + t) }
        runtime.dispatch(.pause)
        XCTAssertEqual(audio.transport.prefix(2), [.play(id: 1, file: "a.flac", at: 0), .pause])
        if case .failed = panel.link.state {} else { XCTFail("the link should report the panel as failed: \(panel.link.state)") }
        // The panel comes back: the next frames reach it.
        sim.failure = nil
        XCTAssertTrue(waitFor(5) {
            panel.tick(now: monotonicNow() + 60)
            runtime.dispatch(.play)
            return sim.rows.first?.hasPrefix("a") == true
        }, "the panel did not recover: \(sim.rows)")
    }

    /// `terminal` is the demo's simulated panel: no I2C bus is opened for it (the player draws it).
    func testATerminalDisplayOpensNoBus() {
        XCTAssertNil(PanelSink.make(BoardConfig.Display(type: "terminal"), log: Log(level: .error)))
        var config = BoardConfig()
        config.display = BoardConfig.Display(type: "terminal")
        XCTAssertEqual(config.layout, .lcd20x4)
    }

    func testAMissingBusIsReportedAndThereIsNoPanel() {
        XCTAssertNil(PanelSink.make(BoardConfig.Display(type: "hd44780-16x2", bus: "/dev/i2c-99", address: 39), log: Log(level: .error)))
    }
}
