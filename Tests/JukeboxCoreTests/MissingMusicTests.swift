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

    /// The shell reports every fact it finds; which one explains the failure is the core's: a
    /// stick gone wins over its folder gone (the mount point left with the stick), and facts
    /// that found nothing are no fact.
    func testTheFactsDecideTheStickFirstThenTheFolder() {
        let s = playing("/media/usb0/album")
        let rows: [(MissingMusic, Event?)] = [
            (MissingMusic(goneStick: "/media/usb0", goneFolder: "/media/usb0/album"), .usbRemoved(path: "/media/usb0")),
            (MissingMusic(goneStick: "/media/usb0"), .usbRemoved(path: "/media/usb0")),
            (MissingMusic(goneFolder: "/media/usb0/album"), .musicMissing("/media/usb0/album")),
            (MissingMusic(), nil),
        ]
        for (facts, same) in rows {
            assertSame(s, .trackFailed(playID: 1, reason: "read error", missing: facts),
                       same ?? .trackFailed(playID: 1, reason: "read error"))
        }
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

/// A stick pulled out while it plays: the read fails with an I/O error before the kernel lets go
/// of the disk, so the shell cannot tell yet, the track is skipped and the next one fails too
/// (the HIL's usb-stick scenario saw exactly this). When the removal is noticed, it explains
/// those failures: the place goes back to where the first one failed, and the player waits for
/// the stick there.
final class StickFailuresTests: XCTestCase {
    private let stick = "/media/jukebox/STICK"

    private func playingTheStick(heard: Double) -> State {
        var settings = Settings()
        settings.usbAutoplay = true
        var s = State(settings: settings)
        s.bookmarksReady = true
        _ = reduce(&s, .usbInserted(path: stick))
        _ = reduce(&s, .usbTracks(path: stick, tracks: [TrackInfo(path: stick + "/1.wav", duration: 60), TrackInfo(path: stick + "/2.wav", duration: 60)], messages: []))
        _ = reduce(&s, .trackStarted(playID: 1))
        _ = reduce(&s, .heard(playID: 1, seconds: heard))
        XCTAssertEqual(s.phase, .playing)
        return s
    }

    func testFailuresBeforeTheRemovalWasNoticedAreTakenBackToTheFirst() {
        var s = playingTheStick(heard: 8.8)
        _ = reduce(&s, .trackFailed(playID: 1, reason: "read error: Input/output error"))
        XCTAssertEqual(s.currentTrack?.info.path, stick + "/2.wav", "skipped: nothing told the core yet")
        let playID = s.loaded?.playID ?? 0
        _ = reduce(&s, .trackFailed(playID: playID, reason: "host is down"))
        XCTAssertEqual(s.phase, .stopped)
        XCTAssertEqual(s.message, "nothing in the queue can be played")
        _ = reduce(&s, .usbRemoved(path: stick))
        XCTAssertEqual(s.phase, .waitingForMusic)
        XCTAssertEqual(s.currentTrack?.info.path, stick + "/1.wav")
        XCTAssertEqual(s.position, 8.8)
        XCTAssertEqual(s.usbGone, stick)
        XCTAssertEqual(s.bookmarks.last, Bookmark(paths: [stick], track: stick + "/1.wav", position: 8.8))
        // Back in: it plays on at that second.
        let commands = reduce(&s, .usbInserted(path: stick))
        XCTAssertEqual(s.phase, .playing)
        XCTAssertTrue(commands.contains { if case .startTrack(_, stick + "/1.wav", 8.8, false, _, _, _) = $0 { return true } else { return false } }, "\(commands)")
    }

    func testARunOfFailuresEndedByATrackThatPlayedIsNotTakenBack() {
        var s = playingTheStick(heard: 8.8)
        _ = reduce(&s, .trackFailed(playID: 1, reason: "bad data"))
        let playID = s.loaded?.playID ?? 0
        _ = reduce(&s, .trackStarted(playID: playID))
        _ = reduce(&s, .heard(playID: playID, seconds: 3))
        XCTAssertNil(s.failuresFrom)
        _ = reduce(&s, .usbRemoved(path: stick))
        XCTAssertEqual(s.currentTrack?.info.path, stick + "/2.wav", "the place is where the player was")
        XCTAssertEqual(s.position, 3)
        XCTAssertEqual(s.phase, .waitingForMusic)
    }

    func testFailuresThatBeganOffTheStickAreLeftAlone() {
        var s = State()
        s.bookmarksReady = true
        _ = reduce(&s, .replaceQueue([TrackInfo(path: "/srv/music/a.wav", duration: 60), TrackInfo(path: stick + "/1.wav", duration: 60)]))
        _ = reduce(&s, .trackFailed(playID: 1, reason: "bad data"))
        let playID = s.loaded?.playID ?? 0
        _ = reduce(&s, .trackFailed(playID: playID, reason: "Input/output error"))
        XCTAssertEqual(s.phase, .stopped)
        let before = s
        _ = reduce(&s, .usbRemoved(path: stick))
        XCTAssertEqual(s.cursor, before.cursor)
        XCTAssertEqual(s.phase, .stopped, "a person stopped by failures off the stick starts again by hand")
    }
}
