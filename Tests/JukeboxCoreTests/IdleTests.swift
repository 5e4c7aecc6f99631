// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Idle power-off (the sleep timer: `SleepTimerTests`): timers the shell runs, a countdown from their firings.
final class IdleTests: XCTestCase {
    /// Ten minutes of idleness, so the wait before the countdown is 540 s.
    private func tenMinutes() -> Settings {
        var s = Settings()
        s.idlePowerOff = 600
        return s
    }

    func testAStoppedPlayerCountsDownInTheLastMinuteThenRunsThePowerCommand() {
        let h = CoreHarness(State(settings: tenMinutes()))
        h.send(.tick(now: 100), {
            $0.now = 100
            $0.idleArmed = true
            $0.shown = status("stopped")
        }, commands: [
            .startTimer(.idlePowerOff, after: 540),
            .render(status("stopped")),
        ])
        // Nothing else arms it again while nothing happens.
        h.send(.tick(now: 101), { $0.now = 101 }, commands: [])
        countdown(h, at: 640, left: 60, from: 700) { status("stopped", message: $0) }
        countdown(h, at: 641.02, left: 59) { status("stopped", message: $0) }
        // The last second: the timer is asked for what is left, not a whole second.
        countdown(h, at: 699.25, left: 1, next: 0.75) { status("stopped", message: $0) }
        // The end: the command runs, once, and the place is saved (the state writer has it on
        // its way long before systemd's SIGTERM, which saves it again).
        h.send(.timerFired(.idlePowerOff, at: 700.01), {
            $0.powerOffAt = nil
            $0.message = nil
            $0.savedAt = 101
            $0.shown = status("stopped")
        }, commands: [
            .report("idle for 10 min: running systemctl poweroff"),
            .persistPlace(Snapshot()),
            .runProgram(["systemctl", "poweroff"]),
            .render(status("stopped")),
        ])
        h.send(.tick(now: 800), { $0.now = 800 }, commands: [])
    }

    func testAnyInputDuringTheCountdownStartsTheWaitAgain() {
        var s = queued(2, settings: tenMinutes())
        s.idleArmed = true
        let h = CoreHarness(s)
        countdown(h, at: 540, left: 60, from: 600) { status("stopped", of: 2, message: $0) }
        h.send(.setRepeat(.all), {
            $0.repeatMode = .all
            $0.powerOffAt = nil
            $0.message = nil
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped, repeat: .all)
            $0.shown = status("stopped", of: 2, repeat: .all)
        }, commands: [
            .startTimer(.idlePowerOff, after: 540),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], repeatMode: .all)),
            .render(status("stopped", of: 2, repeat: .all)),
        ])
        // A stale firing of the countdown (the shell had it queued) starts it afresh, from its own time.
        countdown(h, at: 1140, left: 60, from: 1200) { status("stopped", of: 2, repeat: .all, message: $0) }
    }

    func testPlayingDisarmsItAndPausingArmsItAgain() {
        var s = queued(3, settings: tenMinutes())
        s.idleArmed = true
        let h = CoreHarness(s)
        h.send(.play, {
            $0.cursor = 0
            $0.phase = .playing
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.idleArmed = false
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 3)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 2, path: "/music/2.flac")),
            .cancelTimer(.idlePowerOff),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 3)),
        ])
        // A firing already on its way when play came is ignored.
        h.send(.timerFired(.idlePowerOff, at: 540), commands: [])
        h.send(.pause, {
            $0.phase = .paused
            $0.idleArmed = true
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", song: 1, index: 1, of: 3)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .startTimer(.idlePowerOff, after: 540),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 3)),
        ])
    }

    func testWithoutTheSettingNothingIsArmed() {
        let h = CoreHarness(queued(1))
        h.send(.tick(now: 5), { $0.now = 5 }, commands: [])
        h.send(.timerFired(.idlePowerOff, at: 6), commands: [])
    }

    /// The countdown's timer fires at `at` with `left` seconds to go (from `powerOffAt`, when it
    /// begins now): the message says so in the status `view` makes of it, and the timer is asked
    /// again in `next` seconds.
    private func countdown(_ h: CoreHarness, at: Double, left: Int, from powerOffAt: Double? = nil, next: Double = 1,
                           file: StaticString = #filePath, line: UInt = #line, _ view: (String) -> StatusView) {
        let message = "power off in \(left) s (any key cancels)"
        h.send(.timerFired(.idlePowerOff, at: at), file: file, line: line, {
            if let powerOffAt { $0.powerOffAt = powerOffAt }
            $0.message = message
            $0.shown = view(message)
        }, commands: [.startTimer(.idlePowerOff, after: next), .render(view(message))])
    }
}
