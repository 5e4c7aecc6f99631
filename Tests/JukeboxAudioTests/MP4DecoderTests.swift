// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import XCTest

/// AAC in MP4 through `MP4Decoder`: the exact length of the source (the encoder's delay and
/// padding removed: gapless), the source's phase at frame 0 (nothing shifted), a seek anywhere
/// landing on the frames a play from the start gives, and the decoder chosen by the file's bytes.
final class MP4DecoderTests: XCTestCase {
    static func fixture(_ name: String) -> String { MP4MovieTests.fixture(name) }

    /// Every frame of `decoder` from where it is, interleaved.
    static func readAll(_ decoder: any PCMSource, limit: Int = 10_000_000) -> [Float] {
        var all: [Float] = []
        let chunk = 1000
        var buffer = [Float](repeating: 0, count: chunk * decoder.format.channels)
        while all.count < limit * decoder.format.channels {
            let got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: chunk) }
            if got <= 0 { break }
            all += buffer[0..<got * decoder.format.channels]
        }
        return Array(all.prefix(limit * decoder.format.channels))
    }

    func testAACPlaysExactlyTheSourceFromItsFirstFrame() throws {
        let decoder = try MP4Decoder(path: Self.fixture("two-tone.m4a"))
        XCTAssertEqual(decoder.format, AudioFormat(sampleRate: 44100, channels: 2, sample: .float32))
        XCTAssertEqual(decoder.frameCount, 88200)
        let pcm = Self.readAll(decoder)
        XCTAssertNil(decoder.failure)
        XCTAssertEqual(pcm.count, 88200 * 2, "the 2 s given to the encoder, no delay, no padding")
        // The sines FFmpeg encoded start at phase 0 on frame 0: the decoded audio lines up with
        // them at lag 0 (a shift of the encoder's delay, 1024, would line up at 22 or 23).
        for (channel, hz) in [(0, 440.0), (1, 660.0)] {
            var best = (lag: 0, score: -Double.infinity)
            for lag in -40...40 {
                var score = 0.0
                for n in 2048..<40000 {
                    score += Double(pcm[2 * n + channel]) * sin(2 * Double.pi * hz * Double(n - lag) / 44100)
                }
                if score > best.score { best = (lag, score) }
            }
            XCTAssertEqual(best.lag, 0, "\(hz) Hz")
        }
    }

    func testSeekLandsOnTheFramesOfAPlayFromTheStart() throws {
        let whole = Self.readAll(try MP4Decoder(path: Self.fixture("two-tone.m4a")))
        let decoder = try MP4Decoder(path: Self.fixture("two-tone.m4a"))
        for target in [0, 1, 1023, 1024, 1025, 4096, 30000, 44100, 87000, 88199] {
            try decoder.seek(toFrame: Int64(target))
            let got = Self.readAll(decoder, limit: 4096)
            let expected = Array(whole[(2 * target)..<min(whole.count, 2 * target + got.count)])
            XCTAssertEqual(got.count, min(2 * 4096, whole.count - 2 * target), "at \(target)")
            // The very frames, in place: a shift of one frame would differ by ~0.01 (a 660 Hz sine at
            // 1/8 of full scale). Not bit-exact: libfaad's state beyond one frame's overlap (its noise
            // substitution's generator runs on from the file's start) is not rebuilt by a preroll;
            // measured here at most 8.5e-4 (-61 dBFS), the same with 12 frames of preroll.
            let diff = zip(got, expected).map { abs($0 - $1) }.max() ?? 0
            XCTAssertLessThan(diff, 2e-3, "at frame \(target)")
            if target < 2048 { XCTAssertEqual(got, expected, "at frame \(target): decoded from the start, so exact") }
        }
        try decoder.seek(toFrame: 88200)
        XCTAssertEqual(Self.readAll(decoder).count, 0, "at the end")
        try decoder.seek(toFrame: 10_000_000)
        XCTAssertEqual(Self.readAll(decoder).count, 0, "past the end")
    }

    func testAudiobookWithChaptersDecodesWhole() throws {
        let decoder = try MP4Decoder(path: Self.fixture("chapters.m4b"))
        // Mono AAC comes out as two equal channels: libfaad makes stereo of mono, since HE-AAC v2's
        // parametric stereo can only show up once frames are decoded.
        XCTAssertEqual(decoder.format.channels, 2)
        XCTAssertEqual(decoder.frameCount, 132_300)
        let pcm = Self.readAll(decoder)
        XCTAssertEqual(pcm.count, 2 * 132_300)
        XCTAssertTrue(stride(from: 0, to: pcm.count, by: 2).allSatisfy { pcm[$0] == pcm[$0 + 1] })
    }

    func testTheDecoderIsChosenByTheBytesNotTheName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mp4-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let disguised = folder.appendingPathComponent("song.flac").path
        try FileManager.default.copyItem(atPath: Self.fixture("two-tone.m4a"), toPath: disguised)
        XCTAssertTrue(try FileDecoder.open(path: disguised) is MP4Decoder)
        let text = folder.appendingPathComponent("notes.m4a").path
        try Data("not audio at all, just words".utf8).write(to: URL(fileURLWithPath: text))
        XCTAssertThrowsError(try FileDecoder.open(path: text)) { error in
            XCTAssertEqual((error as? DecodeError)?.reason, "not a recognised audio format")
        }
        XCTAssertThrowsError(try FileDecoder.open(path: Self.fixture("two-tone-alac.m4a"))) { error in
            XCTAssertEqual((error as? DecodeError)?.reason, "Apple Lossless (ALAC) is not supported yet")
        }
    }
}
