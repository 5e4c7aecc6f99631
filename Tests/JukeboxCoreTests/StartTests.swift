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

    /// `started` with limits that bring the volume to `volume`: the output is set to it and the
    /// status shows it; nothing is saved before the restore.
    private func start(_ h: CoreHarness, atVolume volume: Int, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.started, file: file, line: line, {
            $0.volume = volume
            $0.savedMark = mark(revision: 0, current: nil, phase: .stopped, volume: volume)
            $0.shown = status("stopped", volume: volume)
        }, commands: [
            .setVolume(volume),
            .render(status("stopped", volume: volume)),
        ])
    }

    func testTheVolumeLimitsHoldFromTheFirstEventWithoutAnyStateFile() {
        let h = CoreHarness(State(settings: settings(max: 60)))
        start(h, atVolume: 60)
        let boot = CoreHarness(State(settings: settings(min: 40, boot: 30)))
        start(boot, atVolume: 40)
        let plain = CoreHarness()
        plain.send(.started, {
            $0.shown = status("stopped")
        }, commands: [
            .setVolume(100),
            .render(status("stopped")),
        ])
    }

    /// With a panel the start shows the boot splash for `splashSeconds` from the start's time;
    /// without one there is no splash to show.
    func testAPanelShowsTheSplashFromTheStart() {
        var withPanel = settings()
        withPanel.display = .lcd16x2
        var s = State(settings: withPanel)
        s.now = 500
        _ = reduce(&s, .started)
        XCTAssertEqual(s.splashUntil, 501.5)
        var plain = State(settings: settings())
        plain.now = 500
        _ = reduce(&plain, .started)
        XCTAssertEqual(plain.splashUntil, 0)
    }

    func testTheStartIsNotWrittenOverTheStateFileBeforeTheRestore() {
        let h = CoreHarness(State(settings: settings(max: 60)))
        start(h, atVolume: 60)
        let snap = Snapshot(tracks: [info(1)], current: 0, position: 3, phase: .paused, volume: 90)
        h.restorePausedTrack1(snap, at: 3, elapsed: "0:03", volume: 60)
    }

    func testMusicNotThereAtStartWaitsWithTheQueueAndThePlaceThenResumesThere() {
        let snap = Snapshot(tracks: [info(1), info(2)], current: 1, position: 33.5, phase: .playing, volume: 70)
        let h = CoreHarness()
        h.send(.musicMissing("/music"), {
            $0.musicMissing = "/music"
            $0.shown = status("stopped", message: "waiting for music: /music is not there")
        }, commands: [
            .report("waiting for music: /music is not there"),
            .render(status("stopped", message: "waiting for music: /music is not there")),
        ])
        let before = h.state
        h.send(.restore(snap), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.cursor = 1
            $0.phase = .waitingForMusic
            $0.position = 33.5
            $0.volume = 70
            $0.nextTrackID = 3
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing, volume: 70)
            $0.savedPosition = 33.5
            $0.shown = status("waiting", song: 2, index: 2, of: 2, elapsed: "0:33", volume: 70, message: "waiting for music: /music is not there")
        }, commands: [
            .setVolume(70),
            .render(status("waiting", song: 2, index: 2, of: 2, elapsed: "0:33", volume: 70, message: "waiting for music: /music is not there")),
        ])
        XCTAssertEqual(h.state.snapshot, snap, "every entry and the place: nothing for a save to lose")
        XCTAssertEqual(h.state.awaitedMusicFolder, "/music")
        XCTAssertNotEqual(before, h.state)
        // Ticks and retries write nothing and open nothing while it waits.
        h.send(.tick(now: 30), { $0.now = 30 }, commands: [])
        h.send(.musicAppeared, {
            $0.phase = .playing
            $0.musicMissing = nil
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 2)
            $0.shown = status("playing", song: 2, index: 2, of: 2, elapsed: "0:33", volume: 70)
        }, commands: [
            .report("music is there: /music"),
            .startTrack(playID: 1, path: "/music/2.flac", at: 33.5, paused: false),
            .render(status("playing", song: 2, index: 2, of: 2, elapsed: "0:33", volume: 70)),
        ])
        h.send(.musicAppeared, commands: [])
    }

    func testPausedWhileTheMusicIsMissingPlayWaitsAndPauseStopsWaiting() {
        let h = CoreHarness()
        h.send(.musicMissing("/media/usb"), {
            $0.musicMissing = "/media/usb"
            $0.shown = status("stopped", message: "waiting for music: /media/usb is not there")
        }, commands: [
            .report("waiting for music: /media/usb is not there"),
            .render(status("stopped", message: "waiting for music: /media/usb is not there")),
        ])
        h.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, position: 10, phase: .paused), at: 10, elapsed: "0:10", message: "waiting for music: /media/usb is not there")
        h.send(.play, {
            $0.phase = .waitingForMusic
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("waiting", song: 1, index: 1, of: 1, elapsed: "0:10", message: "waiting for music: /media/usb is not there")
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, position: 10, phase: .playing)),
            .render(status("waiting", song: 1, index: 1, of: 1, elapsed: "0:10", message: "waiting for music: /media/usb is not there")),
        ])
        h.send(.pause, {
            $0.phase = .paused
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", song: 1, index: 1, of: 1, elapsed: "0:10", message: "waiting for music: /media/usb is not there")
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, position: 10, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 1, elapsed: "0:10", message: "waiting for music: /media/usb is not there")),
        ])
        h.send(.musicAppeared, {
            $0.musicMissing = nil
            $0.shown = status("paused", song: 1, index: 1, of: 1, elapsed: "0:10")
        }, commands: [
            .report("music is there: /media/usb"),
            .render(status("paused", song: 1, index: 1, of: 1, elapsed: "0:10")),
        ])
    }

    func testMusicGoingAwayWhilePlayingStopsTheOutputAndWaits() {
        let h = CoreHarness(playing(1))
        h.send(.musicMissing("/music"), {
            $0.phase = .waitingForMusic
            $0.musicMissing = "/music"
            $0.loaded = nil
            $0.shown = status("waiting", song: 1, index: 1, of: 1, message: "waiting for music: /music is not there")
        }, commands: [
            .report("waiting for music: /music is not there"),
            .stopOutput,
            .render(status("waiting", song: 1, index: 1, of: 1, message: "waiting for music: /music is not there")),
        ])
        XCTAssertEqual(h.state.snapshot.phase, .playing, "saved as wanting to play")
    }

    func testAStateFileThatCannotBeReadIsNeverWrittenUntilItCanBe() {
        let h = CoreHarness()
        h.send(.stateFileUnreadable("read /s.json: Input/output error"), {
            $0.stateUnreadable = "read /s.json: Input/output error"
            $0.shown = status("stopped", message: "not saving: the state file cannot be read (read /s.json: Input/output error)")
        }, commands: [
            .render(status("stopped", message: "not saving: the state file cannot be read (read /s.json: Input/output error)")),
        ])
        // Nothing is saved, whatever happens.
        h.send(.add([info(1)]), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.shown = status("stopped", of: 1, message: "not saving: the state file cannot be read (read /s.json: Input/output error)")
        }, commands: [
            .render(status("stopped", of: 1, message: "not saving: the state file cannot be read (read /s.json: Input/output error)")),
        ])
        h.send(.play, {
            $0.cursor = 0
            $0.phase = .playing
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.shown = status("playing", song: 1, index: 1, of: 1, message: "not saving: the state file cannot be read (read /s.json: Input/output error)")
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false),
            .render(status("playing", song: 1, index: 1, of: 1, message: "not saving: the state file cannot be read (read /s.json: Input/output error)")),
        ])
        h.send(.setVolume(40), {
            $0.volume = 40
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: 40, message: "not saving: the state file cannot be read (read /s.json: Input/output error)")
        }, commands: [
            .setVolume(40),
            .render(status("playing", song: 1, index: 1, of: 1, volume: 40, message: "not saving: the state file cannot be read (read /s.json: Input/output error)")),
        ])
        h.send(.saveRequested, commands: [])
        h.send(.quit, {
            $0.loaded = nil
        }, commands: [
            .stopOutput,
            .exit(code: 0),
        ])
        h.send(.stateFileUnreadable(nil), {
            $0.stateUnreadable = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 40)
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: 40)
        }, commands: [
            .report("the state file can be read again: saving"),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing, volume: 40)),
            .render(status("playing", song: 1, index: 1, of: 1, volume: 40)),
        ])
    }
}
