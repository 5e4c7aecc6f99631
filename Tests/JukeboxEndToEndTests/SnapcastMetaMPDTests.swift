// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Snapcast's MPD stream plugin, `meta_mpd.py` as Debian's snapserver package ships it, run
/// unchanged against the binary's MPD port, driven as snapserver drives it: JSON-RPC lines on its
/// stdin, notifications and replies on its stdout. It must report jukebox's metadata and state,
/// and its controls must reach the player (checked through the control socket).
///
/// The songs have a title and an album but no artist on purpose: for a song with an artist the
/// script asks musicbrainz.org for cover art, and the test must not depend on the internet (a
/// proxy on a closed port makes any such request fail at once rather than hang).
final class SnapcastMetaMPDTests: DaemonTestCase {
    static let script = "/usr/share/snapserver/plug-ins/meta_mpd.py"

    var plugin: Process?
    var input: Pipe?
    var outPath: String { dir + "/meta.out" }
    var errPath: String { dir + "/meta.err" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.fileExists(atPath: Self.script) else {
            throw missingPeer("no \(Self.script): board/setup.sh installs snapserver")
        }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        check.arguments = ["-c", "import mpd, gi, dbus, musicbrainzngs"]
        check.standardError = FileHandle.nullDevice
        try check.run()
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            throw missingPeer("meta_mpd.py's modules are missing: board/setup.sh installs python3-mpd, python3-gi, python3-dbus, python3-musicbrainzngs")
        }
    }

    override func tearDown() {
        if let p = plugin { RealMPD.stop(p) }
        super.tearDown()
    }

    /// The JSON objects the plugin has written so far.
    func messages() -> [[String: Any]] {
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// Sends one JSON-RPC request and waits (5 s) for the reply with its id.
    func call(_ id: Int, _ method: String, _ params: [String: Any]? = nil) throws -> [String: Any] {
        var request: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method]
        if let params { request["params"] = params }
        let line = try JSONSerialization.data(withJSONObject: request) + Data("\n".utf8)
        try XCTUnwrap(input).fileHandleForWriting.write(line)
        var reply: [String: Any]?
        _ = waitFor(5) {
            reply = self.messages().last { ($0["id"] as? Int) == id }
            return reply != nil
        }
        return try XCTUnwrap(reply, "no reply to \(method) (id \(id)); stderr: \(stderr)")
    }

    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// The newest Plugin.Stream.Player.Properties notification that satisfies `test`, within 5 s.
    func properties(_ test: @escaping ([String: Any]) -> Bool) -> [String: Any]? {
        var found: [String: Any]?
        _ = waitFor(5) {
            found = self.messages().last {
                ($0["method"] as? String) == "Plugin.Stream.Player.Properties" && test(($0["params"] as? [String: Any]) ?? [:])
            }?["params"] as? [String: Any]
            return found != nil
        }
        return found
    }

    func status() -> String { (try? ctl("status", "--json").stdout) ?? "" }

    func testThePluginReportsJukeboxAndControlsIt() throws {
        let start = Date()
        let a = dir + "/a.flac", b = dir + "/b.flac"
        try TestAudio.write(path: a, kind: .flac, frames: 44_100 * 30, tags: .init(title: "Alpha", album: "First", track: 1))
        try TestAudio.write(path: b, kind: .flac, frames: 44_100 * 30, tags: .init(title: "Beta", album: "First", track: 2))
        let port = try MPDWire.freePort()
        let daemon = try startDaemon([a, b], extra: ["mpd": ["bind": "127.0.0.1", "port": port]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Self.script, "--mpd-host=127.0.0.1", "--mpd-port=\(port)"]
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: outPath)
        p.standardError = FileHandle(forWritingAtPath: errPath)
        let pipe = Pipe()
        p.standardInput = pipe
        var env = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"] { env[name] = "http://127.0.0.1:1" }
        p.environment = env
        try p.run()
        plugin = p
        input = pipe

        XCTAssertTrue(waitFor(10) { self.messages().contains { ($0["method"] as? String) == "Plugin.Stream.Ready" } },
                      "the plugin never said Plugin.Stream.Ready; stderr: \(stderr)")
        // Its first notification carries the song's metadata, mapped from currentsong.
        let first = try XCTUnwrap(properties { ($0["metadata"] as? [String: Any])?["title"] as? String == "Alpha" },
                                  "no Properties with jukebox's song; stdout: \(messages())")
        let meta = try XCTUnwrap(first["metadata"] as? [String: Any])
        XCTAssertEqual(meta["album"] as? String, "First")
        XCTAssertEqual(meta["trackNumber"] as? Int, 1)
        XCTAssertEqual(meta["duration"] as? Double, 30)
        XCTAssertEqual(meta["url"] as? String, a)
        XCTAssertEqual(first["playbackStatus"] as? String, "playing")

        let props = try XCTUnwrap(try call(1, "Plugin.Stream.Player.GetProperties")["result"] as? [String: Any])
        XCTAssertEqual(props["playbackStatus"] as? String, "playing")
        XCTAssertEqual(props["volume"] as? Int, 100)
        XCTAssertEqual(props["loopStatus"] as? String, "none")
        XCTAssertEqual(props["shuffle"] as? Bool, false)
        XCTAssertEqual(props["canSeek"] as? Bool, true)
        XCTAssertEqual(props["duration"] as? Double, 30)
        XCTAssertGreaterThanOrEqual(props["position"] as? Double ?? -1, 0)

        // Controls reach the player; the plugin hears the change back through idle.
        XCTAssertEqual(try call(2, "Plugin.Stream.Player.Control", ["command": "pause"])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"paused\"") }, "pause did not reach the player: \(status())")
        XCTAssertNotNil(properties { $0["playbackStatus"] as? String == "paused" }, "no paused Properties notification")
        XCTAssertEqual(try call(3, "Plugin.Stream.Player.Control", ["command": "play"])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"playing\"") }, "play did not reach the player: \(status())")
        XCTAssertEqual(try call(4, "Plugin.Stream.Player.Control", ["command": "next"])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"title\":\"Beta\"") }, "next did not reach the player: \(status())")
        XCTAssertNotNil(properties { ($0["metadata"] as? [String: Any])?["title"] as? String == "Beta" },
                        "no Properties notification for the next song")
        XCTAssertEqual(try call(5, "Plugin.Stream.Player.SetProperty", ["volume": 40])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"volume\":40") }, "the volume did not reach the player: \(status())")
        XCTAssertEqual(try call(6, "Plugin.Stream.Player.SetProperty", ["loopStatus": "track"])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"repeat\":\"one\"") }, "loopStatus track did not reach the player: \(status())")
        XCTAssertEqual(try call(7, "Plugin.Stream.Player.Control", ["command": "setPosition", "params": ["position": 12]])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"position\":1") }, "setPosition did not reach the player: \(status())")
        XCTAssertTrue(p.isRunning, "the plugin exited; stderr: \(stderr)")
        let errors = stderr.split(separator: "\n").filter { $0.contains(" ERROR") || $0.contains("Traceback") }
        XCTAssertEqual(errors, [], "the plugin logged errors")
        print("SnapcastMetaMPDTests: \(messages().count) messages from meta_mpd.py, \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }
}
