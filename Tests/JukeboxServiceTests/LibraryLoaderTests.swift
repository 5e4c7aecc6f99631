// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import XCTest

final class LibraryLoaderTests: XCTestCase {
    // Tags come from the file name here ("3-07 x.flac" = disc 3, track 7), so the test needs no codec.
    let loader = LibraryLoader { path in
        let name = Paths.stem(path)
        let parts = name.split(separator: " ").first?.split(separator: "-").compactMap { Int($0) } ?? []
        return TrackInfo(path: path, trackNumber: parts.count == 2 ? parts[1] : nil, discNumber: parts.count == 2 ? parts[0] : nil)
    }

    func testFoldersAreWalkedRecursivelyAndSorted() {
        let dir = TempDir()
        for name in ["album/2-01 x.flac", "album/1-02 y.mp3", "album/1-01 z.ogg", "album/cover.jpg", "album/.hidden.flac",
                     "album/sub/track 10.wav", "album/sub/track 9.wav"] {
            dir.write(name, "")
        }
        let (tracks, messages) = loader.load([dir.file("album")])
        XCTAssertEqual(messages, [])
        XCTAssertEqual(tracks.map { String($0.path.dropFirst(dir.path.count + 1)) }, [
            "album/1-01 z.ogg", "album/1-02 y.mp3", "album/2-01 x.flac", "album/sub/track 9.wav", "album/sub/track 10.wav",
        ])
    }

    func testPlaylistsKeepTheirOrderAndNameMissingEntries() {
        let dir = TempDir()
        dir.write("b.flac", "")
        dir.write("a.flac", "")
        let list = dir.write("list.m3u", "#EXTM3U\nb.flac\ngone.flac\na.flac\n")
        let (tracks, messages) = loader.load([list])
        XCTAssertEqual(tracks.map(\.path), [dir.file("b.flac"), dir.file("a.flac")])
        XCTAssertEqual(messages, ["playlist list.m3u: no such file: \(dir.file("gone.flac"))"])
    }

    func testStreamURLsAreQueuedAsTheyAreFromArgumentsAndPlaylists() {
        let dir = TempDir()
        dir.write("a.flac", "")
        let list = dir.write("radio.m3u", "#EXTM3U\n#EXTINF:-1,Test FM\nhttp://radio.example/live.mp3\na.flac\nrtsp://x/y\n")
        var readPaths: [String] = []
        let spying = LibraryLoader { path in
            readPaths.append(path)
            return TrackInfo(path: path)
        }
        let (tracks, messages) = spying.load(["https://radio.example:8443/hi.mp3", list, "http://bad url/"])
        XCTAssertEqual(tracks.map(\.path), ["https://radio.example:8443/hi.mp3", "http://radio.example/live.mp3", dir.file("a.flac")])
        XCTAssertEqual(tracks.first?.title, "radio.example:8443/hi.mp3")
        XCTAssertEqual(readPaths, [dir.file("a.flac")], "a URL is not opened to read tags")
        XCTAssertEqual(messages, ["not a usable URL (spaces, control characters, no host or over 2048 bytes): http://bad url/"])
        // A stream that fails is skipped with its reason, never waited for as music not there ("http:").
        XCTAssertNil(StartUp.missingFolder(of: "http://radio.example/live.mp3"))
    }

    func testMissingPathsAndNonAudioFilesAreNamed() {
        let dir = TempDir()
        let text = dir.write("notes.txt", "")
        let (tracks, messages) = loader.load([dir.file("nope"), text, dir.path])
        XCTAssertEqual(tracks, [])
        XCTAssertEqual(messages, [
            "no such file or folder: \(dir.file("nope"))",
            "not an audio file or playlist (by its name): \(text)",
            "no audio files in \(dir.path)",
        ])
    }

    func testALinkLoopDoesNotHang() throws {
        let dir = TempDir()
        dir.write("a/x.flac", "")
        XCTAssertEqual(symlink(dir.file("a"), dir.file("a/loop")), 0)
        let (tracks, _) = loader.load([dir.file("a")])
        XCTAssertEqual(tracks.map(\.path), [dir.file("a/x.flac")])
    }
}
