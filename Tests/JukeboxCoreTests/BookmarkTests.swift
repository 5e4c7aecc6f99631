// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Bookmarks: each source (a card's paths, a `load`) remembers its track and position, resumes
/// there, forgets it when played to its end; kept with the saves, bounded, never written before
/// the file was read. Time is the manual clock of `tick(now:)`.
final class BookmarkTests: XCTestCase {
    private let bookA = QueueSource(paths: ["/books/a"])
    private let albumB = QueueSource(paths: ["/music/b"])

    /// An empty stopped player whose bookmarks file has been read (empty).
    private func ready(_ settings: Settings = Settings()) -> CoreHarness {
        var s = State(settings: settings)
        s.shown = status("stopped")
        s.bookmarksReady = true
        return CoreHarness(s)
    }

    /// `load` of `bookA` (tracks 1-3) on `ready()`: track 1 plays from its start, the queue
    /// with its source is saved, and its first bookmark (track 1 at 0 s) is written.
    private func loadBookA(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.loadSource(bookA, tracks: infos(3)), file: file, line: line, {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 3]
            $0.nextTrackID = 4
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/books/a"])
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.nextPlayID = 3
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]
            $0.shown = status("playing", song: 1, index: 1, of: 3)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 2, path: "/music/2.flac")),
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]),
            .render(status("playing", song: 1, index: 1, of: 3)),
        ])
    }

    /// The periodic place save at `now` while `bookA` (tracks 1-3) plays `track` at `position`:
    /// the place is saved, the bookmark moves on in memory only (`bookmarksAhead`).
    private func placeSave(_ h: CoreHarness, now: Double, track: Int, position: Double, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.tick(now: now), file: file, line: line, {
            $0.now = now
            $0.savedPosition = position
            $0.savedAt = now
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/\(track).flac", position: position)]
            $0.bookmarksAhead = true
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: track - 1, position: position, phase: .playing, source: bookA)),
        ])
    }

    func testALoadedSourceKeepsItsPlaceWithEachSaveAndResumesThereAfterAnother() {
        let h = ready()
        loadBookA(h)
        h.heard(1, at: 3, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "0:03"))
        // Before the periodic save (4 s: `saveInterval` 5 less the write's second) nothing is
        // written, the bookmark neither. At it, the place is saved and the bookmark moves on in
        // memory only: the state file holds the same place.
        h.send(.tick(now: 3.9), { $0.now = 3.9 }, commands: [])
        placeSave(h, now: 4, track: 1, position: 3)
        // Another source: the first keeps its place (written now, with the second's).
        h.send(.loadSource(albumB, tracks: [info(4), info(5)]), {
            $0.queue = [Track(id: 4, info: info(4)), Track(id: 5, info: info(5))]
            $0.order = [4, 5]
            $0.nextTrackID = 6
            $0.queueRevision = 2
            $0.position = 0
            $0.source = QueueSource(paths: ["/music/b"])
            $0.loaded = PlayRef(playID: 3, trackID: 4)
            $0.handedNext = PlayRef(playID: 4, trackID: 5)
            $0.nextPlayID = 5
            $0.savedMark = mark(revision: 2, current: 4, phase: .playing)
            $0.savedPosition = 0
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 3),
                            Bookmark(paths: ["/music/b"], track: "/music/4.flac", position: 0)]
            $0.bookmarksAhead = false
            $0.shown = status("playing", song: 4, index: 1, of: 2)
        }, commands: [
            .stopOutput,
            .startTrack(playID: 3, path: "/music/4.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/5.flac")),
            .persist(Snapshot(tracks: [info(4), info(5)], current: 0, phase: .playing, source: QueueSource(paths: ["/music/b"]))),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 3),
                               Bookmark(paths: ["/music/b"], track: "/music/4.flac", position: 0)]),
            .render(status("playing", song: 4, index: 1, of: 2)),
        ])
        // The first again: it resumes at 0:03 of track 1, and is now the newest bookmark.
        h.send(.loadSource(bookA, tracks: infos(3)), {
            $0.queue = [Track(id: 6, info: info(1)), Track(id: 7, info: info(2)), Track(id: 8, info: info(3))]
            $0.order = [6, 7, 8]
            $0.nextTrackID = 9
            $0.queueRevision = 3
            $0.position = 3
            $0.source = QueueSource(paths: ["/books/a"])
            $0.loaded = PlayRef(playID: 5, trackID: 6)
            $0.handedNext = PlayRef(playID: 6, trackID: 7)
            $0.nextPlayID = 7
            $0.savedMark = mark(revision: 3, current: 6, phase: .playing)
            $0.savedPosition = 3
            $0.bookmarks = [Bookmark(paths: ["/music/b"], track: "/music/4.flac", position: 0),
                            Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 3)]
            $0.shown = status("playing", song: 1, index: 1, of: 3, elapsed: "0:03")
        }, commands: [
            .stopOutput,
            .startTrack(playID: 5, path: "/music/1.flac", at: 3, paused: false, next: NextPlay(playID: 6, path: "/music/2.flac")),
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 3, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/music/b"], track: "/music/4.flac", position: 0),
                               Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 3)]),
            .render(status("playing", song: 1, index: 1, of: 3, elapsed: "0:03")),
        ])
    }

    func testPlayedToItsEndTheBookmarkIsForgottenAndTheNextStartIsFromTheTop() {
        let h = ready()
        h.send(.loadSource(bookA, tracks: [info(1)]), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/books/a"])
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.nextPlayID = 2
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]
            $0.shown = status("playing", song: 1, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]),
            .render(status("playing", song: 1, index: 1, of: 1)),
        ])
        h.heard(1, at: 99, shows: status("playing", song: 1, index: 1, of: 1, elapsed: "1:39"))
        h.send(.trackFinished(playID: 1, next: nil), {
            $0.phase = .stopped
            $0.position = 0
            $0.loaded = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.bookmarks = []
            $0.shown = status("stopped", song: 1, index: 1, of: 1)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, phase: .stopped, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([]),
            .render(status("stopped", song: 1, index: 1, of: 1)),
        ])
        h.send(.loadSource(bookA, tracks: [info(1)]), {
            $0.queue = [Track(id: 2, info: info(1))]
            $0.order = [2]
            $0.nextTrackID = 3
            $0.queueRevision = 2
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.nextPlayID = 3
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]
            $0.shown = status("playing", song: 1, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 2, path: "/music/1.flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]),
            .render(status("playing", song: 1, index: 1, of: 1)),
        ])
    }

    func testAStopKeepsThePlaceBeforeItsRewindAndTheNextLoadResumesThere() {
        let h = ready()
        loadBookA(h)
        h.heard(1, at: 30, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "0:30"))
        h.send(.stop, {
            $0.phase = .stopped
            $0.position = 0
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 30)]
            $0.shown = status("stopped", song: 1, index: 1, of: 3)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .stopped, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 30)]),
            .render(status("stopped", song: 1, index: 1, of: 3)),
        ])
        h.send(.loadSource(bookA, tracks: infos(3)), {
            $0.queue = [Track(id: 4, info: info(1)), Track(id: 5, info: info(2)), Track(id: 6, info: info(3))]
            $0.order = [4, 5, 6]
            $0.nextTrackID = 7
            $0.queueRevision = 2
            $0.phase = .playing
            $0.position = 30
            $0.loaded = PlayRef(playID: 3, trackID: 4)
            $0.handedNext = PlayRef(playID: 4, trackID: 5)
            $0.nextPlayID = 5
            $0.savedMark = mark(revision: 2, current: 4, phase: .playing)
            $0.savedPosition = 30
            $0.shown = status("playing", song: 1, index: 1, of: 3, elapsed: "0:30")
        }, commands: [
            .startTrack(playID: 3, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 30, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .render(status("playing", song: 1, index: 1, of: 3, elapsed: "0:30")),
        ])
    }

    /// A station (a card's URL, a `load` of one) keeps no bookmark: loaded, heard and stopped, the
    /// list stays empty (a live stream has no place to resume).
    func testAStationKeepsNoBookmark() {
        let h = ready()
        let station = QueueSource(paths: ["http://radio.example/live"])
        let live = TrackInfo(path: "http://radio.example/live", title: "Live")
        let snapshot = Snapshot(tracks: [live], current: 0, phase: .playing, source: station)
        h.send(.loadSource(station, tracks: [live]), {
            $0.queue = [Track(id: 1, info: live)]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.source = station
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", title: "Live", elapsed: "0:00", index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "http://radio.example/live", at: 0, paused: false, next: nil),
            .persist(snapshot),
            .render(status("playing", title: "Live", elapsed: "0:00", index: 1, of: 1)),
        ])
        h.send(.heard(playID: 1, seconds: 30), {
            $0.position = 30
            $0.shown = status("playing", title: "Live", elapsed: "0:30", index: 1, of: 1)
        }, commands: [.render(status("playing", title: "Live", elapsed: "0:30", index: 1, of: 1))])
        h.send(.stop, {
            $0.phase = .stopped
            $0.position = 0
            $0.loaded = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.shown = status("stopped", title: "Live", elapsed: "0:00", index: 1, of: 1)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: [live], current: 0, source: station)),
            .render(status("stopped", title: "Live", elapsed: "0:00", index: 1, of: 1)),
        ])
        XCTAssertEqual(h.state.bookmarks, [])
    }

    func testBeyondTheLimitTheBookmarkTouchedLongestAgoGoes() {
        var settings = Settings()
        settings.bookmarkLimit = 2
        let h = ready(settings)
        h.send(.bookmarksLoaded([Bookmark(paths: ["/s/1"], track: "/music/1.flac", position: 1),
                                 Bookmark(paths: ["/s/2"], track: "/music/2.flac", position: 2),
                                 Bookmark(paths: ["/s/3"], track: "/music/3.flac", position: 3)]), {
            // A file longer than the limit (the limit was lowered): its newest entries are kept.
            $0.bookmarks = [Bookmark(paths: ["/s/2"], track: "/music/2.flac", position: 2),
                            Bookmark(paths: ["/s/3"], track: "/music/3.flac", position: 3)]
        }, commands: [])
        h.send(.loadSource(QueueSource(paths: ["/s/4"]), tracks: [info(4)]), {
            $0.queue = [Track(id: 1, info: info(4))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/s/4"])
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.nextPlayID = 2
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.bookmarks = [Bookmark(paths: ["/s/3"], track: "/music/3.flac", position: 3),
                            Bookmark(paths: ["/s/4"], track: "/music/4.flac", position: 0)]
            $0.shown = status("playing", song: 4, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/music/4.flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(4)], current: 0, phase: .playing, source: QueueSource(paths: ["/s/4"]))),
            .persistBookmarks([Bookmark(paths: ["/s/3"], track: "/music/3.flac", position: 3),
                               Bookmark(paths: ["/s/4"], track: "/music/4.flac", position: 0)]),
            .render(status("playing", song: 4, index: 1, of: 1)),
        ])
        // The older of the two, played again, becomes the newest: the next new source drops /s/4.
        h.send(.loadSource(QueueSource(paths: ["/s/3"]), tracks: [info(3)]), {
            $0.queue = [Track(id: 2, info: info(3))]
            $0.order = [2]
            $0.nextTrackID = 3
            $0.queueRevision = 2
            $0.position = 3
            $0.source = QueueSource(paths: ["/s/3"])
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.nextPlayID = 3
            $0.savedMark = mark(revision: 2, current: 2, phase: .playing)
            $0.savedPosition = 3
            $0.bookmarks = [Bookmark(paths: ["/s/4"], track: "/music/4.flac", position: 0),
                            Bookmark(paths: ["/s/3"], track: "/music/3.flac", position: 3)]
            $0.shown = status("playing", song: 3, index: 1, of: 1, elapsed: "0:03")
        }, commands: [
            .stopOutput,
            .startTrack(playID: 2, path: "/music/3.flac", at: 3, paused: false),
            .persist(Snapshot(tracks: [info(3)], current: 0, position: 3, phase: .playing, source: QueueSource(paths: ["/s/3"]))),
            .persistBookmarks([Bookmark(paths: ["/s/4"], track: "/music/4.flac", position: 0),
                               Bookmark(paths: ["/s/3"], track: "/music/3.flac", position: 3)]),
            .render(status("playing", song: 3, index: 1, of: 1, elapsed: "0:03")),
        ])
    }

    /// `load` of `source` (track `n` alone) on a fresh `ready(settings)` player; `kept`: whether
    /// the source keeps a bookmark under those settings.
    private func loadAlone(_ source: QueueSource, track n: Int, settings: Settings, kept: Bool,
                           file: StaticString = #filePath, line: UInt = #line) {
        let h = ready(settings)
        let mark1 = Bookmark(paths: source.paths, track: "/music/\(n).flac", position: 0)
        h.send(.loadSource(source, tracks: [info(n)]), file: file, line: line, {
            $0.queue = [Track(id: 1, info: info(n))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.source = kept ? source : nil
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.nextPlayID = 2
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.bookmarks = kept ? [mark1] : []
            $0.shown = status("playing", song: n, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/music/\(n).flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(n)], current: 0, phase: .playing, source: kept ? source : nil)),
        ] + (kept ? [.persistBookmarks([mark1])] : []) + [
            .render(status("playing", song: n, index: 1, of: 1)),
        ])
    }

    func testAudiobooksAreTheListedFoldersAndTheMarkedOnesAndNeverKeepsNone() {
        var books = Settings()
        books.bookmarks = .audiobooks
        books.audiobookFolders = ["/books/"]
        loadAlone(QueueSource(paths: ["/music/b"]), track: 1, settings: books, kept: false)
        loadAlone(QueueSource(paths: ["/booksellers/b"]), track: 1, settings: books, kept: false)
        loadAlone(QueueSource(paths: ["/books"]), track: 2, settings: books, kept: true)
        loadAlone(QueueSource(paths: ["/music/x", "/books/a/part1.m3u"]), track: 3, settings: books, kept: true)
        loadAlone(QueueSource(paths: ["/music/c"], marked: true), track: 4, settings: books, kept: true)
        var never = Settings()
        never.bookmarks = .never
        never.audiobookFolders = ["/books"]
        loadAlone(QueueSource(paths: ["/books/a"], marked: true), track: 5, settings: never, kept: false)
        loadAlone(QueueSource(paths: ["/music/d"]), track: 6, settings: Settings(), kept: true)
    }

    func testNothingIsWrittenBeforeTheFileWasReadAndWhatItHoldsWins() {
        var s = State()
        s.shown = status("stopped")
        let h = CoreHarness(s)
        h.send(.loadSource(bookA, tracks: [info(1)]), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/books/a"])
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.nextPlayID = 2
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]
            $0.bookmarksDirty = true
            $0.shown = status("playing", song: 1, index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .render(status("playing", song: 1, index: 1, of: 1)),
        ])
        h.send(.bookmarksLoaded([Bookmark(paths: ["/books/z"], track: "/music/9.flac", position: 9),
                                 Bookmark(paths: ["/books/y"], track: "/music/8.flac", position: .nan)]), {
            $0.bookmarks = [Bookmark(paths: ["/books/z"], track: "/music/9.flac", position: 9)]
            $0.bookmarksReady = true
            $0.bookmarksDirty = false
        }, commands: [])
        h.heard(1, at: 6, shows: status("playing", song: 1, index: 1, of: 1, elapsed: "0:06"))
        // The next save that writes the bookmarks (a seek: the periodic one keeps them in
        // memory) writes what the file held with this source's place.
        h.send(.seek(to: 20), {
            $0.position = 20
            $0.savedPosition = 20
            $0.bookmarks = [Bookmark(paths: ["/books/z"], track: "/music/9.flac", position: 9),
                            Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 20)]
            $0.shown = status("playing", song: 1, index: 1, of: 1, elapsed: "0:20")
        }, commands: [
            .seekOutput(to: 20),
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, position: 20, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/books/z"], track: "/music/9.flac", position: 9),
                               Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 20)]),
            .render(status("playing", song: 1, index: 1, of: 1, elapsed: "0:20")),
        ])
    }

    func testACardResumesItsBookmarkedTrackAndAGoneTrackStartsFromTheTop() {
        var s = State()
        s.shown = status("stopped")
        s.bookmarksReady = true
        s.cards.map = CardMap(["A1": .play(["/books/a"])])
        s.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 142)]
        let h = CoreHarness(s)
        h.cardLoads("A1", at: 10, paths: ["/books/a"])
        // Past the track's end in the bookmark (the file was replaced by a shorter one): its end.
        h.send(.cardTracks(card: "A1", tracks: infos(3), messages: []), {
            $0.cards.loading = nil
            $0.cards.active = ActiveCard(id: "A1", tracks: 1..<4)
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 3]
            $0.nextTrackID = 4
            $0.queueRevision = 1
            $0.cursor = 1
            $0.position = 100
            $0.phase = .playing
            $0.source = QueueSource(paths: ["/books/a"])
            $0.loaded = PlayRef(playID: 1, trackID: 2)
            $0.handedNext = PlayRef(playID: 2, trackID: 3)
            $0.nextPlayID = 3
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.savedPosition = 100
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 100)]
            $0.shown = status("playing", song: 2, index: 2, of: 3, elapsed: "1:40")
        }, commands: [
            .startTrack(playID: 1, path: "/music/2.flac", at: 100, paused: false, next: NextPlay(playID: 2, path: "/music/3.flac")),
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 100, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 100)]),
            .render(status("playing", song: 2, index: 2, of: 3, elapsed: "1:40")),
        ])
        // The folder read again without that track: from the top (the bookmark is not used).
        h.send(.stop, {
            $0.phase = .stopped
            $0.position = 0
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 2, phase: .stopped)
            $0.savedPosition = 0
            $0.shown = status("stopped", song: 2, index: 2, of: 3)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .stopped, source: QueueSource(paths: ["/books/a"]))),
            .render(status("stopped", song: 2, index: 2, of: 3)),
        ])
        h.cardLoads("A1", at: 20, paths: ["/books/a"])
        h.send(.cardTracks(card: "A1", tracks: [info(1), info(3)], messages: []), {
            $0.cards.loading = nil
            $0.cards.active = ActiveCard(id: "A1", tracks: 4..<6)
            $0.queue = [Track(id: 4, info: info(1)), Track(id: 5, info: info(3))]
            $0.order = [4, 5]
            $0.nextTrackID = 6
            $0.queueRevision = 2
            $0.cursor = 0
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 3, trackID: 4)
            $0.handedNext = PlayRef(playID: 4, trackID: 5)
            $0.nextPlayID = 5
            $0.savedMark = mark(revision: 2, current: 4, phase: .playing)
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 3, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/3.flac")),
            .persist(Snapshot(tracks: [info(1), info(3)], current: 0, phase: .playing, source: QueueSource(paths: ["/books/a"]))),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 0)]),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
    }

    func testARestoreKeepsTheQueuesSourceAndAClearForgetsIt() {
        let h = ready()
        h.send(.restore(Snapshot(tracks: [info(1)], current: 0, position: 12, phase: .paused, source: QueueSource(paths: ["/books/a"]))), {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.cursor = 0
            $0.position = 12
            $0.phase = .paused
            $0.source = QueueSource(paths: ["/books/a"])
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 12
            // The saved place of a paused source is its bookmark (`followRestoredPlace`).
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 12)]
            $0.shown = status("paused", song: 1, index: 1, of: 1, elapsed: "0:12")
        }, commands: [
            .setVolume(100),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 12)]),
            .render(status("paused", song: 1, index: 1, of: 1, elapsed: "0:12")),
        ])
        // Cleared while paused at 0:12: that is the source's place (already written).
        h.send(.clear, {
            $0.queue = []
            $0.order = []
            $0.cursor = nil
            $0.position = 0
            $0.phase = .stopped
            $0.queueRevision = 2
            $0.source = nil
            $0.savedMark = mark(revision: 2, current: nil, phase: .stopped)
            $0.savedPosition = 0
            $0.shown = status("stopped")
        }, commands: [
            .persist(Snapshot(phase: .stopped)),
            .render(status("stopped")),
        ])
    }

    /// The bookmarks file is written at every save but the periodic place save of a source
    /// playing on: ticks move the bookmark in memory (`bookmarksAhead`), a pause writes it with
    /// the place, a new track writes it, and the exit writes what the ticks left waiting.
    func testWhileASourcePlaysOnOnlyTheOtherSavesWriteTheBookmarks() {
        let h = ready()
        loadBookA(h)
        h.heard(1, at: 3, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "0:03"))
        placeSave(h, now: 4, track: 1, position: 3)
        h.heard(1, at: 7, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "0:07"))
        placeSave(h, now: 8, track: 1, position: 7)
        // The next track (the successor handed to the engine starts): written at once.
        h.send(.trackStarted(playID: 2), {
            $0.cursor = 1
            $0.position = 0
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.handedNext = PlayRef(playID: 3, trackID: 3)
            $0.nextPlayID = 4
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.savedPosition = 0
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 0)]
            $0.bookmarksAhead = false
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .setNext(playID: 3, path: "/music/3.flac"),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, phase: .playing, source: bookA)),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 0)]),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
        h.heard(2, at: 5, shows: status("playing", song: 2, index: 2, of: 3, elapsed: "0:05"))
        placeSave(h, now: 12, track: 2, position: 5)
        h.heard(2, at: 6, shows: status("playing", song: 2, index: 2, of: 3, elapsed: "0:06"))
        // A pause: the place and the bookmark are written together.
        h.send(.pause, {
            $0.phase = .paused
            $0.savedMark = mark(revision: 1, current: 2, phase: .paused)
            $0.savedPosition = 6
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 6)]
            $0.bookmarksAhead = false
            $0.shown = status("paused", song: 2, index: 2, of: 3, elapsed: "0:06")
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 6, phase: .paused, source: bookA)),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 6)]),
            .render(status("paused", song: 2, index: 2, of: 3, elapsed: "0:06")),
        ])
        h.send(.play, {
            $0.phase = .playing
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 3, elapsed: "0:06")
        }, commands: [
            .resumeOutput,
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 6, phase: .playing, source: bookA)),
            .render(status("playing", song: 2, index: 2, of: 3, elapsed: "0:06")),
        ])
        h.heard(2, at: 9, shows: status("playing", song: 2, index: 2, of: 3, elapsed: "0:09"))
        placeSave(h, now: 16, track: 2, position: 9)
        // The exit writes the state whole and the bookmark the ticks left waiting.
        h.send(.quit, {
            $0.loaded = nil
            $0.handedNext = nil
            $0.bookmarksAhead = false
        }, commands: [
            .stopOutput,
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 9, phase: .playing, source: bookA)),
            .persistBookmarks([Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 9)]),
            .exit(code: 0),
        ])
    }

    /// At start the state file's place of a source playing when the power went becomes its
    /// bookmark (the bookmarks file, not written at the place saves, is older); another
    /// source's bookmark is untouched. Bookmarks read first, as the shell does.
    func testAtStartThePlaceOfTheSourcePlayingBecomesItsBookmarkAndNoOtherChanges() {
        var s = State()
        s.shown = status("stopped")
        let h = CoreHarness(s)
        let fromFile = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 30),
                        Bookmark(paths: ["/music/b"], track: "/music/4.flac", position: 10)]
        h.send(.bookmarksLoaded(fromFile), {
            $0.bookmarks = fromFile
            $0.bookmarksReady = true
        }, commands: [])
        let saved = Snapshot(tracks: [info(1), info(2), info(3)], current: 1, position: 50, phase: .playing, source: bookA)
        h.send(.restore(saved), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 3]
            $0.nextTrackID = 4
            $0.queueRevision = 1
            $0.cursor = 1
            $0.position = 50
            $0.phase = .playing
            $0.source = bookA
            $0.loaded = PlayRef(playID: 1, trackID: 2)
            $0.handedNext = PlayRef(playID: 2, trackID: 3)
            $0.nextPlayID = 3
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.savedPosition = 50
            $0.bookmarks = [Bookmark(paths: ["/music/b"], track: "/music/4.flac", position: 10),
                            Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 50)]
            $0.shown = status("playing", song: 2, index: 2, of: 3, elapsed: "0:50")
        }, commands: [
            .setVolume(100),
            .startTrack(playID: 1, path: "/music/2.flac", at: 50, paused: false, next: NextPlay(playID: 2, path: "/music/3.flac")),
            .persistBookmarks([Bookmark(paths: ["/music/b"], track: "/music/4.flac", position: 10),
                               Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 50)]),
            .render(status("playing", song: 2, index: 2, of: 3, elapsed: "0:50")),
        ])
    }

    /// Restored before the bookmarks are read, the place waits for them; a stopped state's
    /// place (rewound by the stop, or the end of the source) is no bookmark: the file's stays.
    func testARestoredPlaceWaitsForTheBookmarksAndAStoppedOneChangesNothing() {
        for phase in [SavedPhase.paused, .stopped] {
            var s = State()
            s.shown = status("stopped")
            let h = CoreHarness(s)
            let saved = Snapshot(tracks: [info(1), info(2)], current: 1, position: phase == .stopped ? 0 : 20, phase: phase, source: bookA)
            let elapsed = phase == .stopped ? "0:00" : "0:20"
            let shown = status(phase == .stopped ? "stopped" : "paused", song: 2, index: 2, of: 2, elapsed: elapsed)
            h.send(.restore(saved), {
                $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
                $0.order = [1, 2]
                $0.nextTrackID = 3
                $0.queueRevision = 1
                $0.cursor = 1
                $0.position = saved.position
                $0.phase = phase == .stopped ? .stopped : .paused
                $0.source = bookA
                $0.savedMark = mark(revision: 1, current: 2, phase: phase)
                $0.savedPosition = saved.position
                $0.restoredPlace = phase == .stopped ? nil : Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 20)
                $0.shown = shown
            }, commands: [.setVolume(100), .render(shown)])
            let fromFile = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 30)]
            let after = phase == .stopped ? fromFile : [Bookmark(paths: ["/books/a"], track: "/music/2.flac", position: 20)]
            h.send(.bookmarksLoaded(fromFile), {
                $0.bookmarks = after
                $0.bookmarksReady = true
                $0.restoredPlace = nil
            }, commands: phase == .stopped ? [] : [.persistBookmarks(after)])
        }
    }

    /// A reset of the queue's own source where it is paused lasts: a save after it (a repeat
    /// change) makes no bookmark, the queue file keeps the reset, and a start from that file makes
    /// none either (before: the next save, or the start, made the place its bookmark again). Once
    /// it plays on from there, it keeps one again and the queue file forgets the reset.
    func testAResetOfThePausedSourceLastsOverItsSavesAndAStartUntilItPlaysOn() {
        let h = ready()
        loadBookA(h)
        h.heard(1, at: 3, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "0:03"))
        let at3 = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 3)]
        h.send(.pause, {
            $0.phase = .paused
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 3
            $0.bookmarks = at3
            $0.shown = status("paused", song: 1, index: 1, of: 3, elapsed: "0:03")
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 3, phase: .paused, source: bookA)),
            .persistBookmarks(at3),
            .render(status("paused", song: 1, index: 1, of: 3, elapsed: "0:03")),
        ])
        let reset = BookmarkReset(track: "/music/1.flac", position: 3)
        var resetMark = mark(revision: 1, current: 1, phase: .paused)
        resetMark.bookmarkReset = reset
        h.send(.resetBookmarks(path: "/books/a"), {
            $0.bookmarks = []
            $0.bookmarkReset = reset
            $0.savedMark = resetMark
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 3, phase: .paused, source: bookA, bookmarkReset: reset)),
            .persistBookmarks([]),
        ])
        resetMark.repeatMode = .all
        let saved = Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 3, phase: .paused,
                             repeatMode: .all, source: bookA, bookmarkReset: reset)
        h.send(.setRepeat(.all), {
            $0.repeatMode = .all
            $0.savedMark = resetMark
            $0.shown = status("paused", song: 1, index: 1, of: 3, elapsed: "0:03", repeat: .all)
        }, commands: [
            .persistPlace(saved),
            .render(status("paused", song: 1, index: 1, of: 3, elapsed: "0:03", repeat: .all)),
        ])

        // The power goes; the player starts from what was saved.
        var s = State()
        s.shown = status("stopped")
        let again = CoreHarness(s)
        again.send(.bookmarksLoaded([]), { $0.bookmarksReady = true }, commands: [])
        let shown = status("paused", song: 1, index: 1, of: 3, elapsed: "0:03", repeat: .all)
        again.send(.restore(saved), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 3]
            $0.nextTrackID = 4
            $0.queueRevision = 1
            $0.cursor = 0
            $0.position = 3
            $0.phase = .paused
            $0.repeatMode = .all
            $0.source = bookA
            $0.bookmarkReset = reset
            $0.savedMark = resetMark
            $0.savedPosition = 3
            $0.shown = shown
        }, commands: [.setVolume(100), .render(shown)])
        XCTAssertEqual(again.state.bookmarks, [], "the start made the reset place a bookmark again")

        // It plays on: at the next place save it keeps a bookmark again, and the queue file
        // forgets the reset with that save.
        let playing = status("playing", song: 1, index: 1, of: 3, elapsed: "0:03", repeat: .all)
        again.send(.play, {
            $0.phase = .playing
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all, bookmarkReset: reset)
            $0.shown = playing
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 3, paused: false, next: NextPlay(playID: 2, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 3, phase: .playing,
                                   repeatMode: .all, source: bookA, bookmarkReset: reset)),
            .render(playing),
        ])
        again.heard(1, at: 5, shows: status("playing", song: 1, index: 1, of: 3, elapsed: "0:05", repeat: .all))
        again.send(.tick(now: 4), {
            $0.bookmarks = [Bookmark(paths: ["/books/a"], track: "/music/1.flac", position: 5)]
            $0.bookmarksAhead = true
            $0.bookmarkReset = nil
            $0.now = 4
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all)
            $0.savedPosition = 5
            $0.savedAt = 4
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, position: 5, phase: .playing, repeatMode: .all, source: bookA)),
        ])
    }
}
