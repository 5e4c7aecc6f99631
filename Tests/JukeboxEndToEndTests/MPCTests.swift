// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The real `mpc` (Debian's package) against the real binary's MPD listener on 127.0.0.1, with its
/// exact output checked (only stdout: mpc warns on stderr about what it lacks).
final class MPCTests: DaemonTestCase {
    var port = 0
    var a: String { dir + "/a.wav" }
    var b: String { dir + "/b.wav" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mpc") else {
            throw missingPeer("mpc is not installed; board/setup.sh installs it")
        }
        port = try Self.freePort()
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 30)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 30)
    }

    /// A port nobody listens on now (the kernel's pick for port 0).
    static func freePort() throws -> Int { try MPDWire.freePort() }

    func startPlayer(_ mpd: [String: Any] = [:]) throws -> Jukebox.Running {
        try startDaemon([a, b], extra: ["mpd": ["bind": "127.0.0.1", "port": port].merging(mpd) { $1 }])
    }

    /// Starts `mpc -h 127.0.0.1 -p PORT ARGS...` (output into files: no pipe can fill).
    func startMPC(_ args: [String]) throws -> (Process, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/mpc")
        p.arguments = ["-h", "127.0.0.1", "-p", String(port)] + args
        let id = UUID().uuidString
        let out = dir + "/mpc-\(id).out", err = dir + "/mpc-\(id).err"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        p.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["MPD_HOST"] = nil
        env["MPD_PORT"] = nil
        p.environment = env
        try p.run()
        return (p, out, err)
    }

    /// Runs mpc to its end (at most 10 s): exit status, stdout, stderr.
    @discardableResult
    func mpc(_ args: String...) throws -> (status: Int32, out: String, err: String) {
        let (p, out, err) = try startMPC(args)
        guard waitFor(10, { !p.isRunning }) else {
            p.terminate()
            throw NSError(domain: "mpc", code: 2, userInfo: [NSLocalizedDescriptionKey: "mpc \(args) did not finish in 10 s"])
        }
        p.waitUntilExit()
        return (p.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// mpc's status block for a current song: its name, the state line (elapsed time left free:
    /// it moves), the options line.
    func assertStatus(_ out: String, song: String?, state: String? = nil, position: String? = nil,
                      options: String, file: StaticString = #filePath, line: UInt = #line) {
        var lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.last, "", out, file: file, line: line)
        lines.removeLast()
        if let song, let state, let position {
            XCTAssertEqual(lines.count, 3, out, file: file, line: line)
            guard lines.count == 3 else { return }
            XCTAssertEqual(lines[0], song, file: file, line: line)
            let pattern = "^\\[\(state)\\] +\(position)   0:[0-9]{2}/0:30 \\([0-9]+%\\)$"
            XCTAssertNotNil(lines[1].range(of: pattern, options: .regularExpression), "\(lines[1]) !~ \(pattern)", file: file, line: line)
        } else {
            XCTAssertEqual(lines.count, 1, out, file: file, line: line)
        }
        XCTAssertEqual(lines.last, options, file: file, line: line)
    }

    static let plain = "volume:100%   repeat: off   random: off   single: off   consume: off"

    func testStatusPlayPauseNextPreviousAndVolume() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        assertStatus(try mpc("status").out, song: "a", state: "playing", position: "#1/2", options: Self.plain)
        assertStatus(try mpc("pause").out, song: "a", state: "paused", position: " #1/2", options: Self.plain)
        assertStatus(try mpc("play", "2").out, song: "b", state: "playing", position: "#2/2", options: Self.plain)
        assertStatus(try mpc("prev").out, song: "a", state: "playing", position: "#1/2", options: Self.plain)
        assertStatus(try mpc("next").out, song: "b", state: "playing", position: "#2/2", options: Self.plain)
        XCTAssertEqual(try mpc("current").out, "b\n")
        let volume = try mpc("volume", "40")
        assertStatus(volume.out, song: "b", state: "playing", position: "#2/2",
                     options: "volume: 40%   repeat: off   random: off   single: off   consume: off")
        XCTAssertEqual(try mpc("volume", "-5").out.split(separator: "\n").last, "volume: 35%   repeat: off   random: off   single: off   consume: off")
        XCTAssertEqual(try mpc("volume").out, "volume: 35%\n")
        XCTAssertEqual(try mpc("repeat", "on").out.split(separator: "\n").last, "volume: 35%   repeat: on    random: off   single: off   consume: off")
        XCTAssertEqual(try mpc("single", "on").out.split(separator: "\n").last, "volume: 35%   repeat: on    random: off   single: on    consume: off")
        let consume = try mpc("consume", "on")
        XCTAssertEqual(consume.status, 1)
        XCTAssertTrue(consume.err.contains("MPD error: jukebox has no consume mode"), consume.err)
        XCTAssertEqual(try ctl("status", "--json").stdout.contains("\"repeat\":\"one\""), true, "single on did not reach the core")
        assertStatus(try mpc("stop").out, song: nil, options: "volume: 35%   repeat: on    random: off   single: on    consume: off")
        XCTAssertTrue(try ctl("status").stdout.hasPrefix("■"), "the core did not stop")
    }

    func testSeekMovesTheCoresPosition() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let out = try mpc("seek", "0:20").out
        XCTAssertNotNil(out.range(of: "\\[playing\\] #1/2   0:2[0-9]/0:30", options: .regularExpression), out)
        XCTAssertTrue(waitFor(5) { ((try? self.ctl("status", "--json").stdout) ?? "").contains("\"position\":2") }, "the core's position is not at 0:2x")
    }

    func testAddPlaylistDeleteAndClearKeepIdsPerEntry() throws {
        let daemon = try startDaemon([a], extra: ["mpd": ["bind": "127.0.0.1", "port": port]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertEqual(try mpc("add", b).status, 0)
        XCTAssertEqual(try mpc("add", a).status, 0)
        XCTAssertEqual(try mpc("playlist").out, "a\nb\na\n")
        let before = try mpc("-f", "%position% %id% %file%", "playlist").out
        let ids = before.split(separator: "\n").map { $0.split(separator: " ")[1] }
        XCTAssertEqual(before, "1 \(ids[0]) \(a)\n2 \(ids[1]) \(b)\n3 \(ids[2]) \(a)\n")
        XCTAssertEqual(Set(ids).count, 3, "ids are not per entry: \(before)")
        XCTAssertEqual(try mpc("del", "1").status, 0)
        XCTAssertEqual(try mpc("-f", "%position% %id% %file%", "playlist").out, "1 \(ids[1]) \(b)\n2 \(ids[2]) \(a)\n",
                       "an entry's id changed when another was removed")
        let other = try mpc("add", "ftp://radio.example/stream")
        XCTAssertEqual(other.status, 1)
        XCTAssertTrue(other.err.contains("error adding ftp://radio.example/stream: jukebox plays http and https streams only (not ftp URLs)"), other.err)
        let missing = try mpc("add", dir + "/nothing.flac")
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(try mpc("playlist").out, "b\na\n", "a refused add changed the queue")
        XCTAssertEqual(try mpc("clear").status, 0)
        XCTAssertEqual(try mpc("playlist").out, "")
        XCTAssertTrue(try ctl("status").stdout.contains("queue empty"), "the core's queue is not empty")
        // URLs from MPD clients are off by default (`mpd.allowURLs`); the control socket may add them.
        let radio = "http://127.0.0.1:9/live.mp3"
        let refused = try mpc("add", radio)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.err.contains("URLs from MPD clients are off (the config's mpd.allowURLs"), refused.err)
        XCTAssertEqual(try mpc("playlist").out, "")
        XCTAssertEqual(try ctl("add", radio).status, 0)
        XCTAssertEqual(try mpc("-f", "%file%", "playlist").out, radio + "\n")
        XCTAssertEqual(try mpc("clear").status, 0)
    }

    /// `add http://HOST:PORT/` from anyone on the network must not make the box connect there (a
    /// port scanner for the LAN): refused unless the config allows URLs, and then queued as it is.
    func testURLsFromMPDClientsAreRefusedUnlessTheConfigAllowsThem() throws {
        // A local port that listens and never accepts: a connection attempt would wait in its backlog.
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        XCTAssertEqual(listen(listener, 8), 0)
        let target = "http://127.0.0.1:\(UInt16(bigEndian: addr.sin_port))/"
        let daemon = try startPlayer()
        let refused = try mpc("add", target)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.err.contains("URLs from MPD clients are off"), refused.err)
        XCTAssertEqual(try mpc("play", "3").status, 1, "nothing was queued")
        var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&p, 1, 1000), 0, "the player connected to the port a client named")
        daemon.process.terminate()
        _ = daemon.wait(timeout: 5)
        // Allowed by the config: queued as it is (only http and https).
        let allowing = try startPlayer(["allowURLs": true])
        defer { allowing.process.terminate(); _ = allowing.wait(timeout: 5) }
        XCTAssertEqual(try mpc("add", target).status, 0)
        XCTAssertEqual(try mpc("-f", "%file%", "playlist").out, a + "\n" + b + "\n" + target + "\n")
    }

    func testIdleReturnsOnTheChangeItWaitsFor() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        for (subsystem, change) in [("player", ["pause"]), ("mixer", ["volume", "50"]), ("options", ["random", "on"]),
                                    ("playlist", ["del", "2"])] {
            let idle = try startMPC(["idle", subsystem])
            defer { if idle.0.isRunning { idle.0.terminate() } }
            // The idle client is in: `idle` answers only once it is connected and waiting.
            XCTAssertFalse(waitFor(0.3) { !idle.0.isRunning }, "idle \(subsystem) returned with nothing changed")
            XCTAssertEqual(try mpc(change).status, 0)
            XCTAssertTrue(waitFor(5) { !idle.0.isRunning }, "idle \(subsystem) did not return after \(change)")
            XCTAssertEqual(try String(contentsOfFile: idle.out, encoding: .utf8), subsystem + "\n")
        }
    }

    func testIdleloopReportsEveryChangeAsItComes() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let loop = try startMPC(["idleloop", "player", "mixer"])
        defer { if loop.0.isRunning { loop.0.terminate() } }
        func heard() -> [Substring] {
            ((try? String(contentsOfFile: loop.out, encoding: .utf8)) ?? "").split(separator: "\n")
        }
        // The loop may connect after a change: each try changes the volume and the phase again,
        // until it has reported both, and it keeps running (one connection, idle after idle).
        var volume = 40
        XCTAssertTrue(waitFor(10) {
            volume += 1
            _ = try? mpc("volume", String(volume))
            _ = try? mpc(volume % 2 == 0 ? "pause" : "play")
            return heard().contains("mixer") && heard().contains("player")
        }, "idleloop heard: \(heard())")
        XCTAssertTrue(loop.0.isRunning, "idleloop ended")
        XCTAssertEqual(Set(heard()), ["mixer", "player"], "idleloop reported what it did not ask for")
    }

    func testGarbageGetsAcksAndNeverStopsPlayback() throws {
        let daemon = try startPlayer(["maxClients": 3])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let fd = try connect()
        defer { close(fd) }
        XCTAssertEqual(readLine(fd), "OK MPD 0.21.0")
        send(fd, "frobnicate\n")
        XCTAssertEqual(readLine(fd), "ACK [5@0] {} unknown command \"frobnicate\"")
        send(fd, "play \"unterminated\n")
        XCTAssertEqual(readLine(fd), "ACK [2@0] {} Missing closing '\"'")
        send(fd, "command_list_end\n")
        XCTAssertEqual(readLine(fd), "ACK [5@0] {} unknown command \"command_list_end\"")
        send(fd, "\u{1}\u{7f}\u{0}garbage\r\n")
        XCTAssertEqual(readLine(fd)?.hasPrefix("ACK [5@0] {} unknown command"), true)
        // A line of 1 MB: refused, and the connection closed.
        send(fd, String(repeating: "x", count: 1 << 20) + "\n")
        XCTAssertEqual(readLine(fd), "ACK [2@0] {} line too long")
        // More clients than allowed: the extra one is closed without a greeting.
        let held = try (0..<3).map { _ in try connect() }
        defer { held.forEach { close($0) } }
        for h in held { XCTAssertEqual(readLine(h), "OK MPD 0.21.0") }
        let extra = try connect()
        defer { close(extra) }
        XCTAssertNil(readLine(extra), "a client beyond maxClients was served")
        held.forEach { close($0) }
        // The loop notices the closed slots on its next pass.
        XCTAssertTrue(waitFor(5) { (try? self.mpc("status"))?.status == 0 }, "mpc never got a slot back")
        assertStatus(try mpc("status").out, song: "a", state: "playing", position: "#1/2", options: Self.plain)
    }

    func testAPortInUseIsOneLineAndThePlayerPlaysOn() throws {
        let other = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(other) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(other, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(other, 1), 0)
        let daemon = try startPlayer()  // returns once the player plays
        daemon.process.terminate()
        let result = try XCTUnwrap(daemon.wait(timeout: 5))
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("mpd") }
        XCTAssertEqual(lines, ["<3>mpd: cannot listen on 127.0.0.1:\(port): Address already in use"], result.stderr)
    }

    func testASilentClientTimesOutButOneInIdleDoesNot() throws {
        let daemon = try startPlayer(["timeout": 1])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let silent = try connect(), idle = try connect()
        defer { close(silent); close(idle) }
        XCTAssertEqual(readLine(silent), "OK MPD 0.21.0")
        XCTAssertEqual(readLine(idle), "OK MPD 0.21.0")
        send(idle, "idle\n")
        let start = Date()
        XCTAssertNil(readLine(silent))
        XCTAssertLessThan(Date().timeIntervalSince(start), 4, "the silent client was not closed after its timeout")
        Thread.sleep(forTimeInterval: 0.5)  // the idle client is past its timeout too
        send(idle, "noidle\n")
        XCTAssertEqual(readLine(idle), "OK", "the client in idle was timed out")
    }

    func testAClientThatNeverReadsIsClosedAndPlaybackGoesOn() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        // A small receive buffer: the kernel's buffers cannot hide what the listener keeps.
        let hog = try connect(receiveBuffer: 16 << 10)
        defer { close(hog) }
        // About 18 MB of replies that it never reads; the listener keeps at most 4 MiB of them.
        let request = String(repeating: "playlistinfo\n", count: 1000)
        var closed = false
        for _ in 0..<80 where !closed {
            let bytes = Array(request.utf8)
            closed = bytes.withUnsafeBytes { Glibc.send(hog, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } < 0
        }
        assertStatus(try mpc("status").out, song: "a", state: "playing", position: "#1/2", options: Self.plain)
        // It is cut off once 4 MiB wait for it (with requests still unread: a reset, seen as a hang-up).
        XCTAssertTrue(waitFor(30) {
            var p = pollfd(fd: hog, events: Int16(POLLIN), revents: 0)
            return poll(&p, 1, 0) == 1 && p.revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0
        }, "a client that never reads was never closed")
        assertStatus(try mpc("status").out, song: "a", state: "playing", position: "#1/2", options: Self.plain)
    }

    func testTheMPDPasswordGatesCommands() throws {
        let daemon = try startPlayer(["password": "sesame"])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let refused = try mpc("volume", "10")
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.err.contains("you don't have permission"), refused.err)
        let ok = try mpcWithHost("sesame@127.0.0.1", "volume", "10")
        XCTAssertEqual(ok.status, 0, ok.err)
        XCTAssertEqual(ok.out.split(separator: "\n").last, "volume: 10%   repeat: off   random: off   single: off   consume: off")
    }

    func mpcWithHost(_ host: String, _ args: String...) throws -> (status: Int32, out: String, err: String) {
        try mpc(["-h", host] + args)
    }

    private func mpc(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        // A later -h wins in mpc's option parsing.
        let (p, out, err) = try startMPC(args)
        guard waitFor(10, { !p.isRunning }) else { p.terminate(); throw NSError(domain: "mpc", code: 2) }
        p.waitUntilExit()
        return (p.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    // MARK: a raw TCP client

    /// A raw connection; `receiveBuffer` fixes its kernel receive buffer (no autotuning).
    func connect(receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else { close(fd); throw NSError(domain: "mpc", code: 3, userInfo: [NSLocalizedDescriptionKey: "cannot connect"]) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// One line, without its newline; nil at the end of the stream or after 5 s of silence.
    func readLine(_ fd: Int32) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            if byte == 0x0A { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }
}
