// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

extension WebFaceTests {
    /// The Settings page's Bluetooth speaker through HTTP against the real binaries: pair, trust
    /// and forget need a session (and the CSRF token) and run the same control line as `ctl`;
    /// bluetoothctl's words come back bounded and inert; a bad address is refused by the
    /// language's rule before anything runs; the speaker's settings are written into the file by
    /// the config's own check and read back; whether the speaker is connected and which output
    /// plays is in the status.
    func testTheBluetoothSpeakerIsPairedAndConfiguredFromTheWebWithASession() throws {
        let pipe = dir + "/monitor"
        XCTAssertEqual(mkfifo(pipe, 0o600), 0)
        let daemon = try start(config: true, extra: ["bluetooth": ["speaker": "aa:bb:cc:dd:ee:ff"], "volumeMax": 90],
                               environment: ["PATH": try FakeBluetoothctl.install(in: dir), "JUKEBOX_TEST_BLUETOOTH_PIPE": pipe])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let path = dir + "/c.json", args = dir + "/bluetoothctl.args"
        func pair(_ line: String, _ headers: [String: String] = [:]) throws -> Reply {
            try http("POST", "/api/control", json: "{\"line\":\"\(line)\"}", headers: headers)
        }

        // Signed out: refused before the player is asked; nothing ran.
        for action in ["pair", "trust", "forget"] {
            let refused = try pair("bluetooth \(action) AA:BB:CC:DD:EE:FF")
            XCTAssertEqual(refused.status, 401, refused.body)
            XCTAssertEqual(refused.body, "{\"error\":\"sign in first\"}")
        }
        let (cookie, csrf) = try signIn()
        let auth = ["Cookie": cookie, "X-CSRF-Token": csrf]
        XCTAssertEqual(try pair("bluetooth pair AA:BB:CC:DD:EE:FF", ["Cookie": cookie, "X-CSRF-Token": String(repeating: "0", count: 64)]).status, 403)
        XCTAssertFalse(FileManager.default.fileExists(atPath: args), "bluetoothctl ran without a session")

        // With one: bluetoothctl runs; what it said comes back as one line of inert, bounded text.
        let paired = try pair("bluetooth pair aa:bb:cc:dd:ee:ff", auth)
        XCTAssertEqual(paired.status, 200, paired.body)
        let reply = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(paired.body.utf8)) as? [String: String])?["reply"], paired.body)
        XCTAssertTrue(reply.hasPrefix("ok bluetooth pair: " + FakeBluetoothctl.pairSays), reply)
        XCTAssertLessThan(reply.count, 300, "bounded: \(reply.count) characters")
        Self.assertInert(reply, lines: 0)
        let trusted = try pair("bluetooth trust AA:BB:CC:DD:EE:FF", auth)
        XCTAssertEqual(trusted.status, 400)
        XCTAssertEqual(trusted.body, "{\"error\":\"bluetooth trust failed: Device AA:BB:CC:DD:EE:FF not available\"}")
        XCTAssertEqual(try pair("bluetooth forget AA:BB:CC:DD:EE:FF", auth).body, "{\"reply\":\"ok bluetooth forget: Device has been removed\"}")
        // A bad address: the language's usage, and bluetoothctl not run.
        for bad in ["AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:GG", "AA:BB:CC:DD:EE:FF;reboot", "AA:BB:CC:DD:EE:FF x"] {
            let refused = try pair("bluetooth pair \(bad)", auth)
            XCTAssertEqual(refused.status, 400, bad)
            XCTAssertEqual(refused.body, "{\"error\":\"usage: bluetooth pair|trust|forget|disconnect ADDRESS (such as AA:BB:CC:DD:EE:FF) | bluetooth pair ADDRESS pin DIGITS\"}", bad)
        }
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8),
                       "info AA:BB:CC:DD:EE:FF\npair AA:BB:CC:DD:EE:FF\ntrust AA:BB:CC:DD:EE:FF\nremove AA:BB:CC:DD:EE:FF\n")

        // The settings: the speaker as the config reads it, the rules with their defaults.
        let shown = try http("GET", "/api/settings", headers: ["Cookie": cookie])
        XCTAssertTrue(shown.body.contains(#"{"key":"bluetooth.speaker","value":"AA:BB:CC:DD:EE:FF","applies":"start","optional":false}"#), shown.body)
        XCTAssertTrue(shown.body.contains(#"{"key":"bluetooth.whenGone","value":"card","applies":"now","optional":false}"#), shown.body)
        XCTAssertTrue(shown.body.contains(#"{"key":"bluetooth.volumeMax","value":null,"applies":"now","optional":true}"#), shown.body)
        XCTAssertTrue(shown.body.contains(#""bluetooth.whenGone":["card","pause"]"#), shown.body)
        // An address the config's rule refuses: its words, nothing written.
        let before = try String(contentsOfFile: path, encoding: .utf8)
        let refused = try http("POST", "/api/settings/change", json: #"{"changes":{"bluetooth.speaker":"11:22:33:44:55:GG"}}"#, headers: auth)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.body, "{\"error\":\"\(path): bluetooth: \\\"speaker\\\" must be an address of six pairs of hex digits such as "
                       + "\\\"AA:BB:CC:DD:EE:FF\\\", not \\\"11:22:33:44:55:GG\\\"\"}")
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), before, "nothing written on a refusal")

        // The speaker connects: the status says so, and that it plays.
        let monitor = try XCTUnwrap(FileHandle(forWritingAtPath: pipe))
        monitor.write(Data("ServiceRunning org.bluealsa\nPCMAdded /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink\n".utf8))
        XCTAssertTrue(waitFor(10) { (try? self.http("GET", "/api/status").body)?.contains(#""output":"bluetooth""#) == true })
        XCTAssertTrue(try http("GET", "/api/status").body.contains(#""speakerConnected":true"#))

        // Saved: the file has the values and the player applies the speaker's cap at once.
        let rules = try http("POST", "/api/settings/change", json: #"{"changes":{"bluetooth.whenGone":"pause","bluetooth.volumeMax":40}}"#, headers: auth)
        XCTAssertEqual(rules.body, "{\"saved\":true,\"reload\":\"ok configuration reloaded\",\"atStart\":[]}")
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).contains(#""bluetooth":{"speaker":"aa:bb:cc:dd:ee:ff", "volumeMax": 40, "whenGone": "pause"}"#))
        let capped = try ctl("status", "--json").stdout
        XCTAssertTrue(capped.contains("\"volumeMax\":40,"), "the speaker's cap holds while it plays: " + capped)
        // A new address waits for the next start (the page is told so); read back as the config reads it.
        let moved = try http("POST", "/api/settings/change", json: #"{"changes":{"bluetooth.speaker":"11:22:33:44:55:aa"}}"#, headers: auth)
        XCTAssertEqual(moved.body, "{\"saved\":true,\"reload\":\"ok configuration reloaded; at the next start: bluetooth\",\"atStart\":[\"bluetooth.speaker\"]}")
        let file = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(file.contains(#""bluetooth":{"speaker":"11:22:33:44:55:aa", "volumeMax": 40, "whenGone": "pause"}"#), file)
        let again = try http("GET", "/api/settings", headers: ["Cookie": cookie]).body
        XCTAssertTrue(again.contains(#"{"key":"bluetooth.speaker","value":"11:22:33:44:55:AA","#), again)
        XCTAssertTrue(again.contains(#"{"key":"bluetooth.whenGone","value":"pause","#), again)
        XCTAssertTrue(again.contains(#"{"key":"bluetooth.volumeMax","value":40,"#), again)
        // The new speaker's rules wait for that start too, and the reply says so, not "applied".
        let later = try http("POST", "/api/settings/change", json: #"{"changes":{"bluetooth.volumeMax":30}}"#, headers: auth)
        XCTAssertEqual(later.body, "{\"saved\":true,\"reload\":\"ok configuration reloaded; at the next start: bluetooth\",\"atStart\":[]}")
        XCTAssertTrue(try ctl("status", "--json").stdout.contains("\"volumeMax\":40,"), "the running speaker keeps its cap")

        monitor.write(Data("PCMRemoved /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink\n".utf8))
        XCTAssertTrue(waitFor(10) { (try? self.http("GET", "/api/status").body)?.contains(#""speakerConnected":false"#) == true })
        XCTAssertTrue(try http("GET", "/api/status").body.contains(#""output":"card""#))
    }
}
