// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import Synchronization
import XCTest

/// Buttons and panels through the same paths as on a board: GPIO edge records through libgpiod's
/// read path into the loop and the core; frames into the panel driver and its simulator.
final class BoardWiringTests: XCTestCase {
    /// Records when `play` was called, so the test can time edge → command, and the transport
    /// calls in order.
    final class TimedAudio: AudioPort, @unchecked Sendable {
        let plays = Mutex<[(path: String, at: Double)]>([])
        let calls = Mutex<[String]>([])
        func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
            let now = monotonicNow()
            plays.withLock { $0.append((Paths.fileName(path), now)) }
            calls.withLock { $0.append("play \(Paths.fileName(path))") }
        }
        func setNext(id: UInt64, path: String) {}
        func clearNext() {}
        func pause() { calls.withLock { $0.append("pause") } }
        func resume() { calls.withLock { $0.append("resume") } }
        func stop() { calls.withLock { $0.append("stop") } }
        func release(token: UInt64) {}
        func probe() {}
        func seek(to seconds: Double) {}
        func setVolume(_ percent: Int) {}
        func position() -> (id: UInt64, seconds: Double)? { nil }
        func shutdown() {}
    }

    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    func testAPressOnTheNextLineReachesTheCoreAndTheEngineOnce() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(name: "GPIO27")])
        let source = GPIOSource(lines: feed.lines, roles: [.button(.next)], log: Log(level: .error))
        let audio = TimedAudio()
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: LogStatus(log: Log(level: .error)), log: Log(level: .error),
                              sources: [source])
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        let loop = Thread {
            _ = box.runtime.run(initial: [.replaceQueue([TrackInfo(path: "/m/a.flac"), TrackInfo(path: "/m/b.flac")])])
            done.signal()
        }
        loop.start()
        XCTAssertTrue(waitFor(5) { audio.plays.withLock { $0.count } == 1 })
        // A bouncy press (active-low line: falling = pressed); next also has a hold action, so its
        // short press acts on release: a bouncy release 150 ms later.
        let t = UInt64(monotonicNow() * 1e9)
        try feed.feed([(0, false, t), (0, true, t + 800_000), (0, false, t + 1_500_000)])
        Thread.sleep(forTimeInterval: 0.15)  // the person holds the button; not synchronisation
        let releasedAt = monotonicNow()
        try feed.feed([(0, true, t + 150_000_000), (0, false, t + 150_900_000), (0, true, t + 151_500_000)])
        XCTAssertTrue(waitFor(5) { audio.plays.withLock { $0.count } == 2 }, "the press did not skip")
        let latency = (audio.plays.withLock { $0.count > 1 ? $0[1].at : .nan }) - releasedAt
        print("jukebox gpio: edge written → startTrack at the engine port: \(String(format: "%.2f", latency * 1000)) ms")
        runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(audio.plays.withLock { $0.map(\.path) }, ["a.flac", "b.flac"], "one skip for one bouncy press")
    }

    /// The loop on its own thread with one fed button line, playing a.flac.
    final class Loop {
        let feed: GPIOEventFeed
        let audio = TimedAudio()
        let box: Box
        let done = DispatchSemaphore(value: 0)

        init(_ button: Button) throws {
            feed = try GPIOEventFeed([GPIOLineSpec(name: "GPIO17")])
            let source = GPIOSource(lines: feed.lines, roles: [.button(button)], log: Log(level: .error))
            box = Box(Runtime(state: State(), audio: audio, store: nil, status: LogStatus(log: Log(level: .error)), log: Log(level: .error),
                              sources: [source]))
            let (box, done) = (box, done)
            Thread {
                _ = box.runtime.run(initial: [.replaceQueue([TrackInfo(path: "/m/a.flac"), TrackInfo(path: "/m/b.flac")])])
                done.signal()
            }.start()
        }

        /// The transport calls so far (not the `stop` that quitting makes); ends the loop.
        func quit() -> [String] {
            let calls = audio.calls.withLock { $0 }
            box.runtime.mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the loop did not end")
            return calls
        }
    }

    /// `count` edges of contact bounce on line 0 from `start`, 100 µs apart, alternating from
    /// `first` (physical: false = low = pressed on an active-low line); an odd count ends at `first`.
    func bounce(_ count: Int, first: Bool, from start: UInt64) -> [(line: Int, rising: Bool, timestampNs: UInt64)] {
        (0..<count).map { (0, $0 % 2 == 0 ? first : !first, start + UInt64($0) * 100_000) }
    }

    func testABurstOnPressLongerThanTheKernelQueueTogglesPlayOnceOnRelease() throws {
        let loop = try Loop(.play)
        XCTAssertTrue(waitFor(5) { loop.audio.calls.withLock { $0 } == ["play a.flac"] })
        // 41 edges on press: the kernel keeps the first 16, whose last says released; the line is low.
        let t = UInt64(monotonicNow() * 1e9)
        try loop.feed.feed(bounce(41, first: false, from: t), kernelQueue: 16)
        Thread.sleep(forTimeInterval: 0.3)  // the person holds the button; not synchronisation
        XCTAssertEqual(loop.audio.calls.withLock { $0 }, ["play a.flac"], "nothing toggles while play is held")
        try loop.feed.feed(bounce(3, first: true, from: t + 300_000_000))
        XCTAssertTrue(waitFor(5) { loop.audio.calls.withLock { $0.count } >= 2 }, "the release did not pause")
        Thread.sleep(forTimeInterval: 0.2)  // the release's window ends and its level is read
        XCTAssertEqual(loop.quit(), ["play a.flac", "pause"], "one toggle for one press")
    }

    func testBurstsOnPressAndReleaseLongerThanTheKernelQueueNeverMakeALongPress() throws {
        let loop = try Loop(.play)
        XCTAssertTrue(waitFor(5) { loop.audio.calls.withLock { $0 } == ["play a.flac"] })
        let t = UInt64(monotonicNow() * 1e9)
        try loop.feed.feed(bounce(41, first: false, from: t), kernelQueue: 16)
        Thread.sleep(forTimeInterval: 0.3)
        // 41 edges on release: the 16 kept end pressed (low); the line is high: released.
        try loop.feed.feed(bounce(41, first: true, from: t + 300_000_000), kernelQueue: 16)
        XCTAssertTrue(waitFor(5) { loop.audio.calls.withLock { $0.count } >= 2 }, "the release did not pause")
        Thread.sleep(forTimeInterval: 1.2)  // past play's 0.8 s long press
        XCTAssertEqual(loop.quit(), ["play a.flac", "pause"], "no long press (stop) after the release")
    }

    func testAButtonWithoutALineToReadSettlesOnItsLastEdge() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(name: "GPIO27")])
        let source = GPIOSource(lines: feed.lines, roles: [.button(.next)], log: Log(level: .error))
        let runtime = Runtime(state: State(), audio: TimedAudio(), store: nil, status: LogStatus(log: Log(level: .error)), log: Log(level: .error),
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
        let audio = TimedAudio()
        var settings = Settings()
        settings.display = .lcd16x2
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: nil, status: LogStatus(log: Log(level: .error)),
                              log: Log(level: .error), display: panel)
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac")]))
        for t in stride(from: 0.0, to: 3.0, by: 0.1) { panel.tick(now: monotonicNow() + t) }
        runtime.dispatch(.pause)
        XCTAssertEqual(audio.calls.withLock { Array($0.prefix(2)) }, ["play a.flac", "pause"])
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
