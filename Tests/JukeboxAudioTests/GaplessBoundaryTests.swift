// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// Gapless playback measured at the boundary, per format: two tracks cut from one continuous signal
/// (B written from the frame where A ends) are played A then B through the engine to ALSA's `file`
/// PCM, and the recording is checked against the decoders and against the original signal.
final class GaplessBoundaryTests: XCTestCase {
    /// Odd lengths on purpose: no codec frame or engine chunk size divides them.
    private let firstFrames = 30_011
    private let secondFrames = 20_021

    func testEveryFormatContinuesWithoutAMissingOrRepeatedSample() throws {
        let kinds: [TestAudio.Kind] = [.wav16, .aiff, .flac, .oggVorbis, .opus, .mp3]
        for kind in kinds {
            let scratch = try Scratch()
            let rate = kind.requiredSampleRate ?? 44100
            let first = scratch.path("a." + kind.fileExtension)
            let second = scratch.path("b." + kind.fileExtension)
            try TestAudio.write(path: first, kind: kind, frames: firstFrames, sampleRate: rate)
            try TestAudio.write(path: second, kind: kind, frames: secondFrames, startFrame: firstFrames, sampleRate: rate)
            let a = try TestAudio.decode(path: first)
            let b = try TestAudio.decode(path: second)

            // (b) The codec keeps lengths exact.
            XCTAssertEqual(a.frames, firstFrames, "\(kind): decoded length of A")
            XCTAssertEqual(b.frames, secondFrames, "\(kind): decoded length of B")

            // (a) The engine adds and drops nothing: the recording is decode(A) + decode(B), byte for byte.
            let (raw, log) = try GaplessRecording.play(scratch, first, then: second)
            assertSameAudio(raw, (a.bytes + b.bytes)[...], bytesPerFrame: a.bytesPerFrame, "\(kind): A then B")
            XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1, next: 2), .started(id: 2), .finished(id: 2)], "\(kind)")

            // (c) Against the original continuous signal.
            let recorded = TestAudio.floats(raw, type: a.sampleType)
            let figures = BoundaryFigures(recorded: recorded, channels: 2, sampleRate: rate, boundary: firstFrames)
            print("gapless \(kind.rawValue): \(figures)")
            XCTAssertEqual(figures.lagBefore, 0, "\(kind): end of A is shifted")
            XCTAssertEqual(figures.lagAfter, 0, "\(kind): start of B is shifted")
            // A click is a local jump: the error at the boundary stays within what the codec does elsewhere.
            XCTAssertLessThanOrEqual(figures.boundaryPeakError, max(figures.elsewherePeakError * 1.5, 1e-4),
                                     "\(kind): click at the boundary")
        }
    }

    /// A change of rate and channel count between tracks closes and reopens the device; both parts
    /// arrive whole (an in-memory output, because the `file` PCM truncates its file on reopen).
    func testRateAndChannelChangeReconfiguresTheDeviceAndKeepsEveryFrame() throws {
        let scratch = try Scratch()
        let first = scratch.path("a.flac")
        let second = scratch.path("b.wav")
        try TestAudio.write(path: first, kind: .flac, frames: 12_345, sampleRate: 44100, channels: 2)
        try TestAudio.write(path: second, kind: .wav16, frames: 9_876, startFrame: 12_345, sampleRate: 48000, channels: 1)
        let third = scratch.path("c.ogg")
        try TestAudio.write(path: third, kind: .oggVorbis, frames: 7_000, sampleRate: 22050, channels: 2)
        let a = try TestAudio.decode(path: first)
        let b = try TestAudio.decode(path: second)
        let c = try TestAudio.decode(path: third)
        let output = RecordingOutput()
        // Each write takes 50 ms, so B lasts ~250 ms: time for the test to name C as B's successor
        // after `.started(2)` even on a loaded machine (the engine holds one successor at a time).
        output.writeMicroseconds = 50_000
        let (log, engine) = logAndEngine { output }
        engine.play(id: 1, path: first, from: 0, paused: true, next: (id: 2, path: second))
        engine.resume()
        XCTAssertTrue(log.wait(for: .started(id: 2)))
        engine.setNext(id: 3, path: third)
        XCTAssertTrue(log.wait(for: .finished(id: 3)))
        engine.shutdown()
        XCTAssertEqual(output.opens, [AudioFormat(sampleRate: 44100, channels: 2, sample: .int16),
                                      AudioFormat(sampleRate: 48000, channels: 1, sample: .int16),
                                      AudioFormat(sampleRate: 22050, channels: 2, sample: .float32)])
        XCTAssertEqual(output.bytes.count, a.bytes.count + b.bytes.count + c.bytes.count)
        XCTAssertTrue(output.bytes == a.bytes + b.bytes + c.bytes, "recording differs from A + B + C")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1, next: 2), .started(id: 2),
                                    .finished(id: 2, next: 3), .started(id: 3), .finished(id: 3)])
    }

    /// Documents the behaviour of MP3 without a LAME/Xing info frame (see docs/USING.md, "Behaviour worth
    /// knowing"): mpg123 then knows neither the encoder delay nor the padding, so the decode starts with
    /// the encoder's and decoder's delay (576 + 529 = 1105 frames) and the track does not join its
    /// neighbours gaplessly. The length is estimated from the first frame's bit rate and the file
    /// size, and libsndfile stops reading at that estimate: a variable bit rate file without its info
    /// frame is cut short (or padded), a constant bit rate one ends about right.
    func testMP3WithoutInfoFrameStartsLateByTheCodecDelay() throws {
        let scratch = try Scratch()
        let frames = 30_011
        for constant in [true, false] {
            let label = constant ? "CBR" : "VBR"
            let path = scratch.path("plain-\(label).mp3")
            try TestAudio.write(path: path, kind: .mp3, frames: frames, constantBitRate: constant)
            XCTAssertEqual(try TestAudio.decode(path: path).frames, frames, label)
            XCTAssertTrue(try TestAudio.stripMP3InfoFrame(path: path), label)
            let decoded = try TestAudio.decode(path: path)
            let header = try Decoder(path: path).frameCount
            let estimate = Int(header ?? -1)
            let samples = TestAudio.floats(decoded)
            // Where the signal's frame 0 lies in the decode: the best match over the first 8192 frames.
            let lead = BoundaryFigures.bestLag(samples, channels: 2, sampleRate: 44100, at: 0, sourceAt: 0,
                                               length: 8192, lags: 0...3000)
            print("mp3 \(label) without info frame: \(decoded.frames) frames decoded for \(frames) written "
                  + "(header estimate \(header.map(String.init) ?? "nil")); \(lead) extra leading frames, "
                  + "\(decoded.frames - frames - lead) frames more than the source after them")
            XCTAssertEqual(lead, 1105, label)
            if constant {
                // Everything written is there, after the delay, plus up to a frame (1152) of padding;
                // the estimate is about right.
                XCTAssertGreaterThanOrEqual(decoded.frames - lead, frames, label)
                XCTAssertLessThan(decoded.frames - lead - frames, 1152, label)
                XCTAssertEqual(estimate, decoded.frames, accuracy: 1152, label)
            } else {
                // The estimate from the first (quiet, low-rate) frame is far too short and the decode stops there.
                XCTAssertEqual(decoded.frames, estimate, label)
                XCTAssertLessThan(decoded.frames, frames, label)
            }
        }
    }
}

/// Plays one track then another gaplessly to the ALSA `file` PCM and returns the recording.
enum GaplessRecording {
    static func play(_ scratch: Scratch, _ first: String, then second: String) throws -> (raw: [UInt8], log: ReportLog) {
        let raw = scratch.path("recorded-\(UUID().uuidString).raw")
        let (log, engine) = logAndEngine { AlsaOutput(device: fileDevice(raw)) }
        // Paused first, so the successor is known before the (unpaced) first track can end.
        engine.play(id: 1, path: first, from: 0, paused: true, next: (id: 2, path: second))
        engine.resume()
        XCTAssertTrue(log.wait(for: .finished(id: 2)))
        // shutdown closes the device, which flushes the plugin's buffer to the file.
        engine.shutdown()
        return (scratch.bytes(raw), log)
    }
}

/// What a recording of A then B looks like around the boundary, compared with the continuous signal.
struct BoundaryFigures: CustomStringConvertible {
    /// Lag (frames) of the best match of the 2048 frames before the boundary with the source; 0 = aligned.
    var lagBefore: Int
    /// The same for the 2048 frames after the boundary.
    var lagAfter: Int
    /// Largest |recorded - source| within 32 frames either side of the boundary.
    var boundaryPeakError: Float
    /// Largest |recorded - source| elsewhere, away from the ends of the recording and the boundary.
    var elsewherePeakError: Float

    static let window = 2048
    static let near = 32

    init(recorded: [Float], channels: Int, sampleRate: Int, boundary: Int) {
        let frames = recorded.count / channels
        lagBefore = Self.bestLag(recorded, channels: channels, sampleRate: sampleRate, at: boundary - Self.window,
                                 sourceAt: boundary - Self.window, length: Self.window, lags: -1500...1500)
        lagAfter = Self.bestLag(recorded, channels: channels, sampleRate: sampleRate, at: boundary,
                                sourceAt: boundary, length: Self.window, lags: -1500...1500)
        var nearPeak: Float = 0
        var farPeak: Float = 0
        // The first and last 2048 frames of the recording are left out: codecs may fade in and out there.
        for frame in Self.window..<(frames - Self.window) {
            for channel in 0..<channels {
                let error = abs(recorded[frame * channels + channel]
                                - TestAudio.signal(frame: frame, channel: channel, sampleRate: sampleRate))
                if abs(frame - boundary) <= Self.near {
                    nearPeak = max(nearPeak, error)
                } else if abs(frame - boundary) > Self.window {
                    farPeak = max(farPeak, error)
                }
            }
        }
        boundaryPeakError = nearPeak
        elsewherePeakError = farPeak
    }

    static func bestLag(_ recorded: [Float], channels: Int, sampleRate: Int, at: Int, sourceAt: Int,
                        length: Int, lags: ClosedRange<Int>) -> Int {
        TestAudio.bestLag(recorded, channels: channels, sampleRate: sampleRate, at: at, sourceAt: sourceAt,
                          length: length, lags: lags)
    }

    var description: String {
        "lag before \(lagBefore), lag after \(lagAfter) frames; peak error at boundary "
            + String(format: "%.5f", boundaryPeakError) + ", elsewhere " + String(format: "%.5f", elsewherePeakError)
    }
}
