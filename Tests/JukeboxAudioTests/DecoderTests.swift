// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import XCTest

final class DecoderTests: XCTestCase {
    func testEachFormatOpensWithItsNativeSampleTypeAndLength() throws {
        let scratch = try Scratch()
        let expected: [(TestAudio.Kind, SampleType, Int)] = [
            (.wav16, .int16, 44100), (.wav24, .int32, 44100), (.aiff, .int16, 44100), (.flac, .int16, 44100),
            (.oggVorbis, .float32, 44100), (.opus, .float32, 48000), (.mp3, .float32, 44100),
        ]
        for (kind, sample, rate) in expected {
            let path = try scratch.audio(kind, frames: 12345, sampleRate: rate)
            let decoder = try Decoder(path: path)
            XCTAssertEqual(decoder.format, AudioFormat(sampleRate: rate, channels: 2, sample: sample), "\(kind)")
            XCTAssertEqual(decoder.frameCount, 12345, "\(kind)")
        }
    }

    func testReadDeliversTheSourceSamplesAndThenZero() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.flac, frames: 5000, channels: 1)
        let source = try TestAudio.decode(path: path)
        let decoder = try Decoder(path: path)
        var buffer = [UInt8](repeating: 0, count: 6000 * 2)
        let got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 6000) }
        XCTAssertEqual(got, 5000)
        XCTAssertEqual(Array(buffer[0..<10000]), source.bytes)
        XCTAssertEqual(buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 6000) }, 0)
    }

    func testSeekLandsOnTheExactFrame() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav24, frames: 8000)
        let source = try TestAudio.decode(path: path)
        let decoder = try Decoder(path: path)
        try decoder.seek(toFrame: 3001)
        var buffer = [UInt8](repeating: 0, count: 100 * 8)
        XCTAssertEqual(buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 100) }, 100)
        XCTAssertEqual(buffer[...], source.bytes(frames: 3001..<3101))
    }

    /// The CPU a seek costs (libFLAC searching the file: 80-170 ms a seek under qemu-aarch64) is not
    /// decoding: dozens of seeks on a slow board must not make a good file "too slow to play". The
    /// test's clock stands for the thread's CPU time: each seek costs 5 s of it, each read 10 ms.
    func testSeeksAreNotChargedToTheDecodingSpeed() throws {
        final class Clock { var now = 0.0 }
        let scratch = try Scratch()
        let path = try scratch.audio(.flac, frames: 44_100)
        let source = try TestAudio.decode(path: path)
        let clock = Clock()
        let decoder = try Decoder(path: path, limits: DecodeLimits(minimumSpeed: 1, speedGraceSeconds: 0),
                                  cpuClock: { clock.now })
        var buffer = [UInt8](repeating: 0, count: 4096 * decoder.format.bytesPerFrame)
        for target in [0, 30_000, 5, 40_000, 12_345, 0, 39_999] {
            clock.now += 5
            try decoder.seek(toFrame: Int64(target))
            clock.now += 0.01
            let got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 4096) }
            XCTAssertEqual(got, min(4096, 44_100 - target), "after the seek to \(target): \(decoder.failure?.reason ?? "")")
            XCTAssertEqual(buffer[0..<(got * decoder.format.bytesPerFrame)],
                           source.bytes(frames: target..<(target + got)), "after the seek to \(target)")
        }
        XCTAssertNil(decoder.failure)
        // Slow reads still fail: 4096 frames (0.09 s of audio) for 1 s of decoding.
        clock.now += 1
        XCTAssertEqual(buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 4096) }, 0)
        XCTAssertTrue(decoder.failure?.reason.hasPrefix("decoding is too slow to play (") == true,
                      decoder.failure?.reason ?? "no failure")
    }

    func testMissingFileSaysSo() {
        XCTAssertThrowsError(try Decoder(path: "/nonexistent/song.flac")) { error in
            XCTAssertEqual(error as? DecodeError,
                           DecodeError(path: "/nonexistent/song.flac", reason: "no such file or directory"))
        }
    }

    func testEmptyFileSaysItIsEmpty() throws {
        let scratch = try Scratch()
        let path = scratch.file("empty.wav", [])
        XCTAssertThrowsError(try Decoder(path: path)) { error in
            XCTAssertEqual((error as? DecodeError)?.reason, "file is empty")
        }
    }

    func testRandomBytesAreNotAudio() throws {
        let scratch = try Scratch()
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_NOISE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("DecoderTests noise seed \(seed) (JUKEBOX_NOISE_SEED=\(seed) replays it)")
        var generator = SeededGenerator(seed: seed)
        let junk = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Bytes that happen to look like an MPEG frame sync could decode as "audio"; keep them out.
        let cleaned = junk.map { $0 == 0xFF ? 0x00 : $0 }
        let path = scratch.file("noise.mp3", cleaned)
        XCTAssertThrowsError(try Decoder(path: path)) { error in
            XCTAssertEqual((error as? DecodeError)?.reason, "not a recognised audio format")
        }
    }

    func testHeaderCutShortIsRejectedWithAReason() throws {
        let scratch = try Scratch()
        for kind in [TestAudio.Kind.wav16, .flac, .oggVorbis] {
            let path = try scratch.audio(kind, frames: 4000)
            let truncated = scratch.file("cut-\(kind.rawValue).\(kind.fileExtension)", Array(scratch.bytes(path).prefix(20)))
            XCTAssertThrowsError(try Decoder(path: truncated), "\(kind)") { error in
                let reason = (error as? DecodeError)?.reason ?? ""
                XCTAssertTrue(["not a recognised audio format", "malformed or truncated audio file"].contains(reason)
                              || reason.hasPrefix("damaged audio file ("), "\(kind): \(reason)")
                XCTAssertEqual((error as? DecodeError)?.path, truncated)
            }
        }
    }

    /// The medium failing under the read (a USB stick pulled out: EIO) is no end of the track: the
    /// decoder says it failed and why, so that the player can tell a stick that is gone from a
    /// damaged file. Simulated at the system call: every descriptor of the file is replaced
    /// (`dup2`) by one of a folder, whose `read` fails (EISDIR) as a vanished disk's does (EIO).
    func testAReadThatFailsInTheMiddleIsAFailureNotTheEnd() throws {
        let scratch = try Scratch()
        for kind in [TestAudio.Kind.wav16, .flac] {
            let path = try scratch.audio(kind, frames: 44100 * 20)
            let decoder = try Decoder(path: path)
            var buffer = [UInt8](repeating: 0, count: 4096 * 4)
            XCTAssertEqual(buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 4096) }, 4096, "\(kind)")
            let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init)
                .filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }
            XCTAssertFalse(fds.isEmpty, "the decoder's descriptor of \(path) not found")
            let folder = open(scratch.url.path, O_RDONLY | O_DIRECTORY)
            for fd in fds { XCTAssertEqual(dup2(folder, fd), fd) }
            close(folder)
            var got = 1, reads = 0
            while got > 0 && reads < 2000 {
                got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 4096) }
                reads += 1
            }
            XCTAssertEqual(got, 0, "\(kind)")
            let failure = try XCTUnwrap(decoder.failure, "\(kind): a failing read ended the track as if it were its end")
            XCTAssertTrue(failure.reason.hasPrefix("read error: "), "\(kind): \(failure.reason)")
            print("\(kind): \(failure.reason) (after \(reads) reads)")
        }
    }

    func testAudioCutShortPlaysWhatIsThere() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav16, frames: 10000)
        let whole = scratch.bytes(path)
        let truncated = scratch.file("cut.wav", Array(whole.prefix(whole.count / 2)))
        let decoder = try Decoder(path: truncated)
        var buffer = [UInt8](repeating: 0, count: 20000 * 4)
        var total = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 1000) }
            if got <= 0 { break }
            total += got
        }
        XCTAssertGreaterThan(total, 4000)
        XCTAssertLessThan(total, 5100)
    }
}
