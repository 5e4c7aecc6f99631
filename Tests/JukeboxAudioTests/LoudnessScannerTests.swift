// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// `LoudnessScanner`: the player's decoders into the real libebur128, checked against what
/// Debian's `ffmpeg -af ebur128` says of the same file; the reasons it gives no gain.
final class LoudnessScannerTests: ScratchCase {
    /// A stereo 997 Hz sine `seconds` long peaking at `level` dBFS, encoded by ffmpeg with `codec`.
    func tone(_ name: String, seconds: Int, level: Double, codec: [String]) throws -> String {
        let path = scratch.path(name)
        let amplitude = pow(10, level / 20)
        let wave = "\(amplitude)*sin(2*PI*997*t)"
        try FFmpeg.run(["-f", "lavfi", "-i", "aevalsrc=\(wave)|\(wave):s=44100:d=\(seconds)"] + codec + [path])
        return path
    }

    func testMeasuresAsFFmpegDoesForFLACAndMP3() throws {
        let cases: [(String, [String])] = [("quiet.flac", ["-c:a", "flac"]), ("loud.mp3", ["-c:a", "libmp3lame", "-b:a", "192k"])]
        for (index, (name, codec)) in cases.enumerated() {
            let path = try tone(name, seconds: 10, level: index == 0 ? -20 : -6, codec: codec)
            let measured = try LoudnessScanner.measure(path: path).get()
            let reference = try FFmpegLoudness.integrated(["-i", path])
            print("\(name): libebur128 \(measured.integrated) LUFS, ffmpeg \(reference) LUFS, peak \(measured.peak)")
            // ffmpeg prints one decimal: within 0.1 LU of its value, plus its rounding.
            XCTAssertEqual(measured.integrated, reference, accuracy: 0.15, name)
            XCTAssertEqual(measured.trackGain, LoudnessScanner.reference - measured.integrated, accuracy: 1e-9)
            XCTAssertEqual(measured.seconds, 10, accuracy: 0.1)
            // The sine's peak (MP3 overshoots a little).
            XCTAssertEqual(measured.peak, pow(10, (index == 0 ? -20 : -6) / 20), accuracy: 0.05, name)
        }
    }

    func testAFileThatDoesNotDecodeGivesAReasonAndNoGain() {
        let path = scratch.file("noise.flac", Array("this is not audio at all, only words".utf8))
        guard case .failure(let error) = LoudnessScanner.measure(path: path) else { return XCTFail("measured garbage") }
        XCTAssertEqual(error.path, path)
        XCTAssertFalse(error.reason.isEmpty)
        guard case .failure(let missing) = LoudnessScanner.measure(path: scratch.path("gone.flac")) else { return XCTFail() }
        XCTAssertFalse(missing.reason.isEmpty)
    }

    func testTooLongSilentOrStoppedGiveReasons() throws {
        let path = try tone("long.flac", seconds: 5, level: -10, codec: ["-c:a", "flac"])
        guard case .failure(let long) = LoudnessScanner.measure(path: path, maxSeconds: 2) else { return XCTFail("measured past the bound") }
        XCTAssertTrue(long.reason.contains("longer than"), long.reason)
        guard case .failure(let stopped) = LoudnessScanner.measure(path: path, stop: { true }) else { return XCTFail() }
        XCTAssertEqual(stopped.reason, "measuring stopped")
        let silent = scratch.path("silence.flac")
        try FFmpeg.run(["-f", "lavfi", "-i", "anullsrc=r=44100:cl=stereo", "-t", "2", "-c:a", "flac", silent])
        guard case .failure(let quiet) = LoudnessScanner.measure(path: silent) else { return XCTFail("silence measured") }
        XCTAssertTrue(quiet.reason.contains("silent"), quiet.reason)
    }

    /// The figure in docs/TESTING.md: how long a minute of audio takes to measure (this build).
    func testScanTimePerMinuteOfAudio() throws {
        let cases: [(String, [String])] = [("minute.flac", ["-c:a", "flac"]), ("minute.mp3", ["-c:a", "libmp3lame", "-b:a", "192k"])]
        for (name, codec) in cases {
            let path = try tone(name, seconds: 60, level: -12, codec: codec)
            let start = ProcessInfo.processInfo.systemUptime
            let measured = try LoudnessScanner.measure(path: path).get()
            let seconds = ProcessInfo.processInfo.systemUptime - start
            print("scan time: \(name) \(String(format: "%.3f", seconds)) s per minute of audio (\(measured.integrated) LUFS)")
            XCTAssertEqual(measured.seconds, 60, accuracy: 0.2)
        }
    }
}
