// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class InterruptionTests: XCTestCase {
    func testAnInterruptionReleasesTheDeviceGrantsOnceClosedAndResumesAtTheHeardFrame() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 31.4159, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:31"))
        h.interruptTrack1(of: 2, id: "yield-1", reason: "chime", elapsed: "0:31")
        // The release played out a fade: the sound stopped a little after the request.
        h.releasedTrack1Of2(at: 31.6, granting: "yield-1")
        h.interruptionEndsPlayingTrack1(of: 2, id: "yield-1", at: 31.6, elapsed: "0:31")
    }

    func testOverlappingInterruptionsEndOnlyWhenTheLastEnds() {
        let h = CoreHarness(playing(2))
        h.interruptTrack1(of: 2, id: "manual", reason: "phone")
        // A second one while the first release is under way waits for the same release.
        h.send(.interruptBegan(id: "yield-7", reason: "doorbell"), {
            $0.phase = .interrupted(reason: "doorbell")
            $0.interruptions = [Interruption(id: "manual", reason: "phone"), Interruption(id: "yield-7", reason: "doorbell")]
            $0.pendingGrants = ["manual", "yield-7"]
            $0.shown = status("interrupted", song: 1, index: 1, of: 2, message: "interrupted: doorbell")
        }, commands: [
            .render(status("interrupted", song: 1, index: 1, of: 2, message: "interrupted: doorbell")),
        ])
        h.send(.deviceReleased(token: 1, heard: nil), { $0.releaseToken = nil; $0.releasedPlay = nil; $0.pendingGrants = [] },
               commands: [.grant(id: "manual"), .grant(id: "yield-7")])
        h.send(.interruptEnded(id: "manual"), {
            $0.interruptions = [Interruption(id: "yield-7", reason: "doorbell")]
        }, commands: [])
        XCTAssertEqual(h.state.phase, .interrupted(reason: "doorbell"))
        h.interruptionEndsPlayingTrack1(of: 2, id: "yield-7")
    }

    func testAnInterruptionWhilePausedComesBackPausedAndAPlayMeanwhileComesBackPlaying() {
        let h = CoreHarness(playing(2))
        h.pauseTrack1(of: 2)
        h.interruptTrack1(of: 2, id: "manual", reason: "tts", after: .paused)
        h.grantAfterRelease("manual")
        h.send(.interruptEnded(id: "manual"), {
            $0.phase = .paused
            $0.interruptions = []
            $0.shown = status("paused", song: 1, index: 1, of: 2)
        }, commands: [
            .render(status("paused", song: 1, index: 1, of: 2)),
        ])

        h.send(.interruptBegan(id: "manual", reason: "tts"), {
            $0.phase = .interrupted(reason: "tts")
            $0.interruptions = [Interruption(id: "manual", reason: "tts")]
            $0.pendingGrants = ["manual"]
            $0.releaseToken = 2
            $0.nextReleaseToken = 3
            $0.shown = status("interrupted", song: 1, index: 1, of: 2, message: "interrupted: tts")
        }, commands: [
            .releaseDevice(token: 2),
            .render(status("interrupted", song: 1, index: 1, of: 2, message: "interrupted: tts")),
        ])
        h.send(.play, {
            $0.afterInterruption = .playing
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
        ])
        h.send(.deviceReleased(token: 2, heard: nil), {
            $0.pendingGrants = []
            $0.releaseToken = nil
        }, commands: [
            .grant(id: "manual"),
        ])
        h.interruptionEndsPlayingTrack1(of: 2, id: "manual")
    }

    func testStopAndSkipWhileInterruptedTouchNoDevice() {
        let h = CoreHarness(playing(3))
        h.interruptTrack1(of: 3, id: "manual", reason: "x")
        h.send(.next, {
            $0.cursor = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("interrupted", song: 2, index: 2, of: 3, message: "interrupted: x")
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing)),
            .render(status("interrupted", song: 2, index: 2, of: 3, message: "interrupted: x")),
        ])
        h.send(.stop, {
            $0.afterInterruption = .stopped
            $0.savedMark = mark(revision: 1, current: 2, phase: .stopped)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1)),
        ])
        h.grantAfterRelease("manual")
        h.send(.interruptEnded(id: "manual"), {
            $0.phase = .stopped
            $0.interruptions = []
            $0.shown = status("stopped", song: 2, index: 2, of: 3)
        }, commands: [
            .render(status("stopped", song: 2, index: 2, of: 3)),
        ])
    }

    func testEndingAnInterruptionThatIsNotThereSaysSo() {
        let h = CoreHarness(playing(1))
        h.send(.interruptEnded(id: "manual"), {
            $0.message = "no interruption to end"
            $0.shown = status("playing", song: 1, index: 1, of: 1, message: "no interruption to end")
        }, commands: [
            .render(status("playing", song: 1, index: 1, of: 1, message: "no interruption to end")),
        ])
        XCTAssertEqual(h.state.message, "no interruption to end")
    }

    func testReportsOfTheReleasedPlayAreIgnoredWhileInterrupted() {
        let h = CoreHarness(playing(2))
        h.interruptTrack1(of: 2, id: "manual", reason: "x")
        h.send(.trackFinished(playID: 1, next: 2), commands: [])
        h.send(.deviceUnavailable(reason: "gone", problem: .lost), commands: [])
        h.send(.heard(playID: 1, seconds: 5), commands: [])
    }

    func testInterruptionWhileWaitingForTheDeviceEndsTheRetriesAndComesBackPlaying() {
        let h = CoreHarness(playing(2))
        h.deviceBusyOnTrack1(of: 2)
        h.send(.interruptBegan(id: "manual", reason: "x"), {
            $0.phase = .interrupted(reason: "x")
            $0.interruptions = [Interruption(id: "manual", reason: "x")]
            $0.afterInterruption = .playing
            $0.pendingGrants = ["manual"]
            $0.releaseToken = 1
            $0.nextReleaseToken = 2
            $0.retryDelay = 0.125
            $0.shown = status("interrupted", song: 1, index: 1, of: 2, message: "interrupted: x")
        }, commands: [
            .cancelTimer(.deviceRetry),
            .releaseDevice(token: 1),
            .render(status("interrupted", song: 1, index: 1, of: 2, message: "interrupted: x")),
        ])
        XCTAssertEqual(h.state.snapshot.phase, .playing, "saved as playing: a power cut now resumes playing")
    }

    func testPauseReleasesTheDeviceAfterTheDelayAndResumeReopensAtTheSameFrame() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 12.000022675736961, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:12"))
        h.pauseTrack1(of: 2, at: 12.000022675736961, elapsed: "0:12")
        h.send(.timerFired(.releaseDevice, at: 0), {
            $0.loaded = nil
            $0.handedNext = nil
            $0.releaseToken = 1
            $0.releasedPlay = 1
            $0.nextReleaseToken = 2
        }, commands: [.releaseDevice(token: 1)])
        h.send(.deviceReleased(token: 1, heard: nil), { $0.releaseToken = nil; $0.releasedPlay = nil }, commands: [])
        h.reopen(of: 2, at: 12.000022675736961, elapsed: "0:12")
        // A release timer that fires after the player resumed does nothing.
        h.send(.timerFired(.releaseDevice, at: 0), commands: [])
    }

    func testAReleaseDelayOfZeroReleasesAtOnce() {
        var settings = Settings()
        settings.releaseDelay = 0
        let h = CoreHarness(playing(2, settings: settings))
        h.heard(1, at: 8, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:08"))
        h.send(.pause, {
            $0.phase = .paused
            $0.releaseToken = 1
            $0.releasedPlay = 1
            $0.nextReleaseToken = 2
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 8
            $0.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:08")
        }, commands: [
            .releaseDevice(token: 1),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 8, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 2, elapsed: "0:08")),
        ])
        // The fade-out played on a little; resume starts where the sound really stopped.
        h.send(.deviceReleased(token: 1, heard: PlayPosition(playID: 1, seconds: 8.215)), {
            $0.position = 8.215
            $0.releaseToken = nil
            $0.releasedPlay = nil
            $0.savedPosition = 8.215
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 8.215, phase: .paused)),
        ])
        h.reopen(of: 2, at: 8.215, elapsed: "0:08")
    }

    func testAReleaseReportArrivingAfterANewPlayDoesNotMoveIt() {
        var settings = Settings()
        settings.releaseDelay = 0
        let h = CoreHarness(playing(2, settings: settings))
        h.send(.pause, {
            $0.phase = .paused
            $0.releaseToken = 1
            $0.releasedPlay = 1
            $0.nextReleaseToken = 2
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", song: 1, index: 1, of: 2)
        }, commands: [
            .releaseDevice(token: 1),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 2)),
        ])
        h.reopen(of: 2)
        h.send(.deviceReleased(token: 1, heard: PlayPosition(playID: 1, seconds: 0.2)), {
            $0.releaseToken = nil
            $0.releasedPlay = nil
        }, commands: [])
    }

    func testALostDevicePausesWhenResumingAfterLossIsOff() {
        var settings = Settings()
        settings.resumeAfterDeviceLoss = false
        let h = CoreHarness(playing(2, settings: settings))
        h.send(.deviceUnavailable(reason: "unplugged", problem: .lost), {
            $0.phase = .paused
            $0.message = "audio device lost: unplugged"
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", song: 1, index: 1, of: 2, message: "audio device lost: unplugged")
        }, commands: [
            .report("audio device lost, paused: unplugged"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 2, message: "audio device lost: unplugged")),
        ])
        // Busy still waits: another program will let go.
        let w = CoreHarness(playing(2, settings: settings))
        w.deviceBusyOnTrack1(of: 2)
        XCTAssertEqual(w.state.phase, .waitingForDevice(reason: "busy"))
    }

    func testAFormatTheDeviceRefusesSkipsTheTrack() {
        let h = CoreHarness(playing(2))
        h.track1FailsAndTrack2Plays(of: 2, reason: "the audio device cannot play it (no sample format accepted)",
                                    by: .deviceUnavailable(reason: "no sample format accepted", problem: .unsupported))
    }

    func testBootVolumeOverridesTheSavedVolume() {
        var settings = Settings()
        settings.bootVolume = 30
        let h = CoreHarness(State(settings: settings))
        h.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, phase: .paused, volume: 90), volume: 30)
    }
}

final class ControlCommandTests: XCTestCase {
    func parse(_ s: String) -> Result<ControlCommand, ControlError> { ControlCommand.parse(s, seed: 5) }

    func testEveryCommandParses() {
        XCTAssertEqual(parse("status"), .success(.status))
        XCTAssertEqual(parse("  play "), .success(.intent(.play)))
        XCTAssertEqual(parse("PAUSE"), .success(.intent(.pause)))
        XCTAssertEqual(parse("toggle"), .success(.intent(.togglePlayPause)))
        XCTAssertEqual(parse("stop"), .success(.intent(.stop)))
        XCTAssertEqual(parse("next"), .success(.intent(.next)))
        XCTAssertEqual(parse("prev"), .success(.intent(.previous)))
        XCTAssertEqual(parse("seek 1:30"), .success(.intent(.seek(to: 90))))
        XCTAssertEqual(parse("seek -10"), .success(.intent(.seekBy(-10))))
        XCTAssertEqual(parse("vol 40"), .success(.intent(.setVolume(40))))
        XCTAssertEqual(parse("vol +5"), .success(.intent(.changeVolume(by: 5))))
        XCTAssertEqual(parse("vol -5"), .success(.intent(.changeVolume(by: -5))))
        XCTAssertEqual(parse("shuffle on"), .success(.intent(.setShuffle(true, seed: 5))))
        XCTAssertEqual(parse("repeat all"), .success(.intent(.setRepeat(.all))))
        XCTAssertEqual(parse("interrupt begin phone call"), .success(.interruptBegin(reason: "phone call")))
        XCTAssertEqual(parse("interrupt begin"), .success(.interruptBegin(reason: "interrupt")))
        XCTAssertEqual(parse("interrupt end"), .success(.interruptEnd))
        XCTAssertEqual(parse("yield begin chime"), .success(.yieldBegin(reason: "chime")))
        XCTAssertEqual(parse("yield end"), .success(.yieldEnd))
        XCTAssertEqual(parse("help"), .success(.help))
        XCTAssertEqual(parse("status --json"), .success(.statusJSON))
        XCTAssertEqual(parse("queue"), .success(.queue(page: 1)))
        XCTAssertEqual(parse("queue 3"), .success(.queue(page: 3)))
        XCTAssertEqual(parse("add /music/My Album"), .success(.add(path: "/music/My Album")))
        XCTAssertEqual(parse("load  /music/list.m3u "), .success(.load(path: "/music/list.m3u")))
        XCTAssertEqual(parse("clear"), .success(.intent(.clear)))
        XCTAssertEqual(parse("save"), .success(.save))
        XCTAssertEqual(parse("diag"), .success(.diag))
        XCTAssertEqual(parse("log"), .success(.log(count: 20)))
        XCTAssertEqual(parse("log 5"), .success(.log(count: 5)))
        XCTAssertEqual(parse("events"), .success(.events(json: false)))
        XCTAssertEqual(parse("events --json"), .success(.events(json: true)))
        XCTAssertEqual(parse("events --xml"), .failure(ControlError("events takes no arguments")))
        XCTAssertEqual(parse("version"), .success(.version))
    }

    func testMistakesSayWhatIsExpected() {
        XCTAssertEqual(parse(""), .failure(ControlError("empty command")))
        XCTAssertEqual(parse("pause now"), .failure(ControlError("pause takes no arguments")))
        // `play` takes a queue position (`play N`), nothing else.
        XCTAssertEqual(parse("play now"), .failure(ControlError("usage: play [N] (a queue position from 1)")))
        XCTAssertEqual(parse("seek soon"), .failure(ControlError("usage: seek [+|-]m:ss")))
        XCTAssertEqual(parse("vol 500"), .failure(ControlError("usage: vol [+|-]N (0-100)")))
        XCTAssertEqual(parse("shuffle maybe"), .failure(ControlError("usage: shuffle on|off")))
        XCTAssertEqual(parse("repeat twice"), .failure(ControlError("usage: repeat off|one|all")))
        XCTAssertEqual(parse("interrupt"), .failure(ControlError("usage: interrupt begin [reason] | interrupt end")))
        XCTAssertEqual(parse("queue zero"), .failure(ControlError("usage: queue [page]")))
        XCTAssertEqual(parse("add"), .failure(ControlError("usage: add PATH")))
        XCTAssertEqual(parse("log 0"), .failure(ControlError("usage: log [N] (1-1000)")))
        XCTAssertEqual(parse("\u{1}\u{2}garbage"), .failure(ControlError("unknown command \"\u{1}\u{2}garbage\" (try: help)")))
    }
}

final class ReconfigureTests: XCTestCase {
    func testANewConfigurationAppliesWithoutTouchingPlayback() {
        let h = CoreHarness(playing(2))
        h.setVolume(90, playingTrack1Of: 2)
        var settings = h.state.settings
        settings.volumeMax = 60
        settings.saveInterval = 2
        h.setVolume(60, playingTrack1Of: 2, by: .reconfigured(settings), also: {
            $0.settings.saveInterval = 2
            $0.settings.volumeMax = 60
        })
        XCTAssertEqual(h.state.loaded, PlayRef(playID: 1, trackID: 1), "the engine's play is untouched")
    }
}
