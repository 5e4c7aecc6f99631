// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// Opus files go through libopusfile with mono and stereo packets on libopus's one-stream decoder
/// (`OpusFileReader`, `OpusPacketDecoder`): the samples must be libsndfile's own, bit for bit (the
/// same libopus floats), the length the same, and the header's output gain applied.
final class OpusFileDecoderTests: ScratchCase {
    func testMonoAndStereoDecodeToLibsndfilesSamples() throws {
        for channels in [1, 2] {
            let path = try scratch.audio(.opus, frames: 30_001, name: "c\(channels)", channels: channels)
            let expected = try TestAudio.decode(path: path)
            let decoder = try Decoder(path: path)
            XCTAssertEqual(decoder.format, AudioFormat(sampleRate: 48000, channels: channels, sample: .float32))
            XCTAssertEqual(decoder.frameCount, 30_001)
            let got = Self.decodeAll(decoder)
            XCTAssertEqual(got.count, expected.bytes.count, "\(channels) channels")
            XCTAssertTrue(got == expected.bytes, "\(channels) channels: samples differ from libsndfile's")
        }
    }

    /// R128 gains are relative to the audio with the header's output gain applied (FileLoudness).
    func testTheHeaderOutputGainIsApplied() throws {
        let plain = MP4MovieTests.fixture("chapters.opus")
        let patched = try FileLoudnessTests.opusWithHeaderGain(dB: -6, from: plain, in: scratch)
        func peak(_ path: String) throws -> Float {
            let bytes = Self.decodeAll(try Decoder(path: path))
            return TestAudio.floats(bytes, type: .float32).map(abs).max() ?? 0
        }
        XCTAssertEqual(try peak(patched) / peak(plain), 0.5012, accuracy: 0.002)
    }

    static func decodeAll(_ decoder: Decoder) -> [UInt8] {
        let chunk = 4096
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk * decoder.format.bytesPerFrame)
        while true {
            let got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: chunk) }
            if got <= 0 { break }
            bytes += buffer[0..<(got * decoder.format.bytesPerFrame)]
        }
        return bytes
    }
}
