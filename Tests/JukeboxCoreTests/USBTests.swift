// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// USB sticks: a stick is a source (its mount path), read and played on insertion with
/// `usb.autoplay`, resumed at its bookmark; pulled out while it plays, the output stops and the
/// queue and the place stay, and putting it back plays on. The stick here is mounted at
/// `/music`, so the literals' tracks (`/music/N.flac`) are on it.
final class USBTests: XCTestCase {
    private let stick = "/music"

    /// An empty stopped player whose bookmarks file has been read (empty).
    private func ready(autoplay: Bool = true) -> CoreHarness {
        var settings = Settings()
        settings.usbAutoplay = autoplay
        var s = State(settings: settings)
        s.shown = status("stopped")
        s.bookmarksReady = true
        return CoreHarness(s)
    }

    func testWithoutAutoplayAnInsertedStickIsOnlyReported() {
        let h = ready(autoplay: false)
        h.send(.usbInserted(path: stick), commands: [.report("USB stick inserted: /music")])
        h.send(.usbRemoved(path: stick), commands: [.report("USB stick removed")])
    }

    func testWithAutoplayAStickIsReadThenPlaysFromItsBookmark() {
        let h = ready()
        h.send(.bookmarksLoaded([Bookmark(paths: ["/music"], track: "/music/2.flac", position: 7)]), {
            $0.bookmarks = [Bookmark(paths: ["/music"], track: "/music/2.flac", position: 7)]
        }, commands: [])
        h.send(.usbInserted(path: stick), { $0.usbLoading = "/music" }, commands: [
            .report("USB stick inserted: /music: reading"),
            .loadUSB(path: "/music", through: "/music/2.flac"),
        ])
        // The bookmark's track, at its second: the stick's place from the last time.
        h.send(.usbTracks(path: stick, tracks: infos(3), messages: ["skipped notes.txt"]), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 3]
            $0.cursor = 1
            $0.phase = .playing
            $0.position = 7
            $0.source = QueueSource(paths: ["/music"])
            $0.usbLoading = nil
            $0.nextTrackID = 4
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 2)
            $0.handedNext = PlayRef(playID: 2, trackID: 3)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.savedPosition = 7
            $0.shown = status("playing", song: 2, index: 2, of: 3, elapsed: "0:07")
        }, commands: [
            .report("USB stick /music: skipped notes.txt"),
            .startTrack(playID: 1, path: "/music/2.flac", at: 7, paused: false, next: NextPlay(playID: 2, path: "/music/3.flac")),
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 7, phase: .playing, source: QueueSource(paths: ["/music"]))),
            .render(status("playing", song: 2, index: 2, of: 3, elapsed: "0:07")),
        ])
    }

    func testPulledOutWhilePlayingTheOutputStopsTheQueueAndPlaceStayAndPuttingItBackPlaysOn() {
        let h = ready()
        h.send(.usbInserted(path: stick), { $0.usbLoading = "/music" }, commands: [
            .report("USB stick inserted: /music: reading"),
            .loadUSB(path: "/music"),
        ])
        h.send(.usbTracks(path: stick, tracks: infos(2), messages: []), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.cursor = 0
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/music"])
            $0.bookmarks = [Bookmark(paths: ["/music"], track: "/music/1.flac", position: 0)]
            $0.usbLoading = nil
            $0.nextTrackID = 3
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 2, path: "/music/2.flac")),
            .persist(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, source: QueueSource(paths: ["/music"]))),
            .persistBookmarks([Bookmark(paths: ["/music"], track: "/music/1.flac", position: 0)]),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
        h.heard(1, at: 12, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:12"))
        // Pulled out: the output stops, the place heard is the stick's bookmark, the queue stays.
        h.send(.usbRemoved(path: stick), {
            $0.phase = .waitingForMusic
            $0.musicMissing = "/music"
            $0.usbGone = "/music"
            $0.bookmarks = [Bookmark(paths: ["/music"], track: "/music/1.flac", position: 12)]
            $0.loaded = nil
            $0.handedNext = nil
            $0.shown = status("waiting", song: 1, index: 1, of: 2, elapsed: "0:12", message: "waiting for music: /music is not there")
        }, commands: [
            .report("USB stick removed"),
            .report("waiting for music: /music is not there"),
            .stopOutput,
            .persistBookmarks([Bookmark(paths: ["/music"], track: "/music/1.flac", position: 12)]),
            .render(status("waiting", song: 1, index: 1, of: 2, elapsed: "0:12", message: "waiting for music: /music is not there")),
        ])
        // Its empty mount point is no sign of it: the shell's probe is not asked to look.
        XCTAssertNil(h.state.awaitedMusicFolder)
        // A second removal (the mount's folder going after the unmount) changes nothing more.
        h.send(.usbRemoved(path: stick), commands: [.report("USB stick removed")])
        // Back in (autoplay or not): it plays on at the second it stopped, without reading it again.
        h.send(.usbInserted(path: stick), {
            $0.phase = .playing
            $0.musicMissing = nil
            $0.usbGone = nil
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:12")
        }, commands: [
            .report("music is there: /music"),
            .startTrack(playID: 3, path: "/music/1.flac", at: 12, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:12")),
        ])
    }

    func testAStickPulledOutWhileItIsReadIsNotPlayed() {
        let h = ready()
        h.send(.usbInserted(path: stick), { $0.usbLoading = "/music" }, commands: [
            .report("USB stick inserted: /music: reading"),
            .loadUSB(path: "/music"),
        ])
        h.send(.usbRemoved(path: stick), { $0.usbLoading = nil }, commands: [.report("USB stick removed")])
        h.send(.usbTracks(path: stick, tracks: infos(2), messages: []), commands: [])
    }

    func testAStickWithNothingToPlaySaysSo() {
        let h = ready()
        h.send(.usbInserted(path: "/media/jukebox/EMPTY"), { $0.usbLoading = "/media/jukebox/EMPTY" }, commands: [
            .report("USB stick inserted: /media/jukebox/EMPTY: reading"),
            .loadUSB(path: "/media/jukebox/EMPTY"),
        ])
        h.send(.usbTracks(path: "/media/jukebox/EMPTY", tracks: [], messages: []), {
            $0.message = "USB stick: nothing to play"
            $0.usbLoading = nil
            $0.shown = status("stopped", message: "USB stick: nothing to play")
        }, commands: [
            .report("USB stick /media/jukebox/EMPTY: nothing to play"),
            .render(status("stopped", message: "USB stick: nothing to play")),
        ])
    }

    func testABigStickPlaysItsFirstFolderAndTheRestIsAppendedWhileTheQueueIsStillItsOwn() {
        let h = ready()
        h.send(.usbInserted(path: stick), { $0.usbLoading = "/music" }, commands: [
            .report("USB stick inserted: /music: reading"),
            .loadUSB(path: "/music"),
        ])
        h.send(.usbTracks(path: stick, tracks: [info(1)], messages: [], more: true), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/music"])
            $0.bookmarks = [Bookmark(paths: ["/music"], track: "/music/1.flac", position: 0)]
            $0.usbLoading = nil
            $0.usbFilling = "/music"
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false, next: nil),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing, source: QueueSource(paths: ["/music"]))),
            .persistBookmarks([Bookmark(paths: ["/music"], track: "/music/1.flac", position: 0)]),
            .render(status("playing", song: 1, index: 1, of: 1)),
        ])
        // The rest: appended, and the next track handed to the engine for a gapless change.
        h.send(.usbMoreTracks(path: stick, tracks: [info(2), info(3)], messages: []), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 3]
            $0.usbFilling = nil
            $0.nextTrackID = 4
            $0.nextPlayID = 3
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 3)
        }, commands: [
            .setNext(playID: 2, path: "/music/2.flac"),
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .playing, source: QueueSource(paths: ["/music"]))),
            .render(status("playing", song: 1, index: 1, of: 3)),
        ])
        // Once appended, a late second part (there is none) would change nothing.
        h.send(.usbMoreTracks(path: stick, tracks: [info(4)], messages: []), commands: [])
    }

    func testTheRestOfAStickIsNotAppendedToAQueueReplacedMeanwhile() {
        let h = ready()
        h.send(.usbInserted(path: stick), { $0.usbLoading = "/music" }, commands: [
            .report("USB stick inserted: /music: reading"),
            .loadUSB(path: "/music"),
        ])
        h.send(.usbTracks(path: stick, tracks: [info(1)], messages: [], more: true), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/music"])
            $0.bookmarks = [Bookmark(paths: ["/music"], track: "/music/1.flac", position: 0)]
            $0.usbLoading = nil
            $0.usbFilling = "/music"
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false, next: nil),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing, source: QueueSource(paths: ["/music"]))),
            .persistBookmarks([Bookmark(paths: ["/music"], track: "/music/1.flac", position: 0)]),
            .render(status("playing", song: 1, index: 1, of: 1)),
        ])
        h.send(.replaceQueue([info(7)]), {
            $0.queue = [Track(id: 2, info: info(7))]
            $0.order = [2]
            $0.source = nil
            $0.usbFilling = nil
            $0.nextTrackID = 3
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.shown = status("playing", song: 7, index: 1, of: 1)
        }, commands: [
            .stopOutput,
            .startTrack(playID: 2, path: "/music/7.flac", at: 0, paused: false, next: nil),
            .persist(Snapshot(tracks: [info(7)], current: 0, phase: .playing)),
            .render(status("playing", song: 7, index: 1, of: 1)),
        ])
        h.send(.usbMoreTracks(path: stick, tracks: [info(2), info(3)], messages: []), commands: [])
    }
}
