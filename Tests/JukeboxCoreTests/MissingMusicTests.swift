// SPDX-License-Identifier: MIT
import JukeboxCore
import XCTest

/// A failed play whose music is missing (the shell's facts: the stick gone, a folder not there)
/// is decided here: the same wait as the removal or the missing folder itself, never a skip.
/// A failure without such a fact, or of a play the core no longer cares about, is what it was.
final class MissingMusicTests: XCTestCase {
    /// A player playing the first of three tracks of `folder`, the second handed to the engine.
    private func playing(_ folder: String) -> State {
        var s = State()
        s.bookmarksReady = true
        _ = reduce(&s, .loadSource(QueueSource(paths: [folder]), tracks: (1...3).map { TrackInfo(path: "\(folder)/\($0).flac") }))
        _ = reduce(&s, .trackStarted(playID: 1))
        _ = reduce(&s, .heard(playID: 1, seconds: 12))
        XCTAssertEqual(s.phase, .playing)
        XCTAssertEqual(s.loaded?.playID, 1)
        return s
    }

    /// `event` and `same` leave the same state and give the same commands.
    private func assertSame(_ state: State, _ event: Event, _ same: Event, file: StaticString = #filePath, line: UInt = #line) {
        var a = state, b = state
        let ca = reduce(&a, event), cb = reduce(&b, same)
        XCTAssertEqual(ca, cb, file: file, line: line)
        XCTAssertEqual(a, b, file: file, line: line)
    }

    func testAFailureWhoseStickIsGoneIsTheStickRemoved() {
        let s = playing("/media/usb0")
        assertSame(s, .trackFailed(playID: 1, reason: "read error: Input/output error", missing: .stickGone(path: "/media/usb0")),
                   .usbRemoved(path: "/media/usb0"))
        var after = s
        _ = reduce(&after, .trackFailed(playID: 1, reason: "read error", missing: .stickGone(path: "/media/usb0")))
        XCTAssertEqual(after.phase, .waitingForMusic)
        XCTAssertEqual(after.currentTrack?.info.path, "/media/usb0/1.flac", "the place is kept")
    }

    func testAFailureWhoseFolderIsNotThereWaitsForTheMusic() {
        let s = playing("/srv/share/album")
        assertSame(s, .trackFailed(playID: 1, reason: "No such file or directory", missing: .folderGone("/srv/share")),
                   .musicMissing("/srv/share"))
        var after = s
        _ = reduce(&after, .trackFailed(playID: 1, reason: "No such file or directory", missing: .folderGone("/srv/share")))
        XCTAssertEqual(after.phase, .waitingForMusic)
        XCTAssertEqual(after.musicMissing, "/srv/share")
    }

    func testAFailureWithoutAFactIsSkippedAndAStaleOneChangesNothing() {
        let s = playing("/music")
        var skipped = s
        _ = reduce(&skipped, .trackFailed(playID: 1, reason: "not audio"))
        XCTAssertEqual(skipped.currentTrack?.info.path, "/music/2.flac")
        XCTAssertEqual(skipped.phase, .playing)
        // Play 7 is no play of this player's: its facts are not acted on.
        var stale = s
        XCTAssertEqual(reduce(&stale, .trackFailed(playID: 7, reason: "x", missing: .folderGone("/music"))), [])
        XCTAssertEqual(stale, s)
    }
}
