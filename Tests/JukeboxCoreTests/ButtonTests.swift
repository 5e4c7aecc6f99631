// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Buttons with a manual clock: every edge carries its kernel timestamp, every timer is fired by
/// hand at the time it would fire.
final class ButtonTests: XCTestCase {
    /// Only the intents and program runs, without bookkeeping (renders, saves, timers).
    func actions(_ commands: [Command]) -> [Command] {
        commands.filter {
            switch $0 {
            case .render, .persist, .persistPlace, .startTimer, .cancelTimer, .setNext, .clearNext: return false
            default: return true
            }
        }
    }

    func timers(_ commands: [Command]) -> [Command] {
        commands.filter { if case .startTimer = $0 { return true }; if case .cancelTimer = $0 { return true }; return false }
    }

    func testAShortPressOfPlayFiresOnReleaseBecausePlayAlsoHasALongAction() {
        let h = CoreHarness(queued(2))
        let down = h.prepare(.buttonEdge(.play, pressed: true, at: 10.000))
        XCTAssertEqual(actions(down), [])
        XCTAssertEqual(timers(down), [.startTimer(.debounce(.play), after: 0.02), .startTimer(.gesture(.play), after: 0.8)])
        XCTAssertEqual(h.prepare(.timerFired(.debounce(.play), at: 10.020)), [.readLevel(.play)])
        XCTAssertEqual(h.prepare(.buttonLevel(.play, pressed: true, at: 10.020)), [])
        let up = h.prepare(.buttonEdge(.play, pressed: false, at: 10.150))
        XCTAssertEqual(actions(up).first, .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false,
                                                      next: NextPlay(playID: 2, path: "/music/2.flac")))
        XCTAssertEqual(timers(up), [.startTimer(.debounce(.play), after: 0.02), .cancelTimer(.gesture(.play))])
        XCTAssertEqual(h.state.phase, .playing)
    }

    func testHoldingPlayForTheLongPressStopsAndTheReleaseDoesNothingMore() {
        let h = CoreHarness(playing(2))
        h.prepare(.buttonEdge(.play, pressed: true, at: 1))
        h.prepare(.timerFired(.debounce(.play), at: 1.02))
        let long = h.prepare(.timerFired(.gesture(.play), at: 1.8))
        XCTAssertEqual(actions(long), [.stopOutput])
        XCTAssertEqual(h.state.phase, .stopped)
        let up = h.prepare(.buttonEdge(.play, pressed: false, at: 2.5))
        XCTAssertEqual(actions(up), [], "no toggle after the long press")
        XCTAssertEqual(h.state.phase, .stopped)
    }

    func testBounceOnPressAndReleaseGivesOneAction() {
        let h = CoreHarness(playing(3))
        var all: [Command] = []
        // A chattering press: down, up, down within 3 ms; a chattering release 120 ms later.
        for (level, t) in [(true, 5.000), (false, 5.001), (true, 5.003)] {
            all += h.prepare(.buttonEdge(.next, pressed: level, at: t))
        }
        all += h.prepare(.timerFired(.debounce(.next), at: 5.020))
        for (level, t) in [(false, 5.120), (true, 5.121), (false, 5.124)] {
            all += h.prepare(.buttonEdge(.next, pressed: level, at: t))
        }
        all += h.prepare(.timerFired(.debounce(.next), at: 5.140))
        let starts = all.filter { if case .startTrack = $0 { return true } else { return false } }
        XCTAssertEqual(starts.count, 1, "one next, not a double skip: \(starts)")
        XCTAssertEqual(h.state.currentTrack?.id, 2)
        XCTAssertEqual(h.state.buttons[.next], ButtonState(), "settled released")
    }

    func testAReleaseHiddenInTheBounceWindowIsAcceptedWhenTheWindowEnds() {
        for read in [false, nil] as [Bool?] {
            let h = CoreHarness(queued(2))
            h.prepare(.buttonEdge(.stop, pressed: true, at: 1.000))
            h.prepare(.buttonEdge(.stop, pressed: false, at: 1.010))  // a real, very short press
            XCTAssertEqual(h.state.buttons[.stop]?.pressed, true)
            h.send(.timerFired(.debounce(.stop), at: 1.020), { $0.buttons[.stop]?.settling = false },
                   commands: [.readLevel(.stop)])
            // The line reads released; a line that cannot be read leaves the last edge to decide.
            h.send(.buttonLevel(.stop, pressed: read, at: 1.020), {
                $0.buttons[.stop] = button(false, settling: true)
                if read != nil { $0.buttons[.stop]?.readAt = 1.020 }
            },
                   commands: [.startTimer(.debounce(.stop), after: 0.02)])
        }
    }

    func testALevelReadThatAgreesWithTheAcceptedEdgeDoesNothing() {
        let h = CoreHarness(playing(2))
        h.prepare(.buttonEdge(.stop, pressed: true, at: 1.000))
        XCTAssertEqual(h.state.phase, .stopped)
        h.prepare(.timerFired(.debounce(.stop), at: 1.020))
        h.send(.buttonLevel(.stop, pressed: true, at: 1.020), { $0.buttons[.stop]?.readAt = 1.020 }, commands: [])
        h.send(.buttonLevel(.stop, pressed: nil, at: 1.021), commands: [])
    }

    // The kernel queues 16 edges a line (uAPI v1, libgpiod 1.6) and drops the rest: of a burst of
    // dozens of edges the core gets the first 16, and the last of those says the opposite of the
    // line's level. Only the level read at the end of the window knows.

    /// The 16 edges of a long bounce burst that reach the core: alternating from `first`, 0.1 ms
    /// apart from `at`; the last says `!first`.
    func burst(_ b: Button, from first: Bool, at: Double) -> [Event] {
        (0..<16).map { .buttonEdge(b, pressed: $0 % 2 == 0 ? first : !first, at: at + Double($0) * 0.0001) }
    }

    /// Presses play with a burst at `at` that ends, as received, released; the line reads pressed
    /// when the window ends: play is held, nothing has toggled.
    func pressPlayWithABurst(_ h: CoreHarness, at: Double, file: StaticString = #filePath, line: UInt = #line) {
        let edges = burst(.play, from: true, at: at)
        h.send(edges[0], file: file, line: line, { $0.buttons[.play] = button(true, settling: true) },
               commands: [.startTimer(.debounce(.play), after: 0.02), .startTimer(.gesture(.play), after: 0.8)])
        for (i, edge) in edges.enumerated().dropFirst() {
            h.send(edge, file: file, line: line, { $0.buttons[.play]?.level = i % 2 == 0 }, commands: [])
        }
        XCTAssertEqual(h.state.buttons[.play], button(true, level: false, settling: true), file: file, line: line)
        h.send(.timerFired(.debounce(.play), at: at + 0.02), file: file, line: line,
               { $0.buttons[.play]?.settling = false }, commands: [.readLevel(.play)])
        h.send(.buttonLevel(.play, pressed: true, at: at + 0.02), file: file, line: line,
               { $0.buttons[.play]?.level = true; $0.buttons[.play]?.readAt = at + 0.02 }, commands: [])
    }

    /// The first edge of a release: play's tap pauses.
    func releasePlay(_ h: CoreHarness, at: Double, file: StaticString = #filePath, line: UInt = #line) {
        var paused = h.state
        paused.buttons[.play]?.pressed = false
        paused.buttons[.play]?.level = false
        paused.buttons[.play]?.settling = true
        paused.phase = .paused
        paused.savedMark = paused.saveMark
        paused.savedPosition = paused.position
        paused.shown = paused.view
        h.send(.buttonEdge(.play, pressed: false, at: at), file: file, line: line, { $0 = paused }, commands: [
            .startTimer(.debounce(.play), after: 0.02), .cancelTimer(.gesture(.play)),
            .pauseOutput, .startTimer(.releaseDevice, after: 3), .persistPlace(paused.snapshot), .render(paused.view),
        ])
    }

    func testABurstOnPressLongerThanTheKernelQueueTogglesOnceOnRelease() {
        let h = CoreHarness(playing(2))
        pressPlayWithABurst(h, at: 1)
        XCTAssertEqual(h.state.phase, .playing, "nothing toggles while the button is held")
        // A short bounce on release: released, pressed, released.
        releasePlay(h, at: 1.3)
        h.send(.buttonEdge(.play, pressed: true, at: 1.3005), { $0.buttons[.play]?.level = true }, commands: [])
        h.send(.buttonEdge(.play, pressed: false, at: 1.301), { $0.buttons[.play]?.level = false }, commands: [])
        h.send(.timerFired(.debounce(.play), at: 1.32), { $0.buttons[.play]?.settling = false }, commands: [.readLevel(.play)])
        h.send(.buttonLevel(.play, pressed: false, at: 1.32), { $0.buttons[.play]?.readAt = 1.32 }, commands: [])
        XCTAssertEqual(h.state.buttons[.play], settledReleased(readAt: 1.32))
        XCTAssertEqual(h.state.phase, .paused, "toggled exactly once")
    }

    func settledReleased(readAt: Double) -> ButtonState {
        var b = ButtonState()
        b.readAt = readAt
        return b
    }

    /// Seen in the VM under load: the loop read a burst in pieces, the window ended and the level
    /// was read (pressed) before the rest of the burst reached the core; those late edges, stamped
    /// before the read, counted as a new release and press: two toggles for one press. Edges
    /// stamped before the last read are old news.
    func testEdgesStampedBeforeTheLevelReadAreOldNewsNotANewPress() {
        let h = CoreHarness(playing(2))
        pressPlayWithABurst(h, at: 1)
        // The rest of the press burst arrives late, stamped 1.0016…1.0030, after the read at 1.02.
        for i in 16..<31 {
            h.send(.buttonEdge(.play, pressed: i % 2 == 0, at: 1 + Double(i) * 0.0001), commands: [])
        }
        XCTAssertEqual(h.state.phase, .playing, "nothing toggles while the button is held")
        releasePlay(h, at: 1.3)
        XCTAssertEqual(h.state.phase, .paused, "one toggle for one press")
    }

    func testBurstsOnPressAndReleaseLongerThanTheKernelQueueNeverMakeALongPress() {
        let h = CoreHarness(playing(2))
        pressPlayWithABurst(h, at: 1)
        // The release bursts too; what reaches the core ends pressed, the line reads released.
        let edges = burst(.play, from: false, at: 1.3)
        releasePlay(h, at: 1.3)
        for (i, edge) in edges.enumerated().dropFirst() {
            h.send(edge, { $0.buttons[.play]?.level = i % 2 == 1 }, commands: [])
        }
        h.send(.timerFired(.debounce(.play), at: 1.32), { $0.buttons[.play]?.settling = false }, commands: [.readLevel(.play)])
        h.send(.buttonLevel(.play, pressed: false, at: 1.32), { $0.buttons[.play]?.level = false; $0.buttons[.play]?.readAt = 1.32 },
               commands: [])
        XCTAssertEqual(h.state.buttons[.play], settledReleased(readAt: 1.32))
        // The long-press deadline passes (a timer the shell failed to cancel fires too): no stop.
        h.send(.timerFired(.gesture(.play), at: 2.2), commands: [])
        h.send(.tick(now: 3), { $0.now = 3 }, commands: [])
        XCTAssertEqual(h.state.phase, .paused)
    }

    func testALevelReadAfterANewWindowOpenedIsLeftToThatWindow() {
        let h = CoreHarness(playing(2))
        h.prepare(.buttonEdge(.stop, pressed: true, at: 1.000))
        h.prepare(.timerFired(.debounce(.stop), at: 1.020))
        // A release arrives before the read is answered: it opens its own window.
        h.prepare(.buttonEdge(.stop, pressed: false, at: 1.021))
        h.send(.buttonLevel(.stop, pressed: true, at: 1.022), commands: [])
        XCTAssertEqual(h.state.buttons[.stop], button(false, settling: true))
    }

    func testHoldingNextSeeksForwardRepeatedlyAndReleaseDoesNotSkip() {
        let h = CoreHarness(playing(2))
        h.prepare(.buttonEdge(.next, pressed: true, at: 0))
        h.prepare(.timerFired(.debounce(.next), at: 0.02))
        var seeks: [Command] = []
        var t = 0.8
        var cmds = h.prepare(.timerFired(.gesture(.next), at: t))
        seeks += actions(cmds)
        XCTAssertEqual(timers(cmds), [.startTimer(.gesture(.next), after: 0.3)])
        for _ in 0..<3 {
            t += 0.3
            cmds = h.prepare(.timerFired(.gesture(.next), at: t))
            seeks += actions(cmds)
        }
        XCTAssertEqual(seeks, [.seekOutput(to: 10), .seekOutput(to: 20), .seekOutput(to: 30), .seekOutput(to: 40)])
        let up = h.prepare(.buttonEdge(.next, pressed: false, at: t + 0.1))
        XCTAssertEqual(actions(up), [])
        XCTAssertEqual(h.state.currentTrack?.id, 1)
        // A hold timer that fires after the release does nothing.
        XCTAssertEqual(h.prepare(.timerFired(.gesture(.next), at: t + 0.3)), [])
    }

    func testVolumeFiresOnPressAndRepeatsWhileHeld() {
        let h = CoreHarness(playing(1))
        h.prepare(.setVolume(50))
        let down = h.prepare(.buttonEdge(.volumeUp, pressed: true, at: 0))
        XCTAssertEqual(actions(down), [.setVolume(55)])
        h.prepare(.timerFired(.debounce(.volumeUp), at: 0.02))
        XCTAssertEqual(actions(h.prepare(.timerFired(.gesture(.volumeUp), at: 0.5))), [.setVolume(60)])
        XCTAssertEqual(actions(h.prepare(.timerFired(.gesture(.volumeUp), at: 0.65))), [.setVolume(65)])
        h.prepare(.buttonEdge(.volumeUp, pressed: false, at: 0.7))
        XCTAssertEqual(h.state.volume, 65)
    }

    func testHoldingPowerForThreeSecondsRunsThePowerCommandWithAnArgumentVector() {
        let h = CoreHarness(playing(1))
        h.prepare(.buttonEdge(.power, pressed: true, at: 0))
        XCTAssertEqual(timers(h.prepare(.timerFired(.debounce(.power), at: 0.02))), [])
        let cmds = h.prepare(.timerFired(.gesture(.power), at: 3))
        XCTAssertEqual(actions(cmds), [.report("power button: running systemctl poweroff"), .runProgram(["systemctl", "poweroff"])])
        // A short press of power does nothing.
        let s = CoreHarness(playing(1))
        s.prepare(.buttonEdge(.power, pressed: true, at: 0))
        XCTAssertEqual(actions(s.prepare(.buttonEdge(.power, pressed: false, at: 0.5))), [])
    }

    func testADoublePressFiresItsOwnActionAndASingleOneWaitsForTheWindow() {
        var settings = Settings()
        settings.buttons[.play] = ButtonBinding(tap: .togglePlay, double: .next)
        let h = CoreHarness(playing(3, settings: settings))
        h.prepare(.buttonEdge(.play, pressed: true, at: 0))
        h.prepare(.timerFired(.debounce(.play), at: 0.02))
        let firstUp = h.prepare(.buttonEdge(.play, pressed: false, at: 0.1))
        XCTAssertEqual(actions(firstUp), [])
        XCTAssertTrue(timers(firstUp).contains(.startTimer(.doubleTap(.play), after: 0.35)))
        h.prepare(.timerFired(.debounce(.play), at: 0.12))
        let second = h.prepare(.buttonEdge(.play, pressed: true, at: 0.25))
        XCTAssertTrue(actions(second).contains { if case .startTrack(_, "/music/2.flac", _, _, _) = $0 { return true } else { return false } })
        h.prepare(.timerFired(.debounce(.play), at: 0.27))
        XCTAssertEqual(actions(h.prepare(.buttonEdge(.play, pressed: false, at: 0.3))), [])
        XCTAssertEqual(h.state.phase, .playing)
        // A single press: the toggle comes when the window ends.
        h.prepare(.timerFired(.debounce(.play), at: 0.32))
        h.prepare(.buttonEdge(.play, pressed: true, at: 2))
        h.prepare(.timerFired(.debounce(.play), at: 2.02))
        h.prepare(.buttonEdge(.play, pressed: false, at: 2.1))
        XCTAssertEqual(h.state.phase, .playing)
        h.prepare(.timerFired(.doubleTap(.play), at: 2.45))
        XCTAssertEqual(h.state.phase, .paused)
    }

    func testAChordFiresInsteadOfEitherButton() {
        var settings = Settings()
        settings.chords = [Chord(.next, .previous, .cycleRepeat)]
        let h = CoreHarness(playing(3, settings: settings))
        h.prepare(.buttonEdge(.next, pressed: true, at: 0))
        let both = h.prepare(.buttonEdge(.previous, pressed: true, at: 0.05))
        XCTAssertEqual(h.state.repeatMode, .all)
        XCTAssertTrue(timers(both).contains(.cancelTimer(.gesture(.next))))
        h.prepare(.buttonEdge(.next, pressed: false, at: 0.3))
        h.prepare(.buttonEdge(.previous, pressed: false, at: 0.31))
        XCTAssertEqual(h.state.currentTrack?.id, 1, "neither skip happened")
    }

    func testTheMuteLineInterruptsWhileActive() {
        let h = CoreHarness(playing(2))
        let on = h.prepare(.buttonEdge(.mute, pressed: true, at: 0))
        XCTAssertTrue(on.contains(.releaseDevice(token: 1)))
        XCTAssertEqual(h.state.phase, .interrupted(reason: "mute line"))
        h.prepare(.deviceReleased(token: 1, heard: nil))
        h.prepare(.timerFired(.debounce(.mute), at: 0.02))
        h.prepare(.buttonEdge(.mute, pressed: false, at: 5))
        XCTAssertEqual(h.state.phase, .playing)
    }

    func testTheEncoderCountsDetentsAndRejectsBounce() {
        var settings = Settings()
        settings.encoderAcceleration = false
        let h = CoreHarness(playing(1, settings: settings))
        h.prepare(.setVolume(50))
        // One clockwise detent (4 transitions) with bounce between two neighbouring states.
        let cw: [(Bool, Bool)] = [(false, true), (false, false), (false, true), (true, true), (true, false), (false, false)]
        var t = 1.0
        for (a, b) in cw { h.prepare(.encoderEdge(a: a, b: b, at: t)); t += 0.002 }
        XCTAssertEqual(h.state.volume, 55)
        // A jump over a state (both lines changed at once) counts nothing.
        h.prepare(.encoderEdge(a: true, b: true, at: t))
        XCTAssertEqual(h.state.encoderState.steps, 0)
        h.prepare(.encoderEdge(a: false, b: false, at: t + 0.01))
        // Two counter-clockwise detents.
        let ccw: [(Bool, Bool)] = [(true, false), (true, true), (false, true), (false, false)]
        for _ in 0..<2 { for (a, b) in ccw { t += 0.05; h.prepare(.encoderEdge(a: a, b: b, at: t)) } }
        XCTAssertEqual(h.state.volume, 45)
    }

    func testEncodersWithTwoTransitionsPerDetentAndAcceleration() {
        var settings = Settings()
        settings.encoderStepsPerDetent = 2
        let h = CoreHarness(playing(1, settings: settings))
        h.prepare(.setVolume(20))
        let cw: [(Bool, Bool)] = [(false, true), (true, true), (true, false), (false, false)]
        // Slow: a detent every 0.3 s moves 5 each; fast: 20 ms apart moves 4× that.
        var t = 0.0
        for (i, (a, b)) in cw.enumerated() { t += i % 2 == 0 ? 0.3 : 0.01; h.prepare(.encoderEdge(a: a, b: b, at: t)) }
        XCTAssertEqual(h.state.volume, 30)
        for (a, b) in cw { t += 0.01; h.prepare(.encoderEdge(a: a, b: b, at: t)) }
        XCTAssertEqual(h.state.volume, 70)
    }

    func testMediaKeysMapToTheSameIntents() {
        let h = CoreHarness(playing(3))
        XCTAssertEqual(actions(h.prepare(.mediaKey(code: MediaKey.playPause, value: 1, at: 0))), [.pauseOutput])
        XCTAssertEqual(actions(h.prepare(.mediaKey(code: MediaKey.playPause, value: 0, at: 0.1))), [])
        XCTAssertEqual(actions(h.prepare(.mediaKey(code: MediaKey.play, value: 1, at: 1))), [.resumeOutput])
        h.prepare(.mediaKey(code: MediaKey.nextSong, value: 1, at: 2))
        XCTAssertEqual(h.state.currentTrack?.id, 2)
        h.prepare(.mediaKey(code: MediaKey.nextSong, value: 2, at: 2.5))
        XCTAssertEqual(h.state.currentTrack?.id, 2, "autorepeat does not skip again")
        h.prepare(.mediaKey(code: MediaKey.volumeDown, value: 1, at: 3))
        h.prepare(.mediaKey(code: MediaKey.volumeDown, value: 2, at: 3.5))
        XCTAssertEqual(h.state.volume, 90, "volume repeats while held")
        h.prepare(.mediaKey(code: MediaKey.fastForward, value: 1, at: 4))
        XCTAssertEqual(h.state.position, 10)
        h.prepare(.mediaKey(code: MediaKey.stopCD, value: 1, at: 5))
        XCTAssertEqual(h.state.phase, .stopped)
        XCTAssertEqual(h.prepare(.mediaKey(code: 30 /* KEY_A */, value: 1, at: 6)), [])
    }
}
