// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// `Event.playEntry(at:)` (MPD's `play POS`): the entry at a queue index becomes current at 0 s
/// and plays, from any phase; an index outside the queue changes nothing but the message.
final class PlayEntryTests: XCTestCase {
    private func startedPath(_ commands: [Command]) -> String? {
        for case .startTrack(_, let path, let at, let paused, _, _, _) in commands where at == 0 && !paused { return path }
        return nil
    }

    func testPlayingStartsTheEntryAtItsQueueIndex() {
        var state = playing(3)
        let commands = reduce(&state, .playEntry(at: 2))
        XCTAssertEqual(state.currentTrack?.info, info(3))
        XCTAssertEqual(state.phase, .playing)
        XCTAssertEqual(startedPath(commands), "/music/3.flac")
    }

    func testStoppedAndPausedPlayersPlayTheEntry() {
        var stopped = queued(3)
        XCTAssertEqual(startedPath(reduce(&stopped, .playEntry(at: 1))), "/music/2.flac")
        XCTAssertEqual(stopped.phase, .playing)

        var paused = playing(3)
        _ = reduce(&paused, .pause)
        let commands = reduce(&paused, .playEntry(at: 1))
        XCTAssertEqual(paused.phase, .playing)
        XCTAssertEqual(paused.currentTrack?.info, info(2))
        XCTAssertEqual(startedPath(commands), "/music/2.flac", "\(commands)")
    }

    func testTheIndexIsInQueueOrderWhenShuffled() {
        var state = playing(5)
        _ = reduce(&state, .setShuffle(true, seed: 42))
        _ = reduce(&state, .playEntry(at: 3))
        XCTAssertEqual(state.currentTrack?.info, info(4), "the index was taken in play order")
    }

    func testAnIndexOutsideTheQueueOnlySaysSo() {
        var state = playing(2)
        let before = state
        _ = reduce(&state, .playEntry(at: 2))
        XCTAssertEqual(state.message, "no queue entry 3")
        XCTAssertEqual(state.currentTrack, before.currentTrack)
        XCTAssertEqual(state.phase, .playing)
    }
}
