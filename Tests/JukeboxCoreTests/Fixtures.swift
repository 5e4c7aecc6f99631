// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Tracks `info(1)…info(n)`.
func infos(_ n: Int) -> [TrackInfo] { (1...n).map { info($0) } }

/// A state holding tracks 1...n in queue order, stopped, as `add` leaves it (ids 1...n, one
/// queue revision), saved and rendered. Spelled out; `testAddingToAnEmptyPlayerQueuesWithoutPlaying`
/// checks that `add` makes exactly this.
func queued(_ n: Int, settings: Settings = Settings()) -> State {
    var s = State(settings: settings)
    s.queue = (1...n).map { Track(id: UInt64($0), info: info($0)) }
    s.order = (1...n).map { UInt64($0) }
    s.nextTrackID = UInt64(n + 1)
    s.queueRevision = 1
    s.savedMark = mark(revision: 1, current: nil, phase: .stopped)
    s.shown = status("stopped", of: n)
    return s
}

/// `queued(n)` playing track 1 from the start, with the engine holding play id 1 and, with more
/// than one track, its successor handed as play id 2 (what `play` makes of `queued(n)`; checked by
/// `testPlayFromStoppedStartsTheFirstTrackAndHandsTheNext`).
func playing(_ n: Int, settings: Settings = Settings()) -> State {
    var s = queued(n, settings: settings)
    s.cursor = 0
    s.phase = .playing
    s.loaded = PlayRef(playID: 1, trackID: 1)
    s.handedNext = n > 1 ? PlayRef(playID: 2, trackID: 2) : nil
    s.nextPlayID = n > 1 ? 3 : 2
    s.savedMark = mark(revision: 1, current: 1, phase: .playing)
    s.shown = status("playing", song: 1, index: 1, of: n)
    return s
}

/// Each line of `table` parses (shuffle seed 0) to what the row says; a failing row names its line.
func assertParses(_ table: [(String, Result<ControlCommand, ControlError>)], file: StaticString = #filePath, line: UInt = #line) {
    for (text, expected) in table {
        XCTAssertEqual(ControlCommand.parse(text, seed: 0), expected, text, file: file, line: line)
    }
}
