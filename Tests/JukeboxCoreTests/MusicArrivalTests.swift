// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// A start with nothing saved that finds nothing to play in the configured folders waits for
/// music to arrive there (a partition mounted late, files copied in): it plays what arrives as the
/// start would have, unless a person chose something meanwhile.
final class MusicArrivalTests: XCTestCase {
    private let waiting = "waiting for music in /srv/music"

    /// The first start before the music partition: started, then nothing found in /srv/music.
    private func waitingAtStart(_ settings: Settings = Settings()) -> CoreHarness {
        let h = CoreHarness(State(settings: settings))
        h.send(.started, {
            $0.savedMark = mark(revision: 0, current: nil, phase: .stopped)
            $0.shown = status("stopped")
        }, commands: [
            .setVolume(100),
            .render(status("stopped")),
        ])
        h.send(.musicAwaited(["/srv/music"]), {
            $0.musicAwaited = MusicWait(folders: ["/srv/music"], queueRevision: 0)
            $0.shown = status("waiting", message: waiting)
        }, commands: [
            .report(waiting),
            .render(status("waiting", message: waiting)),
        ])
        XCTAssertEqual(h.state.awaitedMusicFolders, ["/srv/music"])
        // Said once; nothing is saved (an empty queue never goes over a state file) or opened.
        h.send(.musicAwaited(["/srv/music"]), commands: [])
        h.send(.tick(now: 30), { $0.now = 30 }, commands: [])
        return h
    }

    func testMusicArrivingWithNothingDoneIsQueuedAndPlayedAsTheStartWouldHave() {
        let h = waitingAtStart()
        h.send(.musicFound(folders: ["/srv/music"], tracks: [info(1), info(2)], messages: []), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.cursor = 0
            $0.phase = .playing
            $0.musicAwaited = nil
            $0.nextTrackID = 3
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.savedAt = 30
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .report("music is there: /srv/music"),
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false,
                        next: NextPlay(playID: 2, path: "/music/2.flac", gain: nil, speed: nil), gain: nil, speed: nil),
            .persist(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
        XCTAssertNil(h.state.awaitedMusicFolders, "nothing more to look at")
        // A read that was still under way changes nothing more.
        h.send(.musicFound(folders: ["/srv/music"], tracks: [info(3)], messages: []), commands: [])
    }

    func testMusicArrivingAfterAPersonLoadedSomethingChangesNothing() {
        let h = waitingAtStart()
        // A card: the wait ends with the step that loads it.
        h.send(.loadSource(QueueSource(paths: ["/cards/lullabies"]), tracks: [info(3)]), {
            $0.queue = [Track(id: 1, info: info(3))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.musicAwaited = nil
            $0.source = QueueSource(paths: ["/cards/lullabies"], marked: false)
            $0.bookmarks = [Bookmark(paths: ["/cards/lullabies"], track: "/music/3.flac", position: 0)]
            $0.bookmarksDirty = true
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.savedAt = 30
            $0.shown = status("playing", song: 3, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/music/3.flac", at: 0, paused: false, next: nil, gain: nil, speed: nil),
            .persist(Snapshot(tracks: [info(3)], current: 0, phase: .playing, source: QueueSource(paths: ["/cards/lullabies"], marked: false))),
            .render(status("playing", song: 3, index: 1, of: 1)),
        ])
        XCTAssertNil(h.state.awaitedMusicFolders, "nothing more to look at")
        // Cleared again by the person: the queue is empty as at the start, but theirs.
        h.send(.clear, {
            $0.queue = []
            $0.order = []
            $0.cursor = nil
            $0.phase = .stopped
            $0.source = nil
            $0.loaded = nil
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: nil, phase: .stopped)
            $0.shown = status("stopped")
        }, commands: [
            .stopOutput,
            .persist(Snapshot()),
            .render(status("stopped")),
        ])
        h.send(.musicFound(folders: ["/srv/music"], tracks: [info(1), info(2)], messages: []), commands: [])
    }

    func testAnArrivalWithNothingToPlayKeepsWaiting() {
        let h = waitingAtStart()
        // Said once at the start: an empty read says nothing new.
        h.send(.musicFound(folders: ["/srv/music"], tracks: [], messages: ["no audio files in /srv/music"]), commands: [])
        XCTAssertEqual(h.state.awaitedMusicFolders, ["/srv/music"], "still looked at")
        // What was skipped beside the music that came is told, as a start's read tells it.
        h.send(.musicFound(folders: ["/srv/music"], tracks: [info(1)], messages: ["cannot read /srv/music/half.flac"]), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.musicAwaited = nil
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.savedAt = 30
            $0.shown = status("playing", song: 1, index: 1, of: 1)
        }, commands: [
            .report("cannot read /srv/music/half.flac"),
            .report("music is there: /srv/music"),
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false, next: nil, gain: nil, speed: nil),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 1)),
        ])
    }

    func testWithoutResumePlayingTheArrivalIsQueuedStopped() {
        var settings = Settings()
        settings.resumePlaying = false
        let h = waitingAtStart(settings)
        h.send(.musicFound(folders: ["/srv/music"], tracks: [info(1)], messages: []), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.musicAwaited = nil
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: nil, phase: .stopped)
            $0.savedAt = 30
            $0.shown = status("stopped", of: 1)
        }, commands: [
            .report("music is there: /srv/music"),
            .persist(Snapshot(tracks: [info(1)])),
            .render(status("stopped", of: 1)),
        ])
    }

    /// A panel says it too: which folders, not just an empty queue.
    func testAPanelShowsTheFoldersItWaitsFor() {
        var settings = Settings()
        settings.display = .lcd16x2
        var s = State(settings: settings)
        _ = reduce(&s, .musicAwaited(["/srv/music"]))
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows, ["Waiting: music  ", "/srv/music      "])
        var big = State(settings: settings)
        big.settings.display = .lcd20x4
        _ = reduce(&big, .musicAwaited(["/srv/music"]))
        XCTAssertEqual(DisplayFrame.make(big, layout: .lcd20x4).rows, ["Waiting for         ", "music               ", "/srv/music          ", "                    "])
    }

    func testARestoredQueueIsNotAWaitForMusic() {
        let h = CoreHarness()
        h.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, position: 10, phase: .paused), at: 10, elapsed: "0:10")
        h.send(.musicAwaited(["/srv/music"]), commands: [])
        XCTAssertNil(h.state.awaitedMusicFolders)
    }
}
