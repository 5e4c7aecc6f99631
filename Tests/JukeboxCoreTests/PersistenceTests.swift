// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class PersistencePolicyTests: XCTestCase {
    func testWhilePlayingThePositionIsSavedEveryFiveSecondsAndNoMoreOften() {
        let h = CoreHarness(playing(2))
        var saves: [Double] = []
        for second in 1...16 {
            h.prepare(.heard(playID: 1, seconds: Double(second)))
            for snap in h.prepare(.tick(now: Double(second))).compactMap(\.savedSnapshot) { saves.append(snap.position) }
        }
        XCTAssertEqual(saves, [5, 10, 15])
    }

    func testTheQueueIsRewrittenOnlyWhenItChangesOtherwiseOnlyThePlace() {
        let h = CoreHarness(playing(3))
        func saves(_ event: Event) -> [Command] { h.prepare(event).filter { $0.savedSnapshot != nil } }
        XCTAssertEqual(saves(.next), [.persistPlace(h.state.snapshot)], "a new current track is a place")
        XCTAssertEqual(saves(.pause), [.persistPlace(h.state.snapshot)])
        XCTAssertEqual(saves(.setRepeat(.all)), [.persistPlace(h.state.snapshot)])
        XCTAssertEqual(saves(.setVolume(40)), [.persistPlace(h.state.snapshot)], "a volume asked for by name is saved at once")
        XCTAssertEqual(saves(.add([info(9)])), [.persist(h.state.snapshot)], "the queue changed")
        XCTAssertEqual(saves(.setShuffle(true, seed: 7)), [.persist(h.state.snapshot)], "the order changed")
        XCTAssertEqual(saves(.clear), [.persist(h.state.snapshot)])
    }

    func testAnEncoderSpinIsOneSaveOnceTheKnobIsStill() {
        var settings = Settings()
        settings.encoderAcceleration = false
        let h = CoreHarness(playing(1, settings: settings))
        let cw: [(Bool, Bool)] = [(false, true), (false, false), (true, false), (true, true)]
        var t = 1.0, commands: [Command] = []
        for _ in 0..<10 { for (a, b) in cw { t += 0.01; commands += h.prepare(.encoderEdge(a: a, b: b, at: t)) } }
        XCTAssertNotEqual(h.state.volume, 100, "the knob turned the volume")
        XCTAssertFalse(commands.contains { $0.savedSnapshot != nil }, "no save while it turns")
        XCTAssertTrue(commands.contains(.startTimer(.saveVolume, after: State.volumeSaveDelay)), "each detent pushes the save back")
        XCTAssertEqual(h.prepare(.timerFired(.saveVolume, at: t + 1)).filter { $0.savedSnapshot != nil }, [.persistPlace(h.state.snapshot)])
        XCTAssertEqual(h.prepare(.timerFired(.saveVolume, at: t + 2)).filter { $0.savedSnapshot != nil }, [], "nothing left to save")
    }

    func testNothingIsWrittenWhilePausedOrStopped() {
        let h = CoreHarness(playing(2))
        h.prepare(.heard(playID: 1, seconds: 3))
        h.prepare(.pause)
        for second in 1...30 {
            XCTAssertFalse(h.prepare(.tick(now: Double(second))).contains { $0.savedSnapshot != nil })
        }
    }

    func testWaitingForTheDeviceIsSavedAsPlayingSoNoExtraWriteHappens() {
        let h = CoreHarness(playing(2))
        let cmds = h.prepare(.deviceUnavailable(reason: "busy", problem: .busy))
        XCTAssertFalse(cmds.contains { $0.savedSnapshot != nil })
        XCTAssertEqual(h.state.snapshot.phase, "playing")
    }

    func testQuitSavesTheHeardPositionReleasesTheDeviceAndExits() {
        let h = CoreHarness(playing(2))
        h.prepare(.heard(playID: 1, seconds: 12.75))
        let cmds = h.prepare(.quit)
        var expected = h.state.snapshot
        expected.position = 12.75
        XCTAssertEqual(cmds.filter { if case .render = $0 { return false } else { return true } },
                       [.stopOutput, .clearNext, .persistPlace(expected), .exit(code: 0)].filter { $0 != .clearNext })
    }

    func testASaveErrorIsReportedOnceUntilItChanges() {
        let h = CoreHarness(queued(1))
        h.send(.saved(error: "disk full"), { $0.saveError = "disk full" }, commands: [.report("could not save state: disk full")])
        h.send(.saved(error: "disk full"), commands: [])
        h.send(.saved(error: nil), { $0.saveError = nil }, commands: [])
    }

    func testRestoreOfAPlayingStateResumesAtTheSavedPosition() {
        let snap = Snapshot(tracks: [info(1), info(2)], current: 1, position: 33.5, phase: "playing",
                            repeatMode: .all, volume: 60)
        let h = CoreHarness()
        let cmds = h.prepare(.restore(snap))
        XCTAssertEqual(cmds, [
            .setVolume(60),
            .startTrack(playID: 1, path: "/music/2.flac", at: 33.5, paused: false, next: NextPlay(playID: 2, path: "/music/1.flac")),
            .render(h.state.view),
        ])
        XCTAssertEqual(h.state.snapshot, snap, "what was read is what would be written")
    }

    func testRestoreWithResumePausedComesBackPausedWithoutTouchingTheDevice() {
        var settings = Settings()
        settings.resumePlaying = false
        let h = CoreHarness(State(settings: settings))
        let snap = Snapshot(tracks: [info(1)], current: 0, position: 10, phase: "playing")
        let cmds = h.prepare(.restore(snap))
        XCTAssertEqual(h.state.phase, .paused)
        XCTAssertEqual(h.state.position, 10)
        XCTAssertEqual(cmds, [.setVolume(100), .render(h.state.view)])
        XCTAssertEqual(h.prepare(.play).first, .startTrack(playID: 1, path: "/music/1.flac", at: 10, paused: false))
    }

    func testRestoreCanRewindAFewSeconds() {
        var settings = Settings()
        settings.resumeRewind = 5
        let h = CoreHarness(State(settings: settings))
        XCTAssertEqual(h.prepare(.restore(Snapshot(tracks: [info(1)], current: 0, position: 33, phase: "playing"))).dropFirst().first,
                       .startTrack(playID: 1, path: "/music/1.flac", at: 28, paused: false))
        let early = CoreHarness(State(settings: settings))
        early.prepare(.restore(Snapshot(tracks: [info(1)], current: 0, position: 3, phase: "paused")))
        XCTAssertEqual(early.state.position, 0)
    }

    func testRestoreKeepsTheShuffleOrder() {
        let snap = Snapshot(tracks: [info(1), info(2), info(3)], order: [2, 0, 1], current: 0, position: 1,
                            phase: "paused", shuffle: true, shuffleSeed: 5)
        let h = CoreHarness()
        h.prepare(.restore(snap))
        XCTAssertEqual(h.state.order, [3, 1, 2])
        XCTAssertEqual(h.state.cursor, 1)
        XCTAssertEqual(h.state.snapshot, snap)
    }

    func testSnapshotLeavingOutEntriesMovesCurrentToTheNextKeptOne() {
        let snap = Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 50, phase: "playing")
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
        let boot = h.prepare(.restore(Snapshot(tracks: [info(1), info(2)], current: 0, position: 40, phase: "playing")))
        XCTAssertEqual(Array(boot.prefix(2)), [.setVolume(30), .startTrack(playID: 1, path: "/usr/share/jukebox/ready.wav", at: 0, paused: false)])
        XCTAssertEqual(h.prepare(.trackStarted(playID: 1)).filter { if case .startTrack = $0 { return true } else { return false } }, [])
        let after = h.prepare(.trackFinished(playID: 1, next: nil))
        XCTAssertEqual(after.first, .startTrack(playID: 2, path: "/music/1.flac", at: 40, paused: false, next: NextPlay(playID: 3, path: "/music/2.flac")))
        // Only once: a later stop and play goes straight to the music.
        h.prepare(.stop)
        XCTAssertEqual(h.prepare(.play).first, .startTrack(playID: 4, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 5, path: "/music/2.flac")))
    }

    func testAChimeThatCannotPlayIsSkippedWithAMessage() {
        let h = CoreHarness(chimeState())
        h.prepare(.restore(Snapshot(tracks: [info(1)], current: 0, position: 5, phase: "playing")))
        let cmds = h.prepare(.trackFailed(playID: 1, reason: "no such file"))
        XCTAssertEqual(Array(cmds.prefix(2)), [.report("startup chime could not be played"),
                                               .startTrack(playID: 2, path: "/music/1.flac", at: 5, paused: false)])
    }

    func testABusyDeviceAtBootWaitsAndThenPlaysTheMusic() {
        let h = CoreHarness(chimeState())
        h.prepare(.restore(Snapshot(tracks: [info(1)], current: 0, position: 5, phase: "playing")))
        h.prepare(.deviceUnavailable(reason: "busy", problem: .busy))
        XCTAssertEqual(h.state.phase, .waitingForDevice(reason: "busy"))
        XCTAssertEqual(h.prepare(.timerFired(.deviceRetry, at: 1)), [.probeDevice, .startTimer(.deviceRetry, after: 2.5)])
        XCTAssertEqual(h.prepare(.deviceAvailable).prefix(2), [.cancelTimer(.deviceRetry), .startTrack(playID: 2, path: "/music/1.flac", at: 5, paused: false)])
    }

    func testResumingPausedWaitsForPlayBeforeTheChime() {
        var s = chimeState()
        s.settings.resumePlaying = false
        let h = CoreHarness(s)
        XCTAssertEqual(h.prepare(.restore(Snapshot(tracks: [info(1)], current: 0, position: 5, phase: "playing"))), [.setVolume(30), .render(h.state.view)])
        XCTAssertEqual(h.prepare(.play).first, .startTrack(playID: 1, path: "/usr/share/jukebox/ready.wav", at: 0, paused: false))
    }
}
