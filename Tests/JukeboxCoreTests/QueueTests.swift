// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class QueueTests: XCTestCase {
    func testReplaceQueueStopsTheOldPlayAndPlaysTheFirstNewTrack() {
        let h = CoreHarness(playing(2))
        let cmds = h.prepare(.replaceQueue([info(7), info(8)]))
        XCTAssertEqual(h.state.queue.map(\.info.path), ["/music/7.flac", "/music/8.flac"])
        XCTAssertEqual(h.state.phase, .playing)
        XCTAssertEqual(Array(cmds.prefix(2)), [
            .stopOutput,
            .startTrack(playID: 3, path: "/music/7.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/8.flac")),
        ])
    }

    func testRemovingAnEarlierEntryKeepsTheCurrentTrackPlaying() {
        let h = CoreHarness(playing(3))
        h.prepare(.next)  // track 2 plays
        h.send(.remove(at: 0), {
            $0.queue.removeFirst()
            $0.order = [2, 3]
            $0.cursor = 0
            $0.queueRevision += 1
            $0.savedMark = $0.saveMark
            $0.shown = $0.view
        }, commands: [.persist(h.stateWith { $0.queue.removeFirst(); $0.order = [2, 3]; $0.cursor = 0 }.snapshot),
                      .render(h.stateWith { $0.queue.removeFirst(); $0.order = [2, 3]; $0.cursor = 0 }.view)])
    }

    func testRemovingTheCurrentTrackPlaysTheOneAfterIt() {
        let h = CoreHarness(playing(3))
        let cmds = h.prepare(.remove(at: 0))
        XCTAssertEqual(h.state.currentTrack?.id, 2)
        XCTAssertEqual(h.state.phase, .playing)
        XCTAssertEqual(Array(cmds.prefix(1)), [
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/3.flac")),
        ])
    }

    func testRemovingTheLastRemainingTrackStops() {
        let h = CoreHarness(playing(1))
        h.prepare(.remove(at: 0))
        XCTAssertEqual(h.state.phase, .stopped)
        XCTAssertNil(h.state.cursor)
        XCTAssertNil(h.state.loaded)
    }

    func testRemovingTheSuccessorHandsTheEngineANewOne() {
        let h = CoreHarness(playing(3))
        let cmds = h.prepare(.remove(at: 1))
        XCTAssertEqual(cmds.first, .setNext(playID: 3, path: "/music/3.flac"))
    }

    func testOutOfRangeIndicesAreRefusedWithAMessage() {
        let h = CoreHarness(queued(2))
        h.prepare(.remove(at: 5))
        XCTAssertEqual(h.state.message, "no queue entry 6")
        XCTAssertEqual(h.state.queue.count, 2)
        h.prepare(.move(from: 0, to: 9))
        XCTAssertEqual(h.state.message, "no queue entry 10")
    }

    func testMoveKeepsTheCurrentTrackAndReordersPlay() {
        let h = CoreHarness(playing(3))
        h.prepare(.move(from: 2, to: 0))
        XCTAssertEqual(h.state.order, [3, 1, 2])
        XCTAssertEqual(h.state.currentTrack?.id, 1)
        XCTAssertEqual(h.state.cursor, 1)
        XCTAssertEqual(h.state.handedNext?.trackID, 2)
    }

    func testClearStopsAndEmpties() {
        let h = CoreHarness(playing(3))
        h.prepare(.clear)
        XCTAssertEqual(h.state.queue, [])
        XCTAssertEqual(h.state.order, [])
        XCTAssertNil(h.state.cursor)
        XCTAssertEqual(h.state.phase, .stopped)
        XCTAssertEqual(h.state.snapshot, Snapshot())
    }

    func testShuffleIsASeededPermutationStartingAtTheCurrentTrack() {
        let h = CoreHarness(playing(10))
        h.prepare(.next)
        h.prepare(.setShuffle(true, seed: 42))
        XCTAssertEqual(h.state.order.first, 2)
        XCTAssertEqual(h.state.cursor, 0)
        XCTAssertEqual(h.state.order.sorted(), Array(1...10))
        XCTAssertNotEqual(h.state.order, [2, 1, 3, 4, 5, 6, 7, 8, 9, 10])
        // The same seed gives the same order.
        let again = CoreHarness(playing(10))
        again.prepare(.next)
        again.prepare(.setShuffle(true, seed: 42))
        XCTAssertEqual(again.state.order, h.state.order)
        let other = CoreHarness(playing(10))
        other.prepare(.next)
        other.prepare(.setShuffle(true, seed: 43))
        XCTAssertNotEqual(other.state.order, h.state.order)
    }

    func testShuffleOffReturnsToQueueOrderAtTheCurrentTrack() {
        let h = CoreHarness(playing(10))
        h.prepare(.setShuffle(true, seed: 7))
        h.prepare(.next)
        h.prepare(.next)
        let current = h.state.currentTrack!.id
        h.prepare(.setShuffle(false, seed: 0))
        XCTAssertEqual(h.state.order, Array(1...10))
        XCTAssertEqual(h.state.currentTrack?.id, current)
        XCTAssertEqual(h.state.cursor, Int(current) - 1)
        XCTAssertEqual(h.state.handedNext?.trackID, current == 10 ? nil : current + 1)
    }

    func testAddingWhileShuffledPlaysTheNewTracksAfterTheOldOnes() {
        let h = CoreHarness(playing(3))
        h.prepare(.setShuffle(true, seed: 1))
        h.prepare(.add([info(4), info(5), info(6)]))
        XCTAssertEqual(Set(h.state.order.suffix(3)), [4, 5, 6])
        XCTAssertEqual(Set(h.state.order.prefix(3)), [1, 2, 3])
    }

    func testSettingTheSameShuffleAgainChangesNothing() {
        let h = CoreHarness(playing(3))
        h.send(.setShuffle(false, seed: 9), commands: [])
    }

    func testRepeatCyclesOffAllOne() {
        let h = CoreHarness(queued(2))
        h.prepare(.cycleRepeat)
        XCTAssertEqual(h.state.repeatMode, .all)
        h.prepare(.cycleRepeat)
        XCTAssertEqual(h.state.repeatMode, .one)
        h.prepare(.cycleRepeat)
        XCTAssertEqual(h.state.repeatMode, .off)
    }

    func testVolumeIsClampedToTheConfiguredRange() {
        var settings = Settings()
        settings.volumeMin = 10
        settings.volumeMax = 80
        let h = CoreHarness(queued(1, settings: settings))
        h.send(.setVolume(95), { $0.volume = 80; $0.savedMark = $0.saveMark; $0.shown = $0.view }, commands: [
            .setVolume(80),
            .persistPlace(h.stateWith { $0.volume = 80 }.snapshot),
            .render(h.stateWith { $0.volume = 80 }.view),
        ])
        h.prepare(.changeVolume(by: -100))
        XCTAssertEqual(h.state.volume, 10)
        h.send(.changeVolume(by: -5), commands: [])
    }
}
