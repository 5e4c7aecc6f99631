// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Even loudness through the real binary: a config's `loudness`, a metaflac-tagged FLAC played at
/// its track gain through a recording device, an untagged one after it bit-exact, the tags kept in
/// the state file.
final class LoudnessBinaryTests: ScratchTestCase {
    func testATaggedTrackPlaysAtItsGainAndAnUntaggedOneUntouched() throws {
        let a = dir + "/1.flac", b = dir + "/2.flac", out = dir + "/out.raw", state = dir + "/state.json", config = dir + "/c.json"
        try TestAudio.write(path: a, kind: .flac, frames: 22_050)
        try TestAudio.write(path: b, kind: .flac, frames: 22_050)
        try metaflac(["--set-tag=REPLAYGAIN_TRACK_GAIN=-6.02 dB", "--set-tag=REPLAYGAIN_TRACK_PEAK=0.5", a])
        let text = #"{"device": "file:FILE=\#(out),FORMAT=raw", "state": "\#(state)", "music": ["\#(a)", "\#(b)"], "#
            + #""loudness": {"mode": "track"}}"#
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config])
        XCTAssertTrue(waitFor(20) { BinaryTests.phase(state) == "stopped" }, "the queue never played to its end")
        daemon.process.terminate()
        XCTAssertEqual(daemon.wait(timeout: 5)?.status, 0)

        let tracks = try XCTUnwrap(BinaryTests.snapshot(state)?["tracks"] as? [[String: Any]])
        XCTAssertEqual((tracks.first?["loudness"] as? [String: Any])?["trackGain"] as? Double, -6.02)
        XCTAssertNil(tracks.last?["loudness"], "an untagged file is saved as before")

        let gain = pow(10, -6.02 / 20)
        let first = try TestAudio.decode(path: a).bytes.withUnsafeBytes { $0.bindMemory(to: Int16.self).map { (Double($0) * gain).rounded() } }
        let second = try TestAudio.decode(path: b).bytes
        let recorded = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertEqual(recorded.count, first.count * 2 + second.count)
        let played = recorded.prefix(first.count * 2).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let worst = zip(played, first).map { abs(Double($0) - $1) }.max() ?? 99
        XCTAssertLessThanOrEqual(worst, 1, "the tagged track is not at half amplitude")
        XCTAssertTrue(recorded.dropFirst(first.count * 2).elementsEqual(second), "the untagged track is not bit-exact")
    }
}
