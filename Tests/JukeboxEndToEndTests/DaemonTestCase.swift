// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// A test folder, a daemon playing silently with its control socket there, and `ctl` against it.
class DaemonTestCase: ScratchTestCase {
    /// The daemon's control socket (a test may move it before `startDaemon`).
    var socket: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        socket = dir + "/ctl"
    }

    /// A daemon playing `music` silently, once it plays; `extra` adds config keys.
    /// `playingWithin`: how long the start may take (a folder of 1,000 files is read before it plays).
    func startDaemon(_ music: [String], extra: [String: Any] = [:], environment: [String: String?] = [:],
                     playingWithin: Double = 10) throws -> Jukebox.Running {
        let config = dir + "/c.json"
        let object: [String: Any] = ["audio": "null", "state": "", "music": music, "socket": socket].merging(extra) { $1 }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config], environment: environment)
        XCTAssertTrue(waitFor(playingWithin) { (try? ctl("status"))?.stdout.hasPrefix("▶") == true }, "the daemon never played")
        return daemon
    }

    /// `jukebox ctl --socket SOCKET WORDS...`.
    func ctl(_ words: String...) throws -> Jukebox.Result {
        try Jukebox.run(["ctl", "--socket", socket] + words)
    }

    /// `ctl pause`, then waits until the place holds (two `status --json` reads alike, within
    /// `within` seconds): until the writer has paused the device the position follows the sound
    /// (`AudioEngine.pause`), which on a slow machine is a few tens of milliseconds after the reply.
    func pauseSettled(within: Double = 5, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try ctl("pause").status, 0, file: file, line: line)
        var last = ""
        XCTAssertTrue(waitFor(within) {
            let now = (try? ctl("status", "--json"))?.stdout ?? ""
            defer { last = now }
            return now == last && now.contains("\"phase\":\"paused\"")
        }, "the place never held after a pause: \(last)", file: file, line: line)
    }

    /// A connection to `path` that says nothing (the fd is the caller's to close), or nil.
    static func silentConnection(_ path: String) -> Int32? {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if ok == 0 { return fd }
        close(fd)
        return nil
    }

    /// `text` has `lines` newlines and no other control character (C0, DEL, C1).
    static func assertInert(_ text: String, lines: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(text.unicodeScalars.filter { $0 == "\n" }.count, lines, text.debugDescription, file: file, line: line)
        let controls = text.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }
        XCTAssertEqual(controls.count, 0, text.debugDescription, file: file, line: line)
    }
}
