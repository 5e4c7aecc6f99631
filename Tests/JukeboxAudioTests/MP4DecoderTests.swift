// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
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
        XCTAssertTrue(try FileDecoder.open(path: Self.fixture("two-tone-alac.m4a")) is MP4Decoder)
    }
}

/// Apple Lossless through `ALACDecoder`: bit-exact against FLAC files FFmpeg made from the same PCM
/// (libsndfile decodes those), 16-bit stereo sines and 24-bit stereo pink noise (which makes the
/// encoder use its verbatim low bits and, where noise does not compress, uncompressed packets),
/// exact seeks, and damaged packets refused with a reason, never a trap.
final class ALACDecoderTests: XCTestCase {
    static func fixture(_ name: String) -> String { MP4MovieTests.fixture(name) }

    /// The interleaved samples of a file, as 32-bit integers whatever their width.
    static func integers(_ decoder: any PCMSource) -> [Int32] {
        var out: [Int32] = []
        let chunk = 777
        let size = decoder.format.bytesPerFrame
        var buffer = [UInt8](repeating: 0, count: chunk * size)
        while true {
            let got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: chunk) }
            if got <= 0 { break }
            buffer.withUnsafeBytes { raw in
                switch decoder.format.sample {
                case .int16: out += raw.bindMemory(to: Int16.self).prefix(got * decoder.format.channels).map { Int32($0) }
                case .int32: out += raw.bindMemory(to: Int32.self).prefix(got * decoder.format.channels)
                case .float32: XCTFail("float from a lossless decoder")
                }
            }
        }
        return out
    }

    func testSixteenBitStereoIsBitExact() throws {
        let alac = try MP4Decoder(path: Self.fixture("two-tone-alac.m4a"))
        let flac = try Decoder(path: Self.fixture("two-tone-alac-source.flac"))
        XCTAssertEqual(alac.format, flac.format)
        XCTAssertEqual(alac.format, AudioFormat(sampleRate: 44100, channels: 2, sample: .int16))
        XCTAssertEqual(alac.frameCount, 22050)
        let got = Self.integers(alac)
        XCTAssertNil(alac.failure)
        XCTAssertEqual(got.count, 2 * 22050)
        XCTAssertTrue(got == Self.integers(flac), "bit-exact")
    }

    func testTwentyFourBitNoiseIsBitExactAndSeeksExactly() throws {
        let alac = try MP4Decoder(path: Self.fixture("noise24-alac.m4a"))
        let reference = Self.integers(try Decoder(path: Self.fixture("noise24-alac-source.flac")))
        XCTAssertEqual(alac.format, AudioFormat(sampleRate: 48000, channels: 2, sample: .int32))
        let got = Self.integers(alac)
        XCTAssertEqual(got.count, 2 * 7200)
        XCTAssertTrue(got == reference, "bit-exact; first difference at \(zip(got, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
        for target in [0, 1, 4095, 4096, 4097, 7199] {
            try alac.seek(toFrame: Int64(target))
            XCTAssertTrue(Self.integers(alac) == Array(reference[(2 * target)...]), "from frame \(target)")
        }
    }

    func testDamagedPacketsAreRefusedNotTrapped() throws {
        let movie = try MP4Movie.read(try MP4File(path: Self.fixture("noise24-alac.m4a")))
        guard case .alac(let cookie) = movie.track.codec else { return XCTFail() }
        let decoder = try ALACDecoder(cookie: cookie)
        let file = try MP4File(path: Self.fixture("noise24-alac.m4a"))
        var reader = try MP4SampleReader(movie.track.table, source: file)
        let first = try XCTUnwrap(try reader.next())
        let packet = try file.read(at: first.offset, count: first.size)
        XCTAssertEqual(try decoder.decode(packet).count, 2 * 4096)
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_ALAC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("ALACDecoderTests seed: \(seed) (JUKEBOX_ALAC_SEED=\(seed) replays it)")
        var generator = SeededGenerator(seed: seed)
        var refused = 0
        for cut in stride(from: 0, to: packet.count, by: 37) {
            if (try? decoder.decode(Array(packet[..<cut]))) == nil { refused += 1 }
        }
        for _ in 0..<200 {
            var bad = packet
            for _ in 0..<4 { bad[Int.random(in: 0..<bad.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            _ = try? decoder.decode(bad)  // any outcome but a trap
        }
        XCTAssertGreaterThan(refused, 0)
        XCTAssertThrowsError(try ALACDecoder(cookie: Array(cookie.prefix(10))))
        var sixChannels = cookie
        sixChannels[9] = 6
        XCTAssertThrowsError(try ALACDecoder(cookie: sixChannels)) { error in
            XCTAssertEqual((error as? MP4Error)?.reason, "ALAC with 6 channels is not supported (mono and stereo)")
        }
    }
}
