// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// Uploads through `jukebox web` into a real player's music folder, over real HTTP on 127.0.0.1
/// (a socket client: a test sends what no browser would, and hangs up halfway).
final class WebUploadTests: DaemonTestCase {
    private var web: Jukebox.Running?
    private var port: UInt16 = 0
    private var cookie = ""
    private var csrf = ""
    private var music: String { dir + "/music" }

    override func tearDown() {
        if let web { web.process.terminate(); _ = web.wait(timeout: 5) }
        super.tearDown()
    }

    /// A player on the music folder `dir/music` (one track in `A`), the web face, a PIN set.
    /// `extra`: more of the player's config (an MPD listener).
    private func start(extra: [String: Any] = [:]) throws -> Jukebox.Running {
        try FileManager.default.createDirectory(atPath: music + "/A", withIntermediateDirectories: true)
        try TestAudio.write(path: music + "/A/a.wav", kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon([music], extra: extra)
        try startWeb()
        try setWebPin("2468", state: dir + "/state")
        let set = try http("POST", "/api/login", body: Array("{\"pin\":\"2468\"}".utf8), type: "application/json")
        XCTAssertEqual(set.status, 200, set.body)
        cookie = String(try XCTUnwrap(set.headers["set-cookie"]).prefix { $0 != ";" })
        csrf = try XCTUnwrap(set.body.range(of: "[0-9a-f]{64}", options: .regularExpression).map { String(set.body[$0]) })
        return daemon
    }

    private func startWeb() throws {
        try FileManager.default.createDirectory(atPath: dir + "/web", withIntermediateDirectories: true)
        try Data("<!doctype html><title>t</title>".utf8).write(to: URL(fileURLWithPath: dir + "/web/index.html"))
        let web = try Jukebox.start(["web", "--socket", socket, "--listen", "127.0.0.1:0", "--assets", dir + "/web", "--state", dir + "/state"])
        self.web = web
        XCTAssertTrue(waitFor(10) { web.stdoutSoFar.contains("/\n") }, web.stdoutSoFar)
        let line = web.stdoutSoFar.split(separator: "\n").first.map(String.init) ?? ""
        port = try XCTUnwrap(UInt16(line.dropFirst("web: listening on http://127.0.0.1:".count).dropLast()), line)
    }

    private func audio(_ kind: TestAudio.Kind, seconds: Int = 5) throws -> [UInt8] {
        let path = dir + "/made." + kind.fileExtension
        try TestAudio.write(path: path, kind: kind, frames: 44_100 * seconds)
        defer { unlink(path) }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Every name under `folder`, hidden ones included (what an upload may have left).
    private func everything(_ folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).sorted()
    }

    func testUploadedAudioIsListedAndPlaysAndNothingElseIsLeft() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let flac = try audio(.flac), mp3 = try audio(.mp3)

        // A FLAC into A, an MP3 into a new folder (a folder upload keeps its relative path).
        let one = try upload(music + "/A", "new ♪.flac", flac)
        XCTAssertEqual(one.status, 201, one.body)
        XCTAssertEqual(one.body, "{\"path\":\"\(music)/A/new ♪.flac\"}")
        let two = try upload(music + "/A", "Album/CD1/01 <img src=x>.mp3", mp3)
        XCTAssertEqual(two.status, 201, two.body)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: music + "/A/Album/CD1/01 <img src=x>.mp3"))), mp3)
        var st = stat()
        XCTAssertEqual(stat(music + "/A/new ♪.flac", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o644, "readable by the player's user and group")
        XCTAssertEqual(stat(music + "/A/Album/CD1", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o755)

        // The library shows them at once: the listing reads the folder on every request.
        let listing = try http("GET", "/api/library?path=" + encode(music + "/A"))
        XCTAssertTrue(listing.body.contains("\"name\":\"new ♪.flac\""), listing.body)
        XCTAssertTrue(listing.body.contains("\"name\":\"Album\""), listing.body)

        // Not audio, whatever its name: refused with the decoder's reason, nothing left.
        let text = try upload(music + "/A", "notes.flac", Array(String(repeating: "not audio at all\n", count: 500).utf8))
        XCTAssertEqual(text.status, 415, text.body)
        XCTAssertTrue(text.body.hasPrefix("{\"error\":\"not audio the player can play: "), text.body)
        // A name the library would not list is refused before the body.
        let named = try upload(music + "/A", "notes.txt", Array("x".utf8))
        XCTAssertEqual(named.status, 415, named.body)
        XCTAssertTrue(named.body.contains("not an audio file name the player lists"), named.body)

        // An existing name is never replaced.
        let again = try upload(music + "/A", "new ♪.flac", mp3)
        XCTAssertEqual(again.status, 409, again.body)
        XCTAssertEqual(again.body, "{\"error\":\"new ♪.flac is already there\"}")
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: music + "/A/new ♪.flac"))), flac)

        XCTAssertEqual(everything(music), ["A", "A/Album", "A/Album/CD1", "A/Album/CD1/01 <img src=x>.mp3", "A/a.wav", "A/new ♪.flac"])
        XCTAssertEqual(everything(dir + "/state/web-uploads"), [], "the journal is empty")

        // The uploaded tracks play.
        XCTAssertEqual(try ctl("clear").status, 0)
        XCTAssertEqual(try ctl("add", music + "/A/Album/CD1/01 <img src=x>.mp3").status, 0)
        XCTAssertEqual(try ctl("add", music + "/A/new ♪.flac").status, 0)
        XCTAssertEqual(try ctl("play").status, 0)
        XCTAssertTrue(waitFor(10) { (try? self.ctl("status"))?.stdout.hasPrefix("▶") == true && (try? self.ctl("status"))?.stdout.contains("01 <img src=x>") == true },
                      (try? ctl("status").stdout) ?? "")
        XCTAssertEqual(try ctl("next").status, 0)
        XCTAssertTrue(waitFor(10) { (try? self.ctl("status"))?.stdout.contains("new ♪") == true }, (try? ctl("status").stdout) ?? "")
    }

    /// MPD's clients see an upload without an `update` of their own: the web face asks the
    /// player's `update FOLDER` once the file is in place.
    func testAnUploadReachesTheMPDLibrary() throws {
        let mpdPort = try MPCTests.freePort()
        let daemon = try start(extra: ["mpd": ["bind": "127.0.0.1", "port": mpdPort]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let mpd = try MPDWire(port: mpdPort)
        XCTAssertEqual(mpd.readLine()?.hasPrefix("OK MPD "), true)
        func files() -> [String] { (mpd.request("listall A\n") ?? []).filter { $0.hasPrefix("file: ") } }
        XCTAssertTrue(waitFor(10) { files() == ["file: A/a.wav"] }, "the index at start: \(files())")
        XCTAssertEqual(try upload(music + "/A", "Album/up.flac", try audio(.flac)).status, 201)
        XCTAssertTrue(waitFor(10) { files() == ["file: A/Album/up.flac", "file: A/a.wav"] }, "after the upload: \(files())")
        // The line itself: a folder outside the music folders is refused.
        let outside: String = dir
        XCTAssertEqual(try ctl("update", outside).stderr, "jukebox: error: not a folder in the music folders: \(outside)\n")
    }

    func testRefusalsNamesAndLimits() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let flac = try audio(.flac, seconds: 1)

        // Signed out, a wrong CSRF token, another origin: refused, nothing written.
        XCTAssertEqual(try upload(music + "/A", "x.flac", flac, session: false).status, 401)
        XCTAssertEqual(try upload(music + "/A", "x.flac", flac, csrf: String(repeating: "0", count: 64)).status, 403)
        XCTAssertEqual(try upload(music + "/A", "x.flac", flac, extra: ["Origin": "http://evil.example"]).status, 403)
        XCTAssertEqual(try upload(music + "/A", "x.flac", flac, type: "application/json").status, 415)
        XCTAssertEqual(try upload(music + "/A", "x.flac", flac, type: "text/plain").status, 415)

        // Name attacks (percent-encoded bytes: the server sees them decoded).
        let names: [([UInt8], String)] = [
            (Array("../x.flac".utf8), "the name may not contain . or .. folders"),
            (Array("a/../../../x.flac".utf8), "the name may not contain . or .. folders"),
            (Array("/tmp/x.flac".utf8), "the name has an empty folder (a leading, trailing or double slash)"),
            (Array(".x.flac".utf8), "hidden names (a leading dot) are not taken"),
            (Array("x\n.flac".utf8), "the name has a control character or a backslash"),
            ([0x78, 0xFF, 0x2E, 0x66, 0x6C, 0x61, 0x63], "the name is not valid UTF-8"),
        ]
        for (name, error) in names {
            let reply = try upload(music + "/A", name, flac)
            XCTAssertEqual(reply.status, 400, "\(name)")
            XCTAssertEqual(reply.body, "{\"error\":\(jsonQuoted(error))}", "\(name)")
        }
        // Folders outside the music folders, and a link out of them, are refused by the listing's own rule.
        XCTAssertEqual(symlink("/tmp", music + "/out"), 0)
        defer { unlink(music + "/out") }
        for folder in ["/tmp", music + "/../", music + "/out", music + "/A/a.wav", music + "/nothing"] {
            let reply = try upload(folder, "x.flac", flac)
            XCTAssertEqual(reply.status, 400, folder)
            XCTAssertTrue(reply.body.hasPrefix("{\"error\":\"not a folder in the music folders: "), reply.body)
        }
        // A link named as a folder part of the name is not followed either.
        let throughLink = try upload(music, "out/x.flac", flac)
        XCTAssertEqual(throughLink.status, 409, throughLink.body)

        // Over the limit: refused on the Content-Length, before a byte of the body is read.
        let big = try rawUpload(folder: music + "/A", name: "big.flac", contentLength: "2000000000", body: Array(flac.prefix(1000)))
        XCTAssertEqual(big.status, 413, big.body)
        XCTAssertEqual(big.body, "{\"error\":\"the file is larger than the limit of 1073.7 MB per file\"}")
        // No length (chunked): refused.
        let chunked = try rawUpload(folder: music + "/A", name: "c.flac", contentLength: nil, body: Array("5\r\nhello\r\n0\r\n\r\n".utf8),
                                    extra: ["Transfer-Encoding": "chunked"])
        XCTAssertEqual(chunked.status, 411, chunked.body)

        // A body longer than its Content-Length: the file is the declared bytes, never more (the
        // rest is the next request on the connection, and not a request: refused).
        let longer = try rawUpload(folder: music + "/A", name: "longer.flac", contentLength: String(flac.count),
                                   body: flac + Array("GARBAGE GARBAGE GARBAGE\r\n\r\n".utf8))
        XCTAssertEqual(longer.status, 201, longer.body)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: music + "/A/longer.flac"))), flac)
        unlink(music + "/A/longer.flac")

        XCTAssertEqual(everything(music), ["A", "A/a.wav", "out"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/x.flac"))
    }

    func testACancelledUploadLeavesNothingAndARestartCleansWhatAPowerCutLeft() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let flac = try audio(.flac, seconds: 20)

        // Half the body, then the page goes away: the partial file is removed.
        let fd = try WebFaceTests.connect(port: port)
        let head = "POST /api/upload?folder=\(encode(music + "/A"))&name=half.flac HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            + "Content-Type: application/octet-stream\r\nCookie: \(cookie)\r\nX-CSRF-Token: \(csrf)\r\nContent-Length: \(flac.count)\r\n\r\n"
        WebFaceTests.send(fd, head)
        WebClient.send(fd, Array(flac.prefix(flac.count / 2)))
        // The temporary file is there while the upload runs: hidden, so the library never lists it.
        XCTAssertTrue(waitFor(10) { self.everything(self.music + "/A").contains { $0.hasPrefix(".upload-") } }, "\(everything(music))")
        XCTAssertEqual(everything(dir + "/state/web-uploads").count, 1)
        XCTAssertFalse(try http("GET", "/api/library?path=" + encode(music + "/A")).body.contains(".upload-"))
        close(fd)
        // The temporary file goes first, then (the folder fsynced) its journal entry.
        XCTAssertTrue(waitFor(10) { self.everything(self.music) == ["A", "A/a.wav"] && self.everything(self.dir + "/state/web-uploads") == [] },
                      "\(everything(music)) \(everything(dir + "/state/web-uploads"))")

        // At most three at once: the fourth is refused (429) while they run.
        var open: [Int32] = []
        for i in 0..<3 {
            let fd = try WebFaceTests.connect(port: port)
            WebFaceTests.send(fd, head.replacingOccurrences(of: "half.flac", with: "run\(i).flac"))
            WebClient.send(fd, Array(flac.prefix(1000)))
            open.append(fd)
        }
        XCTAssertTrue(waitFor(10) { self.everything(self.music + "/A").filter { $0.hasPrefix(".upload-") }.count == 3 })
        let fourth = try upload(music + "/A", "four.flac", flac)
        XCTAssertEqual(fourth.status, 429, fourth.body)
        for fd in open { close(fd) }
        XCTAssertTrue(waitFor(10) { self.everything(self.music) == ["A", "A/a.wav"] && self.everything(self.dir + "/state/web-uploads") == [] }, "\(everything(music))")
        XCTAssertEqual(try upload(music + "/A", "four.flac", flac).status, 201)

        // A power cut mid-upload: the web process killed (no clean-up runs) leaves the hidden
        // file and its journal entry; the next start removes it.
        let cut = try WebFaceTests.connect(port: port)
        WebFaceTests.send(cut, head)
        WebClient.send(cut, Array(flac.prefix(5000)))
        XCTAssertTrue(waitFor(10) { self.everything(self.music + "/A").contains { $0.hasPrefix(".upload-") } })
        kill(web!.process.processIdentifier, SIGKILL)
        _ = web!.wait(timeout: 5)
        close(cut)
        XCTAssertTrue(everything(music + "/A").contains { $0.hasPrefix(".upload-") }, "left by the kill")
        let journal = everything(dir + "/state/web-uploads")
        try startWeb()
        XCTAssertEqual(everything(music), ["A", "A/a.wav", "A/four.flac"])
        XCTAssertEqual(everything(dir + "/state/web-uploads"), [], "before the start: \(journal) "
            + everything(dir + "/state/web-uploads").map { (try? String(contentsOfFile: dir + "/state/web-uploads/" + $0, encoding: .utf8)) ?? "?" }.joined(separator: ", "))
    }

    /// A disk of 80 MiB (a tmpfs: needs root, else skipped) as the music folder: an upload the
    /// free space cannot take is refused; a disk filled while an upload runs ends it with 507 and
    /// removes the partial file.
    func testAFullDiskIsAClearErrorAndLeavesNothing() throws {
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let mounted = try runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=80m", "tmpfs", music])
        guard mounted == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        defer { _ = try? runTool("/bin/umount", ["-l", music]) }
        let daemon = try start()  // a.wav: 10.6 MB of the 80 MiB; 64 MiB kept free: 9.2 MB usable
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let big = try audio(.wav16, seconds: 60)
        let tooBig = try upload(music + "/A", "big.wav", big + big)
        XCTAssertEqual(tooBig.status, 507, tooBig.body)
        XCTAssertTrue(tooBig.body.hasPrefix("{\"error\":\"not enough free space: "), tooBig.body)

        let small = try audio(.wav16, seconds: 30)
        let fd = try WebFaceTests.connect(port: port)
        defer { close(fd) }
        WebFaceTests.send(fd, "POST /api/upload?folder=\(encode(music + "/A"))&name=full.wav HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            + "Content-Type: application/octet-stream\r\nConnection: close\r\nCookie: \(cookie)\r\nX-CSRF-Token: \(csrf)\r\nContent-Length: \(small.count)\r\n\r\n")
        WebClient.send(fd, Array(small.prefix(100_000)))
        XCTAssertTrue(waitFor(10) { self.everything(self.music + "/A").contains { $0.hasPrefix(".upload-") } })
        // Something else fills the disk meanwhile.
        let filler = Glibc.open(music + "/filler", O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 1, count: 1 << 20)
        while write(filler, block, block.count) > 0 {}
        close(filler)
        WebClient.send(fd, Array(small.dropFirst(100_000)))
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let end = Date().addingTimeInterval(20)
        while Date() < end {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            answer += chunk[0..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 507"), text)
        XCTAssertTrue(text.hasSuffix("{\"error\":\"the disk is full: the upload was removed\"}"), text)
        XCTAssertEqual(everything(music), ["A", "A/a.wav", "filler"])
        XCTAssertEqual(everything(dir + "/state/web-uploads"), [])
    }

    private func runTool(_ path: String, _ arguments: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    // MARK: HTTP

    typealias Reply = WebReply

    private func encode(_ s: String) -> String { encode(Array(s.utf8)) }
    private func encode(_ bytes: [UInt8]) -> String {
        bytes.map { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x2D || b == 0x5F
                ? String(UnicodeScalar(b)) : String(format: "%%%02X", b)
        }.joined()
    }

    private func jsonQuoted(_ s: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [s]), as: UTF8.self).dropFirst().dropLast().description
    }

    private func upload(_ folder: String, _ name: String, _ body: [UInt8], session: Bool = true, csrf: String? = nil,
                        type: String = "application/octet-stream", extra: [String: String] = [:]) throws -> Reply {
        try upload(folder, Array(name.utf8), body, session: session, csrf: csrf, type: type, extra: extra)
    }

    private func upload(_ folder: String, _ name: [UInt8], _ body: [UInt8], session: Bool = true, csrf: String? = nil,
                        type: String = "application/octet-stream", extra: [String: String] = [:]) throws -> Reply {
        var headers = extra
        if session {
            headers["Cookie"] = cookie
            headers["X-CSRF-Token"] = csrf ?? self.csrf
        }
        return try http("POST", "/api/upload?folder=\(encode(folder))&name=\(encode(name))", body: body, type: type, headers: headers)
    }

    private func rawUpload(folder: String, name: String, contentLength: String?, body: [UInt8], extra: [String: String] = [:]) throws -> Reply {
        var headers = extra
        headers["Cookie"] = cookie
        headers["X-CSRF-Token"] = csrf
        return try http("POST", "/api/upload?folder=\(encode(folder))&name=\(encode(name))", body: body, type: "application/octet-stream",
                        headers: headers, contentLength: contentLength)
    }

    private func http(_ method: String, _ path: String, body: [UInt8]? = nil, type: String? = nil, headers: [String: String] = [:],
                      contentLength: String?? = .none) throws -> Reply {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let type { request += "Content-Type: \(type)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        switch contentLength {
        case .none: if let body { request += "Content-Length: \(body.count)\r\n" }
        case .some(let given): if let given { request += "Content-Length: \(given)\r\n" }
        }
        return try WebClient.exchange(port: port, head: request + "\r\n", body: body ?? [], timeout: 20)
    }
}
