// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// What a start meets: volume limits before the first sample, music not there yet, a state file
/// that cannot be read. None of them costs the saved place.
final class StartTests: XCTestCase {
    func settings(min: Int = 0, max: Int = 100, boot: Int? = nil) -> Settings {
        var s = Settings()
        s.volumeMin = min
        s.volumeMax = max
        s.bootVolume = boot
        return s
    }

    func testTheVolumeLimitsHoldFromTheFirstEventWithoutAnyStateFile() {
        let h = CoreHarness(State(settings: settings(max: 60)))
        h.send(.started, { $0.volume = 60; $0.savedMark?.volume = 60; $0.shown = StatusView($0) },
               commands: [.setVolume(60), .render(StatusView(h.state.with { $0.volume = 60 }))])
        let boot = CoreHarness(State(settings: settings(min: 40, boot: 30)))
        boot.send(.started, { $0.volume = 40; $0.savedMark?.volume = 40; $0.shown = StatusView($0) },
                  commands: [.setVolume(40), .render(StatusView(boot.state.with { $0.volume = 40 }))])
        let plain = CoreHarness()
        plain.send(.started, { $0.shown = StatusView($0) }, commands: [.setVolume(100), .render(StatusView(plain.state))])
    }

    func testTheStartIsNotWrittenOverTheStateFileBeforeTheRestore() {
        let h = CoreHarness(State(settings: settings(max: 60)))
        XCTAssertFalse(h.prepare(.started).contains { $0.savedSnapshot != nil })
        let snap = Snapshot(tracks: [info(1)], current: 0, position: 3, phase: "paused", volume: 90)
        XCTAssertEqual(h.prepare(.restore(snap)).first, .setVolume(60))
        XCTAssertEqual(h.state.volume, 60)
    }

    func testMusicNotThereAtStartWaitsWithTheQueueAndThePlaceThenResumesThere() {
        let snap = Snapshot(tracks: [info(1), info(2)], current: 1, position: 33.5, phase: "playing", volume: 70)
        let h = CoreHarness()
        h.send(.musicMissing("/music"), { $0.musicMissing = "/music"; $0.shown = StatusView($0) },
               commands: [.report("waiting for music: /music is not there"), .render(StatusView(h.state.with { $0.musicMissing = "/music" }))])
        let before = h.state
        let cmds = h.prepare(.restore(snap))
        XCTAssertEqual(cmds, [.setVolume(70), .render(h.state.view)], "nothing is opened")
        XCTAssertEqual(h.state.phase, .waitingForMusic)
        XCTAssertEqual(h.state.snapshot, snap, "every entry and the place: nothing for a save to lose")
        XCTAssertEqual(h.state.awaitedMusicFolder, "/music")
        XCTAssertEqual(h.state.view.phase, "waiting")
        XCTAssertEqual(h.state.view.message, "waiting for music: /music is not there")
        XCTAssertEqual(h.state.queue.count, 2)
        XCTAssertNotEqual(before, h.state)
        // Ticks and retries write nothing and open nothing while it waits.
        h.send(.tick(now: 30), { $0.now = 30 }, commands: [])
        h.send(.musicAppeared, {
            $0.musicMissing = nil
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 1, trackID: 2)
            $0.nextPlayID = 2
            $0.shown = StatusView($0)
        }, commands: [
            .report("music is there: /music"),
            .startTrack(playID: 1, path: "/music/2.flac", at: 33.5, paused: false),
            .render(StatusView(h.state.with { $0.musicMissing = nil; $0.phase = .playing })),
        ])
        h.send(.musicAppeared, commands: [])
    }

    func testPausedWhileTheMusicIsMissingPlayWaitsAndPauseStopsWaiting() {
        let h = CoreHarness()
        h.prepare(.musicMissing("/media/usb"))
        h.prepare(.restore(Snapshot(tracks: [info(1)], current: 0, position: 10, phase: "paused")))
        XCTAssertEqual(h.state.phase, .paused)
        XCTAssertEqual(h.state.view.message, "waiting for music: /media/usb is not there")
        let waiting = h.state.with { $0.phase = .waitingForMusic; $0.savedMark = $0.saveMark; $0.shown = StatusView($0) }
        h.send(.play, { $0 = waiting }, commands: [.persistPlace(waiting.snapshot), .render(StatusView(waiting))])
        let paused = h.state.with { $0.phase = .paused; $0.savedMark = $0.saveMark; $0.shown = StatusView($0) }
        h.send(.pause, { $0 = paused }, commands: [.persistPlace(paused.snapshot), .render(StatusView(paused))])
        h.send(.musicAppeared, { $0.musicMissing = nil; $0.shown = StatusView($0) },
               commands: [.report("music is there: /media/usb"), .render(StatusView(h.state.with { $0.musicMissing = nil }))])
    }

    func testMusicGoingAwayWhilePlayingStopsTheOutputAndWaits() {
        let h = CoreHarness(playing(1))
        h.send(.musicMissing("/music"), {
            $0.musicMissing = "/music"
            $0.loaded = nil
            $0.phase = .waitingForMusic
            $0.shown = StatusView($0)
        }, commands: [
            .report("waiting for music: /music is not there"),
            .stopOutput,
            .render(StatusView(h.state.with { $0.musicMissing = "/music"; $0.loaded = nil; $0.phase = .waitingForMusic })),
        ])
        XCTAssertEqual(h.state.snapshot.phase, "playing", "saved as wanting to play")
    }

    func testAStateFileThatCannotBeReadIsNeverWrittenUntilItCanBe() {
        let h = CoreHarness()
        h.send(.stateFileUnreadable("read /s.json: Input/output error"), {
            $0.stateUnreadable = "read /s.json: Input/output error"
            $0.shown = StatusView($0)
        }, commands: [.render(StatusView(h.state.with { $0.stateUnreadable = "read /s.json: Input/output error" }))])
        XCTAssertEqual(h.state.view.message, "not saving: the state file cannot be read (read /s.json: Input/output error)")
        for event: Event in [.add([info(1)]), .play, .setVolume(40), .saveRequested, .quit] {
            XCTAssertFalse(h.prepare(event).contains { $0.savedSnapshot != nil }, "\(event)")
        }
        let again = h.prepare(.stateFileUnreadable(nil))
        XCTAssertEqual(Array(again.prefix(2)), [.report("the state file can be read again: saving"), .persist(h.state.snapshot)])
    }
}

extension State {
    func with(_ change: (inout State) -> Void) -> State {
        var copy = self
        change(&copy)
        return copy
    }
}
