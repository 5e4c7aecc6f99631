// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// `speed 1.25` sent to the built binary while it plays into the fault-injecting test device
/// (the real libasound, a device that holds a second): the change is made in place. The device is
/// opened once, the recording is the file bit for bit up to where the new speed begins, and from
/// there the rest of the file at 1.25 (its length says nothing was skipped or repeated).
final class SpeedBinaryTests: XCTestCase {
    /// Whether frame `i` of `a` and of `b` (16-bit stereo) are the same bytes.
    private func sameFrame(_ a: [UInt8], _ i: Int, _ b: [UInt8], _ j: Int) -> Bool {
        let x: ArraySlice<UInt8> = a[(i * 4)..<(i * 4 + 4)]
        let y: ArraySlice<UInt8> = b[(j * 4)..<(j * 4 + 4)]
        return x == y
    }

    func testASpeedChangeWhilePlayingKeepsTheDeviceAndTheFile() throws {
        let dir = NSTemporaryDirectory() + "jukebox-speed-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let home = dir + "/home", socket = dir + "/ctl", song = dir + "/song.wav", config = dir + "/c.json"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // Twice real time: 16 s of music in 8 s (a second of it held by the device at any time).
        // Long enough that the player is still decoding it when the command arrives, even late on
        // a loaded machine (a track's last second, all decoded, plays on at the old speed).
        let pcm = try TestPCM(directory: dir + "/device", speed: 2)
        try pcm.writeAsoundrc(home: home)
        let frames = 44_100 * 16
        try TestAudio.write(path: song, kind: .wav16, frames: frames)
        let source = try TestAudio.decode(path: song).bytes
        try #"{"device": "\#(pcm.name)", "state": "\#(dir)/state.json", "music": ["\#(song)"], "socket": "\#(socket)"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config], home: home)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        func ctl(_ words: String...) throws -> String { try Jukebox.run(["ctl", "--socket", socket] + words).stdout }
        XCTAssertTrue(waitFor(10) { pcm.recording().count > 44_100 * 4 }, "not playing")
        let asked = pcm.recording().count / 4
        XCTAssertEqual(try Jukebox.run(["ctl", "--socket", socket, "speed", "1.25"]).status, 0)
        let after = pcm.recording().count / 4
        XCTAssertLessThan(after, frames / 2, "the file was half over before the change was made: nothing to tell")
        XCTAssertTrue(try ctl("status").contains("speed 1.25"))
        // The end: the player stopped and the device took the last frame.
        var last = -1
        XCTAssertTrue(waitFor(30) {
            let now = pcm.recording().count
            defer { last = now }
            return now == last && ((try? ctl("status", "--json"))?.contains("\"phase\":\"stopped\"") ?? false)
        }, "the track never ended")
        let bytes = pcm.recording()
        var first = 0
        while first < bytes.count / 4, first < source.count / 4, sameFrame(bytes, first, source, first) { first += 1 }
        let wanted = Double(first) + Double(frames - first) / 1.25
        print("speed 1.25 asked when the device had taken \(asked) frames: the file bit-exact up to frame \(first) "
              + "(\(first - asked) frames later, the device's buffer and what was written), then \(bytes.count / 4 - first) frames "
              + "(\(Int(wanted) - first) expected at 1.25); device opened \(pcm.events(named: "open").count) time(s)")
        XCTAssertGreaterThanOrEqual(first, asked, "the audio before the command is the file's")
        XCTAssertEqual(Double(bytes.count / 4), wanted, accuracy: wanted * 0.01, "the rest of the file at 1.25, nothing skipped or repeated")
        XCTAssertEqual(pcm.events(named: "open").count, 1, "the device stream is kept")
    }
}
