// SPDX-License-Identifier: MIT
import Foundation
import JukeboxService
import XCTest

/// The stream plugin's translation, without I/O: requests → control lines, `status --json` →
/// properties. The bridge with a player and a stdin: JukeboxEndToEndTests' SnapcastControlTests.
final class SnapcastBridgeTests: XCTestCase {
    func action(_ text: String) -> SnapcastBridge.Action { SnapcastBridge.action(for: Array(text.utf8)) }

    func request(_ id: String, _ method: String, _ params: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
    }

    func testEachCommandAndPropertyBecomesAControlLine() {
        let control = "Plugin.Stream.Player.Control"
        let cases: [(String, String)] = [
            (#"{"command":"play"}"#, "play"), (#"{"command":"pause"}"#, "pause"), (#"{"command":"playPause"}"#, "toggle"),
            (#"{"command":"stop"}"#, "stop"), (#"{"command":"next"}"#, "next"), (#"{"command":"previous"}"#, "prev"),
            (#"{"command":"seek","params":{"offset":-2.5}}"#, "seek -2.500"), (#"{"command":"seek","params":{"offset":65}}"#, "seek +65.000"),
            (#"{"command":"setPosition","params":{"position":17.827}}"#, "seek 17.827"),
        ]
        for (params, line) in cases {
            XCTAssertEqual(action(request("7", control, params)), .control(id: "7", line: line), params)
        }
        let set = "Plugin.Stream.Player.SetProperty"
        XCTAssertEqual(action(request("\"a\"", set, #"{"volume":40}"#)), .control(id: "\"a\"", line: "vol 40"))
        XCTAssertEqual(action(request("1", set, #"{"shuffle":false}"#)), .control(id: "1", line: "shuffle off"))
        XCTAssertEqual(action(request("1", set, #"{"loopStatus":"none"}"#)), .control(id: "1", line: "repeat off"))
        XCTAssertEqual(action(request("1", set, #"{"loopStatus":"track"}"#)), .control(id: "1", line: "repeat one"))
        XCTAssertEqual(action(request("1", set, #"{"loopStatus":"playlist"}"#)), .control(id: "1", line: "repeat all"))
        XCTAssertEqual(action(#"{"jsonrpc":"2.0","id":3,"method":"Plugin.Stream.Player.GetProperties"}"#), .properties(id: "3"))
    }

    func testMistakesAreJSONRPCErrorsAndNotificationsAreIgnored() {
        func code(_ a: SnapcastBridge.Action) -> Int? {
            guard case .reply(let text) = a, let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
            return (object["error"] as? [String: Any])?["code"] as? Int
        }
        XCTAssertEqual(code(action("{")), -32700)
        XCTAssertEqual(code(action("[1]")), -32700)
        XCTAssertEqual(code(action(#"{"id":1.5,"method":"x"}"#)), -32600)
        XCTAssertEqual(code(action(#"{"id":1,"method":"Other"}"#)), -32601)
        XCTAssertEqual(code(action(request("1", "Plugin.Stream.Player.SetProperty", #"{"volume":101}"#))), -32602)
        XCTAssertEqual(code(action(request("1", "Plugin.Stream.Player.SetProperty", #"{"volume":1,"shuffle":true}"#))), -32602)
        XCTAssertEqual(code(action(request("1", "Plugin.Stream.Player.SetProperty", #"{"rate":1.5}"#))), -32602)
        XCTAssertEqual(code(action(request("1", "Plugin.Stream.Player.Control", #"{"command":"setPosition","params":{"position":-1}}"#))), -32602)
        XCTAssertEqual(code(action(request("1", "Plugin.Stream.Player.Control", #"{}"#))), -32602)
        // A key Swift 6.0's decoder would trap on never reaches it.
        XCTAssertEqual(code(action("{\"\u{01}\":1}")), -32700)
        XCTAssertEqual(action(#"{"jsonrpc":"2.0","method":"Plugin.Stream.Log"}"#), .ignore)
        XCTAssertEqual(action(#"{"jsonrpc":"2.0","id":4,"result":"ok"}"#), .ignore)
    }

    func testPropertiesFromTheStatusWithUntrustedTextQuoted() throws {
        let status = #"{"phase":"waiting","title":"A \"quoted\"\u001b[2J title","artist":"Ann","album":null,"path":"/m/A b#é.flac","#
            + #""position":12.5,"duration":30.0,"index":2,"count":3,"volume":55,"shuffle":true,"repeat":"one","message":null,"newCard":null,"stream":false}"#
        let text = SnapcastBridge.properties(status: status)
        let p = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(p["playbackStatus"] as? String, "playing")
        XCTAssertEqual(p["loopStatus"] as? String, "track")
        XCTAssertEqual(p["shuffle"] as? Bool, true)
        XCTAssertEqual(p["volume"] as? Int, 55)
        XCTAssertEqual(p["position"] as? Double, 12.5)
        XCTAssertEqual(p["canSeek"] as? Bool, true)
        let meta = try XCTUnwrap(p["metadata"] as? [String: Any])
        XCTAssertEqual(meta["title"] as? String, "A \"quoted\"\u{1b}[2J title")
        XCTAssertFalse(text.contains("\u{1b}"), "a control character went out raw")
        XCTAssertEqual(meta["artist"] as? [String], ["Ann"])
        XCTAssertNil(meta["album"])
        XCTAssertEqual(meta["trackId"] as? String, "2")
        XCTAssertEqual(meta["url"] as? String, "file:///m/A%20b%23%C3%A9.flac")
        // A stream's URL goes out as it is.
        let stream = SnapcastBridge.properties(status: status.replacingOccurrences(of: "/m/A b#é.flac", with: "http://radio.example:8000/live?x=1"))
        let streamMeta = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(stream.utf8)) as? [String: Any])?["metadata"] as? [String: Any])
        XCTAssertEqual(streamMeta["url"] as? String, "http://radio.example:8000/live?x=1")
        let empty = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(SnapcastBridge.properties(status: nil).utf8)) as? [String: Any])
        XCTAssertEqual(empty["canControl"] as? Bool, false)
        XCTAssertNotNil(empty["metadata"] as? [String: Any], "snapserver 0.26 needs metadata present")
        for (phase, expected) in [("paused", "paused"), ("interrupted", "paused"), ("stopped", "stopped")] {
            let s = SnapcastBridge.properties(status: status.replacingOccurrences(of: "\"waiting\"", with: "\"\(phase)\""))
            XCTAssertTrue(s.contains("\"playbackStatus\":\"\(expected)\""), phase)
        }
    }
}
