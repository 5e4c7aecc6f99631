// SPDX-License-Identifier: MIT
import JukeboxCore
import XCTest

final class LibraryTests: XCTestCase {
    func testFolderOrderIsDiscThenTrackThenNaturalName() {
        let tracks = [
            TrackInfo(path: "/a/x.flac", trackNumber: 2, discNumber: 2),
            TrackInfo(path: "/a/y.flac", trackNumber: 1, discNumber: 2),
            TrackInfo(path: "/a/z.flac", trackNumber: 5, discNumber: 1),
            TrackInfo(path: "/a/track 10.wav"),
            TrackInfo(path: "/a/track 2.wav"),
        ]
        XCTAssertEqual(Library.folderOrder(tracks).map(\.path),
                       ["/a/z.flac", "/a/y.flac", "/a/x.flac", "/a/track 2.wav", "/a/track 10.wav"])
    }

    func testSubfoldersKeepTheirOrderWithoutDiscTags() {
        let tracks = [
            TrackInfo(path: "/b/CD2/01.flac", trackNumber: 1),
            TrackInfo(path: "/b/CD1/02.flac", trackNumber: 2),
            TrackInfo(path: "/b/CD1/01.flac", trackNumber: 1),
            TrackInfo(path: "/b/CD10/01.flac", trackNumber: 1),
        ]
        XCTAssertEqual(Library.folderOrder(tracks).map(\.path),
                       ["/b/CD1/01.flac", "/b/CD1/02.flac", "/b/CD2/01.flac", "/b/CD10/01.flac"])
    }

    func testM3UResolvesRelativeEntriesKeepsStreamsAndSkipsCommentsAndOtherURLs() {
        let text = "\u{FEFF}#EXTM3U\r\n#EXTINF:123,Artist - Title\r\nsongs/one.flac\r\n\r\n../two.mp3\n/abs/three.ogg\nhttp://radio/stream\nrtsp://radio/other\nfile:///x/four%20a.wav\nwin\\five.wav\n  spaced.opus  \nHTTPS://radio.example:8443/live.mp3?x=1\n"
        XCTAssertEqual(Library.parseM3U(text, playlistPath: "/music/lists/mix.m3u8"), [
            "/music/lists/songs/one.flac", "/music/two.mp3", "/abs/three.ogg", "http://radio/stream", "/x/four a.wav",
            "/music/lists/win/five.wav", "/music/lists/spaced.opus", "HTTPS://radio.example:8443/live.mp3?x=1",
        ])
    }

    func testStreamURLsAreToldFromPaths() {
        XCTAssertTrue(Library.isStreamURL("http://radio.example/stream"))
        XCTAssertTrue(Library.isStreamURL("https://radio.example:8443/live.mp3?x=1"))
        XCTAssertTrue(Library.isStreamURL("HTTP://RADIO/"))
        XCTAssertFalse(Library.isStreamURL("/music/http://x"))
        XCTAssertFalse(Library.isStreamURL("http://"))
        XCTAssertFalse(Library.isStreamURL("http:///no-host"))
        XCTAssertFalse(Library.isStreamURL("http://radio/with space"))
        XCTAssertFalse(Library.isStreamURL("http://radio/\u{1B}[2J"))
        XCTAssertFalse(Library.isStreamURL("ftp://radio/stream"))
        XCTAssertFalse(Library.isStreamURL("http://radio/" + String(repeating: "x", count: Library.maxURLLength)))
        XCTAssertEqual(Library.streamTrack("http://radio.example/live.mp3"),
                       TrackInfo(path: "http://radio.example/live.mp3", title: "radio.example/live.mp3"))
    }

    func testAudioAndPlaylistExtensionsAreRecognisedCaseInsensitively() {
        XCTAssertTrue(Library.isAudio("/a/B.FLAC"))
        XCTAssertTrue(Library.isAudio("x.opus"))
        XCTAssertFalse(Library.isAudio("cover.jpg"))
        XCTAssertFalse(Library.isAudio(".flac"))
        XCTAssertTrue(Library.isPlaylist("a.M3U"))
    }

    func testPathsHelpers() {
        XCTAssertEqual(Paths.stem("/a/b/c.d.flac"), "c.d")
        XCTAssertEqual(Paths.directory("/c"), "/")
        XCTAssertEqual(Paths.directory("c"), ".")
        XCTAssertEqual(Paths.resolve("../../x", against: "/a"), "/x")
        XCTAssertEqual(TrackInfo(path: "/m/Intro.wav").title, "Intro")
        XCTAssertEqual(TrackInfo(path: "/m/Intro.wav", title: "").title, "Intro")
    }

    /// A combining mark right after a slash makes one grapheme of the two: the helpers still cut
    /// where the kernel does (at the byte), and tell apart names the kernel tells apart.
    func testPathsCutAtTheSlashByteWhateverFollowsIt() {
        let mark = "\u{301}"  // COMBINING ACUTE ACCENT
        XCTAssertEqual(Paths.fileName("/m/a/\(mark)b.flac"), "\(mark)b.flac")
        XCTAssertEqual(Paths.directory("/m/a/\(mark)b.flac"), "/m/a")
        XCTAssertEqual(Paths.stem("/m/a/\(mark)b.flac"), "\(mark)b")
        XCTAssertEqual(Paths.fileExtension("/m/x.\(mark)FLAC"), "\(mark)flac")
        XCTAssertEqual(Paths.stem("/m/.\(mark)hidden"), ".\(mark)hidden")
        // The kernel walks a, ́, .., b: one `..` takes back the mark's folder only.
        XCTAssertEqual(Paths.resolve("a/\(mark)/../b", against: "/m"), "/m/a/b")
        XCTAssertEqual(Paths.resolve("./\(mark)x/../../y", against: "m"), "y")
        XCTAssertTrue(Paths.isInside("/m/\(mark)x.flac", folder: "/m"))
        XCTAssertTrue(Paths.isInside("/m/", folder: "/m/"))
        XCTAssertFalse(Paths.isInside("/m\(mark)/x.flac", folder: "/m"))
        // é precomposed and é decomposed are two names on disk (String's == says equal).
        XCTAssertFalse(Paths.isInside("/caf\u{E9}/x.flac", folder: "/cafe\(mark)"))
        XCTAssertTrue(Paths.isInside("/cafe\(mark)/x.flac", folder: "/cafe\(mark)"))
        XCTAssertTrue(Paths.isInside("/x", folder: "/"))
        XCTAssertFalse(Paths.isInside("/x", folder: ""))
    }
}

final class TimeFormatTests: XCTestCase {
    func testClock() {
        XCTAssertEqual(TimeFormat.clock(0), "0:00")
        XCTAssertEqual(TimeFormat.clock(59.99), "0:59")
        XCTAssertEqual(TimeFormat.clock(61), "1:01")
        XCTAssertEqual(TimeFormat.clock(3599), "59:59")
        XCTAssertEqual(TimeFormat.clock(3600), "1:00:00")
        XCTAssertEqual(TimeFormat.clock(36061), "10:01:01")
        XCTAssertEqual(TimeFormat.clock(nil), "--:--")
        XCTAssertEqual(TimeFormat.clock(.infinity), "--:--")
        XCTAssertEqual(TimeFormat.clock(-1), "--:--")
    }

    func testParse() {
        XCTAssertEqual(TimeFormat.parse("1:30")?.seconds, 90)
        XCTAssertEqual(TimeFormat.parse("1:30")?.relative, false)
        XCTAssertEqual(TimeFormat.parse("+10")?.seconds, 10)
        XCTAssertEqual(TimeFormat.parse("-0:05")?.seconds, -5)
        XCTAssertEqual(TimeFormat.parse("-0:05")?.relative, true)
        XCTAssertEqual(TimeFormat.parse("1:02:03.5")?.seconds, 3723.5)
        for bad in ["", "+", "1:60", "a", "1::2", "1:2:3:4", "--1", "1e3", "0x10"] {
            XCTAssertNil(TimeFormat.parse(bad), bad)
        }
    }

    func testStatusLine() {
        var s = playing(3)
        _ = reduce(&s, .heard(playID: 1, seconds: 83))
        _ = reduce(&s, .setRepeat(.all))
        XCTAssertEqual(StatusView(s).line, "▶ Song 1 – Band  1:23 / 1:40  [1/3]  vol 100  repeat all")
        XCTAssertEqual(StatusView(State()).line, "■ queue empty  vol 100")
    }
}

final class KeyTests: XCTestCase {
    func testEscapeSequencesSplitAcrossReadsAreJoined() {
        var d = KeyDecoder()
        XCTAssertEqual(d.feed([0x1B]), [])
        XCTAssertEqual(d.feed([0x5B]), [])
        XCTAssertEqual(d.feed([0x43, 0x20]), [.right, .character(" ")])
        XCTAssertEqual(d.feed(Array("\u{1B}[D".utf8)), [.left])
    }

    func testUnknownSequencesAndHighBytesAreDropped() {
        var d = KeyDecoder()
        XCTAssertEqual(d.feed(Array("\u{1B}[15~q".utf8)), [.character("q")])
        XCTAssertEqual(d.feed([0xC3, 0xA9, 0x6E]), [.character("n")])
        XCTAssertEqual(d.feed([0x1B, 0x61]), [.character("a")])
    }

    func testKeysMapToIntents() {
        let s = Settings()
        XCTAssertEqual(KeyMap.event(for: .character(" "), settings: s, seed: 1), .togglePlayPause)
        XCTAssertEqual(KeyMap.event(for: .right, settings: s, seed: 1), .seekBy(10))
        XCTAssertEqual(KeyMap.event(for: .left, settings: s, seed: 1), .seekBy(-10))
        XCTAssertEqual(KeyMap.event(for: .character("+"), settings: s, seed: 1), .changeVolume(by: 5))
        XCTAssertEqual(KeyMap.event(for: .character("s"), settings: s, seed: 9), .toggleShuffle(seed: 9))
        XCTAssertEqual(KeyMap.event(for: .character("r"), settings: s, seed: 1), .cycleRepeat)
        XCTAssertEqual(KeyMap.event(for: .character("q"), settings: s, seed: 1), .quit)
        XCTAssertNil(KeyMap.event(for: .character("z"), settings: s, seed: 1))
    }

    func testToggleShuffleFlipsShuffle() {
        var s = playing(4)
        _ = reduce(&s, .toggleShuffle(seed: 3))
        XCTAssertTrue(s.shuffle)
        _ = reduce(&s, .toggleShuffle(seed: 3))
        XCTAssertFalse(s.shuffle)
        XCTAssertEqual(s.order, [1, 2, 3, 4])
    }
}
