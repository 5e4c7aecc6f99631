// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
@testable import JukeboxWeb
import XCTest

/// Covers, search and stations: the web face's pure pieces, by tables.
final class LibraryPiecesTests: XCTestCase {
    func testTheCoverOfAFolderIsTheFirstKnownNameWhateverItsCase() {
        let table: [([String], String?)] = [
            ([], nil),
            (["01.flac", "notes.txt"], nil),
            (["01.flac", "cover.jpg"], "cover.jpg"),
            (["folder.jpg", "cover.png"], "cover.png"),
            (["Folder.JPG", "front.png"], "Folder.JPG"),
            (["front.png", "album.jpg"], "front.png"),
            (["AlbumArt.jpg"], "AlbumArt.jpg"),
            ([".cover.jpg", "cover.gif", "cover.webp", "cover.jpg.part"], nil),
            (["COVER.JPG", "cover.jpg"], "COVER.JPG"),  // both: the first by bytes, every time
            (["<img src=x onerror=alert(1)>.jpg"], nil),
        ]
        for (names, expected) in table {
            XCTAssertEqual(CoverImage.choose(names), expected, "\(names)")
            XCTAssertEqual(CoverImage.choose(names.reversed()), expected, "\(names.reversed())")
        }
    }

    func testAnImageIsKnownByItsBytesNotItsName() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
        let table: [([UInt8], String?)] = [
            ([0xFF, 0xD8, 0xFF, 0xE0, 0, 16], "image/jpeg"),
            ([0xFF, 0xD8, 0xFF], "image/jpeg"),
            ([0xFF, 0xD8], nil),
            (png, "image/png"),
            (Array(png.prefix(7)), nil),
            (Array("GIF89a".utf8), nil),
            (Array("<svg onload=alert(1)>".utf8), nil),
            (Array("RIFF\0\0\0\0WEBP".utf8), nil),
            ([], nil),
        ]
        for (bytes, expected) in table { XCTAssertEqual(CoverImage.sniff(bytes), expected, "\(bytes)") }
    }

    func testTheETagFollowsTheBytesAndIfNoneMatchIsAList() {
        let a = CoverImage.etag([1, 2, 3]), b = CoverImage.etag([1, 2, 4])
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(a, CoverImage.etag([1, 2, 3]))
        XCTAssertTrue(a.hasPrefix("\"") && a.hasSuffix("-3\""))
        XCTAssertTrue(CoverImage.matches(ifNoneMatch: a, a))
        XCTAssertTrue(CoverImage.matches(ifNoneMatch: "\"x\", " + a, a))
        XCTAssertTrue(CoverImage.matches(ifNoneMatch: "W/" + a, a))
        XCTAssertTrue(CoverImage.matches(ifNoneMatch: "*", a))
        XCTAssertFalse(CoverImage.matches(ifNoneMatch: b, a))
        XCTAssertFalse(CoverImage.matches(ifNoneMatch: nil, a))
    }

    func testAStationNeedsANameAndAnHTTPURLOfOneLine() {
        let long = "http://r.example/" + String(repeating: "a", count: 1000)
        let table: [(String, String, String?)] = [
            ("Radio One", "http://radio.example:8000/live.mp3", nil),
            ("R", "HTTPS://radio.example/a?b=c#d", nil),
            ("<img src=x onerror=alert(1)>", "http://192.168.1.5/x", nil),
            ("", "http://radio.example/", "a station needs a name"),
            ("  ", "http://radio.example/", "a station needs a name"),
            (String(repeating: "n", count: 101), "http://radio.example/", "a station's name is at most 100 characters"),
            ("A\nB", "http://radio.example/", "a station's name cannot hold control characters"),
            ("A\u{85}B", "http://radio.example/", "a station's name cannot hold control characters"),
            ("A", "file:///etc/passwd", "a station's URL starts with http:// or https://"),
            ("A", "javascript:alert(1)", "a station's URL starts with http:// or https://"),
            ("A", "/srv/music/a.flac", "a station's URL starts with http:// or https://"),
            ("A", "http://", "a station's URL names no host"),
            ("A", "http:///x", "a station's URL names no host"),
            ("A", "http://:80/x", "a station's URL names no host"),
            ("A", "http://user@evil/x", "a station's URL names no host"),
            ("A", "http://r.example/a b", "a station's URL cannot hold spaces or control characters"),
            ("A", "http://r.example/\r\nadd /etc", "a station's URL cannot hold spaces or control characters"),
            ("A", long, "a station's URL is at most 1000 bytes"),
        ]
        for (name, url, expected) in table {
            XCTAssertEqual(StationList.problem(Station(name: name, url: url)), expected, "\(name.debugDescription) \(url.debugDescription)")
        }
        XCTAssertEqual(StationList.problem([Station(name: "A", url: "http://a/"), Station(name: "B", url: "ftp://b/")]),
                       "station 2: a station's URL starts with http:// or https://")
        XCTAssertEqual(StationList.problem(Array(repeating: Station(name: "A", url: "http://a/"), count: 201)), "at most 200 stations")
    }

    func testTheStationsFileIsAnExtendedM3UReadBackAsWritten() {
        let list = [Station(name: "Radio One", url: "http://radio.example:8000/live.mp3"),
                    Station(name: "<b>x</b>, \"quoted\"", url: "https://r.example/a?b=1,2")]
        let text = StationList.m3u(list)
        XCTAssertEqual(text, "#EXTM3U\n#EXTINF:-1,Radio One\nhttp://radio.example:8000/live.mp3\n"
            + "#EXTINF:-1,<b>x</b>, \"quoted\"\nhttps://r.example/a?b=1,2\n")
        XCTAssertEqual(StationList.parse(text), list)
        // Written by hand: CRLF, no names, comments, a file path and a bad URL left out.
        XCTAssertEqual(StationList.parse("#EXTM3U\r\n# mine\r\nhttp://a.example/x\r\n/srv/music/a.flac\r\n#EXTINF:-1,\r\nhttp://b.example/\r\nftp://c/\r\n"),
                       [Station(name: "http://a.example/x", url: "http://a.example/x"), Station(name: "http://b.example/", url: "http://b.example/")])
        XCTAssertEqual(StationList.parse(""), [])
    }

    func testTheNewRoutes() {
        XCTAssertEqual(WebRoute.route(method: "GET", path: "/api/cover"), .cover)
        XCTAssertEqual(WebRoute.route(method: "GET", path: "/api/search"), .search)
        XCTAssertEqual(WebRoute.route(method: "GET", path: "/api/stations"), .stations)
        XCTAssertEqual(WebRoute.route(method: "POST", path: "/api/stations"), .methodNotAllowed)
        XCTAssertEqual(WebRoute.route(method: "POST", path: "/api/stations/save"), .saveStations)
        XCTAssertEqual(WebRoute.route(method: "GET", path: "/api/stations/save"), .methodNotAllowed)
        XCTAssertEqual(WebRoute.route(method: "GET", path: "/library-extras.js"), .asset("library-extras.js"))
    }

    func testSearchIsOpenToEveryoneAsTheListingIs() throws {
        let command = try ControlCommand.parse("search --json abba", seed: 0).get()
        XCTAssertEqual(ControlAccess.of(command), .open)
    }
}

/// `WebServer.cover` with a stand-in for TagLib's embedded picture (this machine's TagLib 1.13 reads
/// none; Debian 13's does): which source wins, and what is refused.
final class CoverSourceTests: XCTestCase {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 9]

    func testTheFolderImageFirstThenTheTrackThenTheFolderFirstTrack() throws {
        let root = FileManager.default.temporaryDirectory.path + "/jukebox-cover-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["A", "B", "C"] { try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true) }
        for file in ["A/1.flac", "B/1.flac", "B/2.flac", "C/1.flac"] { XCTAssertTrue(FileManager.default.createFile(atPath: root + "/" + file, contents: Data("x".utf8))) }
        XCTAssertTrue(FileManager.default.createFile(atPath: root + "/A/Folder.PNG", contents: Data(Self.png)))
        var options = WebServer.Options(socketPath: root + "/none", assets: root, stateFolder: root)
        // B/1 holds a JPEG, B/2 a GIF (refused though its tag may say image/jpeg), C/1 one too large.
        options.embeddedPicture = { path, limit in
            if path.hasSuffix("/B/1.flac") { return Self.jpeg }
            if path.hasSuffix("/B/2.flac") { return Array("GIF89a".utf8) }
            if path.hasSuffix("/C/1.flac") { return Self.jpeg + [UInt8](repeating: 0, count: limit) }
            return nil
        }
        let server = WebServer(options: options)
        server.musicRoots.preset([root])
        func cover(_ path: String) -> (Int, [UInt8]?, String) {
            let r = server.cover(root + "/" + path, ifNoneMatch: nil)
            return (r.status, r.bytes, r.contentType)
        }
        XCTAssertEqual(cover("A/1.flac").1, Self.png)
        XCTAssertEqual(cover("A/1.flac").2, "image/png")
        XCTAssertEqual(cover("B/1.flac").1, Self.jpeg)
        XCTAssertEqual(cover("B/1.flac").2, "image/jpeg")
        XCTAssertEqual(cover("B").1, Self.jpeg, "a folder: its first track's picture")
        XCTAssertEqual(cover("B/2.flac").0, 404)
        XCTAssertEqual(cover("C/1.flac").0, 404)
        XCTAssertEqual(cover("C").0, 404)
        XCTAssertEqual(server.cover("/etc/passwd", ifNoneMatch: nil).status, 404)
    }
}
