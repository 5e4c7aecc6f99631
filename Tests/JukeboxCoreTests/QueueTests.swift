// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

final class QueueTests: XCTestCase {
    func testReplaceQueueStopsTheOldPlayAndPlaysTheFirstNewTrack() {
        let h = CoreHarness(playing(2))
        h.send(.replaceQueue([info(7), info(8)]), {
            $0.queue = [Track(id: 3, info: info(7)), Track(id: 4, info: info(8))]
            $0.order = [3, 4]
            $0.nextTrackID = 5
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 3)
            $0.handedNext = PlayRef(playID: 4, trackID: 4)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 3, phase: .playing)
            $0.shown = status("playing", song: 7, index: 1, of: 2)
        }, commands: [
            .stopOutput,
            .startTrack(playID: 3, path: "/music/7.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/8.flac")),
            .persist(Snapshot(tracks: [info(7), info(8)], current: 0, phase: .playing)),
            .render(status("playing", song: 7, index: 1, of: 2)),
        ])
        XCTAssertEqual(h.state.queue.map(\.info.path), ["/music/7.flac", "/music/8.flac"])
    }

    func testRemovingAnEarlierEntryKeepsTheCurrentTrackPlaying() {
        let h = CoreHarness(playing(3))
        // track 2 plays
        h.nextToTrack2Of3()
        h.send(.remove(at: 0), {
            $0.queue = [Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [2, 3]
            $0.cursor = 0
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 1, of: 2)
        }, commands: [
            .persist(Snapshot(tracks: [info(2), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 2, index: 1, of: 2)),
        ])
    }

    func testRemovingTheCurrentTrackPlaysTheOneAfterIt() {
        let h = CoreHarness(playing(3))
        h.send(.remove(at: 0), {
            $0.queue = [Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [2, 3]
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 3)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/3.flac")),
            .persist(Snapshot(tracks: [info(2), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 2, index: 1, of: 2)),
        ])
    }

    func testRemovingTheLastRemainingTrackStops() {
        let h = CoreHarness(playing(1))
        h.send(.remove(at: 0), {
            $0.queue = []
            $0.order = []
            $0.cursor = nil
            $0.phase = .stopped
            $0.loaded = nil
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: nil, phase: .stopped)
            $0.shown = status("stopped")
        }, commands: [
            .stopOutput,
            .persist(Snapshot()),
            .render(status("stopped")),
        ])
    }

    func testRemovingTheSuccessorHandsTheEngineANewOne() {
        let h = CoreHarness(playing(3))
        h.send(.remove(at: 1), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 3, info: info(3))]
            $0.order = [1, 3]
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 3)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .setNext(playID: 3, path: "/music/3.flac"),
            .persist(Snapshot(tracks: [info(1), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
    }

    func testOutOfRangeIndicesAreRefusedWithAMessage() {
        let h = CoreHarness(queued(2))
        h.send(.remove(at: 5), {
            $0.message = "no queue entry 6"
            $0.shown = status("stopped", of: 2, message: "no queue entry 6")
        }, commands: [
            .render(status("stopped", of: 2, message: "no queue entry 6")),
        ])
        XCTAssertEqual(h.state.message, "no queue entry 6")
        h.send(.move(from: 0, to: 9), {
            $0.message = "no queue entry 10"
            $0.shown = status("stopped", of: 2, message: "no queue entry 10")
        }, commands: [
            .render(status("stopped", of: 2, message: "no queue entry 10")),
        ])
        XCTAssertEqual(h.state.message, "no queue entry 10")
    }

    func testMoveKeepsTheCurrentTrackAndReordersPlay() {
        let h = CoreHarness(playing(3))
        h.send(.move(from: 2, to: 0), {
            $0.queue = [Track(id: 3, info: info(3)), Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [3, 1, 2]
            $0.cursor = 1
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 2, of: 3)
        }, commands: [
            .persist(Snapshot(tracks: [info(3), info(1), info(2)], current: 1, phase: .playing)),
            .render(status("playing", song: 1, index: 2, of: 3)),
        ])
    }

    func testClearStopsAndEmpties() {
        let h = CoreHarness(playing(3))
        h.send(.clear, {
            $0.queue = []
            $0.order = []
            $0.cursor = nil
            $0.phase = .stopped
            $0.loaded = nil
            $0.handedNext = nil
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: nil, phase: .stopped)
            $0.shown = status("stopped")
        }, commands: [
            .stopOutput,
            .persist(Snapshot()),
            .render(status("stopped")),
        ])
    }

    /// Shuffle with seed 42 on track 2 of `playing(10)` (after `next`): track 2 first, then 9, 6, 10,
    /// 4, 7, 8, 1, 5, 3; track 9 is handed as the next play and the new order saved.
    private func shuffleWithSeed42(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.setShuffle(true, seed: 42), file: file, line: line, {
            $0.order = [2, 9, 6, 10, 4, 7, 8, 1, 5, 3]
            $0.cursor = 0
            $0.shuffle = true
            $0.shuffleSeed = 42
            $0.nextPlayID = 6
            $0.handedNext = PlayRef(playID: 5, trackID: 9)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 2, index: 1, of: 10, shuffle: true)
        }, commands: [
            .setNext(playID: 5, path: "/music/9.flac"),
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(4), info(5), info(6), info(7), info(8), info(9), info(10)], order: [1, 8, 5, 9, 3, 6, 7, 0, 4, 2], current: 1, phase: .playing, shuffle: true, shuffleSeed: 42)),
            .render(status("playing", song: 2, index: 1, of: 10, shuffle: true)),
        ])
    }

    func testShuffleIsASeededPermutationStartingAtTheCurrentTrack() {
        let h = CoreHarness(playing(10))
        h.nextToTrack2(of: 10)
        shuffleWithSeed42(h)
        XCTAssertNotEqual(h.state.order, [2, 1, 3, 4, 5, 6, 7, 8, 9, 10])
        // The same seed gives the same order.
        let again = CoreHarness(playing(10))
        again.nextToTrack2(of: 10)
        shuffleWithSeed42(again)
        let other = CoreHarness(playing(10))
        other.nextToTrack2(of: 10)
        other.send(.setShuffle(true, seed: 43), {
            $0.order = [2, 3, 6, 1, 8, 10, 7, 4, 5, 9]
            $0.cursor = 0
            $0.shuffle = true
            $0.shuffleSeed = 43
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 2, index: 1, of: 10, shuffle: true)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(4), info(5), info(6), info(7), info(8), info(9), info(10)], order: [1, 2, 5, 0, 7, 9, 6, 3, 4, 8], current: 1, phase: .playing, shuffle: true, shuffleSeed: 43)),
            .render(status("playing", song: 2, index: 1, of: 10, shuffle: true)),
        ])
        XCTAssertNotEqual(other.state.order, h.state.order)
    }

    func testShuffleOffReturnsToQueueOrderAtTheCurrentTrack() {
        let h = CoreHarness(playing(10))
        h.send(.setShuffle(true, seed: 7), {
            $0.order = [1, 4, 8, 7, 3, 9, 10, 2, 6, 5]
            $0.shuffle = true
            $0.shuffleSeed = 7
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 4)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 1, index: 1, of: 10, shuffle: true)
        }, commands: [
            .setNext(playID: 3, path: "/music/4.flac"),
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(4), info(5), info(6), info(7), info(8), info(9), info(10)], order: [0, 3, 7, 6, 2, 8, 9, 1, 5, 4], current: 0, phase: .playing, shuffle: true, shuffleSeed: 7)),
            .render(status("playing", song: 1, index: 1, of: 10, shuffle: true)),
        ])
        h.send(.next, {
            $0.cursor = 1
            $0.nextPlayID = 6
            $0.loaded = PlayRef(playID: 4, trackID: 4)
            $0.handedNext = PlayRef(playID: 5, trackID: 8)
            $0.savedMark = mark(revision: 2, current: 4, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 4, index: 2, of: 10, shuffle: true)
        }, commands: [
            .startTrack(playID: 4, path: "/music/4.flac", at: 0, paused: false, next: NextPlay(playID: 5, path: "/music/8.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3), info(4), info(5), info(6), info(7), info(8), info(9), info(10)], order: [0, 3, 7, 6, 2, 8, 9, 1, 5, 4], current: 3, phase: .playing, shuffle: true, shuffleSeed: 7)),
            .render(status("playing", song: 4, index: 2, of: 10, shuffle: true)),
        ])
        h.send(.next, {
            $0.cursor = 2
            $0.nextPlayID = 8
            $0.loaded = PlayRef(playID: 6, trackID: 8)
            $0.handedNext = PlayRef(playID: 7, trackID: 7)
            $0.savedMark = mark(revision: 2, current: 8, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 8, index: 3, of: 10, shuffle: true)
        }, commands: [
            .startTrack(playID: 6, path: "/music/8.flac", at: 0, paused: false, next: NextPlay(playID: 7, path: "/music/7.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3), info(4), info(5), info(6), info(7), info(8), info(9), info(10)], order: [0, 3, 7, 6, 2, 8, 9, 1, 5, 4], current: 7, phase: .playing, shuffle: true, shuffleSeed: 7)),
            .render(status("playing", song: 8, index: 3, of: 10, shuffle: true)),
        ])
        h.send(.setShuffle(false, seed: 0), {
            $0.order = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
            $0.cursor = 7
            $0.shuffle = false
            $0.nextPlayID = 9
            $0.handedNext = PlayRef(playID: 8, trackID: 9)
            $0.queueRevision = 3
            $0.savedMark = mark(revision: 3, current: 8, phase: .playing)
            $0.shown = status("playing", song: 8, index: 8, of: 10)
        }, commands: [
            .setNext(playID: 8, path: "/music/9.flac"),
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(4), info(5), info(6), info(7), info(8), info(9), info(10)], current: 7, phase: .playing, shuffleSeed: 7)),
            .render(status("playing", song: 8, index: 8, of: 10)),
        ])
    }

    func testAddingWhileShuffledPlaysTheNewTracksAfterTheOldOnes() {
        let h = CoreHarness(playing(3))
        h.send(.setShuffle(true, seed: 1), {
            $0.shuffle = true
            $0.shuffleSeed = 1
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 1, index: 1, of: 3, shuffle: true)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], order: [0, 1, 2], current: 0, phase: .playing, shuffle: true, shuffleSeed: 1)),
            .render(status("playing", song: 1, index: 1, of: 3, shuffle: true)),
        ])
        h.send(.add([info(4), info(5), info(6)]), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3)), Track(id: 4, info: info(4)), Track(id: 5, info: info(5)), Track(id: 6, info: info(6))]
            $0.order = [1, 2, 3, 6, 5, 4]
            $0.nextTrackID = 7
            $0.queueRevision = 3
            $0.savedMark = mark(revision: 3, current: 1, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 1, index: 1, of: 6, shuffle: true)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(4), info(5), info(6)], order: [0, 1, 2, 5, 4, 3], current: 0, phase: .playing, shuffle: true, shuffleSeed: 1)),
            .render(status("playing", song: 1, index: 1, of: 6, shuffle: true)),
        ])
        XCTAssertEqual(Set(h.state.order.suffix(3)), [4, 5, 6])
        XCTAssertEqual(Set(h.state.order.prefix(3)), [1, 2, 3])
    }

    func testSettingTheSameShuffleAgainChangesNothing() {
        let h = CoreHarness(playing(3))
        h.send(.setShuffle(false, seed: 9), commands: [])
    }

    func testRepeatCyclesOffAllOne() {
        let h = CoreHarness(queued(2))
        h.send(.cycleRepeat, {
            $0.repeatMode = .all
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped, repeat: .all)
            $0.shown = status("stopped", of: 2, repeat: .all)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], repeatMode: .all)),
            .render(status("stopped", of: 2, repeat: .all)),
        ])
        h.send(.cycleRepeat, {
            $0.repeatMode = .one
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped, repeat: .one)
            $0.shown = status("stopped", of: 2, repeat: .one)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], repeatMode: .one)),
            .render(status("stopped", of: 2, repeat: .one)),
        ])
        h.send(.cycleRepeat, {
            $0.repeatMode = .off
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped)
            $0.shown = status("stopped", of: 2)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)])),
            .render(status("stopped", of: 2)),
        ])
    }

    func testVolumeIsClampedToTheConfiguredRange() {
        var settings = Settings()
        settings.volumeMin = 10
        settings.volumeMax = 80
        let h = CoreHarness(queued(1, settings: settings))
        h.send(.setVolume(95), {
            $0.volume = 80
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped, volume: 80)
            $0.shown = status("stopped", of: 1, volume: 80)
        }, commands: [
            .setVolume(80),
            .persistPlace(Snapshot(tracks: [info(1)], volume: 80)),
            .render(status("stopped", of: 1, volume: 80)),
        ])
        h.send(.changeVolume(by: -100), {
            $0.volume = 10
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped, volume: 10)
            $0.shown = status("stopped", of: 1, volume: 10)
        }, commands: [
            .setVolume(10),
            .persistPlace(Snapshot(tracks: [info(1)], volume: 10)),
            .render(status("stopped", of: 1, volume: 10)),
        ])
        h.send(.changeVolume(by: -5), commands: [])
    }
}
