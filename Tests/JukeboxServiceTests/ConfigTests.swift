// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

final class ConfigTests: XCTestCase {
    func parse(_ text: String) throws -> (config: Config, warnings: [String]) {
        try Config.parse(Array(text.utf8), source: "c.json")
    }

    func testEmptyObjectGivesTheDefaults() throws {
        let (c, w) = try parse("{}")
        XCTAssertEqual(c, Config())
        XCTAssertEqual(w, [])
        XCTAssertEqual(c.device, "default")
        XCTAssertEqual(c.statePath, "/var/lib/jukebox/state.json")
        XCTAssertEqual(c.settings.saveInterval, 5)
    }

    func testEveryKeyIsRead() throws {
        let (c, w) = try parse("""
        {"device": "hw:CARD=DAC", "audio": "null", "state": "/tmp/s.json", "music": ["/srv/music"],
         "resume": "paused", "saveInterval": 2, "volumeMin": 10, "volumeMax": 90, "volumeStep": 3,
         "seekStep": 15, "logLevel": "debug"}
        """)
        XCTAssertEqual(w, [])
        XCTAssertEqual(c.device, "hw:CARD=DAC")
        XCTAssertEqual(c.audio, .null)
        XCTAssertEqual(c.statePath, "/tmp/s.json")
        XCTAssertEqual(c.music, ["/srv/music"])
        XCTAssertFalse(c.resumePlaying)
        XCTAssertEqual(c.logLevel, .debug)
        let s = c.settings
        XCTAssertEqual([s.saveInterval, s.seekStep], [2, 15])
        XCTAssertEqual([s.volumeMin, s.volumeMax, s.volumeStep], [10, 90, 3])
        XCTAssertFalse(s.resumePlaying)
    }

    func testTheShippedExampleConfigIsValidAndComplete() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let (c, w) = try Config.load(path: repo.appendingPathComponent("board/config.example.json").path)
        XCTAssertEqual(w, [])
        XCTAssertEqual(c.music, ["/srv/music"])
        let text = try String(contentsOf: repo.appendingPathComponent("board/config.example.json"), encoding: .utf8)
        for key in ["device", "audio", "state", "music", "resume", "saveInterval", "volumeMin", "volumeMax", "volumeStep", "seekStep", "logLevel",
                    "socket", "releaseDelay", "resumeAfterDeviceLoss", "bootVolume", "mixer", "mixerCard"] {
            XCTAssertTrue(text.contains("\"\(key)\""), "example lacks \(key)")
            let readme = try String(contentsOf: repo.appendingPathComponent("README.md"), encoding: .utf8)
            XCTAssertTrue(readme.contains("| `\(key)` |"), "README does not document \(key)")
        }
    }

    func testEmptyStateMeansNoStateFile() throws {
        XCTAssertNil(try parse(#"{"state": ""}"#).config.statePath)
    }

    func testUnknownKeysWarnButDoNotFail() throws {
        let (_, w) = try parse(#"{"devcie": "x", "zzz": 1}"#)
        XCTAssertEqual(w, [#"c.json: unknown key "devcie" ignored"#, #"c.json: unknown key "zzz" ignored"#])
    }

    func testBadValuesSayWhatToFix() {
        let cases: [(String, String)] = [
            (#"{"audio": "pulse"}"#, #"c.json: audio: must be "alsa" or "null""#),
            (#"{"saveInterval": 0}"#, "c.json: saveInterval: must be seconds from 1 to 300"),
            (#"{"saveInterval": "5"}"#, "c.json: saveInterval: must be seconds from 1 to 300"),
            (#"{"volumeMin": 50, "volumeMax": 40}"#, "c.json: volumeMin: must be 0 to 100, with volumeMin <= volumeMax"),
            (#"{"resume": "yes"}"#, #"c.json: resume: must be "playing" or "paused""#),
            (#"{"device": ""}"#, #"c.json: device: must be a non-empty ALSA PCM name such as "default" or "hw:CARD=DAC""#),
            ("{not json", "c.json: not valid JSON (not valid JSON)"),
            ("[1]", #"c.json: must be a JSON object, like {"device": "default"}"#),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual("\($0)", message, text) }
        }
    }
}
