// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class PersistencePolicyTests: XCTestCase {
    /// `saveInterval` 5 s bounds the loss, write included: the place is saved every 4 s.
    func testWhilePlayingThePositionIsSavedEveryFourSecondsAndNoMoreOften() {
        let h = CoreHarness(playing(2))
        XCTAssertEqual(h.state.settings.saveInterval, 5)
        for second in 1...17 {
            let t = Double(second), clock = second < 10 ? "0:0\(second)" : "0:\(second)"
            h.heard(1, at: t, shows: status("playing", song: 1, index: 1, of: 2, elapsed: clock))
            if [4, 8, 12, 16].contains(second) {
                h.send(.tick(now: t), { $0.now = t; $0.savedPosition = t; $0.savedAt = t }, commands: [
                    .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: t, phase: .playing)),
                ])
            } else {
                h.send(.tick(now: t), { $0.now = t }, commands: [])
            }
        }
    }

    func testTheQueueIsRewrittenOnlyWhenItChangesOtherwiseOnlyThePlace() {
        let h = CoreHarness(playing(3))
        // A new current track is a place.
        h.nextToTrack2Of3()
        h.pause(track: 2, of: 3)
        h.send(.setRepeat(.all), {
            $0.repeatMode = .all
            $0.savedMark = mark(revision: 1, current: 2, phase: .paused, repeat: .all)
            $0.shown = status("paused", song: 2, index: 2, of: 3, repeat: .all)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .paused, repeatMode: .all)),
            .render(status("paused", song: 2, index: 2, of: 3, repeat: .all)),
        ])
        // A volume asked for by name is saved at once.
        h.send(.setVolume(40), {
            $0.volume = 40
            $0.savedMark = mark(revision: 1, current: 2, phase: .paused, repeat: .all, volume: 40)
            $0.shown = status("paused", song: 2, index: 2, of: 3, volume: 40, repeat: .all)
        }, commands: [
            .setVolume(40),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .paused, repeatMode: .all, volume: 40)),
            .render(status("paused", song: 2, index: 2, of: 3, volume: 40, repeat: .all)),
        ])
        // The queue changed: the whole file.
        h.send(.add([info(9)]), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3)), Track(id: 4, info: info(9))]
            $0.order = [1, 2, 3, 4]
            $0.nextTrackID = 5
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .paused, repeat: .all, volume: 40)
            $0.shown = status("paused", song: 2, index: 2, of: 4, volume: 40, repeat: .all)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(9)], current: 1, phase: .paused, repeatMode: .all, volume: 40)),
            .render(status("paused", song: 2, index: 2, of: 4, volume: 40, repeat: .all)),
        ])
        // The order changed: the whole file.
        h.send(.setShuffle(true, seed: 7), {
            $0.order = [2, 3, 4, 1]
            $0.cursor = 0
            $0.shuffle = true
            $0.shuffleSeed = 7
            $0.queueRevision = 3
            $0.savedMark = mark(revision: 3, current: 2, phase: .paused, shuffle: true, repeat: .all, volume: 40)
            $0.shown = status("paused", song: 2, index: 1, of: 4, volume: 40, shuffle: true, repeat: .all)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(9)], order: [1, 2, 3, 0], current: 1, phase: .paused, shuffle: true, shuffleSeed: 7, repeatMode: .all, volume: 40)),
            .render(status("paused", song: 2, index: 1, of: 4, volume: 40, shuffle: true, repeat: .all)),
        ])
        h.send(.clear, {
            $0.queue = []
            $0.order = []
            $0.cursor = nil
            $0.phase = .stopped
            $0.loaded = nil
            $0.handedNext = nil
            $0.queueRevision = 4
            $0.savedMark = mark(revision: 4, current: nil, phase: .stopped, shuffle: true, repeat: .all, volume: 40)
            $0.shown = status("stopped", volume: 40, shuffle: true, repeat: .all)
        }, commands: [
            .stopOutput,
            .persist(Snapshot(order: [], shuffle: true, shuffleSeed: 7, repeatMode: .all, volume: 40)),
            .render(status("stopped", volume: 40, shuffle: true, repeat: .all)),
        ])
    }

    func testAnEncoderSpinIsOneSaveOnceTheKnobIsStill() {
        var settings = Settings()
        settings.encoderAcceleration = false
        let h = CoreHarness(playing(1, settings: settings))
        // Ten counter-clockwise detents, 10 ms an edge: the volume falls 5 a detent, and every edge
        // after the first change pushes the save back; nothing is saved while it turns.
        let ccw: [(a: Bool, b: Bool, ab: UInt8)] = [(true, false, 2), (true, true, 3), (false, true, 1), (false, false, 0)]
        var t = 1.0, lastDetent = -1.0
        for detent in 1...10 {
            let pushBack: [Command] = detent == 1 ? [] : [.startTimer(.saveVolume, after: 1)]
            for (i, edge) in ccw.enumerated() {
                t += 0.01
                if i < 3 {
                    h.send(.encoderEdge(a: edge.a, b: edge.b, at: t), {
                        $0.encoderState = encoder(ab: edge.ab, steps: -(i + 1), lastDetentAt: lastDetent)
                    }, commands: pushBack)
                } else {
                    let volume = 100 - 5 * detent
                    h.send(.encoderEdge(a: edge.a, b: edge.b, at: t), {
                        $0.volume = volume
                        $0.encoderState = encoder(lastDetentAt: t)
                        $0.shown = status("playing", song: 1, index: 1, of: 1, volume: volume)
                    }, commands: [
                        .setVolume(volume), .startTimer(.saveVolume, after: 1),
                        .render(status("playing", song: 1, index: 1, of: 1, volume: volume)),
                    ])
                    lastDetent = t
                }
            }
        }
        // Still for a second: one save.
        h.send(.timerFired(.saveVolume, at: t + 1), {
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 50)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, phase: .playing, volume: 50)),
        ])
        h.send(.timerFired(.saveVolume, at: t + 2), commands: [])
    }

    func testNothingIsWrittenWhilePausedOrStopped() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 3, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:03"))
        h.pauseTrack1(of: 2, at: 3, elapsed: "0:03")
        for second in 1...30 {
            h.send(.tick(now: Double(second)), { $0.now = Double(second) }, commands: [])
        }
    }

    func testWaitingForTheDeviceIsSavedAsPlayingSoNoExtraWriteHappens() {
        let h = CoreHarness(playing(2))
        h.deviceBusyOnTrack1(of: 2)
        XCTAssertEqual(h.state.snapshot.phase, .playing)
    }

    func testQuitSavesTheHeardPositionInTheWholeQueueFileReleasesTheDeviceAndExits() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 12.75, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:12"))
        h.send(.quit, {
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedPosition = 12.75
        }, commands: [
            .stopOutput,
            .persist(Snapshot(tracks: [info(1), info(2)], current: 0, position: 12.75, phase: .playing)),
            .exit(code: 0),
        ])
    }

    func testASaveErrorIsReportedOnceUntilItChanges() {
        let h = CoreHarness(queued(1))
        h.send(.saved(error: "disk full"), { $0.saveError = "disk full"; $0.saveRetryDelay = 2 },
               commands: [.report("could not save state: disk full"), .startTimer(.saveRetry, after: 1)])
        h.send(.saved(error: "disk full"), { $0.saveRetryDelay = 4 }, commands: [.startTimer(.saveRetry, after: 2)])
        h.send(.saved(error: nil), { $0.saveError = nil; $0.saveRetryDelay = 1 },
               commands: [.cancelTimer(.saveRetry), .report("state saved again")])
        h.send(.saved(error: nil), commands: [])
    }

    func testAFailedSaveIsTriedAgainForcedUntilOneSucceedsLessOftenTheLongerItFails() {
        let h = CoreHarness(queued(1))
        // The state is in memory only: the retry saves it whole although nothing changed since.
        h.send(.saved(error: "disk full"), { $0.saveError = "disk full"; $0.saveRetryDelay = 2 },
               commands: [.report("could not save state: disk full"), .startTimer(.saveRetry, after: 1)])
        var delay = 2.0
        for _ in 0..<8 {
            h.send(.timerFired(.saveRetry, at: h.state.now), { $0.savedAt = h.state.now }, commands: [.persistPlace(h.state.snapshot)])
            h.send(.saved(error: "disk full"), { $0.saveRetryDelay = min(delay * 2, 60) }, commands: [.startTimer(.saveRetry, after: delay)])
            delay = min(delay * 2, 60)
        }
        XCTAssertEqual(h.state.saveRetryDelay, 60, "at most a minute between tries")
        h.send(.saved(error: nil), { $0.saveError = nil; $0.saveRetryDelay = 1 },
               commands: [.cancelTimer(.saveRetry), .report("state saved again")])
        // A late firing after the success saves nothing.
        h.send(.timerFired(.saveRetry, at: h.state.now), commands: [])
    }

    func testRestoreOfAPlayingStateResumesAtTheSavedPosition() {
        let snap = Snapshot(tracks: [info(1), info(2)], current: 1, position: 33.5, phase: .playing,
                            repeatMode: .all, volume: 60)
        let h = CoreHarness()
        h.send(.restore(snap), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.cursor = 1
            $0.phase = .playing
            $0.position = 33.5
            $0.volume = 60
            $0.repeatMode = .all
            $0.nextTrackID = 3
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 2)
            $0.handedNext = PlayRef(playID: 2, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing, repeat: .all, volume: 60)
            $0.savedPosition = 33.5
            $0.shown = status("playing", song: 2, index: 2, of: 2, elapsed: "0:33", volume: 60, repeat: .all)
        }, commands: [
            .setVolume(60),
            .startTrack(playID: 1, path: "/music/2.flac", at: 33.5, paused: false, next: NextPlay(playID: 2, path: "/music/1.flac")),
            .render(status("playing", song: 2, index: 2, of: 2, elapsed: "0:33", volume: 60, repeat: .all)),
        ])
        XCTAssertEqual(h.state.snapshot, snap, "what was read is what would be written")
    }

    func testRestoreWithResumePausedComesBackPausedWithoutTouchingTheDevice() {
        var settings = Settings()
        settings.resumePlaying = false
        let h = CoreHarness(State(settings: settings))
        let snap = Snapshot(tracks: [info(1)], current: 0, position: 10, phase: .playing)
        h.restorePausedTrack1(snap, at: 10, elapsed: "0:10")
        h.send(.play, {
            $0.phase = .playing
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 1, elapsed: "0:10")
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 10, paused: false),
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, position: 10, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 1, elapsed: "0:10")),
        ])
    }

    func testRestoreCanRewindAFewSeconds() {
        var settings = Settings()
        settings.resumeRewind = 5
        let h = CoreHarness(State(settings: settings))
        h.send(.restore(Snapshot(tracks: [info(1)], current: 0, position: 33, phase: .playing)), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.position = 28
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.savedPosition = 28
            $0.shown = status("playing", song: 1, index: 1, of: 1, elapsed: "0:28")
        }, commands: [
            .setVolume(100),
            .startTrack(playID: 1, path: "/music/1.flac", at: 28, paused: false),
            .render(status("playing", song: 1, index: 1, of: 1, elapsed: "0:28")),
        ])
        let early = CoreHarness(State(settings: settings))
        early.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, position: 3, phase: .paused))
    }

    func testRestoreKeepsTheShuffleOrder() {
        let snap = Snapshot(tracks: [info(1), info(2), info(3)], order: [2, 0, 1], current: 0, position: 1,
                            phase: .paused, shuffle: true, shuffleSeed: 5)
        let h = CoreHarness()
        h.send(.restore(snap), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [3, 1, 2]
            $0.cursor = 1
            $0.phase = .paused
            $0.position = 1
            $0.shuffle = true
            $0.shuffleSeed = 5
            $0.nextTrackID = 4
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused, shuffle: true)
            $0.savedPosition = 1
            $0.shown = status("paused", song: 1, index: 2, of: 3, elapsed: "0:01", shuffle: true)
        }, commands: [
            .setVolume(100),
            .render(status("paused", song: 1, index: 2, of: 3, elapsed: "0:01", shuffle: true)),
        ])
    }

    func testSnapshotLeavingOutEntriesMovesCurrentToTheNextKeptOne() {
        let snap = Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 50, phase: .playing)
        let kept = snap.keepingTracks { $0 != 1 }
        XCTAssertEqual(kept.tracks, [info(1), info(3)])
        XCTAssertEqual(kept.current, 1)
        XCTAssertEqual(kept.position, 0)
        let shuffled = Snapshot(tracks: [info(1), info(2), info(3)], order: [2, 1, 0], current: 2, position: 5, shuffle: true)
        let k2 = shuffled.keepingTracks { $0 != 0 }
        XCTAssertEqual(k2.order, [1, 0])
        XCTAssertEqual(k2.current, 1, "wraps to the first kept track in play order")
        XCTAssertEqual(Snapshot(tracks: [info(1)], current: 0).keepingTracks { _ in false }, Snapshot())
    }
}

final class ChimeTests: XCTestCase {
    func chimeState() -> State {
        var settings = Settings()
        settings.chime = "/usr/share/jukebox/ready.wav"
        settings.bootVolume = 30
        return State(settings: settings)
    }

    func testTheChimePlaysFirstAtTheBootVolumeThenTheResumedTrack() {
        let h = CoreHarness(chimeState())
        h.send(.restore(Snapshot(tracks: [info(1), info(2)], current: 0, position: 40, phase: .playing)), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.cursor = 0
            $0.phase = .playing
            $0.position = 40
            $0.volume = 30
            $0.chimePlayed = true
            $0.chimePlay = 1
            $0.afterChime = 40
            $0.nextTrackID = 3
            $0.nextPlayID = 2
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 30)
            $0.savedPosition = 40
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:40", volume: 30)
        }, commands: [
            .setVolume(30),
            .startTrack(playID: 1, path: "/usr/share/jukebox/ready.wav", at: 0, paused: false),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:40", volume: 30)),
        ])
        h.send(.trackStarted(playID: 1), commands: [])
        h.send(.trackFinished(playID: 1, next: nil), {
            $0.chimePlay = nil
            $0.afterChime = nil
            $0.nextPlayID = 4
            $0.loaded = PlayRef(playID: 2, trackID: 1)
            $0.handedNext = PlayRef(playID: 3, trackID: 2)
        }, commands: [
            .startTrack(playID: 2, path: "/music/1.flac", at: 40, paused: false, next: NextPlay(playID: 3, path: "/music/2.flac")),
        ])
        // Only once: a later stop and play goes straight to the music.
        h.stop(track: 1, of: 2, volume: 30)
        h.send(.play, {
            $0.phase = .playing
            $0.nextPlayID = 6
            $0.loaded = PlayRef(playID: 4, trackID: 1)
            $0.handedNext = PlayRef(playID: 5, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 30)
            $0.shown = status("playing", song: 1, index: 1, of: 2, volume: 30)
        }, commands: [
            .startTrack(playID: 4, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 5, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, volume: 30)),
            .render(status("playing", song: 1, index: 1, of: 2, volume: 30)),
        ])
    }

    func testAChimeThatCannotPlayIsSkippedWithAMessage() {
        let h = CoreHarness(chimeState())
        h.send(.restore(Snapshot(tracks: [info(1)], current: 0, position: 5, phase: .playing)), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.position = 5
            $0.volume = 30
            $0.chimePlayed = true
            $0.chimePlay = 1
            $0.afterChime = 5
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 30)
            $0.savedPosition = 5
            $0.shown = status("playing", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30)
        }, commands: [
            .setVolume(30),
            .startTrack(playID: 1, path: "/usr/share/jukebox/ready.wav", at: 0, paused: false),
            .render(status("playing", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30)),
        ])
        h.send(.trackFailed(playID: 1, reason: "no such file"), {
            $0.chimePlay = nil
            $0.afterChime = nil
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 2, trackID: 1)
        }, commands: [
            .report("the chime could not be played"),
            .startTrack(playID: 2, path: "/music/1.flac", at: 5, paused: false),
        ])
    }

    func testABusyDeviceAtBootWaitsAndThenPlaysTheMusic() {
        let h = CoreHarness(chimeState())
        h.send(.restore(Snapshot(tracks: [info(1)], current: 0, position: 5, phase: .playing)), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.position = 5
            $0.volume = 30
            $0.chimePlayed = true
            $0.chimePlay = 1
            $0.afterChime = 5
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 30)
            $0.savedPosition = 5
            $0.shown = status("playing", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30)
        }, commands: [
            .setVolume(30),
            .startTrack(playID: 1, path: "/usr/share/jukebox/ready.wav", at: 0, paused: false),
            .render(status("playing", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30)),
        ])
        h.send(.deviceUnavailable(reason: "busy", problem: .busy), {
            $0.phase = .waitingForDevice(reason: "busy")
            $0.chimePlay = nil
            $0.afterChime = nil
            $0.retryDelay = 0.25
            $0.shown = status("waiting", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30, message: "waiting for audio device: busy")
        }, commands: [
            .report("waiting for audio device: busy"),
            .startTimer(.deviceRetry, after: 0.125),
            .render(status("waiting", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30, message: "waiting for audio device: busy")),
        ])
        XCTAssertEqual(h.state.phase, .waitingForDevice(reason: "busy"))
        h.send(.timerFired(.deviceRetry, at: 1), commands: [
            .probeDevice,
            .startTimer(.deviceRetry, after: 2.5),
        ])
        h.send(.deviceAvailable, {
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 2, trackID: 1)
        }, commands: [
            .cancelTimer(.deviceRetry),
            .startTrack(playID: 2, path: "/music/1.flac", at: 5, paused: false),
        ])
    }

    func testResumingPausedWaitsForPlayBeforeTheChime() {
        var s = chimeState()
        s.settings.resumePlaying = false
        let h = CoreHarness(s)
        h.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, position: 5, phase: .playing), at: 5, elapsed: "0:05", volume: 30)
        h.send(.play, {
            $0.phase = .playing
            $0.chimePlayed = true
            $0.chimePlay = 1
            $0.afterChime = 5
            $0.nextPlayID = 2
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 30)
            $0.shown = status("playing", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30)
        }, commands: [
            .startTrack(playID: 1, path: "/usr/share/jukebox/ready.wav", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, position: 5, phase: .playing, volume: 30)),
            .render(status("playing", song: 1, index: 1, of: 1, elapsed: "0:05", volume: 30)),
        ])
    }
}
