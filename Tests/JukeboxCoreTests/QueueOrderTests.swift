// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Moving ranges, inserting at a position and shuffling entries (MPD's `move`, `addid POS`,
/// `shuffle`): the current track keeps playing, the engine's gapless successor follows the new
/// order, and the queue is saved.
final class QueueOrderTests: XCTestCase {
    func testMovingARangeBehindTheCurrentTrackHandsTheEngineANewSuccessor() {
        let h = CoreHarness(playing(4))
        // [1 2 3 4] → [1 4 2 3]: 4 now follows 1.
        h.send(.moveRange(1..<3, to: 2), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 4, info: info(4)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 4, 2, 3]
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 4)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
        }, commands: [
            .setNext(playID: 3, path: "/music/4.flac"),
            .persist(Snapshot(tracks: [info(1), info(4), info(2), info(3)], current: 0, phase: .playing)),
        ])
    }

    func testMovingTheCurrentTrackToTheEndKeepsItPlayingWithNothingAfterIt() {
        let h = CoreHarness(playing(3))
        h.send(.moveRange(0..<1, to: 2), {
            $0.queue = [Track(id: 2, info: info(2)), Track(id: 3, info: info(3)), Track(id: 1, info: info(1))]
            $0.order = [2, 3, 1]
            $0.cursor = 2
            $0.handedNext = nil
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 3, of: 3)
        }, commands: [
            .clearNext,
            .persist(Snapshot(tracks: [info(2), info(3), info(1)], current: 2, phase: .playing)),
            .render(status("playing", song: 1, index: 3, of: 3)),
        ])
    }

    func testMovingARangeToItsOwnPlaceChangesNothing() {
        let h = CoreHarness(playing(3))
        h.send(.moveRange(1..<3, to: 1), commands: [])
    }

    func testMovesOutsideTheQueueAreRefusedWithAMessage() {
        let h = CoreHarness(queued(3))
        h.send(.moveRange(2..<4, to: 0), {
            $0.message = "no queue entries 3-4 to move to 1"
            $0.shown = status("stopped", of: 3, message: "no queue entries 3-4 to move to 1")
        }, commands: [
            .render(status("stopped", of: 3, message: "no queue entries 3-4 to move to 1")),
        ])
        // Two entries cannot land at index 2 of three.
        h.send(.moveRange(0..<2, to: 2), {
            $0.message = "no queue entries 1-2 to move to 3"
            $0.shown = status("stopped", of: 3, message: "no queue entries 1-2 to move to 3")
        }, commands: [
            .render(status("stopped", of: 3, message: "no queue entries 1-2 to move to 3")),
        ])
        h.send(.moveRange(1..<1, to: 0), {
            $0.message = "no queue entries 2-1 to move to 1"
            $0.shown = status("stopped", of: 3, message: "no queue entries 2-1 to move to 1")
        }, commands: [
            .render(status("stopped", of: 3, message: "no queue entries 2-1 to move to 1")),
        ])
    }

    func testInsertingAfterTheCurrentTrackPlaysTheNewTracksNext() {
        let h = CoreHarness(playing(3))
        h.send(.insert([info(7), info(8)], at: 1), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 4, info: info(7)), Track(id: 5, info: info(8)),
                        Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 4, 5, 2, 3]
            $0.nextTrackID = 6
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 4)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 5)
        }, commands: [
            .setNext(playID: 3, path: "/music/7.flac"),
            .persist(Snapshot(tracks: [info(1), info(7), info(8), info(2), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 5)),
        ])
    }

    func testInsertingBeforeTheCurrentTrackKeepsItCurrent() {
        let h = CoreHarness(playing(3))
        h.nextToTrack2Of3()
        h.send(.insert([info(9)], at: 0), {
            $0.queue = [Track(id: 4, info: info(9)), Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [4, 1, 2, 3]
            $0.cursor = 2
            $0.nextTrackID = 5
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 3, of: 4)
        }, commands: [
            .persist(Snapshot(tracks: [info(9), info(1), info(2), info(3)], current: 2, phase: .playing)),
            .render(status("playing", song: 2, index: 3, of: 4)),
        ])
    }

    func testInsertingWhileShuffledPlaysTheNewTracksRightAfterTheCurrentOne() {
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
        // At the end of the queue, but next in play order.
        h.send(.insert([info(7), info(8)], at: 3), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3)),
                        Track(id: 4, info: info(7)), Track(id: 5, info: info(8))]
            $0.order = [1, 4, 5, 2, 3]
            $0.nextTrackID = 6
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 4)
            $0.queueRevision = 3
            $0.savedMark = mark(revision: 3, current: 1, phase: .playing, shuffle: true)
            $0.shown = status("playing", song: 1, index: 1, of: 5, shuffle: true)
        }, commands: [
            .setNext(playID: 3, path: "/music/7.flac"),
            .persist(Snapshot(tracks: [info(1), info(2), info(3), info(7), info(8)], order: [0, 3, 4, 1, 2], current: 0,
                              phase: .playing, shuffle: true, shuffleSeed: 1)),
            .render(status("playing", song: 1, index: 1, of: 5, shuffle: true)),
        ])
    }

    func testInsertingIntoAStoppedQueueStartsNothing() {
        let h = CoreHarness(queued(2))
        h.send(.insert([info(5)], at: 2), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(5))]
            $0.order = [1, 2, 3]
            $0.nextTrackID = 4
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: nil, phase: .stopped)
            $0.shown = status("stopped", of: 3)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(5)], phase: .stopped)),
            .render(status("stopped", of: 3)),
        ])
    }

    func testInsertingPastTheEndIsRefusedWithAMessage() {
        let h = CoreHarness(queued(2))
        h.send(.insert([info(5)], at: 3), {
            $0.message = "no queue entry 4 to insert at"
            $0.shown = status("stopped", of: 2, message: "no queue entry 4 to insert at")
        }, commands: [
            .render(status("stopped", of: 2, message: "no queue entry 4 to insert at")),
        ])
    }

    func testShufflingTheQueueKeepsTheCurrentTrackFirstAndPermutesTheRest() {
        let h = CoreHarness(playing(5))
        h.nextToTrack2Of5()
        h.send(.shuffleEntries(0..<5, seed: 3), {
            $0.queue = [Track(id: 2, info: info(2)), Track(id: 4, info: info(4)), Track(id: 5, info: info(5)),
                        Track(id: 1, info: info(1)), Track(id: 3, info: info(3))]
            $0.order = [2, 4, 5, 1, 3]
            $0.cursor = 0
            $0.nextPlayID = 6
            $0.handedNext = PlayRef(playID: 5, trackID: 4)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 1, of: 5)
        }, commands: [
            .setNext(playID: 5, path: "/music/4.flac"),
            .persist(Snapshot(tracks: [info(2), info(4), info(5), info(1), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 2, index: 1, of: 5)),
        ])
    }

    func testShufflingARangeLeavesTheOtherEntriesInPlace() {
        let h = CoreHarness(queued(5))
        h.send(.shuffleEntries(2..<5, seed: 7), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 4, info: info(4)),
                        Track(id: 5, info: info(5)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 4, 5, 3]
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: nil, phase: .stopped)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(4), info(5), info(3)], phase: .stopped)),
        ])
        h.send(.shuffleEntries(0..<6, seed: 7), {
            $0.message = "no queue entries 1-6 to shuffle"
            $0.shown = status("stopped", of: 5, message: "no queue entries 1-6 to shuffle")
        }, commands: [
            .render(status("stopped", of: 5, message: "no queue entries 1-6 to shuffle")),
        ])
    }
}

extension CoreHarness {
    /// `next` on `playing(5)`: track 2 plays as play 3, track 3 handed as play 4.
    func nextToTrack2Of5(file: StaticString = #filePath, line: UInt = #line) {
        nextToTrack2(of: 5, file: file, line: line)
    }
}
