// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures

/// The join between two tracks cut from one continuous signal, played by the real binary.
///
/// As `Tests/JukeboxAudioTests/GaplessBoundaryTests`, but through `jukebox play A B`: A holds
/// frames 0..<30011 of the fixture signal, B frames 30011..<50032 (odd lengths: no codec frame or
/// engine chunk divides them), the device is libasound's `file` PCM, and the recording is compared
/// with libsndfile's decode of A then B, byte for byte, and with the original signal around the join.
struct GaplessResult {
    var format: BenchFormat
    /// decode(A) + decode(B), in frames.
    var expectedFrames: Int
    /// Frames the device received.
    var recordedFrames: Int
    /// Whether the recording is decode(A) + decode(B) exactly.
    var identical: Bool
    /// The first frame where they differ, if they do.
    var firstDifference: Int?
    /// Lag (frames) of the recording against the original signal just before / after the join; 0 = aligned.
    var lagBefore: Int, lagAfter: Int
    /// Largest |recorded - signal| within 32 frames of the join, and elsewhere (away from the ends):
    /// a click would make the first much larger than the codec's own error.
    var boundaryPeakError: Float, elsewherePeakError: Float

    /// Frames missing (negative) or extra (positive) in the recording.
    var frameError: Int { recordedFrames - expectedFrames }
}

enum GaplessBench {
    static let firstFrames = 30_011, secondFrames = 20_021

    static func measure(_ format: BenchFormat, in ws: Workspace) throws -> GaplessResult {
        let rate = format.sampleRate
        let a = ws.path("gapless-a.\(format.kind.fileExtension)"), b = ws.path("gapless-b.\(format.kind.fileExtension)")
        try TestAudio.write(path: a, kind: format.kind, frames: firstFrames, sampleRate: rate)
        try TestAudio.write(path: b, kind: format.kind, frames: secondFrames, startFrame: firstFrames, sampleRate: rate)
        let decodedA = try TestAudio.decode(path: a), decodedB = try TestAudio.decode(path: b)
        let recording = ws.path("gapless-\(format.rawValue).raw")
        let child = try ws.start(["play", "--device", ws.unpacedDevice(recordingTo: recording), "--socket", "", "--volume", "100", a, b])
        let status = try child.wait(timeout: 60)
        guard status == 0 else { throw BenchError("gapless \(format.label): play exited \(status): \(child.stderr.suffix(600))") }
        let raw = (try? Data(contentsOf: URL(fileURLWithPath: recording))).map { [UInt8]($0) } ?? []
        try? FileManager.default.removeItem(atPath: recording)
        let expected = decodedA.bytes + decodedB.bytes
        let frameBytes = decodedA.bytesPerFrame
        let firstDifference = raw == expected ? nil
            : (zip(raw, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(raw.count, expected.count)) / frameBytes
        let samples = TestAudio.floats(raw, type: decodedA.sampleType)
        let boundary = decodedA.frames
        let window = 2048
        let lagBefore = bestLag(samples, sampleRate: rate, at: boundary - window, length: window)
        let lagAfter = bestLag(samples, sampleRate: rate, at: boundary, length: window)
        var near: Float = 0, far: Float = 0
        let frames = samples.count / 2
        if frames > 2 * window {
            for frame in window..<(frames - window) {
                for channel in 0..<2 {
                    let error = abs(samples[frame * 2 + channel] - TestAudio.signal(frame: frame, channel: channel, sampleRate: rate))
                    if abs(frame - boundary) <= 32 { near = max(near, error) } else if abs(frame - boundary) > window { far = max(far, error) }
                }
            }
        }
        return GaplessResult(format: format, expectedFrames: expected.count / frameBytes, recordedFrames: raw.count / frameBytes,
                             identical: raw == expected, firstDifference: firstDifference, lagBefore: lagBefore,
                             lagAfter: lagAfter, boundaryPeakError: near, elsewherePeakError: far)
    }

    /// The lag in -1500...1500 for which recorded frames `at..<at+length` (channel 0 of a stereo
    /// recording) best match the source signal; positive = late.
    static func bestLag(_ recorded: [Float], sampleRate: Int, at: Int, length: Int) -> Int {
        TestAudio.bestLag(recorded, channels: 2, sampleRate: sampleRate, at: at, sourceAt: at, length: length,
                          lags: -1500...1500)
    }
}
