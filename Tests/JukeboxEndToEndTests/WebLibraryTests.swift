// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// Covers, search and the stations list of `jukebox web`, against a real player, through real
/// HTTP on 127.0.0.1 (bytes kept as bytes: a cover is not text).
final class WebLibraryTests: DaemonTestCase {
    private var web: Jukebox.Running?
    private var port: UInt16 = 0
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x80, 0xFE, 0xFF, 0xD9]

    override func tearDown() {
        if let web { web.process.terminate(); _ = web.wait(timeout: 5) }
        super.tearDown()
    }

    /// music/A (a.wav, b.wav, cover.jpg), music/B (c.wav, a GIF named cover.png), music/C
    /// (d.wav, cover.jpg a link to a JPEG outside the music folder); an asset with bytes that
    /// are not UTF-8.
    private func start() throws -> Jukebox.Running {
        let music = dir + "/music"
        for folder in ["A", "B", "C"] { try FileManager.default.createDirectory(atPath: music + "/" + folder, withIntermediateDirectories: true) }
        for (i, path) in ["A/a.wav", "A/b.wav", "B/c.wav", "C/d.wav"].enumerated() {
            try TestAudio.write(path: music + "/" + path, kind: .wav16, frames: 44_100 * (10 + i))
        }
        try Data(Self.jpeg).write(to: URL(fileURLWithPath: music + "/A/cover.jpg"))
        try Data("GIF89a\u{1}\u{0}".utf8).write(to: URL(fileURLWithPath: music + "/B/cover.png"))
        try Data(Self.jpeg).write(to: URL(fileURLWithPath: dir + "/secret.jpg"))
        try FileManager.default.createSymbolicLink(atPath: music + "/C/cover.jpg", withDestinationPath: dir + "/secret.jpg")
        let daemon = try startDaemon([music])
        try FileManager.default.createDirectory(atPath: dir + "/web", withIntermediateDirectories: true)
        try Data("<!doctype html><title>t</title>".utf8).write(to: URL(fileURLWithPath: dir + "/web/index.html"))
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0x00, 0xC3, 0x28]).write(to: URL(fileURLWithPath: dir + "/web/icon.png"))
        let web = try Jukebox.start(["web", "--socket", socket, "--listen", "127.0.0.1:0", "--assets", dir + "/web", "--state", dir + "/state"])
        self.web = web
        XCTAssertTrue(waitFor(10) { web.stdoutSoFar.contains("/\n") }, web.stdoutSoFar)
        let line = web.stdoutSoFar.split(separator: "\n").first.map(String.init) ?? ""
        port = try XCTUnwrap(UInt16(line.split(separator: ":").last?.dropLast() ?? ""), line)
        return daemon
    }

    func testCoversAreTheFolderImageAsBytesOnlyInsideTheMusicFolders() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let music = dir + "/music"
        func cover(_ path: String, _ headers: [String: String] = [:]) throws -> Reply {
            try http("GET", "/api/cover?path=" + path.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, headers: headers)
        }
        // A track's cover and its folder's are the folder's cover.jpg, byte for byte.
        for path in [music + "/A/a.wav", music + "/A"] {
            let r = try cover(path)
            XCTAssertEqual(r.status, 200, path)
            XCTAssertEqual(r.bytes, Self.jpeg, path)
            XCTAssertEqual(r.headers["content-type"], "image/jpeg")
            XCTAssertEqual(r.headers["cache-control"], "private, max-age=60")
            XCTAssertEqual(r.headers["x-content-type-options"], "nosniff")
        }
        let etag = try XCTUnwrap(try cover(music + "/A/a.wav").headers["etag"])
        let again = try cover(music + "/A/b.wav", ["If-None-Match": etag])
        XCTAssertEqual(again.status, 304)
        XCTAssertEqual(again.bytes, [])
        // A GIF named .png, a link out of the music folders, a path outside, one that does not
        // exist: no cover (the page shows its placeholder), and nothing told about what is outside.
        for path in [music + "/B/c.wav", music + "/C/d.wav", dir + "/secret.jpg", "/etc/passwd", music + "/none.wav", music + "/../secret.jpg"] {
            let r = try cover(path)
            XCTAssertEqual(r.status, 404, path)
            XCTAssertEqual(String(decoding: r.bytes, as: UTF8.self), "{\"error\":\"no cover\"}", path)
        }
        XCTAssertEqual(try http("GET", "/api/cover?path=rel/a.wav").status, 400)
        XCTAssertEqual(try http("GET", "/api/cover?path=%2Fa%0Astop").status, 400)
        // An asset that is not UTF-8 is served as its bytes (it was decoded as text before).
        let icon = try http("GET", "/icon.png")
        XCTAssertEqual(icon.bytes, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0x00, 0xC3, 0x28])
        XCTAssertEqual(icon.headers["content-type"], "image/png")
    }

    func testSearchFindsByNameThroughThePlayerAndEveryFaceHasTheLine() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let music = dir + "/music"
        let r = try http("GET", "/api/search?q=C.WAV")
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertTrue(r.text.hasPrefix("{\"text\":\"C.WAV\",\"folders\":[],\"files\":[{\"name\":\"c.wav\",\"path\":\"\(music)/B/c.wav\",\"title\":\"c\""), r.text)
        XCTAssertTrue(r.text.hasSuffix(",\"scanned\":4}"), r.text)
        let folders = try http("GET", "/api/search?q=b")
        XCTAssertTrue(folders.text.contains("\"folders\":[{\"name\":\"B\",\"path\":\"\(music)/B\"}]"), folders.text)
        XCTAssertEqual(try http("GET", "/api/search?q=%20").status, 400)
        XCTAssertEqual(try http("GET", "/api/search?q=a%0Astop").status, 400)
        XCTAssertEqual(try http("GET", "/api/search").status, 400)
        let line = try ctl("search", "--json", "d.wav")
        XCTAssertTrue(line.stdout.contains("\"path\":\"\(music)/C/d.wav\""), line.stdout + line.stderr)
    }

    func testTheStationsListNeedsASessionIsValidatedAndIsAPlaylistFile() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let empty = try http("GET", "/api/stations")
        XCTAssertEqual(empty.text, "{\"stations\":[],\"file\":\"\(dir!)/state/stations.m3u\"}")
        let list = "{\"stations\":[{\"name\":\"<img src=x onerror=alert(1)>\",\"url\":\"http://127.0.0.1:9/live.mp3\"}]}"
        XCTAssertEqual(try http("POST", "/api/stations/save", json: list).status, 401)
        try setWebPin("2468", state: dir + "/state")
        let signedIn = try http("POST", "/api/login", json: "{\"pin\":\"2468\"}")
        XCTAssertEqual(signedIn.status, 200, signedIn.text)
        let cookie = try XCTUnwrap(signedIn.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        let csrf = try XCTUnwrap(signedIn.text.split(separator: "\"").dropLast().last.map(String.init))
        let session = ["Cookie": cookie, "X-CSRF-Token": csrf]
        let saved = try http("POST", "/api/stations/save", json: list, headers: session)
        XCTAssertEqual(saved.status, 200, saved.text)
        XCTAssertTrue(saved.text.hasPrefix("{\"stations\":[{\"name\":\"<img src=x onerror=alert(1)>\",\"url\":\"http://127.0.0.1:9/live.mp3\"}]"), saved.text)
        XCTAssertEqual(try String(contentsOfFile: dir + "/state/stations.m3u", encoding: .utf8),
                       "#EXTM3U\n#EXTINF:-1,<img src=x onerror=alert(1)>\nhttp://127.0.0.1:9/live.mp3\n")
        for bad in ["file:///etc/passwd", "http://a/\\nstop", "javascript:alert(1)"] {
            let r = try http("POST", "/api/stations/save", json: "{\"stations\":[{\"name\":\"x\",\"url\":\"\(bad)\"}]}", headers: session)
            XCTAssertEqual(r.status, 400, bad)
            XCTAssertTrue(r.text.contains("station 1: "), r.text)
        }
        XCTAssertEqual(try http("POST", "/api/stations/save", json: list, headers: ["Cookie": cookie, "X-CSRF-Token": "nope"]).status, 403)
        // The file is a playlist the player plays like any other: a station per entry.
        let load = try ctl("load", dir + "/state/stations.m3u")
        XCTAssertTrue(load.stdout.contains("1 track loaded"), load.stdout + load.stderr)
    }

    typealias Reply = WebReply

    private func http(_ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:]) throws -> Reply {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if json != nil { request += "Content-Type: application/json\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let json { request += "Content-Length: \(json.utf8.count)\r\n" }
        return try WebClient.exchange(port: port, head: request + "\r\n", body: Array((json ?? "").utf8))
    }
}
