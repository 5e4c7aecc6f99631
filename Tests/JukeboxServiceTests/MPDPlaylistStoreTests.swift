// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import XCTest

/// The stored playlists' files, on a real folder: atomic writes, `exist` on create, no symlink
/// followed, nothing left behind, relative entries rooted in the music folders.
final class MPDPlaylistStoreTests: XCTestCase {
    private var dir: TempDir!
    private var store: MPDPlaylistStore!

    override func setUp() {
        dir = TempDir()
        store = MPDPlaylistStore(folder: dir.file("playlists"), roots: [dir.file("music")])
    }

    private func error(_ r: Result<Void, MPDError>) -> MPDError? {
        guard case .failure(let e) = r else { return nil }
        return e
    }

    private func lines(_ r: FileWorkResult) -> [String]? {
        guard case .success(let out) = r else { return nil }
        return out.lines
    }

    func testSaveThenListReadRenameAndRemove() throws {
        // A missing folder holds no playlists; the first write makes it.
        XCTAssertEqual(lines(store.list()), [])
        XCTAssertNoThrow(try store.write("mine", entries: ["x/a.flac", "/abs/b.flac"], create: true).get())
        XCTAssertEqual(dir.read("playlists/mine.m3u"), "x/a.flac\n/abs/b.flac\n")
        XCTAssertEqual(error(store.write("mine", entries: [], create: true)), MPDError(.exist, "Playlist already exists"))
        XCTAssertEqual(dir.read("playlists/mine.m3u"), "x/a.flac\n/abs/b.flac\n", "a refused create changed the file")
        XCTAssertNoThrow(try store.write("mine", entries: ["c.flac"], create: false).get())
        XCTAssertEqual(try store.entries("mine").get(), ["c.flac"])
        let listed = try XCTUnwrap(lines(store.list()))
        XCTAssertEqual(listed.count, 2)
        XCTAssertEqual(listed.first, "playlist: mine")
        XCTAssertNotNil(listed.last?.range(of: "^Last-Modified: 20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z$",
                                           options: .regularExpression), listed.last ?? "")
        XCTAssertNoThrow(try store.write("other", entries: [], create: true).get())
        XCTAssertEqual(error(store.rename("mine", to: "other")), MPDError(.exist, "Playlist already exists"))
        XCTAssertNoThrow(try store.rename("mine", to: "kept").get())
        XCTAssertEqual(error(store.rename("mine", to: "again")), MPDError(.noExist, "No such playlist"))
        XCTAssertNoThrow(try store.remove("other").get())
        XCTAssertEqual(error(store.remove("other")), MPDError(.noExist, "No such playlist"))
        XCTAssertEqual(store.entries("other"), .failure(MPDError(.noExist, "No such playlist")))
        // No temporary file is left behind, and only regular *.m3u files are listed.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.file("playlists")), ["kept.m3u"])
        XCTAssertEqual(lines(store.list())?.first, "playlist: kept")
    }

    func testSymlinksAndFIFOsInTheFolderAreNeverFollowed() throws {
        dir.write("secret.txt", "/etc/shadow\n")
        XCTAssertNoThrow(try store.write("real", entries: ["a.flac"], create: true).get())
        XCTAssertEqual(symlink(dir.file("secret.txt"), dir.file("playlists/link.m3u")), 0)
        XCTAssertEqual(mkfifo(dir.file("playlists/pipe.m3u"), 0o644), 0)
        XCTAssertEqual(store.entries("link"), .failure(MPDError(.noExist, "No such playlist")))
        // A FIFO would block a plain open: O_NONBLOCK, then it is not a regular file.
        XCTAssertEqual(store.entries("pipe"), .failure(MPDError(.noExist, "No such playlist")))
        XCTAssertEqual(lines(store.list())?.filter { $0.hasPrefix("playlist:") }, ["playlist: real"])
        XCTAssertEqual(error(store.rename("link", to: "mine")), MPDError(.noExist, "No such playlist"))
        // Replacing the link's name replaces the link, not what it points at.
        XCTAssertNoThrow(try store.write("link", entries: ["b.flac"], create: false).get())
        XCTAssertEqual(dir.read("secret.txt"), "/etc/shadow\n")
        XCTAssertEqual(try store.entries("link").get(), ["b.flac"])
    }

    func testBadNamesAreRefusedBeforeAnyFileIsTouched() {
        XCTAssertEqual(error(store.write("../escape", entries: ["x"], create: true)), MPDError(.arg, "Bad playlist name"))
        XCTAssertEqual(store.entries("../../etc/passwd"), .failure(MPDError(.arg, "Bad playlist name")))
        XCTAssertEqual(error(store.remove("..")), MPDError(.arg, "Bad playlist name"))
        XCTAssertEqual(error(store.rename("a", to: "b/c")), MPDError(.arg, "Bad playlist name"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("escape.m3u")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("playlists")), "a refused name made the folder")
    }

    func testRelativeEntriesAreRootedInTheMusicFolders() {
        dir.write("music/x/a.flac", "")
        XCTAssertEqual(store.path(of: "x/a.flac"), dir.file("music/x/a.flac"))
        // Missing: still under the first folder (reported missing when read).
        XCTAssertEqual(store.path(of: "y/b.flac"), dir.file("music/y/b.flac"))
        XCTAssertEqual(store.path(of: "/abs/c.flac"), "/abs/c.flac")
        XCTAssertNil(store.path(of: "../outside.flac"))
        // A stream is itself (internet radio); another scheme is nothing.
        XCTAssertNil(store.path(of: "http://radio.example/stream"), "URLs are off by default")
        XCTAssertEqual(MPDPlaylistStore(folder: store.folder, roots: store.roots, allowURLs: true).path(of: "http://radio.example/stream"),
                       "http://radio.example/stream")
        XCTAssertNil(store.path(of: "ftp://radio.example/stream"))
    }
}
