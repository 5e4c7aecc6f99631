// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class InterruptionTests: XCTestCase {
    func testAnInterruptionReleasesTheDeviceGrantsOnceClosedAndResumesAtTheHeardFrame() {
        let h = CoreHarness(playing(2))
        h.prepare(.heard(playID: 1, seconds: 31.4159))
        h.send(.interruptBegan(id: "yield-1", reason: "chime"), {
            $0.interruptions = [Interruption(id: "yield-1", reason: "chime")]
            $0.afterInterruption = .playing
            $0.phase = .interrupted(reason: "chime")
            $0.pendingGrants = ["yield-1"]
            $0.releaseToken = 1
            $0.releasedPlay = 1
            $0.nextReleaseToken = 2
            $0.loaded = nil
            $0.handedNext = nil
            $0.shown = $0.view
        }, commands: [.releaseDevice(token: 1), .render(h.stateWith { $0.phase = .interrupted(reason: "chime") }.view)])
        // The release played out a fade: the sound stopped a little after the request.
        h.send(.deviceReleased(token: 1, heard: PlayPosition(playID: 1, seconds: 31.6)), {
            $0.releaseToken = nil
            $0.releasedPlay = nil
            $0.pendingGrants = []
            $0.position = 31.6
            $0.savedPosition = 31.6
        }, commands: [.grant(id: "yield-1"), .persistPlace(h.stateWith { $0.position = 31.6 }.snapshot)])
        h.send(.interruptEnded(id: "yield-1"), {
            $0.interruptions = []
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.nextPlayID = 5
            $0.shown = $0.view
        }, commands: [
            .startTrack(playID: 3, path: "/music/1.flac", at: 31.6, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
            .render(h.stateWith { $0.phase = .playing }.view),
        ])
    }

    func testOverlappingInterruptionsEndOnlyWhenTheLastEnds() {
        let h = CoreHarness(playing(2))
        h.prepare(.interruptBegan(id: "manual", reason: "phone"))
        // A second one while the first release is under way waits for the same release.
        h.send(.interruptBegan(id: "yield-7", reason: "doorbell"), {
            $0.interruptions.append(Interruption(id: "yield-7", reason: "doorbell"))
            $0.phase = .interrupted(reason: "doorbell")
            $0.pendingGrants = ["manual", "yield-7"]
            $0.shown = $0.view
        }, commands: [.render(h.stateWith { $0.phase = .interrupted(reason: "doorbell") }.view)])
        h.send(.deviceReleased(token: 1, heard: nil), { $0.releaseToken = nil; $0.releasedPlay = nil; $0.pendingGrants = [] },
               commands: [.grant(id: "manual"), .grant(id: "yield-7")])
        h.send(.interruptEnded(id: "manual"), {
            $0.interruptions = [Interruption(id: "yield-7", reason: "doorbell")]
        }, commands: [])
        XCTAssertEqual(h.state.phase, .interrupted(reason: "doorbell"))
        let cmds = h.prepare(.interruptEnded(id: "yield-7"))
        XCTAssertEqual(h.state.phase, .playing)
        XCTAssertEqual(cmds.first, .startTrack(playID: 3, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")))
    }

    func testAnInterruptionWhilePausedComesBackPausedAndAPlayMeanwhileComesBackPlaying() {
        let h = CoreHarness(playing(2))
        h.prepare(.pause)
        h.prepare(.interruptBegan(id: "manual", reason: "tts"))
        XCTAssertEqual(h.state.afterInterruption, .paused)
        h.prepare(.deviceReleased(token: 1, heard: nil))
        XCTAssertEqual(h.prepare(.interruptEnded(id: "manual")).filter { if case .startTrack = $0 { return true } else { return false } }, [])
        XCTAssertEqual(h.state.phase, .paused)

        h.prepare(.interruptBegan(id: "manual", reason: "tts"))
        h.send(.play, { $0.afterInterruption = .playing; $0.savedMark = $0.saveMark }, commands: [
            .persistPlace(h.stateWith { $0.afterInterruption = .playing }.snapshot),
        ])
        h.prepare(.deviceReleased(token: 2, heard: nil))
        h.prepare(.interruptEnded(id: "manual"))
        XCTAssertEqual(h.state.phase, .playing)
    }

    func testStopAndSkipWhileInterruptedTouchNoDevice() {
        let h = CoreHarness(playing(3))
        h.prepare(.interruptBegan(id: "manual", reason: "x"))
        h.send(.next, { $0.cursor = 1; $0.savedMark = $0.saveMark; $0.shown = $0.view }, commands: [
            .persistPlace(h.stateWith { $0.cursor = 1 }.snapshot), .render(h.stateWith { $0.cursor = 1 }.view),
        ])
        h.prepare(.stop)
        XCTAssertEqual(h.state.afterInterruption, .stopped)
        h.prepare(.deviceReleased(token: 1, heard: nil))
        let cmds = h.prepare(.interruptEnded(id: "manual"))
        XCTAssertEqual(h.state.phase, .stopped)
        XCTAssertFalse(cmds.contains { if case .startTrack = $0 { return true } else { return false } })
    }

    func testEndingAnInterruptionThatIsNotThereSaysSo() {
        let h = CoreHarness(playing(1))
        h.prepare(.interruptEnded(id: "manual"))
        XCTAssertEqual(h.state.message, "no interruption to end")
        XCTAssertEqual(h.state.phase, .playing)
    }

    func testReportsOfTheReleasedPlayAreIgnoredWhileInterrupted() {
        let h = CoreHarness(playing(2))
        h.prepare(.interruptBegan(id: "manual", reason: "x"))
        h.send(.trackFinished(playID: 1, next: 2), commands: [])
        h.send(.deviceUnavailable(reason: "gone", problem: .lost), commands: [])
        h.send(.heard(playID: 1, seconds: 5), commands: [])
    }

    func testInterruptionWhileWaitingForTheDeviceEndsTheRetriesAndComesBackPlaying() {
        let h = CoreHarness(playing(2))
        h.prepare(.deviceUnavailable(reason: "busy", problem: .busy))
        let cmds = h.prepare(.interruptBegan(id: "manual", reason: "x"))
        XCTAssertEqual(Array(cmds.prefix(2)), [.cancelTimer(.deviceRetry), .releaseDevice(token: 1)])
        XCTAssertEqual(h.state.afterInterruption, .playing)
        XCTAssertEqual(h.state.snapshot.phase, "playing", "saved as playing: a power cut now resumes playing")
    }

    func testPauseReleasesTheDeviceAfterTheDelayAndResumeReopensAtTheSameFrame() {
        let h = CoreHarness(playing(2))
        h.prepare(.heard(playID: 1, seconds: 12.000022675736961))
        let pause = h.prepare(.pause)
        XCTAssertEqual(Array(pause.prefix(2)), [.pauseOutput, .startTimer(.releaseDevice, after: 3)])
        h.send(.timerFired(.releaseDevice, at: 0), {
            $0.loaded = nil
            $0.handedNext = nil
            $0.releaseToken = 1
            $0.releasedPlay = 1
            $0.nextReleaseToken = 2
        }, commands: [.releaseDevice(token: 1)])
        h.send(.deviceReleased(token: 1, heard: nil), { $0.releaseToken = nil; $0.releasedPlay = nil }, commands: [])
        let resume = h.prepare(.play)
        XCTAssertEqual(resume.first, .startTrack(playID: 3, path: "/music/1.flac", at: 12.000022675736961, paused: false,
                                                 next: NextPlay(playID: 4, path: "/music/2.flac")))
        // A release timer that fires after the player resumed does nothing.
        h.send(.timerFired(.releaseDevice, at: 0), commands: [])
    }

    func testAReleaseDelayOfZeroReleasesAtOnce() {
        var settings = Settings()
        settings.releaseDelay = 0
        let h = CoreHarness(playing(2, settings: settings))
        h.prepare(.heard(playID: 1, seconds: 8))
        XCTAssertEqual(h.prepare(.pause).first, .releaseDevice(token: 1))
        XCTAssertNil(h.state.loaded)
        // The fade-out played on a little; resume starts where the sound really stopped.
        h.prepare(.deviceReleased(token: 1, heard: PlayPosition(playID: 1, seconds: 8.215)))
        XCTAssertEqual(h.state.position, 8.215)
        XCTAssertEqual(h.prepare(.play).first, .startTrack(playID: 3, path: "/music/1.flac", at: 8.215, paused: false,
                                                           next: NextPlay(playID: 4, path: "/music/2.flac")))
    }

    func testAReleaseReportArrivingAfterANewPlayDoesNotMoveIt() {
        var settings = Settings()
        settings.releaseDelay = 0
        let h = CoreHarness(playing(2, settings: settings))
        h.prepare(.pause)
        h.prepare(.play)
        h.send(.deviceReleased(token: 1, heard: PlayPosition(playID: 1, seconds: 0.2)), {
            $0.releaseToken = nil
            $0.releasedPlay = nil
        }, commands: [])
    }

    func testALostDevicePausesWhenResumingAfterLossIsOff() {
        var settings = Settings()
        settings.resumeAfterDeviceLoss = false
        let h = CoreHarness(playing(2, settings: settings))
        let cmds = h.prepare(.deviceUnavailable(reason: "unplugged", problem: .lost))
        XCTAssertEqual(h.state.phase, .paused)
        XCTAssertEqual(cmds.first, .report("audio device lost, paused: unplugged"))
        // Busy still waits: another program will let go.
        let w = CoreHarness(playing(2, settings: settings))
        w.prepare(.deviceUnavailable(reason: "busy", problem: .busy))
        XCTAssertEqual(w.state.phase, .waitingForDevice(reason: "busy"))
    }

    func testAFormatTheDeviceRefusesSkipsTheTrack() {
        let h = CoreHarness(playing(2))
        let cmds = h.prepare(.deviceUnavailable(reason: "no sample format accepted", problem: .unsupported))
        XCTAssertEqual(h.state.currentTrack?.id, 2)
        XCTAssertEqual(cmds.first, .report("skipped /music/1.flac: the audio device cannot play it (no sample format accepted)"))
    }

    func testBootVolumeOverridesTheSavedVolume() {
        var settings = Settings()
        settings.bootVolume = 30
        let h = CoreHarness(State(settings: settings))
        let cmds = h.prepare(.restore(Snapshot(tracks: [info(1)], current: 0, phase: "paused", volume: 90)))
        XCTAssertEqual(cmds.first, .setVolume(30))
        XCTAssertEqual(h.state.volume, 30)
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
        XCTAssertEqual(parse("events"), .success(.events))
        XCTAssertEqual(parse("version"), .success(.version))
    }

    func testMistakesSayWhatIsExpected() {
        XCTAssertEqual(parse(""), .failure(ControlError("empty command")))
        XCTAssertEqual(parse("play now"), .failure(ControlError("play takes no arguments")))
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
        h.prepare(.setVolume(90))
        var settings = h.state.settings
        settings.volumeMax = 60
        settings.saveInterval = 2
        h.send(.reconfigured(settings), {
            $0.settings = settings
            $0.volume = 60
            $0.savedMark = $0.saveMark
            $0.shown = $0.view
        }, commands: [
            .setVolume(60),
            .persistPlace(h.stateWith { $0.settings = settings; $0.volume = 60 }.snapshot),
            .render(h.stateWith { $0.volume = 60 }.view),
        ])
        XCTAssertEqual(h.state.phase, .playing)
        XCTAssertEqual(h.state.loaded, PlayRef(playID: 1, trackID: 1), "the engine's play is untouched")
    }
}
