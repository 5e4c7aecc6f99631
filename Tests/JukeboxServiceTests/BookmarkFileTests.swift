// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import XCTest

/// The bookmarks file: written atomically, read bounded, never lost when it cannot be read; the
/// runtime reads it at start, the state writer writes it, a restart resumes from it.
final class BookmarkFileTests: XCTestCase {
    private let marks = [
        Bookmark(paths: ["/books/a"], track: "/books/a/01.flac", position: 12.5),
        Bookmark(paths: ["/music/x", "/music/y.m3u"], track: "/music/x/\"odd\" name\\.flac", position: 0),
        Bookmark(paths: ["/books/ü"], track: "/books/ü/2.flac", position: 3600.25),
    ]

    func testWrittenThenReadGivesTheSameBookmarksAndLeavesNoTemporaryFile() throws {
        let dir = TempDir()
        try BookmarkFile.write(marks, to: dir.file("state.json.bookmarks"))
        XCTAssertEqual(dir.list(), ["state.json.bookmarks"])
        XCTAssertEqual(BookmarkFile.read(dir.file("state.json.bookmarks"), limit: 500), BookmarkFile.Loaded(bookmarks: marks, messages: []))
        try BookmarkFile.write([], to: dir.file("state.json.bookmarks"))
        XCTAssertEqual(BookmarkFile.read(dir.file("state.json.bookmarks"), limit: 500), BookmarkFile.Loaded(bookmarks: [], messages: []))
    }

    func testAbsentIsNoneAndDamagedIsMovedAsideNotLost() {
        let dir = TempDir()
        XCTAssertEqual(BookmarkFile.read(dir.file("b"), limit: 500), BookmarkFile.Loaded(bookmarks: [], messages: []))
        dir.write("b", "{\"version\":1,\"bookmarks\":[{\"paths\":[\"/a\"],")
        let loaded = BookmarkFile.read(dir.file("b"), limit: 500)
        XCTAssertEqual(loaded.bookmarks, [])
        XCTAssertEqual(loaded.messages.count, 1)
        XCTAssertTrue(loaded.messages[0].contains("moved it to \(dir.file("b")).damaged-1"), loaded.messages[0])
        XCTAssertEqual(dir.list(), ["b.damaged-1"])
        XCTAssertEqual(dir.read("b.damaged-1"), "{\"version\":1,\"bookmarks\":[{\"paths\":[\"/a\"],")
    }

    func testEntriesThatAreNotBookmarksAreLeftOutAndTheNewestKeptWithinTheLimit() {
        let dir = TempDir()
        let long = "/" + String(repeating: "x", count: Bookmark.maxPathBytes)
        dir.write("b", """
            {"version":1,"bookmarks":[
            {"paths":["/1"],"track":"/1/a.flac","position":1},
            {"paths":[],"track":"/e/a.flac","position":1},
            {"paths":["/n"],"track":"/n/a.flac","position":-4},
            {"paths":["\(long)"],"track":"/l/a.flac","position":1},
            {"paths":["/s"],"track":7,"position":1},
            {"paths":["/2"],"track":"/2/a.flac","position":2},
            {"paths":["/3"],"track":"/3/a.flac","position":3}
            ]}
            """)
        let loaded = BookmarkFile.read(dir.file("b"), limit: 2)
        XCTAssertEqual(loaded.bookmarks, [Bookmark(paths: ["/2"], track: "/2/a.flac", position: 2),
                                          Bookmark(paths: ["/3"], track: "/3/a.flac", position: 3)])
        XCTAssertEqual(loaded.messages, ["bookmarks file \(dir.file("b")): left out 4 entries that are not bookmarks"])
    }

    func testAFileThatCannotBeReadIsKeptAndNeverWrittenOver() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        // Larger than a bookmarks file may be: not read, so not known, so not replaced.
        let big = String(repeating: " ", count: BookmarkFile.maxBytes + 1)
        dir.write("state.json.bookmarks", big)
        XCTAssertNil(BookmarkFile.read(store.bookmarksPath, limit: 500).bookmarks)
        let runtime = Runtime(state: State(), audio: RecordingAudio(), store: store, status: RecordingStatus(), log: Log(level: .error))
        runtime.start(initial: [.loadSource(QueueSource(paths: ["/books/a"]), tracks: [TrackInfo(path: "/books/a/1.flac")])])
        runtime.dispatch(.heard(playID: 1, seconds: 30))
        runtime.dispatch(.quit)
        runtime.waitForSaves()
        _ = runtime.finish()
        XCTAssertEqual(store.load().snapshot?.position, 30, "the state file was saved")
        XCTAssertEqual(dir.read("state.json.bookmarks"), big, "the bookmarks file was not")
    }

    func testARestartResumesTheSourceWhereTheLastSaveLeftIt() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let book = QueueSource(paths: ["/books/a"])
        let tracks = [TrackInfo(path: "/books/a/1.flac"), TrackInfo(path: "/books/a/2.flac")]
        let first = Runtime(state: State(), audio: RecordingAudio(), store: store, status: RecordingStatus(), log: Log(level: .error))
        first.start(initial: [.loadSource(book, tracks: tracks)])
        first.dispatch(.next)
        first.dispatch(.heard(playID: 3, seconds: 42))
        first.dispatch(.saveRequested)
        first.waitForSaves()
        XCTAssertEqual(BookmarkFile.read(store.bookmarksPath, limit: 500).bookmarks,
                       [Bookmark(paths: ["/books/a"], track: "/books/a/2.flac", position: 42)])
        // Another queue, then the power goes: the book's bookmark is what was saved.
        first.dispatch(.loadSource(QueueSource(paths: ["/music/b"]), tracks: [TrackInfo(path: "/music/b/1.flac")]))
        first.waitForSaves()
        _ = first.finish()

        let audio = RecordingAudio()
        let second = Runtime(state: State(), audio: audio, store: store, status: RecordingStatus(), log: Log(level: .error))
        second.start(initial: [.loadSource(book, tracks: tracks)])
        XCTAssertEqual(audio.calls, [.volume(100), .play(id: 1, file: "2.flac", at: 42)])
        second.waitForSaves()
        _ = second.finish()
    }

    func testTheResumeMarkIsAFileInTheFolderOrBesideThePlaylist() {
        let dir = TempDir()
        dir.write("book/1.flac", "")
        dir.write("album/1.flac", "")
        dir.write("lists/x.m3u", "")
        XCTAssertFalse(LibraryLoader.resumeMarked([dir.file("book")]))
        dir.write("book/.jukebox-resume", "")
        dir.write("lists/.jukebox-resume", "")
        XCTAssertTrue(LibraryLoader.resumeMarked([dir.file("book")]))
        XCTAssertTrue(LibraryLoader.resumeMarked([dir.file("album"), dir.file("book")]))
        XCTAssertFalse(LibraryLoader.resumeMarked([dir.file("album")]))
        XCTAssertTrue(LibraryLoader.resumeMarked([dir.file("lists/x.m3u")]))
    }
}
