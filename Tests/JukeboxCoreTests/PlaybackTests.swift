// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class PlaybackTests: XCTestCase {
    func testAddingToAnEmptyPlayerQueuesWithoutPlaying() {
        let h = CoreHarness()
        h.send(.add([info(1), info(2)]), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.nextTrackID = 3
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped)
            $0.shown = status("stopped", of: 2)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2)])),
            .render(status("stopped", of: 2)),
        ])
    }

    func testPlayFromStoppedStartsTheFirstTrackAndHandsTheNext() {
        let h = CoreHarness(queued(3))
        h.playFromStopped(3)
    }

    func testPlayOnAnEmptyQueueSaysSoAndStaysStopped() {
        let h = CoreHarness()
        h.send(.play, {
            $0.message = "the queue is empty"
            $0.shown = status("stopped", message: "the queue is empty")
        }, commands: [
            .render(status("stopped", message: "the queue is empty")),
        ])
    }

    func testPauseThenResumeKeepsTheEnginesPlay() {
        let h = CoreHarness(playing(3))
        h.heard(1, at: 12.5, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "0:12"))
        h.pauseTrack1(of: 3, at: 12.5, elapsed: "0:12")
        h.send(.togglePlayPause, {
            $0.phase = .playing
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 3, elapsed: "0:12")
        }, commands: [
            .resumeOutput,
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 12.5, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 3, elapsed: "0:12")),
        ])
    }

    func testPauseWhenStoppedAndPlayWhenPlayingAreNoOps() {
        let h = CoreHarness(queued(2))
        h.send(.pause, commands: [])
        h.playFromStopped(2)
        h.send(.play, commands: [])
    }

    func testStopRewindsAndReleasesTheDevice() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 40, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:40"))
        h.stopTrack1(of: 2)
        // A report from the play that was stopped changes nothing.
        h.send(.trackFinished(playID: 1, next: nil), commands: [])
        h.send(.heard(playID: 1, seconds: 41), commands: [])
    }

    func testNextStartsTheFollowingTrackWithANewPlayID() {
        let h = CoreHarness(playing(3))
        h.nextToTrack2Of3()
    }

    func testNextOnTheLastTrackWithRepeatOffStopsAndRewinds() {
        let h = CoreHarness(playing(2))
        h.nextToTrack2(of: 2)
        // Past the last track: stopped on track 1.
        h.stopTrack1(of: 2, by: .next, also: { $0.cursor = 0 })
    }

    func testNextOnTheLastTrackWithRepeatAllWraps() {
        let h = CoreHarness(playing(2))
        h.send(.setRepeat(.all), {
            $0.repeatMode = .all
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 1, index: 1, of: 2, repeat: .all)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 1, index: 1, of: 2, repeat: .all)),
        ])
        h.send(.next, {
            $0.cursor = 1
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 1)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 2, index: 2, of: 2, repeat: .all)
        }, commands: [
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/1.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 1, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 2, index: 2, of: 2, repeat: .all)),
        ])
        XCTAssertEqual(h.state.handedNext?.trackID, 1, "repeat all hands the first track as successor")
        h.send(.next, {
            $0.cursor = 0
            $0.nextPlayID = 7
            $0.loaded = PlayRef(playID: 5, trackID: 1)
            $0.handedNext = PlayRef(playID: 6, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 1, index: 1, of: 2, repeat: .all)
        }, commands: [
            .startTrack(playID: 5, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 6, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 1, index: 1, of: 2, repeat: .all)),
        ])
    }

    func testPreviousAfterThreeSecondsRestartsTheTrack() {
        let h = CoreHarness(playing(3))
        h.nextToTrack2Of3()
        h.heard(3, at: 3.5, shows: status("playing", song: 2, index: 2, of: 3, elapsed: "0:03"))
        // A restart is a jump: saved at once, so a power cut cannot undo it.
        h.send(.previous, {
            $0.position = 0
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .seekOutput(to: 0),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
    }

    func testPreviousWithinThreeSecondsGoesBack() {
        let h = CoreHarness(playing(3))
        h.nextToTrack2Of3()
        h.heard(3, at: 2.9, shows: status("playing", song: 2, index: 2, of: 3, elapsed: "0:02"))
        h.previousToTrack1Of3(also: { $0.position = 0 })
    }

    func testPreviousOnTheFirstTrackRestartsItUnlessRepeatAll() {
        let h = CoreHarness(playing(3))
        h.send(.previous, {
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.nextPlayID = 5
        }, commands: [
            .startTrack(playID: 3, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
        ])
        h.send(.setRepeat(.all), {
            $0.repeatMode = .all
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 1, index: 1, of: 3, repeat: .all)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 1, index: 1, of: 3, repeat: .all)),
        ])
        h.send(.previous, {
            $0.cursor = 2
            $0.nextPlayID = 7
            $0.loaded = PlayRef(playID: 5, trackID: 3)
            $0.handedNext = PlayRef(playID: 6, trackID: 1)
            $0.savedMark = mark(revision: 1, current: 3, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 3, index: 3, of: 3, repeat: .all)
        }, commands: [
            .startTrack(playID: 5, path: "/music/3.flac", at: 0, paused: false, next: NextPlay(playID: 6, path: "/music/1.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 2, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 3, index: 3, of: 3, repeat: .all)),
        ])
    }

    func testSkipWhilePausedLoadsTheTrackPausedAtZero() {
        let h = CoreHarness(playing(3))
        h.pauseTrack1(of: 3)
        h.send(.next, {
            $0.cursor = 1
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .paused)
            $0.shown = status("paused", song: 2, index: 2, of: 3)
        }, commands: [
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: true, next: NextPlay(playID: 4, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .paused)),
            .render(status("paused", song: 2, index: 2, of: 3)),
        ])
    }

    func testSkipWhileStoppedOnlyMovesTheCursor() {
        let h = CoreHarness(playing(3))
        h.stopTrack1(of: 3)
        h.send(.next, {
            $0.cursor = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .stopped)
            $0.shown = status("stopped", song: 2, index: 2, of: 3)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1)),
            .render(status("stopped", song: 2, index: 2, of: 3)),
        ])
        h.reopen(song: 2, of: 3)
    }

    func testSeekIsClampedToTheTrack() {
        let h = CoreHarness(playing(2))
        // Every seek is saved at once (a jump, not playback: see the power-cut tests).
        h.send(.seek(to: 250), {
            $0.position = 100
            $0.savedPosition = 100
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "1:40")
        }, commands: [
            .seekOutput(to: 100),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 100, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "1:40")),
        ])
        h.send(.seekBy(-130), {
            $0.position = 0
            $0.savedPosition = 0
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .seekOutput(to: 0),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
        h.send(.seekBy(30), {
            $0.position = 30
            $0.savedPosition = 30
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30")
        }, commands: [
            .seekOutput(to: 30),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:30")),
        ])
        h.send(.seek(to: .nan), commands: [])
    }

    func testSeekWithUnknownDurationIsOnlyClampedBelow() {
        let h = CoreHarness()
        h.send(.add([info(1, duration: nil)]), {
            $0.queue = [Track(id: 1, info: info(1, duration: nil))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped)
            $0.shown = status("stopped", of: 1)
        }, commands: [
            .persist(Snapshot(tracks: [info(1, duration: nil)])),
            .render(status("stopped", of: 1)),
        ])
        h.send(.play, {
            $0.cursor = 0
            $0.phase = .playing
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 1, duration: "--:--")
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [info(1, duration: nil)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 1, duration: "--:--")),
        ])
        h.send(.seek(to: 5000), {
            $0.position = 5000
            $0.savedPosition = 5000
            $0.shown = status("playing", song: 1, index: 1, of: 1, elapsed: "1:23:20", duration: "--:--")
        }, commands: [
            .seekOutput(to: 5000),
            .persistPlace(Snapshot(tracks: [info(1, duration: nil)], current: 0, position: 5000, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 1, elapsed: "1:23:20", duration: "--:--")),
        ])
    }

    func testSeekWhileStoppedSetsWherePlayStarts() {
        let h = CoreHarness(playing(2))
        h.stopTrack1(of: 2)
        // Saved although stopped: nothing else would save it before the next play.
        h.send(.seek(to: 20), {
            $0.position = 20
            $0.savedPosition = 20
            $0.shown = status("stopped", song: 1, index: 1, of: 2, elapsed: "0:20")
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 20)),
            .render(status("stopped", song: 1, index: 1, of: 2, elapsed: "0:20")),
        ])
        h.reopen(of: 2, at: 20, elapsed: "0:20")
    }
}
