// SPDX-License-Identifier: MIT
import Foundation
import XCTest

/// `jukebox check-config FILE`: the reader and checks of `jukebox run`, without playing; what a
/// builder runs before a restart and what the image's boot-time setup checks `jukebox.json` with.
final class CheckConfigTests: ScratchTestCase {

    func testAGoodConfigIsSummarisedAndNothingIsStartedOrOpened() throws {
        let config = dir + "/c.json", music = dir + "/music"
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try """
        {"device": "hw:Loopback,0,0", "mixer": "PCM", "music": ["\(music)"], "state": "\(dir!)/state.json",
         "socket": "\(dir!)/control", "mpd": {"port": 6611}, "logLevel": "debug", "tyop": 1, "bluetooth": {"phone": true}}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let r = try Jukebox.run(["check-config", config])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("\(config): good"), r.stdout)
        for part in ["ALSA device \"hw:Loopback,0,0\", mixer \"PCM\" on card default", "music:  \(music)\n",
                     "state:  \(dir!)/state.json", "control socket \(dir!)/control", "MPD on 127.0.0.1:6611", "log:    debug",
                     "; a phone may play through the box (Bluetooth)"] {
            XCTAssertTrue(r.stdout.contains(part), "\(part) in: \(r.stdout)")
        }
        // An unknown key warns, as run does, and does not fail.
        XCTAssertEqual(r.stderr, "jukebox: warning: \(config): unknown key \"tyop\" ignored\n")
        // Nothing of the player was made: no socket, no state file, no lock beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        XCTAssertEqual(left, ["c.json", "music"])

        // A link to the config is the user's own file: followed.
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.json", withDestinationPath: config)
        let linked = try Jukebox.run(["check-config", dir + "/link.json"])
        XCTAssertEqual(linked.status, 0, linked.stderr)
        XCTAssertTrue(linked.stdout.hasPrefix("\(dir!)/link.json: good"), linked.stdout)
    }

    func testAWrongValueGivesTheReasonRunGives() throws {
        let config = dir + "/c.json"
        let cases: [(String, String)] = [
            ("{\"device\": ", "not valid JSON"),
            (#"{"audio": "pulse"}"#, #"audio: must be "alsa" or "null""#),
            (#"{"volumeMax": "loud"}"#, "volumeMax: must be 0 to 100"),
            (#"{"saveInterval": 0}"#, "saveInterval: must be seconds from 1 to 300"),
            (#"{"mpd": {"port": 80.5}}"#, "mpd.port: 80.5 is not a whole number"),
            (#"{"board": "no-such-board"}"#, #"board profile "no-such-board" not found"#),
            ("", "the config file is empty"),
        ]
        for (text, reason) in cases {
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            let checked = try Jukebox.run(["check-config", config])
            XCTAssertEqual(checked.status, 1, text)
            XCTAssertEqual(checked.stdout, "", text)
            XCTAssertTrue(checked.stderr.hasPrefix("jukebox: \(config): " + reason), "\(text): \(checked.stderr)")
            XCTAssertEqual(checked.stderr.filter { $0 == "\n" }.count, 1, "one line: \(checked.stderr)")
            // The same reason as the player's: `run` names the file in it, or check-config adds it.
            let run = try Jukebox.run(["run", "--config", config])
            XCTAssertEqual(run.status, 1, text)
            let said = try XCTUnwrap(run.stderr.components(separatedBy: "jukebox: error: ").last, run.stderr)
            XCTAssertEqual(checked.stderr, "jukebox: " + (said.hasPrefix(config + ": ") ? said : "\(config): " + said), text)
        }
    }

    func testWhatIsNotARegularFileOrTooBigIsRefusedAtOnce() throws {
        let fifo = dir + "/fifo.json", folder = dir + "/folder.json", big = dir + "/big.json"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Valid JSON all the way (spaces), so only its size can be what is wrong.
        try ("{" + String(repeating: " ", count: 2 << 20 - 2) + "}").write(toFile: big, atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            (dir + "/none.json", "cannot read: No such file or directory"),
            (folder, "cannot read: Is a directory"),
            (fifo, "cannot read: not a regular file"),
            ("/dev/zero", "cannot read: not a regular file"),
            (big, "cannot read: it is 2097152 bytes, more than the 1048576 bytes a config may have"),
        ]
        for (path, reason) in cases {
            // A FIFO nobody writes to, or /dev/zero, would hold a reader for good: bounded here.
            let checked = try Jukebox.run(["check-config", path], timeout: 60)
            XCTAssertEqual(checked.status, 1, path)
            XCTAssertEqual(checked.stderr, "jukebox: \(path): \(reason)\n", path)
            XCTAssertEqual(checked.stdout, "", path)
            let run = try Jukebox.run(["run", "--config", path], timeout: 60)
            XCTAssertEqual(run.stderr, "jukebox: error: \(path): \(reason)\n", path)
        }
    }

    func testNoControlCharacterOfTheNameOrTheFileReachesTheTerminal() throws {
        let evil = dir + "/e\u{1B}[31mvil\n\u{9B}2J\u{202E}.json"
        // A good config whose values and unknown key carry escape sequences: all echoed.
        try #"{"device": "x\u001b]0;owned\u0007", "music": ["/m\u001b[2J"], "k\u001b[5m": 1}"#
            .write(toFile: evil, atomically: true, encoding: .utf8)
        let good = try Jukebox.run(["check-config", evil])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdout.contains("ALSA device \"x\u{FFFD}]0;owned\u{FFFD}\""), good.stdout)
        XCTAssertTrue(good.stderr.contains("unknown key \"k\u{FFFD}[5m\""), good.stderr)
        // A bad one: the name is echoed in the reason.
        try #"{"audio": "x\u001b[31m"}"#.write(toFile: evil, atomically: true, encoding: .utf8)
        let bad = try Jukebox.run(["check-config", evil])
        XCTAssertEqual(bad.status, 1, bad.stderr)
        XCTAssertTrue(bad.stderr.hasPrefix("jukebox: \(dir!)/e\u{FFFD}[31mvil\u{FFFD}\u{FFFD}2J\u{FFFD}.json: audio: "), bad.stderr)
        for text in [good.stdout, good.stderr, bad.stdout, bad.stderr] {
            let raw = text.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}") }
            XCTAssertTrue(raw.isEmpty, "raw control characters \(raw.map { $0.value }) in: \(text.debugDescription)")
        }
    }

    func testUsageErrorsAndTheDefaultFile() throws {
        for args in [["check-config", "a.json", "b.json"], ["check-config", "--config"], ["check-config", ""]] {
            let r = try Jukebox.run(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", "\(args)")
        }
        // No file: the installed service's; whether this machine has one or not, it is that one.
        let r = try Jukebox.run(["check-config"])
        XCTAssertTrue((r.status == 0 ? r.stdout : r.stderr).hasPrefix("/etc/jukebox/config.json: good") || r.stderr.hasPrefix("jukebox: /etc/jukebox/config.json: "),
                      "\(r.status): \(r.stdout) \(r.stderr)")
    }
}
