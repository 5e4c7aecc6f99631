// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// `jukebox snapcast-control`, driven as snapserver drives its stream plugin: JSON-RPC lines on
/// its stdin, replies and notifications on its stdout. Every request reaches the player (checked
/// through the control socket), every change comes back as a Properties notification, mistakes
/// get JSON-RPC errors, and a player that is not there yet is waited for. With the real snapserver
/// in between: SnapcastTests.
final class SnapcastControlTests: DaemonTestCase {
    var bridge: Process?
    var input: Pipe?
    var outPath: String { dir + "/bridge.out" }
    var errPath: String { dir + "/bridge.err" }

    override func tearDown() {
        if let bridge { RealMPD.stop(bridge) }
        super.tearDown()
    }

    /// Starts the bridge the way snapserver 0.26 does (its own arguments, stdio), at `socket`.
    func startBridge(arguments: [String] = ["--stream=jukebox", "--snapcast-port=1780"], calledAs: String? = nil) throws {
        let p = Process()
        if let calledAs {
            // As the link install.sh makes: the name is the command.
            let link = dir + "/" + calledAs
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Jukebox.binary)
            p.executableURL = URL(fileURLWithPath: link)
            p.arguments = arguments
        } else {
            p.executableURL = URL(fileURLWithPath: Jukebox.binary)
            p.arguments = ["snapcast-control"] + arguments
        }
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: outPath)
        p.standardError = FileHandle(forWritingAtPath: errPath)
        let pipe = Pipe()
        p.standardInput = pipe
        var env = ProcessInfo.processInfo.environment
        env["JUKEBOX_SOCKET"] = socket
        p.environment = env
        try p.run()
        bridge = p
        input = pipe
    }

    /// The JSON objects the bridge has written so far.
    func messages() -> [[String: Any]] {
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    func sendLine(_ text: String) throws {
        try XCTUnwrap(input).fileHandleForWriting.write(Data((text + "\n").utf8))
    }

    /// Sends one request and waits (5 s) for the reply with its id.
    func call(_ id: Any, _ method: String, _ params: [String: Any]? = nil) throws -> [String: Any] {
        var request: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method]
        if let params { request["params"] = params }
        try sendLine(String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self))
        var reply: [String: Any]?
        _ = waitFor(5) {
            reply = self.messages().last { "\($0["id"] ?? "none")" == "\(id)" }
            return reply != nil
        }
        return try XCTUnwrap(reply, "no reply to \(method) (id \(id)); stderr: \(stderr)")
    }

    /// The newest Properties notification that satisfies `test`, within 5 s.
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

    /// The position `status --json` says, nil without one.
    func position() -> Double? {
        (try? JSONSerialization.jsonObject(with: Data(status().utf8)) as? [String: Any])?["position"] as? Double
    }

    func title(_ p: [String: Any]) -> String? { (p["metadata"] as? [String: Any])?["title"] as? String }

    func testRequestsReachThePlayerAndEveryChangeIsNotified() throws {
        let a = dir + "/a.flac", b = dir + "/b.flac"
        try TestAudio.write(path: a, kind: .flac, frames: 44_100 * 30, tags: .init(title: "Alpha", artist: "Ann", album: "First", track: 1))
        try TestAudio.write(path: b, kind: .flac, frames: 44_100 * 30, tags: .init(title: "Beta", album: "First", track: 2))
        let daemon = try startDaemon([a, b])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        try startBridge(calledAs: "snapcast-control")

        XCTAssertTrue(waitFor(5) { self.messages().first?["method"] as? String == "Plugin.Stream.Ready" }, "no Ready first; stderr: \(stderr)")
        let first = try XCTUnwrap(properties { self.title($0) == "Alpha" }, "no Properties with the song: \(messages())")
        let meta = try XCTUnwrap(first["metadata"] as? [String: Any])
        XCTAssertEqual(meta["artist"] as? [String], ["Ann"])
        XCTAssertEqual(meta["album"] as? String, "First")
        XCTAssertEqual(meta["duration"] as? Double, 30)
        XCTAssertEqual(meta["url"] as? String, "file://" + a)
        XCTAssertEqual(first["playbackStatus"] as? String, "playing")
        XCTAssertEqual(first["canControl"] as? Bool, true)

        let props = try XCTUnwrap(try call(1, "Plugin.Stream.Player.GetProperties")["result"] as? [String: Any])
        XCTAssertEqual(props["volume"] as? Int, 100)
        XCTAssertEqual(props["loopStatus"] as? String, "none")
        XCTAssertEqual(props["shuffle"] as? Bool, false)
        XCTAssertEqual(props["canSeek"] as? Bool, true)
        XCTAssertEqual(props["canGoNext"] as? Bool, true)

        func control(_ id: Int, _ command: String, _ params: [String: Any]? = nil) throws -> String? {
            var p: [String: Any] = ["command": command]
            if let params { p["params"] = params }
            return try call(id, "Plugin.Stream.Player.Control", p)["result"] as? String
        }
        XCTAssertEqual(try control(2, "pause"), "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"paused\"") }, "pause: \(status())")
        XCTAssertNotNil(properties { $0["playbackStatus"] as? String == "paused" }, "no paused notification")
        XCTAssertEqual(try control(3, "playPause"), "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"playing\"") }, "playPause: \(status())")
        XCTAssertEqual(try control(4, "next"), "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"title\":\"Beta\"") }, "next: \(status())")
        XCTAssertNotNil(properties { self.title($0) == "Beta" }, "no notification for the next song")
        // Paused, the position stays where it is put: playing, it runs on before it is read (under
        // emulation a `ctl status` takes seconds: 19.7 was read after setPosition 12.5 once).
        XCTAssertEqual(try control(20, "pause"), "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"paused\"") }, "pause before seeking: \(status())")
        XCTAssertEqual(try control(5, "setPosition", ["position": 12.5]), "ok")
        XCTAssertTrue(waitFor(5) { abs((self.position() ?? 0) - 12.5) < 0.1 }, "setPosition: \(status())")
        XCTAssertEqual(try control(6, "seek", ["offset": -2]), "ok")
        XCTAssertTrue(waitFor(5) { abs((self.position() ?? 0) - 10.5) < 0.1 }, "seek: \(status())")
        XCTAssertEqual(try control(7, "previous"), "ok")
        XCTAssertEqual(try control(8, "stop"), "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"stopped\"") }, "stop: \(status())")
        XCTAssertNotNil(properties { $0["playbackStatus"] as? String == "stopped" })
        XCTAssertEqual(try control(9, "play"), "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"playing\"") }, "play: \(status())")

        XCTAssertEqual(try call("v", "Plugin.Stream.Player.SetProperty", ["volume": 40])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"volume\":40") }, "volume: \(status())")
        XCTAssertNotNil(properties { $0["volume"] as? Int == 40 })
        XCTAssertEqual(try call(10, "Plugin.Stream.Player.SetProperty", ["loopStatus": "track"])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"repeat\":\"one\"") }, "loopStatus: \(status())")
        XCTAssertNotNil(properties { $0["loopStatus"] as? String == "track" })
        XCTAssertEqual(try call(11, "Plugin.Stream.Player.SetProperty", ["shuffle": true])["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"shuffle\":true") }, "shuffle: \(status())")

        // Mistakes: JSON-RPC errors, and the bridge goes on.
        func code(_ reply: [String: Any]) -> Int? { (reply["error"] as? [String: Any])?["code"] as? Int }
        XCTAssertEqual(code(try call(12, "Plugin.Stream.Player.SetProperty", ["rate": 2.0])), -32602)
        XCTAssertEqual(code(try call(13, "Plugin.Stream.Player.Control", ["command": "dance"])), -32602)
        XCTAssertEqual(code(try call(14, "Plugin.Stream.Player.Control", ["command": "seek"])), -32602)
        XCTAssertEqual(code(try call(15, "Plugin.Stream.Other")), -32601)
        try sendLine("{not json")
        XCTAssertTrue(waitFor(5) { self.messages().contains { ($0["error"] as? [String: Any])?["code"] as? Int == -32700 } })
        XCTAssertTrue(bridge?.isRunning == true, "the bridge exited; stderr: \(stderr)")
        // snapserver closing its end ends the bridge.
        try XCTUnwrap(input).fileHandleForWriting.closeFile()
        XCTAssertTrue(waitFor(5) { self.bridge?.isRunning == false }, "the bridge did not end with its stdin")
        XCTAssertEqual(bridge?.terminationStatus, 0)
    }

    func testWithoutAPlayerTheStreamIsStoppedAndThePlayerIsFollowedOnceItComes() throws {
        let a = dir + "/a.flac"
        try TestAudio.write(path: a, kind: .flac, frames: 44_100 * 30, tags: .init(title: "Late", album: "L", track: 1))
        try startBridge()
        let none = try XCTUnwrap(try call(1, "Plugin.Stream.Player.GetProperties")["result"] as? [String: Any])
        XCTAssertEqual(none["canControl"] as? Bool, false)
        XCTAssertEqual(none["playbackStatus"] as? String, "stopped")
        let refused = try call(2, "Plugin.Stream.Player.Control", ["command": "play"])
        XCTAssertTrue(((refused["error"] as? [String: Any])?["message"] as? String)?.contains("not running") == true, "\(refused)")
        let daemon = try startDaemon([a])
        XCTAssertNotNil(properties { self.title($0) == "Late" && $0["canControl"] as? Bool == true },
                        "the player that came later was not followed; stderr: \(stderr)")
        // A player that goes away leaves a stopped, uncontrollable stream.
        daemon.process.terminate()
        _ = daemon.wait(timeout: 5)
        XCTAssertNotNil(properties { $0["canControl"] as? Bool == false }, "the player's end was not notified")
        // Said once per absence (it retries every second), for snapserver's log.
        XCTAssertTrue(waitFor(3) { self.stderr.components(separatedBy: "no player at").count - 1 == 2 }, stderr)
        XCTAssertEqual(stderr.components(separatedBy: "following the player").count - 1, 1, stderr)
    }
}
