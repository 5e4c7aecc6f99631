// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The power-cut run found that jumps of the position were saved only with the next periodic save
/// (while playing) or never (paused, stopped): a cut after `seek`, a restart by `previous`, a
/// `stop` of a stopped player or repeat one starting the track over resumed where it had been
/// before the jump, up to a whole track away.
/// Every jump must reach the state file at once; these pin that down in the core, fast.
final class PositionJumpTests: XCTestCase {
    func player(_ phase: SavedPhase, at position: Double, track: Int = 1) -> State {
        var s = State()
        let tracks = (0..<3).map { TrackInfo(path: "/m/\($0).wav", title: "\($0)", duration: 100) }
        _ = reduce(&s, .restore(Snapshot(tracks: tracks, current: track, position: position, phase: phase)))
        return s
    }

    /// The position the commands saved, nil when they saved nothing.
    func saved(_ commands: [Command]) -> Double? {
        commands.lazy.compactMap { $0.savedSnapshot?.position }.last
    }

    func testEveryJumpIsSavedAtOnceInEveryPhase() {
        let cases: [(SavedPhase, Double, Event, Double)] = [
            (.playing, 12, .seek(to: 40), 40), (.playing, 40, .seekBy(-30), 10),
            (.paused, 12, .seek(to: 40), 40), (.stopped, 12, .seek(to: 40), 40),
            (.playing, 30, .previous, 0), (.paused, 30, .previous, 0),
            (.stopped, 17, .stop, 0),
        ]
        for (phase, from, event, to) in cases {
            var s = player(phase, at: from)
            XCTAssertEqual(saved(reduce(&s, event)), to, "\(event) while \(phase) at \(from) s")
        }
    }

    func testPreviousOnTheFirstTrackWhilePausedOrStoppedSavesTheRewind() {
        for phase: SavedPhase in [.paused, .stopped] {
            var s = player(phase, at: 2, track: 0)
            XCTAssertEqual(saved(reduce(&s, .previous)), 0, "previous on the first track while \(phase)")
        }
    }

    func testRepeatOneStartingTheTrackOverIsSavedAtOnce() throws {
        var s = State()
        let tracks = (0..<2).map { TrackInfo(path: "/m/\($0).wav", title: "\($0)", duration: 40) }
        let started = reduce(&s, .restore(Snapshot(tracks: tracks, current: 1, position: 38, phase: .playing, repeatMode: .one)))
        let (play, next) = try XCTUnwrap(started.lazy.compactMap { command -> (UInt64, UInt64?)? in
            if case .startTrack(let id, _, _, _, let next, _, _) = command { return (id, next?.playID) } else { return nil }
        }.first, "the restore starts the track")
        _ = reduce(&s, .heard(playID: play, seconds: 39.9))
        let looped = reduce(&s, .trackFinished(playID: play, next: next))
        XCTAssertEqual(s.currentTrack?.info.path, "/m/1.wav")
        XCTAssertEqual(saved(looped), 0, "repeat one went back to 0 s without saving it: \(looped)")
    }

    func testNothingIsSavedWhenThePositionDoesNotMove() {
        var s = player(.paused, at: 0)
        XCTAssertNil(saved(reduce(&s, .seek(to: 0))))
        var stopped = player(.stopped, at: 0)
        XCTAssertNil(saved(reduce(&stopped, .stop)))
    }
}
