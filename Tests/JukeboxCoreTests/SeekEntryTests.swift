// SPDX-License-Identifier: MIT
import JukeboxCore
import XCTest

/// A seek to a point of a queue entry (MPD's `seek POS T`, `seekid`): the core chooses between a
/// seek in the current track and playing the other entry from that point.
final class SeekEntryTests: XCTestCase {
    private func playingFirstOfThree() -> State {
        var s = State()
        _ = reduce(&s, .replaceQueue((1...3).map { TrackInfo(path: "/m/\($0).flac", duration: 100) }))
        _ = reduce(&s, .trackStarted(playID: 1))
        XCTAssertEqual(s.currentTrack?.info.path, "/m/1.flac")
        return s
    }

    func testInTheCurrentTrackItIsASeek() {
        let s = playingFirstOfThree()
        var a = s, b = s
        XCTAssertEqual(reduce(&a, .seekEntry(at: 0, to: 42)), reduce(&b, .seek(to: 42)))
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.position, 42)
    }

    func testAnotherEntryPlaysFromThatPoint() {
        var s = playingFirstOfThree()
        let commands = reduce(&s, .seekEntry(at: 2, to: 30))
        XCTAssertEqual(s.currentTrack?.info.path, "/m/3.flac")
        XCTAssertEqual(s.position, 30)
        XCTAssertEqual(s.phase, .playing)
        let start = commands.firstIndex { if case .startTrack(_, "/m/3.flac", 0, false, _, _, _) = $0 { return true } else { return false } }
        let seek = commands.firstIndex(of: .seekOutput(to: 30))
        XCTAssertNotNil(start, "\(commands)")
        XCTAssertNotNil(seek, "\(commands)")
        XCTAssertLessThan(start ?? 0, seek ?? 0, "started, then sought: \(commands)")
    }

    func testAnEntryThatIsNotThereIsSaidAndChangesNothingElse() {
        var s = playingFirstOfThree()
        let before = s
        _ = reduce(&s, .seekEntry(at: 9, to: 30))
        XCTAssertEqual(s.message, "no queue entry 10")
        XCTAssertEqual(s.currentTrack, before.currentTrack)
        XCTAssertEqual(s.position, before.position)
    }
}
