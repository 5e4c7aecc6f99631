// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class EngineReportTests: XCTestCase {
    func testGaplessContinuationAdvancesWithoutANewStart() {
        let h = CoreHarness(playing(3))
        h.heard(1, at: 99.9, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "1:39"))
        h.send(.trackFinished(playID: 1, next: 2), {
            $0.cursor = 1
            $0.position = 0
            $0.nextPlayID = 4
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.handedNext = PlayRef(playID: 3, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .setNext(playID: 3, path: "/music/3.flac"),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
        // The engine's start report for the continuation is then a no-op.
        h.send(.trackStarted(playID: 2), commands: [])
    }

    func testASuccessorTheEngineDidNotContinueIntoIsStartedExplicitly() {
        // The engine ran out before the successor reached it (a very short track, a loaded board).
        let h = CoreHarness(playing(3))
        h.nextToTrack2Of3(by: .trackFinished(playID: 1, next: nil))
        // The stale successor's reports are then ignored.
        h.send(.trackStarted(playID: 2), commands: [])
    }

    func testStartOfTheHandedSuccessorAdvancesEvenWithoutAFinishReport() {
        let h = CoreHarness(playing(3))
        h.send(.trackStarted(playID: 2), {
            $0.cursor = 1
            $0.nextPlayID = 4
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.handedNext = PlayRef(playID: 3, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .setNext(playID: 3, path: "/music/3.flac"),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
    }

    func testRepeatOneHandsTheSameTrackAndLoopsIt() {
        let h = CoreHarness(playing(2))
        h.send(.setRepeat(.one), {
            $0.repeatMode = .one
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 1)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .one)
            $0.shown = status("playing", song: 1, index: 1, of: 2, repeat: .one)
        }, commands: [
            .setNext(playID: 3, path: "/music/1.flac"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, repeatMode: .one)),
            .render(status("playing", song: 1, index: 1, of: 2, repeat: .one)),
        ])
        h.heard(1, at: 100, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "1:40", repeat: .one))
        // Starting over is a jump back: saved at once, so a power cut does not resume at the end.
        h.send(.trackFinished(playID: 1, next: 3), {
            $0.position = 0
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 1)
            $0.shown = status("playing", song: 1, index: 1, of: 2, repeat: .one)
        }, commands: [
            .setNext(playID: 4, path: "/music/1.flac"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, repeatMode: .one)),
            .render(status("playing", song: 1, index: 1, of: 2, repeat: .one)),
        ])
    }

    func testEndOfQueueStopsAndRewindsAndCanExit() {
        var settings = Settings()
        settings.exitWhenQueueEnds = true
        let h = CoreHarness(playing(1, settings: settings))
        h.send(.trackFinished(playID: 1, next: nil), {
            $0.phase = .stopped
            $0.loaded = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.shown = status("stopped", song: 1, index: 1, of: 1)
        }, commands: [
            .stopOutput,
            .persist(Snapshot(tracks: [info(1)], current: 0)),
            .render(status("stopped", song: 1, index: 1, of: 1)),
            .exit(code: 0),
        ])
    }

    func testAFailedTrackIsSkippedWithAMessageNamingTheFile() {
        let h = CoreHarness(playing(3))
        h.track1FailsAndTrack2Plays(of: 3, reason: "not a recognised audio format")
        // A successful start resets the failure count.
        h.send(.trackStarted(playID: 3), {
            $0.failuresInARow = 0
            $0.failuresFrom = nil
        }, commands: [])
    }

    func testAFailedSuccessorIsSkippedAfterTheContinuation() {
        let h = CoreHarness(playing(3))
        h.send(.trackFinished(playID: 1, next: 2), {
            $0.cursor = 1
            $0.nextPlayID = 4
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.handedNext = PlayRef(playID: 3, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .setNext(playID: 3, path: "/music/3.flac"),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
        h.send(.trackFailed(playID: 2, reason: "truncated"), {
            $0.failuresFrom = FailurePlace(cursor: 1, position: 0.0, wantedSound: true)
            $0.cursor = 2
            $0.message = "skipped 2.flac: truncated"
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 4, trackID: 3)
            $0.handedNext = nil
            $0.failuresInARow = 1
            $0.savedMark = mark(revision: 1, current: 3, phase: .playing)
            $0.shown = status("playing", song: 3, index: 3, of: 3, message: "skipped 2.flac: truncated")
        }, commands: [
            .report("skipped /music/2.flac: truncated"),
            .startTrack(playID: 4, path: "/music/3.flac", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 2, phase: .playing)),
            .render(status("playing", song: 3, index: 3, of: 3, message: "skipped 2.flac: truncated")),
        ])
    }

    func testAQueueWhereNothingPlaysStopsInsteadOfLoopingForever() {
        let h = CoreHarness(playing(2))
        h.send(.setRepeat(.all), {
            $0.repeatMode = .all
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 1, index: 1, of: 2, repeat: .all)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 1, index: 1, of: 2, repeat: .all)),
        ])
        h.send(.trackFailed(playID: 1, reason: "bad"), {
            $0.failuresFrom = FailurePlace(cursor: 0, position: 0.0, wantedSound: true)
            $0.cursor = 1
            $0.message = "skipped 1.flac: bad"
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 1)
            $0.failuresInARow = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing, repeat: .all)
            $0.shown = status("playing", song: 2, index: 2, of: 2, repeat: .all, message: "skipped 1.flac: bad")
        }, commands: [
            .report("skipped /music/1.flac: bad"),
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/1.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 1, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 2, index: 2, of: 2, repeat: .all, message: "skipped 1.flac: bad")),
        ])
        let playID = h.state.loaded!.playID
        h.send(.trackFailed(playID: playID, reason: "bad"), {
            $0.phase = .stopped
            $0.message = "nothing in the queue can be played"
            $0.loaded = nil
            $0.handedNext = nil
            $0.failuresInARow = 2
            $0.savedMark = mark(revision: 1, current: 2, phase: .stopped, repeat: .all)
            $0.shown = status("stopped", song: 2, index: 2, of: 2, repeat: .all, message: "nothing in the queue can be played")
        }, commands: [
            .report("skipped /music/2.flac: bad"),
            .report("nothing in the queue can be played"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 1, repeatMode: .all)),
            .render(status("stopped", song: 2, index: 2, of: 2, repeat: .all, message: "nothing in the queue can be played")),
        ])
        XCTAssertEqual(h.state.message, "nothing in the queue can be played")
    }

    /// Once a queue where nothing plays has stopped, what a person does next (here: adding a good
    /// track, then play) tries every track again: play no longer stops at the first failure with
    /// the count left from before (the fault soak's wedge: a queue of broken files, a good one
    /// added, and every later play stopped at once).
    func testAfterNothingCouldBePlayedATrackAddedLaterIsReachedByTheNextPlay() {
        let h = CoreHarness(playing(1))
        h.send(.trackFailed(playID: 1, reason: "bad"), {
            $0.failuresFrom = FailurePlace(cursor: 0, position: 0.0, wantedSound: true)
            $0.phase = .stopped
            $0.message = "nothing in the queue can be played"
            $0.loaded = nil
            $0.failuresInARow = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.shown = status("stopped", song: 1, index: 1, of: 1, message: "nothing in the queue can be played")
        }, commands: [
            .report("skipped /music/1.flac: bad"),
            .report("nothing in the queue can be played"),
            .persistPlace(Snapshot(tracks: [info(1)], current: 0)),
            .render(status("stopped", song: 1, index: 1, of: 1, message: "nothing in the queue can be played")),
        ])
        h.send(.add([info(2)]), {
            $0.failuresFrom = nil
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.nextTrackID = 3
            $0.queueRevision = 2
            $0.message = nil
            $0.failuresInARow = 0
            $0.savedMark = mark(revision: 2, current: 1, phase: .stopped)
            $0.shown = status("stopped", song: 1, index: 1, of: 2)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2)], current: 0)),
            .render(status("stopped", song: 1, index: 1, of: 2)),
        ])
        h.send(.play, {
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 2, trackID: 1)
            $0.handedNext = PlayRef(playID: 3, trackID: 2)
            $0.nextPlayID = 4
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 2, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 3, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
        // The broken first track fails once more; the count (1 of 2) no longer stops the queue.
        h.send(.trackFailed(playID: 2, reason: "bad"), {
            $0.failuresFrom = FailurePlace(cursor: 0, position: 0.0, wantedSound: true)
            $0.cursor = 1
            $0.message = "skipped 1.flac: bad"
            $0.loaded = PlayRef(playID: 4, trackID: 2)
            $0.handedNext = nil
            $0.nextPlayID = 5
            $0.failuresInARow = 1
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 2, message: "skipped 1.flac: bad")
        }, commands: [
            .report("skipped /music/1.flac: bad"),
            .startTrack(playID: 4, path: "/music/2.flac", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 2, message: "skipped 1.flac: bad")),
        ])
    }

    func testBusyDeviceIsProbedWithCappedBackOffAndTheTrackReopensOnlyOnceItIsFree() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 42.25, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:42"))
        h.send(.deviceUnavailable(reason: "busy (held by aplay)", problem: .busy), {
            $0.phase = .waitingForDevice(reason: "busy (held by aplay)")
            $0.loaded = nil
            $0.handedNext = nil
            $0.retryDelay = 0.25
            $0.shown = status("waiting", song: 1, index: 1, of: 2, elapsed: "0:42", message: "waiting for audio device: busy (held by aplay)")
        }, commands: [
            .report("waiting for audio device: busy (held by aplay)"),
            .startTimer(.deviceRetry, after: 0.125),
            .render(status("waiting", song: 1, index: 1, of: 2, elapsed: "0:42", message: "waiting for audio device: busy (held by aplay)")),
        ])
        // Each probe is an open and a close: no track is opened or decoded while the device is busy,
        // and the probes stay at most 0.25 s apart however long the wait (a freed device is noticed
        // within 0.3 s).
        for _ in 0..<5 {
            h.send(.timerFired(.deviceRetry, at: 0), commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
            h.send(.deviceUnavailable(reason: "busy (held by aplay)", problem: .busy), commands: [
                .startTimer(.deviceRetry, after: 0.25),
            ])
        }
        h.send(.timerFired(.deviceRetry, at: 0), commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
        h.send(.deviceAvailable, {
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.nextPlayID = 5
        }, commands: [.cancelTimer(.deviceRetry),
                      .startTrack(playID: 3, path: "/music/1.flac", at: 42.25, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac"))])
        h.send(.trackStarted(playID: 3), {
            $0.phase = .playing
            $0.retryDelay = 0.125
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:42")
        }, commands: [
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:42")),
        ])
        // A late probe answer changes nothing.
        h.send(.deviceAvailable, commands: [])
    }

    /// A card that went away, when the kernel announces sound devices (the shell's watch on
    /// /dev/snd): the probes back off to 10 s apart (a net, not the way back), the announcement
    /// probes at once, and a card back but busy is polled as closely as any busy device.
    func testALostCardWhoseReturnIsAnnouncedIsProbedOnTheAnnouncementNotByPolling() {
        var start = playing(2)
        start.deviceReturnAnnounced = true
        let h = CoreHarness(start)
        h.heard(1, at: 42.25, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:42"))
        let gone = "hw:0: No such device"
        h.send(.deviceUnavailable(reason: gone, problem: .lost), {
            $0.phase = .waitingForDevice(reason: gone)
            $0.loaded = nil
            $0.handedNext = nil
            $0.retryDelay = 0.25
            $0.shown = status("waiting", song: 1, index: 1, of: 2, elapsed: "0:42", message: "waiting for audio device: \(gone)")
        }, commands: [
            .report("waiting for audio device: \(gone)"),
            .startTimer(.deviceRetry, after: 0.125),
            .render(status("waiting", song: 1, index: 1, of: 2, elapsed: "0:42", message: "waiting for audio device: \(gone)")),
        ])
        for (wait, next) in [(0.25, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (4.0, 8.0), (8.0, 10.0), (10.0, 10.0), (10.0, 10.0)] {
            h.send(.timerFired(.deviceRetry, at: 0), commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
            h.send(.deviceUnavailable(reason: gone, problem: .lost), { $0.retryDelay = next }, commands: [
                .startTimer(.deviceRetry, after: wait),
            ])
        }
        // The card's nodes appear: probed now, the waits start over.
        h.send(.soundDevicesChanged, { $0.retryDelay = 0.125 }, commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
        // Back, but another program took it first: polled 0.25 s apart at most, as a busy device is.
        h.send(.deviceUnavailable(reason: "busy (held by aplay)", problem: .busy), {
            $0.phase = .waitingForDevice(reason: "busy (held by aplay)")
            $0.retryDelay = 0.25
            $0.shown = status("waiting", song: 1, index: 1, of: 2, elapsed: "0:42", message: "waiting for audio device: busy (held by aplay)")
        }, commands: [
            .startTimer(.deviceRetry, after: 0.125),
            .render(status("waiting", song: 1, index: 1, of: 2, elapsed: "0:42", message: "waiting for audio device: busy (held by aplay)")),
        ])
        h.send(.timerFired(.deviceRetry, at: 0), commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
        h.send(.deviceAvailable, {
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.nextPlayID = 5
        }, commands: [.cancelTimer(.deviceRetry),
                      .startTrack(playID: 3, path: "/music/1.flac", at: 42.25, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac"))])
        // Playing again: an announcement changes nothing.
        h.send(.soundDevicesChanged, commands: [])
    }

    /// Without the announcement (a plugin device, no watch), a lost card is polled as a busy one.
    func testALostCardWithoutAnnouncementsIsPolledAndAnAnnouncementIsHarmless() {
        let h = CoreHarness(playing(2))
        h.deviceBusyOnTrack1(of: 2, reason: "gone", problem: .lost)
        for _ in 0..<3 {
            h.send(.timerFired(.deviceRetry, at: 0), commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
            h.send(.deviceUnavailable(reason: "gone", problem: .lost), commands: [.startTimer(.deviceRetry, after: 0.25)])
        }
        h.send(.soundDevicesChanged, { $0.retryDelay = 0.125 }, commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
    }

    /// A probe whose answer is lost (it cannot happen with the real engine, which answers every
    /// probe made while it is idle) still cannot leave the player waiting forever: the probe
    /// timer is already running again.
    func testAProbeWithoutAnAnswerIsRepeated() {
        let h = CoreHarness(playing(2))
        h.deviceBusyOnTrack1(of: 2)
        h.send(.timerFired(.deviceRetry, at: 0), commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
        h.send(.timerFired(.deviceRetry, at: 2.5), commands: [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
    }

    /// The wedge the fault soak found: the player waited for the device, a probe found it free, the
    /// track failed to open (a bad file), and the skip started the next track *paused* because the
    /// phase was not `playing`. A paused start opens no device and reports nothing, so no probe was
    /// ever due again: silent until the plug was pulled.
    func testATrackThatFailsWhileWaitingForTheDeviceSkipsToTheNextOneStillWantingSound() {
        let h = CoreHarness(playing(3))
        h.deviceBusyOnTrack1(of: 3)
        h.send(.timerFired(.deviceRetry, at: 0), commands: [
            .probeDevice,
            .startTimer(.deviceRetry, after: 2.5),
        ])
        h.send(.deviceAvailable, {
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
        }, commands: [
            .cancelTimer(.deviceRetry),
            .startTrack(playID: 3, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
        ])
        h.send(.trackFailed(playID: 3, reason: "not a recognised audio format"), {
            $0.failuresFrom = FailurePlace(cursor: 0, position: 0.0, wantedSound: true)
            $0.cursor = 1
            $0.message = "skipped 1.flac: not a recognised audio format"
            $0.nextPlayID = 7
            $0.loaded = PlayRef(playID: 5, trackID: 2)
            $0.handedNext = PlayRef(playID: 6, trackID: 3)
            $0.failuresInARow = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("waiting", song: 2, index: 2, of: 3, message: "waiting for audio device: busy")
        }, commands: [
            .report("skipped /music/1.flac: not a recognised audio format"),
            .startTrack(playID: 5, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 6, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("waiting", song: 2, index: 2, of: 3, message: "waiting for audio device: busy")),
        ])
        // Still busy: back to probing.
        h.send(.deviceUnavailable(reason: "busy", problem: .busy), {
            $0.loaded = nil
            $0.handedNext = nil
        }, commands: [
            .startTimer(.deviceRetry, after: 0.25),
        ])
    }

    /// Same wedge through the end of a track: a play started while waiting that ends at once (a
    /// resume point at the very end) must start its successor wanting sound.
    func testATrackThatEndsWhileWaitingStartsItsSuccessorUnpaused() {
        let h = CoreHarness(playing(3))
        h.deviceBusyOnTrack1(of: 3)
        h.send(.timerFired(.deviceRetry, at: 0), commands: [
            .probeDevice,
            .startTimer(.deviceRetry, after: 2.5),
        ])
        h.send(.deviceAvailable, {
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
        }, commands: [
            .cancelTimer(.deviceRetry),
            .startTrack(playID: 3, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
        ])
        h.send(.trackFinished(playID: 3, next: nil), {
            $0.cursor = 1
            $0.nextPlayID = 7
            $0.loaded = PlayRef(playID: 5, trackID: 2)
            $0.handedNext = PlayRef(playID: 6, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("waiting", song: 2, index: 2, of: 3, message: "waiting for audio device: busy")
        }, commands: [
            .startTrack(playID: 5, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 6, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("waiting", song: 2, index: 2, of: 3, message: "waiting for audio device: busy")),
        ])
    }

    /// A skip or a seek while a play is in flight after a probe replaces that play: the engine must
    /// not open the old track while the core shows the new one.
    func testSkipAndSeekWhileAPlayIsInFlightAfterAProbeRestartIt() {
        let h = CoreHarness(playing(3))
        h.deviceBusyOnTrack1(of: 3)
        h.send(.timerFired(.deviceRetry, at: 0), commands: [
            .probeDevice,
            .startTimer(.deviceRetry, after: 2.5),
        ])
        h.send(.deviceAvailable, {
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
        }, commands: [
            .cancelTimer(.deviceRetry),
            .startTrack(playID: 3, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
        ])
        h.send(.next, {
            $0.cursor = 1
            $0.nextPlayID = 7
            $0.loaded = PlayRef(playID: 5, trackID: 2)
            $0.handedNext = PlayRef(playID: 6, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("waiting", song: 2, index: 2, of: 3, message: "waiting for audio device: busy")
        }, commands: [
            .startTrack(playID: 5, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 6, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("waiting", song: 2, index: 2, of: 3, message: "waiting for audio device: busy")),
        ])
        h.send(.seek(to: 20), {
            $0.position = 20
            $0.nextPlayID = 9
            $0.loaded = PlayRef(playID: 7, trackID: 2)
            $0.handedNext = PlayRef(playID: 8, trackID: 3)
            $0.savedPosition = 20
            $0.shown = status("waiting", song: 2, index: 2, of: 3, elapsed: "0:20", message: "waiting for audio device: busy")
        }, commands: [
            .startTrack(playID: 7, path: "/music/2.flac", at: 20, paused: false, next: NextPlay(playID: 8, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 20, phase: .playing)),
            .render(status("waiting", song: 2, index: 2, of: 3, elapsed: "0:20", message: "waiting for audio device: busy")),
        ])
        // With no play in flight a skip only moves the cursor: the next probe starts it.
        h.send(.deviceUnavailable(reason: "busy", problem: .busy), {
            $0.loaded = nil
            $0.handedNext = nil
        }, commands: [
            .startTimer(.deviceRetry, after: 0.25),
        ])
        h.send(.next, {
            $0.cursor = 2
            $0.position = 0
            $0.savedMark = mark(revision: 1, current: 3, phase: .playing)
            $0.savedPosition = 0
            $0.shown = status("waiting", song: 3, index: 3, of: 3, message: "waiting for audio device: busy")
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 2, phase: .playing)),
            .render(status("waiting", song: 3, index: 3, of: 3, message: "waiting for audio device: busy")),
        ])
    }

    func testStopWhileWaitingEndsTheRetries() {
        let h = CoreHarness(playing(2))
        h.deviceBusyOnTrack1(of: 2)
        h.send(.stop, {
            $0.phase = .stopped
            $0.retryDelay = 0.125
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.shown = status("stopped", song: 1, index: 1, of: 2)
        }, commands: [
            .cancelTimer(.deviceRetry),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0)),
            .render(status("stopped", song: 1, index: 1, of: 2)),
        ])
        // A probe answer after the stop starts nothing.
        h.send(.deviceAvailable, commands: [])
    }

    func testPauseWhileWaitingEndsTheRetriesAndPlayStartsAgain() {
        let h = CoreHarness(playing(2))
        h.send(.deviceUnavailable(reason: "gone", problem: .busy), {
            $0.phase = .waitingForDevice(reason: "gone")
            $0.loaded = nil
            $0.handedNext = nil
            $0.retryDelay = 0.25
            $0.shown = status("waiting", song: 1, index: 1, of: 2, message: "waiting for audio device: gone")
        }, commands: [
            .report("waiting for audio device: gone"),
            .startTimer(.deviceRetry, after: 0.125),
            .render(status("waiting", song: 1, index: 1, of: 2, message: "waiting for audio device: gone")),
        ])
        h.send(.pause, {
            $0.phase = .paused
            $0.retryDelay = 0.125
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", song: 1, index: 1, of: 2)
        }, commands: [
            .cancelTimer(.deviceRetry),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 2)),
        ])
        h.send(.timerFired(.deviceRetry, at: 0), commands: [])
        h.reopen(of: 2)
    }

    func testDeviceLostWhilePausedIsQuietAndResumeReopens() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 7, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:07"))
        h.pauseTrack1(of: 2, at: 7, elapsed: "0:07")
        h.send(.deviceUnavailable(reason: "gone", problem: .busy), { $0.loaded = nil; $0.handedNext = nil }, commands: [])
        h.reopen(of: 2, at: 7, elapsed: "0:07")
    }

    func testReportsForStalePlaysAreIgnored() {
        let h = CoreHarness(playing(3))
        h.nextToTrack2Of3()
        h.send(.trackFinished(playID: 1, next: nil), commands: [])
        h.send(.trackFailed(playID: 1, reason: "x"), commands: [])
        h.send(.trackStarted(playID: 2), commands: [])
        h.send(.heard(playID: 1, seconds: 50), commands: [])
    }
}
