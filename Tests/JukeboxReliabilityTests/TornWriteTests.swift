// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// What a power cut can leave of the state file's write (temp file, fsync, rename, folder fsync),
/// put in place by hand and met by the real binary at start: a truncated temp file, a complete
/// temp file that was never renamed, and a torn state file itself.
final class TornWriteTests: XCTestCase {
    var dir: String!
    var music: [String] = []
    var statePath: String { dir + "/state/state.json" }
    var socket: String { dir + "/ctl" }
    var config: String { dir + "/config.json" }

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "jukebox-torn-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/music", withIntermediateDirectories: true)
        music = try ["t1", "t2"].map { name in
            let path = dir + "/music/\(name).wav"
            try TestAudio.write(path: path, kind: .wav16, frames: 8000 * 40, sampleRate: 8000, channels: 1)
            return path
        }
        // The silent output keeps real time; no device is needed to test what is read at start.
        try #"{"audio": "null", "state": "\#(statePath)", "music": ["\#(dir!)/music"], "socket": "\#(socket)"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Runs the player, lets `body` talk to it, then power-cuts it; returns its stderr.
    @discardableResult
    func withPlayer(_ body: (ControlConnection) throws -> Void) throws -> String {
        let errPath = dir + "/stderr-\(UUID().uuidString).txt"
        let player = try Binary.run(config: config, home: dir, errPath: errPath)
        defer { player.powerCut() }
        let control = try XCTUnwrap(ControlConnection.waitForPlayer(at: socket, timeout: 15), "the player never answered")
        try body(control)
        return player.stderr
    }

    /// A state file written by the player itself: second track, 12 s, paused. It ends with shuffle
    /// on and off, which rewrite the queue file with the place (a volume change alone goes to the
    /// place sidecar beside it); so this one file holds everything.
    func goodStateFile() throws -> Data {
        try withPlayer { c in
            for line in ["next", "seek 0:12", "pause", "vol 90", "shuffle on", "shuffle off"] {
                XCTAssertEqual(c.ask(line)?.last?.hasPrefix("ok"), true, line)
            }
        }
        return try XCTUnwrap(FileManager.default.contents(atPath: statePath))
    }

    func assertResumesTheGoodState(_ c: ControlConnection, file: StaticString = #filePath, line: UInt = #line) {
        let s = c.status()
        XCTAssertEqual(s?.path, music[1], file: file, line: line)
        XCTAssertEqual(s?.phase, "paused", file: file, line: line)
        XCTAssertEqual(s?.position ?? -1, 12, accuracy: 0.3, file: file, line: line)
        XCTAssertEqual(s?.count, 2, file: file, line: line)
    }

    func damagedFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/state")) ?? []).filter { $0.contains("damaged") }.sorted()
    }

    func testATruncatedTempFileBesideAGoodStateFileIsIgnoredAndReplacedByTheNextSave() throws {
        let good = try goodStateFile()
        _ = FileManager.default.createFile(atPath: statePath + ".tmp", contents: good.prefix(good.count / 2))
        let log = try withPlayer { c in
            assertResumesTheGoodState(c)
            XCTAssertEqual(c.ask("vol 40")?.last?.hasPrefix("ok"), true)
            // The next write of the queue file (the order changed) renames its own temp file.
            XCTAssertEqual(c.ask("shuffle on")?.last?.hasPrefix("ok"), true)
            XCTAssertFalse(FileManager.default.fileExists(atPath: statePath + ".tmp"), "the next save renames its own temp file")
            XCTAssertEqual(SavedState(path: statePath)?.volume, 40)
        }
        XCTAssertFalse(log.contains("damaged"), log)
        XCTAssertEqual(damagedFiles(), [])
    }

    func testACompleteTempFileNeverRenamedLeavesTheOldStateInForce() throws {
        // The crash fell between the temp file's fsync and the rename: the new state never became
        // the state. The contract is "old or new, never a mix": the old one must load, whole.
        let good = try goodStateFile()
        var newer = try XCTUnwrap(JSONSerialization.jsonObject(with: good) as? [String: Any])
        newer["current"] = 0
        newer["position"] = 30.0
        newer["volume"] = 7
        try JSONSerialization.data(withJSONObject: newer).write(to: URL(fileURLWithPath: statePath + ".tmp"))
        let log = try withPlayer { c in
            assertResumesTheGoodState(c)
            XCTAssertNotEqual(c.status()?.volume, 7)
            // The next write of the state file replaces the leftover (a change of the order rewrites it).
            XCTAssertEqual(c.ask("vol 41")?.last?.hasPrefix("ok"), true)
            XCTAssertEqual(c.ask("shuffle on")?.last?.hasPrefix("ok"), true)
            XCTAssertFalse(FileManager.default.fileExists(atPath: statePath + ".tmp"))
            XCTAssertEqual(SavedState(path: statePath)?.tracks, music)
            XCTAssertEqual(SavedState(path: statePath)?.volume, 41)
        }
        XCTAssertFalse(log.contains("damaged"), log)
    }

    func testATornStateFileIsMovedAsideReportedAndNothingElseIsLost() throws {
        let good = try goodStateFile()
        // Cut points: empty (ext4's zero-length file after a crash), inside the first token, in the
        // queue, just before the closing brace; the last one only loses the trailing newline.
        let cuts = [0, 1, 10, good.count / 3, good.count / 2, good.count - 3, good.count - 1]
        var kept: [Data] = []
        for cut in cuts {
            let torn = good.prefix(cut)
            try torn.write(to: URL(fileURLWithPath: statePath))
            let parses = (try? JSONSerialization.jsonObject(with: torn)) != nil
            let log = try withPlayer { c in
                if parses {
                    assertResumesTheGoodState(c)
                } else {
                    // Started from the configured music, with a fresh state file written.
                    let s = c.status()
                    XCTAssertEqual(s?.path, music[0], "cut at \(cut)")
                    XCTAssertEqual(s?.count, 2, "cut at \(cut)")
                    // Written by the state writer's thread, soon after.
                    XCTAssertTrue(waitFor(5) { SavedState(path: statePath)?.tracks == music }, "cut at \(cut)")
                }
            }
            if parses {
                XCTAssertFalse(log.contains("damaged"), "cut at \(cut): \(log)")
                continue
            }
            kept.append(torn)
            XCTAssertTrue(log.contains("state file \(statePath) is damaged") && log.contains("damaged-\(kept.count)"),
                          "cut at \(cut): not reported: \(log)")
            // Every torn file so far is kept, byte for byte, under its own number.
            XCTAssertEqual(damagedFiles(), (1...kept.count).map { "state.json.damaged-\($0)" }.sorted())
            for (n, bytes) in kept.enumerated() {
                XCTAssertEqual(FileManager.default.contents(atPath: statePath + ".damaged-\(n + 1)"), bytes, "damaged-\(n + 1)")
            }
        }
        XCTAssertEqual(kept.count, cuts.count - 1, "only the cut of the trailing newline parses")
        XCTAssertTrue(music.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }
}
