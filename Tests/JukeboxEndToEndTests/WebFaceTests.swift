// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// `jukebox web` against a real player, through real HTTP on 127.0.0.1 (a small socket client,
/// so a test can send what no browser would: a path with `..`, a foreign Origin).
final class WebFaceTests: DaemonTestCase {
    var web: Jukebox.Running?
    var port: UInt16 = 0

    override func tearDown() {
        if let web { web.process.terminate(); _ = web.wait(timeout: 5) }
        super.tearDown()
    }

    /// A player with two 60 s tracks, and the web face on a free port.
    /// `folder`: play the music folder `dir/music` (the two tracks in `dir/music/A`) instead.
    /// `config`: the web face is given the player's config (`--config`, for the settings).
    /// `environment`: the player's (a stand-in program first on its PATH, a test pipe).
    func start(folder: Bool = false, config: Bool = false, extra: [String: Any] = [:],
               environment: [String: String?] = [:]) throws -> Jukebox.Running {
        let base = folder ? dir + "/music/A" : dir!
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let a = base + "/a.wav", b = base + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 60)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon(folder ? [dir + "/music"] : [a, b], extra: extra, environment: environment)
        try FileManager.default.createDirectory(atPath: dir + "/web", withIntermediateDirectories: true)
        try Data("<!doctype html><title>t</title>".utf8).write(to: URL(fileURLWithPath: dir + "/web/index.html"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: dir + "/.hidden"))
        let web = try Jukebox.start(["web", "--socket", socket, "--listen", "127.0.0.1:0", "--assets", dir + "/web",
                                     "--state", dir + "/state"] + (config ? ["--config", dir + "/c.json"] : []))
        self.web = web
        XCTAssertTrue(waitFor(10) { web.stdoutSoFar.contains("/\n") }, web.stdoutSoFar)
        let line = web.stdoutSoFar.split(separator: "\n").first.map(String.init) ?? ""
        let match = try XCTUnwrap(line.range(of: "^web: listening on http://127\\.0\\.0\\.1:[0-9]+/$", options: .regularExpression), line)
        port = try XCTUnwrap(UInt16(line[match].dropFirst("web: listening on http://127.0.0.1:".count).dropLast()))
        return daemon
    }

    func testStatusControlAndEventsReachThePlayerAndBack() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        try pauseSettled()

        // The status is the player's own `status --json`, verbatim.
        let status = try http("GET", "/api/status")
        XCTAssertEqual(status.status, 200)
        XCTAssertEqual(status.body + "\n", try ctl("status", "--json").stdout)
        XCTAssertEqual(status.headers["content-type"], "application/json; charset=utf-8")
        XCTAssertEqual(status.headers["cache-control"], "no-store")

        let queue = try http("GET", "/api/queue")
        XCTAssertEqual(queue.status, 200)
        XCTAssertTrue(queue.body.hasPrefix("{\"entries\":[{\"position\":1,\"path\":\"\(dir!)/a.wav\""), queue.body)
        XCTAssertTrue(queue.body.hasSuffix("\"current\":1,\"total\":2}"), queue.body)

        // Open lines reach the player without a session.
        let vol = try http("POST", "/api/control", json: "{\"line\":\"vol 37\"}")
        XCTAssertEqual(vol.status, 200, vol.body)
        XCTAssertTrue(vol.body.hasPrefix("{\"reply\":\"ok "), vol.body)
        XCTAssertTrue(try ctl("status", "--json").stdout.contains("\"volume\":37"))
        let moved = try http("POST", "/api/control", json: "{\"line\":\"move 2 1\"}")
        XCTAssertEqual(moved.status, 200, moved.body)
        XCTAssertTrue(try http("GET", "/api/queue").body.contains("\"current\":2"))
        // The player's refusal is a 400 with its words; a line the web never passes is a 403.
        let bad = try http("POST", "/api/control", json: "{\"line\":\"vol 500\"}")
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.body, "{\"error\":\"usage: vol [+|-]N (0-100)\"}")
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"interrupt begin\"}").status, 403)
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"diag\"}").status, 403)
        // Bodies that are not the object, or JSON Swift 6.0's decoder traps on, are a 400.
        for body in ["{\"line\":\"\\ud800x\"}", "{\"\\ud800\":1}", "[1]", "{\"line\":3}", "", "{\"line\":\"next\\nstop\"}"] {
            XCTAssertEqual(try http("POST", "/api/control", json: body).status, 400, body)
        }

        // A change made with ctl arrives on the event stream within 500 ms.
        let events = try EventStreamClient(port: port)
        XCTAssertTrue(events.read(until: 5) { $0.contains("event: status\ndata: {") && $0.contains("event: queue\ndata: {") }, events.text)
        XCTAssertTrue(events.headers.lowercased().contains("content-type: text/event-stream"), events.headers)
        let before = Date()
        XCTAssertEqual(try ctl("vol", "23").status, 0)
        XCTAssertTrue(events.read(until: 2) { $0.contains("\"volume\":23") }, events.text)
        let latency = Date().timeIntervalSince(before)
        print("web: a ctl change reached /api/events in \(Int(latency * 1000)) ms (ctl's own run included)")
        XCTAssertLessThan(latency, 0.5)
        // A queue change sends the queue again.
        let seen = events.text.count
        XCTAssertEqual(try ctl("delete", "2").status, 0)
        XCTAssertTrue(events.read(until: 2) { String($0.dropFirst(seen)).contains("event: queue\ndata: {\"entries\":[{\"position\":1") },
                      events.text)

        // The player goes away: the stream says so, the API answers 502.
        daemon.process.terminate()
        _ = daemon.wait(timeout: 5)
        XCTAssertTrue(events.read(until: 5) { $0.contains("event: offline\ndata: {}") }, events.text)
        let down = try http("GET", "/api/status")
        XCTAssertEqual(down.status, 502)
        XCTAssertEqual(down.body, "{\"error\":\"the player is not running\"}")

        // SIGTERM ends the streams and exits 0.
        web?.process.terminate()
        let ended = try XCTUnwrap(web?.wait(timeout: 5), "web did not exit on SIGTERM")
        web = nil
        XCTAssertEqual(ended.status, 0, ended.stderr)
    }

    func testTheLibraryIsTheListingOfTheMusicFolders() throws {
        let daemon = try start(folder: true)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let music = dir + "/music"
        let top = try http("GET", "/api/library")
        XCTAssertEqual(top.status, 200, top.body)
        XCTAssertEqual(top.headers["cache-control"], "no-store")
        XCTAssertEqual(top.body, "{\"path\":\"\(music)\",\"parent\":null,\"folders\":[{\"name\":\"A\",\"path\":\"\(music)/A\"}],\"files\":[]}")
        // The query is percent-decoded; the folder's files come with their tags and lengths.
        let album = try http("GET", "/api/library?path=" + (music + "/A").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        XCTAssertEqual(album.status, 200, album.body)
        XCTAssertTrue(album.body.hasPrefix("{\"path\":\"\(music)/A\",\"parent\":\"\(music)\",\"folders\":[],\"files\":[{\"name\":\"a.wav\",\"path\":\"\(music)/A/a.wav\",\"title\":\"a\""), album.body)
        XCTAssertTrue(album.body.contains("\"seconds\":60"), album.body)
        // Outside the music folders: the player's refusal, as a 400.
        let outside = try http("GET", "/api/library?path=/etc")
        XCTAssertEqual(outside.status, 400)
        XCTAssertEqual(outside.body, "{\"error\":\"not a folder in the music folders: /etc\"}")
        // A path that would be two control lines never reaches the player.
        let injected = try http("GET", "/api/library?path=%2Fx%0Astop")
        XCTAssertEqual(injected.status, 400)
        XCTAssertEqual(injected.body, "{\"error\":\"not a usable path\"}")
        XCTAssertTrue(try ctl("status").stdout.hasPrefix("▶"))
        // Playing a folder is `load`, which needs a session.
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"load \(music)/A\"}").status, 401)
        XCTAssertEqual(try http("POST", "/api/library", json: "{}").status, 405)
    }

    func testChangesNeedTheSessionAndTheRequestMustComeFromThePage() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        // Security headers on every answer; assets only by plain name.
        let index = try http("GET", "/")
        XCTAssertEqual(index.status, 200)
        XCTAssertEqual(index.headers["content-type"], "text/html; charset=utf-8")
        for reply in [index, try http("GET", "/api/session"), try http("GET", "/nothing.js")] {
            XCTAssertTrue(reply.headers["content-security-policy"]?.hasPrefix("default-src 'none'; script-src 'self';") == true, "\(reply.headers)")
            XCTAssertEqual(reply.headers["x-content-type-options"], "nosniff")
            XCTAssertEqual(reply.headers["referrer-policy"], "no-referrer")
        }
        XCTAssertEqual(try http("GET", "/nothing.js").status, 404)
        XCTAssertEqual(try http("GET", "/../etc/passwd").status, 404)
        XCTAssertEqual(try http("GET", "/%2e%2e/.hidden").status, 404)
        XCTAssertEqual(try http("GET", "/.hidden").status, 404)

        // DNS rebinding: a page of evil.example whose name now resolves to the box comes from a
        // local peer with a matching Origin; its Host gives it away, for reading and for changing.
        let rebound = try http("GET", "/api/status", host: "evil.example")
        XCTAssertEqual(rebound.status, 403)
        XCTAssertEqual(rebound.body, "{\"error\":\"unknown host name: open the box by its address or its .local name\"}")
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"stop\"}", headers: ["Origin": "http://evil.example:\(port)"],
                                host: "evil.example:\(port)").status, 403)
        XCTAssertEqual(try http("GET", "/api/session", host: "localhost:\(port)").status, 200)

        // Cross-origin and non-JSON POSTs are refused before anything else.
        let foreign = try http("POST", "/api/control", json: "{\"line\":\"stop\"}", headers: ["Origin": "http://evil.example"])
        XCTAssertEqual(foreign.status, 403)
        XCTAssertEqual(foreign.body, "{\"error\":\"cross-origin request refused\"}")
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"stop\"}", headers: ["Origin": "http://127.0.0.1:\(port)"]).status, 200)
        XCTAssertEqual(try http("POST", "/api/control", body: "{\"line\":\"stop\"}", contentType: "text/plain").status, 415)
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"" + String(repeating: "x", count: 17_000) + "\"}").status, 413)

        // `add` needs a session and its CSRF token.
        let add = "{\"line\":\"add \(dir!)/a.wav\"}"
        XCTAssertEqual(try http("GET", "/api/session").body, "{\"pinSet\":false,\"signedIn\":false,\"csrf\":null}")
        let anonymous = try http("POST", "/api/control", json: add)
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(anonymous.body, "{\"error\":\"sign in first\"}")
        XCTAssertEqual(try http("POST", "/api/login", json: "{\"pin\":\"2468\"}").status, 409, "no PIN yet")
        // The page cannot set the first PIN: whoever opened it first on the network would own the box.
        let firstVisitor = try http("POST", "/api/pin", json: "{\"pin\":\"2468\"}")
        XCTAssertEqual(firstVisitor.status, 403, firstVisitor.body)
        XCTAssertEqual(firstVisitor.body, "{\"error\":\"set the PIN on the box: sudo jukebox web-pin --config /etc/jukebox/config.json\"}")
        XCTAssertEqual(try http("GET", "/api/session").body, "{\"pinSet\":false,\"signedIn\":false,\"csrf\":null}")
        // On the box: `jukebox web-pin` sets it; a PIN it refuses leaves none.
        let short = try webPin("12")
        XCTAssertEqual(short.status, 1)
        XCTAssertEqual(short.stderr, "jukebox: web-pin: a PIN has at least 4 characters\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/state/web-pin"))
        let pinned = try webPin("2468")
        XCTAssertEqual(pinned.status, 0, pinned.stderr)
        let set = try http("POST", "/api/login", json: "{\"pin\":\"2468\"}")
        XCTAssertEqual(set.status, 200, set.body)
        let cookie = try XCTUnwrap(set.headers["set-cookie"])
        XCTAssertTrue(cookie.hasSuffix("; HttpOnly; SameSite=Strict; Path=/"), cookie)
        let session = String(cookie.prefix { $0 != ";" })
        let csrf = try XCTUnwrap(set.body.range(of: "[0-9a-f]{64}", options: .regularExpression).map { String(set.body[$0]) }, set.body)
        var st = stat()
        XCTAssertEqual(stat(dir + "/state/web-pin", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(try http("POST", "/api/pin", json: "{\"pin\":\"1111\"}").status, 403, "nor can the page replace it")
        XCTAssertEqual(try http("POST", "/api/control", json: add, headers: ["Cookie": session]).status, 403, "no CSRF token")
        XCTAssertEqual(try http("POST", "/api/control", json: add, headers: ["Cookie": session, "X-CSRF-Token": String(repeating: "0", count: 64)]).status, 403)
        let added = try http("POST", "/api/control", json: add, headers: ["Cookie": session, "X-CSRF-Token": csrf])
        XCTAssertEqual(added.status, 200, added.body)
        XCTAssertEqual(added.body, "{\"reply\":\"ok 1 track added\"}")
        XCTAssertTrue(try http("GET", "/api/session", headers: ["Cookie": session]).body.hasPrefix("{\"pinSet\":true,\"signedIn\":true,\"csrf\":\"\(csrf)\"}"))

        // Wrong PINs: three answered at once, then every attempt waits (1, 2, 4 … s).
        var waits: [String] = []
        for _ in 0..<3 {
            let wrong = try http("POST", "/api/login", json: "{\"pin\":\"0000\"}")
            XCTAssertEqual(wrong.status, 403)
            waits.append(wrong.body)
        }
        XCTAssertEqual(waits, ["{\"error\":\"wrong PIN\",\"retryAfter\":0}", "{\"error\":\"wrong PIN\",\"retryAfter\":0}",
                               "{\"error\":\"wrong PIN\",\"retryAfter\":1}"])
        let early = try http("POST", "/api/login", json: "{\"pin\":\"2468\"}")
        XCTAssertEqual(early.status, 429, "even the right PIN waits")
        XCTAssertEqual(early.body, "{\"error\":\"too many wrong PINs: wait\",\"retryAfter\":1}")
        XCTAssertTrue(waitFor(3) { (try? self.http("POST", "/api/login", json: "{\"pin\":\"2468\"}"))?.status == 200 })

        // Logging out ends the session.
        XCTAssertEqual(try http("POST", "/api/logout", json: "{}", headers: ["Cookie": session]).status, 200)
        XCTAssertEqual(try http("POST", "/api/control", json: add, headers: ["Cookie": session, "X-CSRF-Token": csrf]).status, 401)

        // web-pin again resets it: the sessions made under the old PIN end, the old PIN no longer
        // signs in, the new one does.
        let again = try http("POST", "/api/login", json: "{\"pin\":\"2468\"}")
        let second = String(try XCTUnwrap(again.headers["set-cookie"]).prefix { $0 != ";" })
        XCTAssertTrue(try http("GET", "/api/session", headers: ["Cookie": second]).body.contains("\"signedIn\":true"))
        XCTAssertEqual(try webPin("new passphrase").status, 0)
        XCTAssertTrue(try http("GET", "/api/session", headers: ["Cookie": second]).body.contains("\"signedIn\":false"), "a reset ends the sessions")
        XCTAssertEqual(try http("POST", "/api/login", json: "{\"pin\":\"2468\"}").status, 403)
        XCTAssertEqual(try http("POST", "/api/login", json: "{\"pin\":\"new passphrase\"}").status, 200)
    }

    /// Socket-activated, it is started by the first connection: with no page open and no
    /// request for `--idle-exit` seconds it exits 0 (systemd starts it again on the next).
    func testItExitsWhenIdleAndNotWhileAPageIsOpen() throws {
        let web = try Jukebox.start(["web", "--socket", dir + "/none", "--listen", "127.0.0.1:0", "--assets", dir,
                                     "--state", dir, "--idle-exit", "1"])
        self.web = web
        XCTAssertTrue(waitFor(10) { web.stdoutSoFar.contains("/\n") }, web.stdoutSoFar)
        let line = web.stdoutSoFar.split(separator: "\n").first.map(String.init) ?? ""
        port = try XCTUnwrap(line.split(separator: ":").last.flatMap { UInt16($0.dropLast()) }, line)
        let events = try EventStreamClient(port: port)
        XCTAssertTrue(events.read(until: 5) { $0.contains("event: offline\ndata: {}") }, events.text)
        XCTAssertFalse(waitFor(2.5) { !web.process.isRunning }, "it exited with a page open")
        events.hangUp()
        let ended = try XCTUnwrap(web.wait(timeout: 5), "it did not exit when idle")
        self.web = nil
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertTrue(ended.stdout.hasSuffix("web: idle for 1 s, exiting\n"), ended.stdout)
    }

    /// Under systemd's socket activation (`systemd-socket-activate`, the same LISTEN_FDS/LISTEN_PID
    /// protocol as jukebox-web.socket) it serves the socket it is handed, started by the first connection.
    func testItServesTheSocketSystemdHandsIt() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: activate), "no \(activate) (package systemd)")
        // A free port: bound, read and closed (systemd-socket-activate cannot say which port 0 got).
        let probe = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(probe, $0, length)
                _ = getsockname(probe, $0, &length)
            }
        }
        close(probe)
        port = UInt16(bigEndian: address.sin_port)
        let command = ChildDeath.command(activate, ["-l", "127.0.0.1:\(port)", Jukebox.binary, "web", "--socket", dir + "/none",
                                                    "--state", dir, "--assets", dir])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command.executable)
        process.arguments = command.arguments
        let out = dir + "/activated.out", err = dir + "/activated.err"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        try process.run()
        let web = Jukebox.Running(process: process, outPath: out, errPath: err)
        self.web = web
        XCTAssertTrue(waitFor(10) { ((try? String(contentsOfFile: err, encoding: .utf8)) ?? "").contains("Listening on") })
        // The first connection starts it; it answers that very connection.
        let session = try http("GET", "/api/session")
        XCTAssertEqual(session.status, 200)
        XCTAssertEqual(session.body, "{\"pinSet\":false,\"signedIn\":false,\"csrf\":null}")
        // Said once it serves: its server thread may answer before the main thread has written it.
        let said = "web: listening on http://127.0.0.1:\(port)/\n"
        XCTAssertTrue(waitFor(5) { web.stdoutSoFar == said }, web.stdoutSoFar)
        process.terminate()
        let ended = try XCTUnwrap(web.wait(timeout: 5))
        self.web = nil
        XCTAssertEqual(ended.status, 0, ended.stderr)
    }

    // MARK: a small HTTP/1.1 client

    typealias Reply = WebReply

    func http(_ method: String, _ path: String, json: String? = nil, body: String? = nil, contentType: String? = nil,
                      headers: [String: String] = [:], host: String? = nil) throws -> Reply {
        let payload = json ?? body
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        if let type = json != nil ? "application/json" : contentType { request += "Content-Type: \(type)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let payload { request += "Content-Length: \(payload.utf8.count)\r\n" }
        return try WebClient.exchange(port: port, head: request + "\r\n", body: Array((payload ?? "").utf8))
    }

    static func connect(port: UInt16) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw NSError(domain: "web", code: 2, userInfo: [NSLocalizedDescriptionKey: "cannot connect to port \(port)"])
        }
        return fd
    }

    static func send(_ fd: Int32, _ text: String) { WebClient.send(fd, Array(text.utf8)) }

    /// `/api/events` held open, its text read as it comes.
    final class EventStreamClient {
        private(set) var fd: Int32
        private(set) var text = ""
        var headers: String { text.components(separatedBy: "\r\n\r\n").first ?? "" }

        init(port: UInt16) throws {
            fd = try WebFaceTests.connect(port: port)
            WebFaceTests.send(fd, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
        }

        deinit { hangUp() }

        /// Closes the connection (the page went away).
        func hangUp() {
            if fd >= 0 { close(fd) }
            fd = -1
        }

        /// Reads until `done` holds for the text so far, or `seconds` passed (false then).
        func read(until seconds: Double, _ done: (String) -> Bool) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            var chunk = [UInt8](repeating: 0, count: 65536)
            while !done(text) {
                let left = end.timeIntervalSinceNow
                if left <= 0 { return false }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, Int32(left * 1000) + 1) >= 0 else { return false }
                if p.revents == 0 { continue }
                let n = Glibc.read(fd, &chunk, chunk.count)
                if n <= 0 { return done(text) }
                text += String(decoding: chunk[0..<n], as: UTF8.self)
            }
            return true
        }
    }
}
