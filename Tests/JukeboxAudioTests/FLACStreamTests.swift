// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Native FLAC streams: `FLACStreamCodec` fed in random pieces gives back the source's samples
/// exactly (FLAC is lossless: 16-bit samples / 32768), with tags to pass over, with STREAMINFO not
/// knowing its largest frame (as a live encoder writes it), through garbage; and the engine playing
/// FLAC from `RadioServer` into the test device.
final class FLACStreamTests: XCTestCase {
    private var scratch: Scratch!
    private var flac: [UInt8] = []
    private var expected: [Float] = []
    private var seed: UInt64 = 0
    private var generator = SeededGenerator(seed: 0)

    /// 2 s of 44.1 kHz stereo.
    static let frames = 88200

    override func setUpWithError() throws {
        scratch = try Scratch()
        let path = try scratch.audio(.flac, frames: Self.frames, tags: TestAudio.Tags(title: "Song", artist: "Band"))
        flac = scratch.bytes(path)
        expected = TestAudio.floats(try TestAudio.decode(path: path))
        XCTAssertEqual(expected.count, Self.frames * 2)
        seed = ProcessInfo.processInfo.environment["JUKEBOX_FLAC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("FLACStreamTests seed: \(seed) (JUKEBOX_FLAC_SEED=\(seed) replays it)")
        generator = SeededGenerator(seed: seed)
    }

    override func tearDown() {
        scratch = nil
    }

    private func decodeInPieces(_ bytes: [UInt8], maxPiece: Int = 5000, endOfInput: Bool = true) throws -> DecodedStream {
        try decodeStreamInPieces(bytes, codec: FLACStreamCodec(), maxPiece: maxPiece, generator: &generator, endOfInput: endOfInput)
    }

    private func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        return bytes
    }

    private let stereo = AudioFormat(sampleRate: 44100, channels: 2, sample: .float32)

    func testPiecesDecodeToTheSourceSamplesExactly() throws {
        for round in 0..<4 {
            let decoded = try decodeInPieces(flac, maxPiece: round == 0 ? 3 : 5000)
            XCTAssertEqual(decoded.end, .ended, "seed \(seed)")
            XCTAssertEqual(decoded.formats, [stereo], "seed \(seed)")
            XCTAssertEqual(decoded.samples.count, expected.count, "seed \(seed), round \(round)")
            XCTAssertTrue(decoded.samples == expected, "the samples differ: seed \(seed), round \(round)")
        }
    }

    func testALiveEncodersStreamInfoWithoutFrameSizesDecodesTheSame() throws {
        // "fLaC", the block header, then STREAMINFO: min/max block (2+2), min/max frame (3+3).
        var live = flac
        for index in 12..<18 { live[index] = 0 }
        let decoded = try decodeInPieces(live)
        XCTAssertEqual(decoded.end, .ended, "seed \(seed)")
        XCTAssertTrue(decoded.samples == expected, "the samples differ: seed \(seed)")
    }

    func testWithoutTheEndEverythingButTheLastFramesComesOutAtOnce() throws {
        // A live stream never ends: what is held back is at most one largest frame.
        let decoded = try decodeInPieces(flac, endOfInput: false)
        XCTAssertNil(decoded.end, "seed \(seed)")
        XCTAssertGreaterThan(decoded.samples.count, expected.count - 3 * 4608 * 2, "seed \(seed)")
        XCTAssertTrue(decoded.samples[...] == expected.prefix(decoded.samples.count), "seed \(seed)")
    }

    func testGarbageBeforeTheStreamAndInsideItCostsOnlyTheFramesItHits() throws {
        // Bytes before "fLaC" are passed over; garbage in the middle (up to 100 KB: more than the
        // codec holds, so libFLAC runs dry in its search and starts over) loses the frames it hits,
        // and what follows is the source again.
        let cut = Int.random(in: (flac.count / 3)...(flac.count / 2), using: &generator)
        let garbage = randomBytes(Int.random(in: 1...100_000, using: &generator))
        var stream = randomBytes(500)
        stream.append(contentsOf: flac[..<cut])
        stream.append(contentsOf: garbage)
        stream.append(contentsOf: flac[cut...])
        let decoded = try decodeInPieces(stream)
        XCTAssertEqual(decoded.end, .ended, "seed \(seed)")
        XCTAssertEqual(decoded.formats, [stereo], "seed \(seed)")
        // A FLAC frame does not say its length: libFLAC reads the frame the garbage hit by its
        // (now garbage) subframe parameters, which can run into the frame after it. 1 or 2 blocks
        // of 4096 went in 25 runs; 3 at most.
        let block = 4096 * 2
        XCTAssertGreaterThanOrEqual(decoded.samples.count, expected.count - 3 * block, "seed \(seed), \(garbage.count) bytes at \(cut)")
        XCTAssertLessThan(decoded.samples.count, expected.count + block, "seed \(seed), \(garbage.count) bytes at \(cut)")
        print("FLAC garbage: \(garbage.count) bytes at \(cut) cost \((expected.count - decoded.samples.count) / 2) frames")
        let tail = 44100
        XCTAssertTrue(decoded.samples.suffix(tail) == expected.suffix(tail), "the audio after the garbage differs: seed \(seed)")
    }

    func testRandomBytesNeverDecode() throws {
        // A false frame sync in garbage whose frame fails its CRC comes out as silence (libFLAC's
        // choice), never as noise.
        let noise = try decodeInPieces(randomBytes(300_000), maxPiece: 16 << 10)
        XCTAssertEqual(noise.formats, [], "seed \(seed)")
        let magic: [UInt8] = [0x66, 0x4C, 0x61, 0x43]
        for _ in 0..<20 {
            var bytes = magic
            bytes.append(contentsOf: randomBytes(5000))
            let header = try decodeInPieces(bytes)
            XCTAssertEqual(header.samples.count, 0, "seed \(seed)")
        }
        var headerOnly = Array(flac.prefix(8 + 34))
        headerOnly.append(contentsOf: randomBytes(200_000))
        let afterInfo = try decodeInPieces(headerOnly, maxPiece: 16 << 10)
        XCTAssertTrue(afterInfo.samples.allSatisfy { $0 == 0 }, "garbage decoded as sound: seed \(seed)")
    }

    func testFLACIsToldByItsBytesAndTypes() {
        XCTAssertEqual(flac.prefix(4096).withUnsafeBytes { StreamCodecKind.sniff($0) }, .flac)
        for type in ["audio/flac", "audio/x-flac"] {
            XCTAssertEqual(StreamCodecKind.named(contentType: type), .flac, type)
            XCTAssertFalse(StreamCodecKind.knownUnsupported.contains(type), type)
        }
    }
}

/// The engine playing FLAC from a local server into the test device (skipped without python3).
final class FLACRadioTests: XCTestCase {
    private var scratch: Scratch!
    private var server: RadioServer!
    private var expected: [UInt8] = []

    override func setUpWithError() throws {
        try requireRadioServer()
        scratch = try Scratch()
        let mp3 = try scratch.audio(.mp3, frames: 44100)
        let path = try scratch.audio(.flac, frames: FLACStreamTests.frames, tags: TestAudio.Tags(title: "Song"))
        expected = TestAudio.floats(try TestAudio.decode(path: path)).withUnsafeBytes { Array($0) }
        // The same with 600 KB of metadata (a PADDING block after STREAMINFO, as a large cover
        // would be): more than `StreamDecoder.syncLimit`, which metadata does not count against.
        var big = scratch.bytes(path)
        let padding = 600_000
        var block: [UInt8] = [0x01, UInt8(padding >> 16), UInt8((padding >> 8) & 0xFF), UInt8(padding & 0xFF)]
        block.append(contentsOf: [UInt8](repeating: 0, count: padding))
        XCTAssertEqual(big[4] & 0x80, 0, "STREAMINFO is not the last block (tags follow)")
        big.insert(contentsOf: block, at: 8 + 34)
        let bigPath = scratch.file("big.flac", big)
        var files: [String: (path: String, contentType: String)] = ["flac": (path, "audio/flac")]
        files["big"] = (bigPath, "audio/flac")
        do { server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: files) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
    }

    override func tearDown() {
        server = nil
        scratch = nil
    }

    func testAPlainHTTPFLACFilePlaysAsTheSourceToItsLastSample() throws {
        let pcm = try scratch.playedToTheEnd(id: 3, path: server.url("/file/flac"))
        XCTAssertEqual(pcm.events(named: "params").first?.fields["format"], "FLOAT_LE")
        assertSameAudio(pcm.recording(), expected[...], bytesPerFrame: 8, "plain HTTP FLAC")
    }

    func testLargeMetadataIsReadPastNotTakenForGarbage() throws {
        let pcm = try scratch.playedToTheEnd(id: 4, path: server.url("/file/big"))
        assertSameAudio(pcm.recording(), expected[...], bytesPerFrame: 8, "FLAC with 600 KB of metadata")
    }

    func testAnICYStreamWithoutAContentTypeIsRecognisedAndPlaysAsTheSource() throws {
        let (pcm, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 0.5))
        defer { engine.shutdown() }
        playUntilHeard(engine, log, id: 7, path: server.url("/icy?metaint=8192&file=flac&once=1&type="), seconds: 1.5)
        engine.shutdown()
        let recording = pcm.recording()
        XCTAssertGreaterThan(recording.count, 44100 * 8)
        let count = min(recording.count, expected.count)
        assertSameAudio(Array(recording.prefix(count)), expected.prefix(count), bytesPerFrame: 8, "ICY FLAC stream")
    }
}
