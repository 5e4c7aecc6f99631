// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Buttons with a manual clock: every edge carries its kernel timestamp, every timer is fired by
/// hand at the time it would fire.
final class ButtonTests: XCTestCase {
    func testAShortPressOfPlayFiresOnReleaseBecausePlayAlsoHasALongAction() {
        let h = CoreHarness(queued(2))
        h.send(.buttonEdge(.play, pressed: true, at: 10.000), {
            $0.buttons[.play] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
            .startTimer(.gesture(.play), after: 0.8),
        ])
        h.send(.timerFired(.debounce(.play), at: 10.020), {
            $0.buttons[.play] = button(true)
        }, commands: [
            .readLevel(.play),
        ])
        h.send(.buttonLevel(.play, pressed: true, at: 10.020), {
            $0.buttons[.play] = button(true, readAt: 10.02)
        }, commands: [])
        h.playFromStopped(2, by: .buttonEdge(.play, pressed: false, at: 10.150),
                          also: { $0.buttons[.play] = button(false, settling: true, readAt: 10.02) },
                          before: [.startTimer(.debounce(.play), after: 0.02), .cancelTimer(.gesture(.play))])
    }

    func testHoldingPlayForTheLongPressStopsAndTheReleaseDoesNothingMore() {
        let h = CoreHarness(playing(2))
        h.send(.buttonEdge(.play, pressed: true, at: 1), {
            $0.buttons[.play] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
            .startTimer(.gesture(.play), after: 0.8),
        ])
        h.send(.timerFired(.debounce(.play), at: 1.02), {
            $0.buttons[.play] = button(true)
        }, commands: [
            .readLevel(.play),
        ])
        h.stopTrack1(of: 2, by: .timerFired(.gesture(.play), at: 1.8), also: { $0.buttons[.play] = button(true, longFired: true) })
        h.send(.buttonEdge(.play, pressed: false, at: 2.5), {
            $0.buttons[.play] = button(false, settling: true, longFired: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
        ])
    }

    func testBounceOnPressAndReleaseGivesOneAction() {
        let h = CoreHarness(playing(3))
        // A chattering press: down, up, down within 3 ms; a chattering release 120 ms later.
        h.send(.buttonEdge(.next, pressed: true, at: 5.000), {
            $0.buttons[.next] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.next), after: 0.02),
            .startTimer(.gesture(.next), after: 0.8),
        ])
        h.send(.buttonEdge(.next, pressed: false, at: 5.001), {
            $0.buttons[.next] = button(true, level: false, settling: true)
        }, commands: [])
        h.send(.buttonEdge(.next, pressed: true, at: 5.003), {
            $0.buttons[.next] = button(true, settling: true)
        }, commands: [])
        h.send(.timerFired(.debounce(.next), at: 5.020), {
            $0.buttons[.next] = button(true)
        }, commands: [
            .readLevel(.next),
        ])
        h.send(.buttonEdge(.next, pressed: false, at: 5.120), {
            $0.cursor = 1
            $0.buttons[.next] = button(false, settling: true)
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .startTimer(.debounce(.next), after: 0.02),
            .cancelTimer(.gesture(.next)),
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
        h.send(.buttonEdge(.next, pressed: true, at: 5.121), {
            $0.buttons[.next] = button(false, level: true, settling: true)
        }, commands: [])
        h.send(.buttonEdge(.next, pressed: false, at: 5.124), {
            $0.buttons[.next] = button(false, settling: true)
        }, commands: [])
        h.send(.timerFired(.debounce(.next), at: 5.140), {
            $0.buttons[.next] = button(false)
        }, commands: [
            .readLevel(.next),
        ])
        XCTAssertEqual(h.state.buttons[.next], ButtonState(), "settled released")
    }

    func testAReleaseHiddenInTheBounceWindowIsAcceptedWhenTheWindowEnds() {
        for read in [false, nil] as [Bool?] {
            let h = CoreHarness(queued(2))
            h.send(.buttonEdge(.stop, pressed: true, at: 1.000), {
                $0.buttons[.stop] = button(true, settling: true)
            }, commands: [
                .startTimer(.debounce(.stop), after: 0.02),
            ])
            // a real, very short press
            h.send(.buttonEdge(.stop, pressed: false, at: 1.010), {
                $0.buttons[.stop] = button(true, level: false, settling: true)
            }, commands: [])
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
        h.send(.buttonEdge(.stop, pressed: true, at: 1.000), {
            $0.phase = .stopped
            $0.buttons[.stop] = button(true, settling: true)
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.shown = status("stopped", song: 1, index: 1, of: 2)
        }, commands: [
            .startTimer(.debounce(.stop), after: 0.02),
            .stopOutput,
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0)),
            .render(status("stopped", song: 1, index: 1, of: 2)),
        ])
        h.send(.timerFired(.debounce(.stop), at: 1.020), {
            $0.buttons[.stop] = button(true)
        }, commands: [
            .readLevel(.stop),
        ])
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
        h.send(.timerFired(.debounce(.play), at: at + 0.02), file: file, line: line,
               { $0.buttons[.play]?.settling = false }, commands: [.readLevel(.play)])
        h.send(.buttonLevel(.play, pressed: true, at: at + 0.02), file: file, line: line,
               { $0.buttons[.play]?.level = true; $0.buttons[.play]?.readAt = at + 0.02 }, commands: [])
    }

    /// The first edge of a release of play, pressed with `pressPlayWithABurst(h, at: 1)` on
    /// `playing(2)`: play's tap pauses.
    func releasePlay(_ h: CoreHarness, at: Double, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.buttonEdge(.play, pressed: false, at: at), file: file, line: line, {
            $0.phase = .paused
            $0.buttons[.play] = button(false, settling: true, readAt: 1.02)
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", song: 1, index: 1, of: 2)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02), .cancelTimer(.gesture(.play)),
            .pauseOutput, .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 2)),
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
        // The long-press deadline passes (a timer the shell failed to cancel fires too): no stop.
        h.send(.timerFired(.gesture(.play), at: 2.2), commands: [])
        h.send(.tick(now: 3), { $0.now = 3 }, commands: [])
    }

    func testALevelReadAfterANewWindowOpenedIsLeftToThatWindow() {
        let h = CoreHarness(playing(2))
        h.send(.buttonEdge(.stop, pressed: true, at: 1.000), {
            $0.phase = .stopped
            $0.buttons[.stop] = button(true, settling: true)
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.shown = status("stopped", song: 1, index: 1, of: 2)
        }, commands: [
            .startTimer(.debounce(.stop), after: 0.02),
            .stopOutput,
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0)),
            .render(status("stopped", song: 1, index: 1, of: 2)),
        ])
        h.send(.timerFired(.debounce(.stop), at: 1.020), {
            $0.buttons[.stop] = button(true)
        }, commands: [
            .readLevel(.stop),
        ])
        // A release arrives before the read is answered: it opens its own window.
        h.send(.buttonEdge(.stop, pressed: false, at: 1.021), {
            $0.buttons[.stop] = button(false, settling: true)
        }, commands: [
            .startTimer(.debounce(.stop), after: 0.02),
        ])
        h.send(.buttonLevel(.stop, pressed: true, at: 1.022), commands: [])
    }

    func testHoldingNextSeeksForwardRepeatedlyAndReleaseDoesNotSkip() {
        let h = CoreHarness(playing(2))
        h.send(.buttonEdge(.next, pressed: true, at: 0), {
            $0.buttons[.next] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.next), after: 0.02),
            .startTimer(.gesture(.next), after: 0.8),
        ])
        h.send(.timerFired(.debounce(.next), at: 0.02), {
            $0.buttons[.next] = button(true)
        }, commands: [
            .readLevel(.next),
        ])
        var t = 0.8
        h.send(.timerFired(.gesture(.next), at: t), {
            $0.position = 10
            $0.buttons[.next] = button(true, longFired: true)
            $0.savedPosition = 10
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:10")
        }, commands: [
            .seekOutput(to: 10),
            .startTimer(.gesture(.next), after: 0.3),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 10, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:10")),
        ])
        // Every 0.3 s held, another 10 s forward.
        for seconds in [20, 30, 40] {
            t += 0.3
            h.send(.timerFired(.gesture(.next), at: t), {
                $0.position = Double(seconds)
                $0.savedPosition = Double(seconds)
                $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:\(seconds)")
            }, commands: [
                .seekOutput(to: Double(seconds)),
                .startTimer(.gesture(.next), after: 0.3),
                .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: Double(seconds), phase: .playing)),
                .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:\(seconds)")),
            ])
        }
        h.send(.buttonEdge(.next, pressed: false, at: t + 0.1), {
            $0.buttons[.next] = button(false, settling: true, longFired: true)
        }, commands: [
            .startTimer(.debounce(.next), after: 0.02),
        ])
        // A hold timer that fires after the release does nothing.
        h.send(.timerFired(.gesture(.next), at: t + 0.3), commands: [])
    }

    func testVolumeFiresOnPressAndRepeatsWhileHeld() {
        let h = CoreHarness(playing(1))
        h.setVolume(50, playingTrack1Of: 1)
        h.send(.buttonEdge(.volumeUp, pressed: true, at: 0), {
            $0.volume = 55
            $0.buttons[.volumeUp] = button(true, settling: true)
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: 55)
        }, commands: [
            .startTimer(.debounce(.volumeUp), after: 0.02),
            .setVolume(55),
            .startTimer(.gesture(.volumeUp), after: 0.5),
            .startTimer(.saveVolume, after: 1),
            .render(status("playing", song: 1, index: 1, of: 1, volume: 55)),
        ])
        h.send(.timerFired(.debounce(.volumeUp), at: 0.02), {
            $0.buttons[.volumeUp] = button(true)
        }, commands: [
            .readLevel(.volumeUp),
            .startTimer(.saveVolume, after: 1),
        ])
        h.send(.timerFired(.gesture(.volumeUp), at: 0.5), {
            $0.volume = 60
            $0.buttons[.volumeUp] = button(true, longFired: true)
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: 60)
        }, commands: [
            .setVolume(60),
            .startTimer(.gesture(.volumeUp), after: 0.15),
            .startTimer(.saveVolume, after: 1),
            .render(status("playing", song: 1, index: 1, of: 1, volume: 60)),
        ])
        h.send(.timerFired(.gesture(.volumeUp), at: 0.65), {
            $0.volume = 65
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: 65)
        }, commands: [
            .setVolume(65),
            .startTimer(.gesture(.volumeUp), after: 0.15),
            .startTimer(.saveVolume, after: 1),
            .render(status("playing", song: 1, index: 1, of: 1, volume: 65)),
        ])
        h.send(.buttonEdge(.volumeUp, pressed: false, at: 0.7), {
            $0.buttons[.volumeUp] = button(false, settling: true, longFired: true)
        }, commands: [
            .startTimer(.debounce(.volumeUp), after: 0.02),
            .startTimer(.saveVolume, after: 1),
        ])
    }

    func testHoldingPowerForThreeSecondsRunsThePowerCommandWithAnArgumentVector() {
        let h = CoreHarness(playing(1))
        h.send(.buttonEdge(.power, pressed: true, at: 0), {
            $0.buttons[.power] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.power), after: 0.02),
            .startTimer(.gesture(.power), after: 3),
        ])
        h.send(.timerFired(.debounce(.power), at: 0.02), {
            $0.buttons[.power] = button(true)
        }, commands: [
            .readLevel(.power),
        ])
        h.send(.timerFired(.gesture(.power), at: 3), {
            $0.buttons[.power] = button(true, longFired: true)
        }, commands: [
            .report("power button: running systemctl poweroff"),
            .runProgram(["systemctl", "poweroff"]),
        ])
        // A short press of power does nothing.
        let s = CoreHarness(playing(1))
        s.send(.buttonEdge(.power, pressed: true, at: 0), {
            $0.buttons[.power] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.power), after: 0.02),
            .startTimer(.gesture(.power), after: 3),
        ])
        s.send(.buttonEdge(.power, pressed: false, at: 0.5), {
            $0.buttons[.power] = button(true, level: false, settling: true)
        }, commands: [])
    }

    func testADoublePressFiresItsOwnActionAndASingleOneWaitsForTheWindow() {
        var settings = Settings()
        settings.buttons[.play] = ButtonBinding(tap: .togglePlay, double: .next)
        let h = CoreHarness(playing(3, settings: settings))
        h.send(.buttonEdge(.play, pressed: true, at: 0), {
            $0.buttons[.play] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
        ])
        h.send(.timerFired(.debounce(.play), at: 0.02), {
            $0.buttons[.play] = button(true)
        }, commands: [
            .readLevel(.play),
        ])
        h.send(.buttonEdge(.play, pressed: false, at: 0.1), {
            $0.buttons[.play] = button(false, settling: true, tapPending: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
            .startTimer(.doubleTap(.play), after: 0.35),
        ])
        h.send(.timerFired(.debounce(.play), at: 0.12), {
            $0.buttons[.play] = button(false, tapPending: true)
        }, commands: [
            .readLevel(.play),
        ])
        h.send(.buttonEdge(.play, pressed: true, at: 0.25), {
            $0.cursor = 1
            $0.buttons[.play] = button(true, settling: true, consumed: true)
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
            .cancelTimer(.doubleTap(.play)),
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
        h.send(.timerFired(.debounce(.play), at: 0.27), {
            $0.buttons[.play] = button(true, consumed: true)
        }, commands: [
            .readLevel(.play),
        ])
        h.send(.buttonEdge(.play, pressed: false, at: 0.3), {
            $0.buttons[.play] = button(false, settling: true, consumed: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
        ])
        // A single press: the toggle comes when the window ends.
        h.send(.timerFired(.debounce(.play), at: 0.32), {
            $0.buttons[.play] = button(false, consumed: true)
        }, commands: [
            .readLevel(.play),
        ])
        h.send(.buttonEdge(.play, pressed: true, at: 2), {
            $0.buttons[.play] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
        ])
        h.send(.timerFired(.debounce(.play), at: 2.02), {
            $0.buttons[.play] = button(true)
        }, commands: [
            .readLevel(.play),
        ])
        h.send(.buttonEdge(.play, pressed: false, at: 2.1), {
            $0.buttons[.play] = button(false, settling: true, tapPending: true)
        }, commands: [
            .startTimer(.debounce(.play), after: 0.02),
            .startTimer(.doubleTap(.play), after: 0.35),
        ])
        h.pause(track: 2, of: 3, by: .timerFired(.doubleTap(.play), at: 2.45), also: { $0.buttons[.play] = button(false, settling: true) })
    }

    func testAChordFiresInsteadOfEitherButton() {
        var settings = Settings()
        settings.chords = [Chord(.next, .previous, .cycleRepeat)]
        let h = CoreHarness(playing(3, settings: settings))
        h.send(.buttonEdge(.next, pressed: true, at: 0), {
            $0.buttons[.next] = button(true, settling: true)
        }, commands: [
            .startTimer(.debounce(.next), after: 0.02),
            .startTimer(.gesture(.next), after: 0.8),
        ])
        h.send(.buttonEdge(.previous, pressed: true, at: 0.05), {
            $0.repeatMode = .all
            $0.buttons[.next] = button(true, settling: true, consumed: true)
            $0.buttons[.previous] = button(true, settling: true, consumed: true)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 1, index: 1, of: 3, repeat: .all)
        }, commands: [
            .startTimer(.debounce(.previous), after: 0.02),
            .cancelTimer(.gesture(.next)),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 1, index: 1, of: 3, repeat: .all)),
        ])
        h.send(.buttonEdge(.next, pressed: false, at: 0.3), {
            $0.buttons[.next] = button(true, level: false, settling: true, consumed: true)
        }, commands: [])
        h.send(.buttonEdge(.previous, pressed: false, at: 0.31), {
            $0.buttons[.previous] = button(true, level: false, settling: true, consumed: true)
        }, commands: [])
        XCTAssertEqual(h.state.currentTrack?.id, 1, "neither skip happened")
    }

    func testTheMuteLineInterruptsWhileActive() {
        let h = CoreHarness(playing(2))
        h.interruptTrack1(of: 2, id: "mute", reason: "mute line", by: .buttonEdge(.mute, pressed: true, at: 0),
                          also: { $0.buttons[.mute] = button(true, settling: true) },
                          before: [.startTimer(.debounce(.mute), after: 0.02)])
        XCTAssertEqual(h.state.phase, .interrupted(reason: "mute line"))
        h.grantAfterRelease("mute")
        h.send(.timerFired(.debounce(.mute), at: 0.02), {
            $0.buttons[.mute] = button(true)
        }, commands: [
            .readLevel(.mute),
        ])
        h.interruptionEndsPlayingTrack1(of: 2, id: "mute", by: .buttonEdge(.mute, pressed: false, at: 5),
                                        also: { $0.buttons[.mute] = button(false, settling: true) },
                                        before: [.startTimer(.debounce(.mute), after: 0.02)])
    }

    /// An encoder edge that completes a detent on `playing(1)`: the volume becomes `volume`, the
    /// decoder `state`, and the save waits until the knob has been still for a second.
    func detent(_ h: CoreHarness, a: Bool, b: Bool, at t: Double, volume: Int, _ state: EncoderState,
                file: StaticString = #filePath, line: UInt = #line) {
        h.send(.encoderEdge(a: a, b: b, at: t), file: file, line: line, {
            $0.volume = volume
            $0.encoderState = state
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: volume)
        }, commands: [
            .setVolume(volume), .startTimer(.saveVolume, after: 1),
            .render(status("playing", song: 1, index: 1, of: 1, volume: volume)),
        ])
    }

    func testTheEncoderCountsDetentsAndRejectsBounce() {
        var settings = Settings()
        settings.encoderAcceleration = false
        let h = CoreHarness(playing(1, settings: settings))
        h.setVolume(50, playingTrack1Of: 1)
        // One clockwise detent (4 transitions) with bounce between two neighbouring states.
        h.send(.encoderEdge(a: false, b: true, at: 1.000), {
            $0.encoderState = encoder(ab: 1, steps: 1)
        }, commands: [])
        h.send(.encoderEdge(a: false, b: false, at: 1.002), {
            $0.encoderState = encoder()
        }, commands: [])
        h.send(.encoderEdge(a: false, b: true, at: 1.004), {
            $0.encoderState = encoder(ab: 1, steps: 1)
        }, commands: [])
        h.send(.encoderEdge(a: true, b: true, at: 1.006), {
            $0.encoderState = encoder(ab: 3, steps: 2)
        }, commands: [])
        h.send(.encoderEdge(a: true, b: false, at: 1.008), {
            $0.encoderState = encoder(ab: 2, steps: 3)
        }, commands: [])
        detent(h, a: false, b: false, at: 1.010, volume: 55, encoder(lastDetentAt: 1.01))
        // A jump over a state (both lines changed at once) counts nothing.
        h.send(.encoderEdge(a: true, b: true, at: 1.012), {
            $0.encoderState = encoder(ab: 3, lastDetentAt: 1.01)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        h.send(.encoderEdge(a: false, b: false, at: 1.022), {
            $0.encoderState = encoder(lastDetentAt: 1.01)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        // Two counter-clockwise detents.
        h.send(.encoderEdge(a: true, b: false, at: 1.072), {
            $0.encoderState = encoder(ab: 2, steps: -1, lastDetentAt: 1.01)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        h.send(.encoderEdge(a: true, b: true, at: 1.122), {
            $0.encoderState = encoder(ab: 3, steps: -2, lastDetentAt: 1.01)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        h.send(.encoderEdge(a: false, b: true, at: 1.172), {
            $0.encoderState = encoder(ab: 1, steps: -3, lastDetentAt: 1.01)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        h.send(.encoderEdge(a: false, b: false, at: 1.222), {
            $0.volume = 50
            $0.encoderState = encoder(lastDetentAt: 1.222)
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: 50)
        }, commands: [
            .setVolume(50),
            .render(status("playing", song: 1, index: 1, of: 1, volume: 50)),
        ])
        h.send(.encoderEdge(a: true, b: false, at: 1.272), {
            $0.encoderState = encoder(ab: 2, steps: -1, lastDetentAt: 1.222)
        }, commands: [])
        h.send(.encoderEdge(a: true, b: true, at: 1.322), {
            $0.encoderState = encoder(ab: 3, steps: -2, lastDetentAt: 1.222)
        }, commands: [])
        h.send(.encoderEdge(a: false, b: true, at: 1.372), {
            $0.encoderState = encoder(ab: 1, steps: -3, lastDetentAt: 1.222)
        }, commands: [])
        detent(h, a: false, b: false, at: 1.422, volume: 45, encoder(lastDetentAt: 1.422))
    }

    func testEncodersWithTwoTransitionsPerDetentAndAcceleration() {
        var settings = Settings()
        settings.encoderStepsPerDetent = 2
        let h = CoreHarness(playing(1, settings: settings))
        h.setVolume(20, playingTrack1Of: 1)
        // Slow: a detent every 0.3 s moves 5 each.
        h.send(.encoderEdge(a: false, b: true, at: 0.30), {
            $0.encoderState = encoder(ab: 1, steps: 1)
        }, commands: [])
        detent(h, a: true, b: true, at: 0.31, volume: 25, encoder(ab: 3, lastDetentAt: 0.31))
        h.send(.encoderEdge(a: true, b: false, at: 0.61), {
            $0.encoderState = encoder(ab: 2, steps: 1, lastDetentAt: 0.31)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        detent(h, a: false, b: false, at: 0.62, volume: 30, encoder(lastDetentAt: 0.62))
        // Fast: 20 ms apart moves 4× that.
        h.send(.encoderEdge(a: false, b: true, at: 0.63), {
            $0.encoderState = encoder(ab: 1, steps: 1, lastDetentAt: 0.62)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        detent(h, a: true, b: true, at: 0.64, volume: 50, encoder(ab: 3, lastDetentAt: 0.64))
        h.send(.encoderEdge(a: true, b: false, at: 0.65), {
            $0.encoderState = encoder(ab: 2, steps: 1, lastDetentAt: 0.64)
        }, commands: [
            .startTimer(.saveVolume, after: 1),
        ])
        detent(h, a: false, b: false, at: 0.66, volume: 70, encoder(lastDetentAt: 0.66))
    }

    func testMediaKeysMapToTheSameIntents() {
        let h = CoreHarness(playing(3))
        h.pauseTrack1(of: 3, by: .mediaKey(code: MediaKey.playPause, value: 1, at: 0))
        h.send(.mediaKey(code: MediaKey.playPause, value: 0, at: 0.1), commands: [])
        h.resumeTrack1(of: 3, by: .mediaKey(code: MediaKey.play, value: 1, at: 1))
        h.nextToTrack2Of3(by: .mediaKey(code: MediaKey.nextSong, value: 1, at: 2))
        h.send(.mediaKey(code: MediaKey.nextSong, value: 2, at: 2.5), commands: [])
        XCTAssertEqual(h.state.currentTrack?.id, 2, "autorepeat does not skip again")
        h.send(.mediaKey(code: MediaKey.volumeDown, value: 1, at: 3), {
            $0.volume = 95
            $0.shown = status("playing", song: 2, index: 2, of: 3, volume: 95)
        }, commands: [
            .setVolume(95),
            .startTimer(.saveVolume, after: 1),
            .render(status("playing", song: 2, index: 2, of: 3, volume: 95)),
        ])
        h.send(.mediaKey(code: MediaKey.volumeDown, value: 2, at: 3.5), {
            $0.volume = 90
            $0.shown = status("playing", song: 2, index: 2, of: 3, volume: 90)
        }, commands: [
            .setVolume(90),
            .startTimer(.saveVolume, after: 1),
            .render(status("playing", song: 2, index: 2, of: 3, volume: 90)),
        ])
        XCTAssertEqual(h.state.volume, 90, "volume repeats while held")
        h.send(.mediaKey(code: MediaKey.fastForward, value: 1, at: 4), {
            $0.position = 10
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing, volume: 90)
            $0.savedPosition = 10
            $0.shown = status("playing", song: 2, index: 2, of: 3, elapsed: "0:10", volume: 90)
        }, commands: [
            .seekOutput(to: 10),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 10, phase: .playing, volume: 90)),
            .render(status("playing", song: 2, index: 2, of: 3, elapsed: "0:10", volume: 90)),
        ])
        h.stop(track: 2, of: 3, volume: 90, by: .mediaKey(code: MediaKey.stopCD, value: 1, at: 5))
        h.send(.mediaKey(code: 30 /* KEY_A */, value: 1, at: 6), commands: [])
    }

    /// A Bluetooth speaker's buttons, as BlueZ's AVRCP input device sends them
    /// (profiles/audio/avctp.c's key_map): PAUSE is KEY_PAUSECD, PLAY KEY_PLAYCD (not KEY_PLAY:
    /// before `MediaKey.playCD` the speaker could pause the box but not start it again), FORWARD
    /// KEY_NEXTSONG, BACKWARD KEY_PREVIOUSSONG; each a press and a release.
    func testTheSpeakersAVRCPButtonsAsBlueZSendsThem() {
        let h = CoreHarness(playing(3))
        h.pauseTrack1(of: 3, by: .mediaKey(code: 201 /* KEY_PAUSECD */, value: 1, at: 0))
        h.send(.mediaKey(code: 201, value: 0, at: 0.1), commands: [])
        h.resumeTrack1(of: 3, by: .mediaKey(code: 200 /* KEY_PLAYCD */, value: 1, at: 1))
        h.send(.mediaKey(code: 200, value: 0, at: 1.1), commands: [])
        h.nextToTrack2Of3(by: .mediaKey(code: 163 /* KEY_NEXTSONG */, value: 1, at: 2))
        h.send(.mediaKey(code: 163, value: 0, at: 2.1), commands: [])
        h.previousToTrack1Of3(by: .mediaKey(code: 165 /* KEY_PREVIOUSSONG */, value: 1, at: 3))
        h.send(.mediaKey(code: 165, value: 0, at: 3.1), commands: [])
    }

    /// The gestures observers are told of (`ButtonGesture.between`): read from the state the core
    /// left, so bounce makes no extra press and a double press is the core's double.
    func testGesturesAreWhatTheCoreDecidedShortLongDoubleAndBounceIsNone() {
        var settings = Settings()
        settings.buttons[.next] = ButtonBinding(tap: .next, long: .stop, double: .previous)
        var s = playing(3, settings: settings)
        var seen: [ButtonGesture] = []
        func send(_ e: Event) {
            let before = s.buttons
            _ = reduce(&s, e)
            seen += ButtonGesture.between(before, s.buttons)
        }
        func edge(_ down: Bool, at t: Double, bounce: Bool = false) {
            send(.buttonEdge(.next, pressed: down, at: t))
            if bounce {
                send(.buttonEdge(.next, pressed: !down, at: t + 0.002))
                send(.buttonEdge(.next, pressed: down, at: t + 0.004))
            }
            send(.timerFired(.debounce(.next), at: t + 0.02))
            send(.buttonLevel(.next, pressed: down, at: t + 0.02))
        }
        edge(true, at: 1, bounce: true)
        XCTAssertEqual(seen, [])
        edge(false, at: 1.1, bounce: true)
        XCTAssertEqual(seen, [ButtonGesture(.next, .short)])
        // The second press inside the window is the double; its release is nothing more.
        edge(true, at: 1.3)
        edge(false, at: 1.4)
        XCTAssertEqual(seen, [ButtonGesture(.next, .short), ButtonGesture(.next, .double)])
        seen = []
        send(.timerFired(.doubleTap(.next), at: 1.75))
        edge(true, at: 3)
        send(.timerFired(.gesture(.next), at: 3.8))
        edge(false, at: 5)
        XCTAssertEqual(seen, [ButtonGesture(.next, .long)], "a long press is not also a short one")
        // The mute line is no button.
        seen = []
        send(.buttonEdge(.mute, pressed: true, at: 6))
        send(.timerFired(.debounce(.mute), at: 6.02))
        send(.buttonEdge(.mute, pressed: false, at: 7))
        XCTAssertEqual(seen, [])
    }
}
