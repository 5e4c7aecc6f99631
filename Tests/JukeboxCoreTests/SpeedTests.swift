// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import Foundation
import JukeboxTestSupport
import XCTest

/// Playback speed: which speed a play gets (a folder's, a card's, `speed X`), carried by
/// `startTrack` and `setNext` (nil at 1: no stretcher, bit-exact), and `speed X` while playing.
final class SpeedTests: XCTestCase {
    private func settings(_ speeds: [String: Double]) -> Settings {
        var settings = Settings()
        settings.speeds = speeds
        return settings
    }

    func testAFolderSpeedGoesWithThePlayAndItsSuccessor() {
        let h = CoreHarness(queued(3, settings: settings(["/music": 1.25])))
        h.playFromStopped(3, speed: 1.25)
    }

    func testNoSpeedSendsNone() {
        let h = CoreHarness(queued(3, settings: settings(["/elsewhere": 1.5])))
        h.playFromStopped(3)
    }

    func testTheInnermostFolderWinsAndStreamsPlayAt1() {
        var s = queued(3, settings: settings(["/": 1.5, "/music": 1, "/music/2.flac": 2]))
        XCTAssertNil(s.playSpeed(at: 0), "/music at 1 wins over / at 1.5")
        XCTAssertEqual(s.playSpeed(at: 1), 2)
        s.queue[2].info.path = "http://radio.example/live"
        XCTAssertNil(s.playSpeed(at: 2), "a stream plays at 1")
        s.queueSpeed = 1.75
        XCTAssertEqual(s.playSpeed(at: 0), 1.75, "the queue's speed wins over the folders'")
        XCTAssertNil(s.playSpeed(at: 2), "a stream plays at 1 whatever the queue's speed")
    }

    /// Playing track 1 of 3 at 1, heard at 0:30, its successor handed as play 2.
    private func playingAt30() -> CoreHarness {
        let h = CoreHarness(queued(3))
        h.playFromStopped(3)
        h.send(.heard(playID: 1, seconds: 30), {
            $0.position = 30
            $0.shown = status("playing", song: 1, index: 1, of: 3, elapsed: "0:30")
        }, commands: [.render(status("playing", song: 1, index: 1, of: 3, elapsed: "0:30"))])
        return h
    }

    /// `speed X` (nil: default) on track 1 of 3, play 1 heard at 0:30 and `phase`: the play
    /// changes in place (no new play), its successor is handed again as play `nextPlay`, and
    /// the queue file is written with the speed (it is the queue's).
    private func changeSpeed(_ h: CoreHarness, to speed: Double?, _ phase: SavedPhase, nextPlay: UInt64,
                             file: StaticString = #filePath, line: UInt = #line) {
        let word = phase == .paused ? "paused" : "playing"
        let shown = speed.map(Speed.text)
        h.send(.setSpeed(speed), file: file, line: line, {
            $0.queueSpeed = speed
            $0.nextPlayID = nextPlay + 1
            $0.handedNext = PlayRef(playID: nextPlay, trackID: 2)
            $0.handedBefore = HandedBefore(ref: PlayRef(playID: nextPlay - 1, trackID: 2), after: 1)
            $0.savedMark = mark(revision: 1, current: 1, phase: phase, speed: speed)
            $0.savedPosition = 30
            $0.shown = status(word, song: 1, index: 1, of: 3, elapsed: "0:30", speed: shown)
        }, commands: [
            .setSpeed(playID: 1, speed: speed),
            .setNext(playID: nextPlay, path: "/music/2.flac", speed: speed),
            .persist(Snapshot(tracks: infos(3), current: 0, position: 30, phase: phase, speed: speed)),
            .render(status(word, song: 1, index: 1, of: 3, elapsed: "0:30", speed: shown)),
        ])
    }

    func testSpeedWhilePlayingChangesInPlaceAndHandsTheSuccessorAgain() {
        let h = playingAt30()
        changeSpeed(h, to: 1.25, .playing, nextPlay: 3)
        changeSpeed(h, to: 1.5, .playing, nextPlay: 4)
        // The same speed again changes nothing; `speed default` goes back to 1 (nil: the
        // stretcher taken out, bit-exact again), for the play and its successor.
        h.send(.setSpeed(1.5), { _ in }, commands: [])
        changeSpeed(h, to: nil, .playing, nextPlay: 5)
    }

    func testSpeedWhilePausedChangesThePausedPlayInPlace() {
        let h = playingAt30()
        h.send(.pause, {
            $0.phase = .paused
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 30
            $0.shown = status("paused", song: 1, index: 1, of: 3, elapsed: "0:30")
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: infos(3), current: 0, position: 30, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 3, elapsed: "0:30")),
        ])
        // Still paused, at the same place: the resume plays at 1.25.
        changeSpeed(h, to: 1.25, .paused, nextPlay: 3)
    }

    func testASuccessorAtItsOwnSpeedIsHandedAgainAloneOrKept() {
        // Track 1's folder plays at 1.5, the rest at 1: `speed 1.5` leaves the play as it is and
        // hands only the successor again, at 1.5.
        var s = queued(3, settings: settings(["/music/1.flac": 1.5]))
        let started = reduce(&s, .play)
        XCTAssertEqual(started.first, .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false,
                                                  next: NextPlay(playID: 2, path: "/music/2.flac"), speed: 1.5))
        var expected = s
        expected.queueSpeed = 1.5
        expected.nextPlayID = 4
        expected.handedNext = PlayRef(playID: 3, trackID: 2)
        expected.handedBefore = HandedBefore(ref: PlayRef(playID: 2, trackID: 2), after: 1)
        expected.savedMark = mark(revision: 1, current: 1, phase: .playing, speed: 1.5)
        XCTAssertEqual(reduce(&s, .setSpeed(1.5)), [
            .setNext(playID: 3, path: "/music/2.flac", speed: 1.5),
            .persist(Snapshot(tracks: infos(3), current: 0, phase: .playing, speed: 1.5)),
        ])
        XCTAssertEqual(s, expected)
        // Every track's folder at 1.25: `speed 1.25` changes no play; the successor keeps its play.
        var same = queued(3, settings: settings(["/music": 1.25]))
        _ = reduce(&same, .play)
        expected = same
        expected.queueSpeed = 1.25
        expected.savedMark = mark(revision: 1, current: 1, phase: .playing, speed: 1.25)
        XCTAssertEqual(reduce(&same, .setSpeed(1.25)), [.persist(Snapshot(tracks: infos(3), current: 0, phase: .playing, speed: 1.25))])
        XCTAssertEqual(same, expected)
    }

    func testAConfigReloadWithOtherFolderSpeedsChangesThePlayInPlace() {
        let h = playingAt30()
        // The Settings page (or an edit and `reload`) gives /music 1.25: the play goes on at it.
        let faster = settings(["/music": 1.25])
        h.send(.reconfigured(faster), {
            $0.settings = faster
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 2)
            $0.handedBefore = HandedBefore(ref: PlayRef(playID: 2, trackID: 2), after: 1)
            $0.shown = status("playing", song: 1, index: 1, of: 3, elapsed: "0:30", speed: "1.25")
        }, commands: [
            .setSpeed(playID: 1, speed: 1.25),
            .setNext(playID: 3, path: "/music/2.flac", speed: 1.25),
            .render(status("playing", song: 1, index: 1, of: 3, elapsed: "0:30", speed: "1.25")),
        ])
        // Another folder's speed: nothing playing changes.
        let other = settings(["/music": 1.25, "/elsewhere": 2])
        h.send(.reconfigured(other), { $0.settings = other }, commands: [])
    }

    func testSpeedWhileStoppedIsKeptForThePlay() {
        let h = CoreHarness(queued(3))
        h.send(.setSpeed(1.25), {
            $0.queueSpeed = 1.25
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped, speed: 1.25)
        }, commands: [.persist(Snapshot(tracks: infos(3), speed: 1.25))])
        h.playFromStopped(3, speed: 1.25)
    }

    func testTheQueuesSpeedIsSavedAndRestored() {
        var s = queued(3)
        s.queueSpeed = 1.5
        XCTAssertEqual(s.snapshot.speed, 1.5)
        var restored = State()
        _ = reduce(&restored, .restore(s.snapshot))
        XCTAssertEqual(restored.queueSpeed, 1.5)
        // In the file: the key only when there is a speed; a bad one is dropped with a reason.
        let json = #"{"version": 1, "tracks": [], "speed": 5}"#
        let file = try? JSONDecoder().decode(SnapshotFile.self, from: Data(json.utf8))
        XCTAssertNil(file?.snapshot.speed)
        XCTAssertEqual(file?.problems, ["speed: not 0.75 to 2"])
        let good = try? JSONDecoder().decode(Snapshot.self, from: Data(#"{"version": 1, "tracks": [], "speed": 1.25}"#.utf8))
        XCTAssertEqual(good?.speed, 1.25)
        let plain = (try? JSONEncoder().encode(Snapshot())).map { String(decoding: $0, as: UTF8.self) } ?? ""
        XCTAssertFalse(plain.contains("speed"), plain)
    }

    func testANewQueueStartsWithoutTheSpeed() {
        let h = CoreHarness(queued(3))
        var state = h.state
        state.queueSpeed = 2
        XCTAssertEqual(state.playSpeed(at: 0), 2)
        var step = Step()
        state.replaceQueue(infos(2), from: nil, &step)
        XCTAssertNil(state.queueSpeed, "a load by hand plays at the folders' speeds")
        state.replaceQueue(infos(2), from: nil, speed: 1.25, &step)
        XCTAssertEqual(state.queueSpeed, 1.25, "a card's speed")
    }

    func testTheControlLanguage() {
        XCTAssertEqual(try ControlCommand.parse("speed 1.25", seed: 0).get(), .intent(.setSpeed(1.25)))
        XCTAssertEqual(try ControlCommand.parse("speed 2x", seed: 0).get(), .intent(.setSpeed(2)))
        XCTAssertEqual(try ControlCommand.parse("speed default", seed: 0).get(), .intent(.setSpeed(nil)))
        XCTAssertEqual(try ControlCommand.parse("speed", seed: 0).get(), .status)
        for bad in ["speed 0.5", "speed 2.01", "speed fast", "speed 1 2", "speed nan", "speed -1", "speed 1e0"] {
            XCTAssertEqual(ControlCommand.parse(bad, seed: 0), .failure(ControlError(ControlCommand.speedUsage)), bad)
        }
        XCTAssertEqual(Speed.text(1.25), "1.25")
        XCTAssertEqual(Speed.text(1.5), "1.5")
        XCTAssertEqual(Speed.text(2), "2")
        XCTAssertEqual(Speed.text(0.75), "0.75")
        XCTAssertEqual(Event.setSpeed(1.25).summary, "speed 1.25")
    }
}

extension SpeedTests {
    func testTheSleepTimerCountsWallTimeAtTheSpeed() {
        var s = queued(3, settings: settings(["/music": 1.25]))
        s.cursor = 0
        s.position = 50
        s.sleep = SleepTimer(request: .end(.track))
        XCTAssertEqual(s.sleepLeft(now: 0), 40, "50 s of the file at 1.25 is 40 s")
        s.sleep = SleepTimer(request: .end(.folder))
        XCTAssertEqual(s.sleepLeft(now: 0), 40 + 80 + 80, "the rest of the folder at 1.25")
        s.settings.speeds = [:]
        XCTAssertEqual(s.sleepLeft(now: 0), 50 + 100 + 100)
    }

    func testACardsSpeedHoldsForTheQueueItLoads() {
        var s = State()
        s.cards.map = CardMap(["01": .play(["/music"])], speeds: ["01": 1.25])
        s.cards.loading = "01"
        let commands = reduce(&s, .cardTracks(card: "01", tracks: infos(2), messages: [], marked: false))
        XCTAssertEqual(s.queueSpeed, 1.25)
        XCTAssertEqual(s.cards.active, ActiveCard(id: "01", tracks: 1..<3))
        XCTAssertEqual(s.phase, .playing)
        XCTAssertTrue(commands.contains(.startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false,
                                                    next: NextPlay(playID: 2, path: "/music/2.flac", speed: 1.25), speed: 1.25)),
                      "\(commands)")
        // Another card without a speed: its queue plays at the folders' speeds.
        s.cards.map = CardMap(["01": .play(["/music"]), "02": .play(["/other"])], speeds: ["01": 1.25])
        s.cards.loading = "02"
        _ = reduce(&s, .cardTracks(card: "02", tracks: infos(1), messages: [], marked: false))
        XCTAssertNil(s.queueSpeed)
    }
}

extension SpeedTests {
    /// The panel marks a speed other than 1 on the status row, where it fits (a 16x2 with a track
    /// of ten minutes or more has no room: the time wins).
    func testThePanelMarksTheSpeed() {
        var display = settings(["/music": 1.25])
        display.display = .lcd20x4
        var s = playing(2, settings: display)
        s.position = 83
        XCTAssertEqual(s.playingSpeedMark, "1.25x")
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd20x4).rows.last, "▶ 1:23/1:40    1.25x")
        s.settings.speeds = [:]
        XCTAssertNil(s.playingSpeedMark)
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd20x4).rows.last, "▶ 1:23/1:40         ")
    }
}
