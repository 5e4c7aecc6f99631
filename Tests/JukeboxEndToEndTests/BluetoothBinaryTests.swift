// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// A Bluetooth speaker as an output (issue 31) through the built binary: the card and the
/// speaker are two fault-injecting test devices (the real libasound), and the speaker's comings
/// and goings are `bluealsa-cli monitor` lines written to the simulated monitor
/// (`JUKEBOX_TEST_BLUETOOTH_PIPE`). The play moves to the speaker and back to the card at the
/// place: each part of the recordings is the file bit for bit after its fade-in, each part starts
/// at or before where the one before it ended (nothing skipped), and the file plays to its end.
final class BluetoothBinaryTests: XCTestCase {
    /// The speaker's playback PCM as bluez-alsa names it.
    private static let pcm = "/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink"
    /// A play that does not begin its track fades in over 15 ms at 44.1 kHz (and 50 frames skipped).
    private static let ramp = 2205
    /// The most a move may play twice: the second the test device holds, and half a second more.
    private static let twiceAtMost = 44_100 * 3 / 2

    /// The first frame of `source` (16-bit stereo) where `window` starts; nil when nowhere.
    private func offset(of window: ArraySlice<UInt8>, in source: [UInt8]) -> Int? {
        let n = (source.count - window.count) / 4
        guard n >= 0, window.count >= 4 else { return nil }
        let first = Array(window.prefix(4))
        for i in 0...n where source[(i * 4)..<(i * 4 + 4)].elementsEqual(first) {
            if source[(i * 4)..<(i * 4 + window.count)].elementsEqual(window) { return i }
        }
        return nil
    }

    func testThePlayMovesToTheSpeakerAndBackAtThePlace() throws {
        let dir = NSTemporaryDirectory() + "jukebox-bt-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let home = dir + "/home", socket = dir + "/ctl", song = dir + "/song.wav", config = dir + "/c.json", pipe = dir + "/monitor"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // Twice real time: 16 s of music in 8 s.
        let card = try TestPCM(directory: dir + "/card", name: "card", speed: 2)
        let speaker = try TestPCM(directory: dir + "/speaker", name: "speaker", speed: 2)
        try (card.configText + "\n" + speaker.configText).write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
        let frames = 44_100 * 16
        try TestAudio.write(path: song, kind: .wav16, frames: frames)
        let source = try TestAudio.decode(path: song).bytes
        XCTAssertEqual(mkfifo(pipe, 0o600), 0)
        try #"""
        {"device": "\#(card.name)", "state": "\#(dir)/state.json", "music": ["\#(song)"], "socket": "\#(socket)",
         "bluetooth": {"speaker": "aa:bb:cc:dd:ee:ff", "device": "\#(speaker.name)", "volumeMax": 100}}
        """#.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config], home: home, environment: ["JUKEBOX_TEST_BLUETOOTH_PIPE": pipe])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        func status() -> String { (try? Jukebox.run(["ctl", "--socket", socket, "status", "--json"]).stdout) ?? "" }
        let monitor = try XCTUnwrap(FileHandle(forWritingAtPath: pipe))
        func say(_ line: String) { monitor.write(Data((line + "\n").utf8)) }

        XCTAssertTrue(waitFor(10) { card.recording().count > 44_100 * 4 * 2 }, "not playing on the card")
        XCTAssertTrue(status().contains(#""output":"card""#), status())
        say("ServiceRunning org.bluealsa")
        say("PCMAdded " + Self.pcm)
        XCTAssertTrue(waitFor(10) { status().contains(#""output":"bluetooth""#) }, status())
        XCTAssertTrue(waitFor(10) { speaker.recording().count > 44_100 * 4 * 3 }, "not playing on the speaker")
        let partA = card.recording()
        let statusLine = (try? Jukebox.run(["ctl", "--socket", socket, "status"]).stdout) ?? ""
        XCTAssertTrue(statusLine.contains("on Bluetooth"), statusLine)
        say("PCMRemoved " + Self.pcm)
        XCTAssertTrue(waitFor(10) { status().contains(#""output":"card""#) }, status())
        var last = -1
        XCTAssertTrue(waitFor(30) {
            let now = card.recording().count
            defer { last = now }
            return now == last && status().contains(#""phase":"stopped""#)
        }, "the track never ended: \(status())")
        let partB = speaker.recording()
        let partC = Array(card.recording().dropFirst(partA.count))

        // The card's first part is the file's beginning.
        XCTAssertTrue(partA.elementsEqual(source.prefix(partA.count)), "the card's first part is the file's beginning")
        // The speaker's part: the file from where it was heard, at or before what the card had taken.
        let window = 4096
        let b = try XCTUnwrap(offset(of: partB.dropFirst(Self.ramp * 4).prefix(window), in: source), "the speaker's part is not the file's")
        let startB = b - Self.ramp
        XCTAssertTrue(partB.dropFirst(Self.ramp * 4).elementsEqual(source[(b * 4)..<min(source.count, b * 4 + partB.count - Self.ramp * 4)]),
                      "the speaker's part is the file, bit for bit, after its fade-in")
        XCTAssertLessThanOrEqual(startB, partA.count / 4, "nothing skipped on the way to the speaker")
        // Played twice: what the card held unheard (the test device holds a second), no more.
        XCTAssertLessThan(partA.count / 4 - startB, Self.twiceAtMost, "the speaker started further back than the card's buffer")
        // Back on the card: from where the speaker was heard, to the end of the file.
        let c = try XCTUnwrap(offset(of: partC.dropFirst(Self.ramp * 4).prefix(window), in: source), "the card's second part is not the file's")
        let startC = c - Self.ramp
        XCTAssertLessThanOrEqual(startC, startB + partB.count / 4, "nothing skipped on the way back")
        XCTAssertGreaterThan(startC, startB, "the way back goes on, not from the start")
        XCTAssertLessThan(startB + partB.count / 4 - startC, Self.twiceAtMost, "the card started further back than the speaker's buffer")
        XCTAssertTrue(partC.dropFirst(Self.ramp * 4).elementsEqual(source.dropFirst(c * 4)), "the card's second part is the rest of the file")
        print("BluetoothBinaryTests: card 0..<\(partA.count / 4), speaker from \(startB) (\(partA.count / 4 - startB) frames again), "
              + "card again from \(startC) (\(startB + partB.count / 4 - startC) frames again); the file has \(frames)")
    }
}
