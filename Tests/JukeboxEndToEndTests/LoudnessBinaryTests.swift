// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Even loudness through the real binary: a config's `loudness`, a metaflac-tagged FLAC played at
/// its track gain through a recording device, an untagged one after it bit-exact (with `scan`
/// off), the tags kept in the state file; untagged files at different levels measured (the real
/// libebur128) and played within 1 LU of each other.
final class LoudnessBinaryTests: ScratchTestCase {
    func testATaggedTrackPlaysAtItsGainAndAnUntaggedOneUntouched() throws {
        let a = dir + "/1.flac", b = dir + "/2.flac", out = dir + "/out.raw", state = dir + "/state.json", config = dir + "/c.json"
        try TestAudio.write(path: a, kind: .flac, frames: 22_050)
        try TestAudio.write(path: b, kind: .flac, frames: 22_050)
        try metaflac(["--set-tag=REPLAYGAIN_TRACK_GAIN=-6.02 dB", "--set-tag=REPLAYGAIN_TRACK_PEAK=0.5", a])
        let text = #"{"device": "file:FILE=\#(out),FORMAT=raw", "state": "\#(state)", "music": ["\#(a)", "\#(b)"], "#
            + #""loudness": {"mode": "track", "scan": false}}"#
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

    func testUntaggedFilesAtDifferentLevelsAreMeasuredAndPlayWithinOneLU() throws {
        guard FileManager.default.isExecutableFile(atPath: FFmpegLoudness.path) else {
            throw missingPeer("ffmpeg is not installed (board/setup.sh installs it)")
        }
        let album = dir + "/album", quiet = album + "/1 quiet.flac", loud = album + "/2 loud.flac"
        let out = dir + "/out.raw", state = dir + "/state.json"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        let config = dir + "/c.json", socket = dir + "/ctl"
        // 3 s stereo tones, 26 dB apart: ffmpeg makes them (no tags).
        for (path, amplitude) in [(quiet, 0.03), (loud, 0.6)] {
            let wave = "\(amplitude)*sin(2*PI*997*t)|\(amplitude)*sin(2*PI*500*t)"
            try FFmpegLoudness.run(["-f", "lavfi", "-i", "aevalsrc=\(wave):s=44100:d=3", "-sample_fmt", "s16", "-c:a", "flac", path])
        }
        let text = #"{"device": "file:FILE=\#(out),FORMAT=raw", "state": "\#(state)", "socket": "\#(socket)", "#
            + #""loudness": {"mode": "track"}}"#
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config])
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        func ctl(_ words: String...) throws -> Jukebox.Result { try Jukebox.run(["ctl", "--socket", socket] + words) }
        XCTAssertTrue(waitFor(20) { (try? ctl("status"))?.status == 0 }, "the player never answered")
        // Queued while stopped: both are measured before anything plays, and the cache says so.
        let added = try ctl("add", album)
        XCTAssertEqual(added.status, 0, added.stdout + added.stderr)
        let cache = state + ".loudness"
        XCTAssertTrue(waitFor(30) { (try? String(contentsOfFile: cache, encoding: .utf8))?.split(separator: "\n").count == 3 },
                      "the cache never held both files")
        XCTAssertEqual(try ctl("play").status, 0)
        let bytes = 2 * 3 * 44_100 * 4
        XCTAssertTrue(waitFor(30) { ((try? FileManager.default.attributesOfItem(atPath: out))?[.size] as? Int ?? 0) >= bytes
                                    && BinaryTests.phase(state) == "stopped" }, "the queue never played to its end")
        daemon.process.terminate()
        XCTAssertEqual(daemon.wait(timeout: 10)?.status, 0)

        let recorded = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertEqual(recorded.count, bytes)
        var played: [Double] = []
        for (i, part) in [recorded.prefix(bytes / 2), recorded.suffix(bytes / 2)].enumerated() {
            let raw = dir + "/part\(i).raw"
            try part.write(to: URL(fileURLWithPath: raw))
            played.append(try FFmpegLoudness.integrated(["-f", "s16le", "-ar", "44100", "-ac", "2", "-i", raw]))
        }
        let before = try [quiet, loud].map { try FFmpegLoudness.integrated(["-i", $0]) }
        let spreadBefore = abs(before[1] - before[0]), spreadAfter = abs(played[1] - played[0])
        print("loudness spread: files \(before) LUFS (\(spreadBefore) LU); played \(played) LUFS (\(spreadAfter) LU)")
        XCTAssertGreaterThan(spreadBefore, 20)
        XCTAssertLessThanOrEqual(spreadAfter, 1, "untagged files not played within 1 LU")
        XCTAssertEqual(played[0], -18, accuracy: 1, "not at ReplayGain's reference")
    }
}
