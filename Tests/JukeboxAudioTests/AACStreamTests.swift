// SPDX-License-Identifier: MIT
import CFaad
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// AAC (ADTS) streams: `AACStreamCodec` fed in random pieces against libfaad2's decode of the whole
/// fixture at once (the same decoder, so the same samples), garbage around and between frames,
/// recognising ADTS by its bytes, and the engine playing an AAC stream from `RadioServer` into the
/// test device. The fixture is `Tests/Fixtures/two-tone.aac` (see the README beside it).
final class AACStreamTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/two-tone.aac").path

    private var aac: [UInt8] = []
    private var seed: UInt64 = 0
    private var generator = SeededGenerator(seed: 0)

    override func setUpWithError() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.fixture))
        aac = [UInt8](data)
        seed = ProcessInfo.processInfo.environment["JUKEBOX_AAC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("AACStreamTests seed: \(seed) (JUKEBOX_AAC_SEED=\(seed) replays it)")
        generator = SeededGenerator(seed: seed)
    }

    /// libfaad2's decode of the whole file in one go: Init on it, then frame after frame as it
    /// consumes them. 32-bit float, interleaved.
    static func referenceDecode(_ bytes: [UInt8]) throws -> (samples: [Float], rate: Int, channels: Int) {
        let handle = try XCTUnwrap(NeAACDecOpen())
        defer { NeAACDecClose(handle) }
        let config = try XCTUnwrap(NeAACDecGetCurrentConfiguration(handle))
        config.pointee.outputFormat = UInt8(FAAD_FMT_FLOAT)
        config.pointee.downMatrix = 1
        XCTAssertNotEqual(NeAACDecSetConfiguration(handle, config), 0)
        var copy = bytes
        return copy.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var rate: UInt = 0
            var channels: UInt8 = 0
            let skip = NeAACDecInit(handle, base, UInt(buffer.count), &rate, &channels)
            XCTAssertGreaterThanOrEqual(skip, 0)
            var offset = Int(skip)
            var samples: [Float] = []
            var info = NeAACDecFrameInfo()
            while offset < buffer.count {
                let output = NeAACDecDecode(handle, &info, base + offset, UInt(buffer.count - offset))
                guard info.error == 0, info.bytesconsumed > 0 else { break }
                offset += Int(info.bytesconsumed)
                if let output, info.samples > 0 {
                    samples += UnsafeBufferPointer(start: output.assumingMemoryBound(to: Float.self), count: Int(info.samples))
                }
            }
            XCTAssertEqual(offset, buffer.count, "libfaad stopped before the end")
            return (samples, Int(info.samplerate), Int(info.channels))
        }
    }

    func decodeInPieces(_ bytes: [UInt8], maxPiece: Int = 5000, codec: AACStreamCodec? = nil, endOfInput: Bool = true) throws -> DecodedStream {
        try decodeStreamInPieces(bytes, codec: codec ?? AACStreamCodec(), maxPiece: maxPiece, generator: &generator, endOfInput: endOfInput)
    }

    func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        return bytes
    }

    /// The offsets where the fixture's ADTS frames start.
    func frameStarts() -> [Int] {
        var starts: [Int] = []
        var offset = 0
        while offset + 7 <= aac.count {
            starts.append(offset)
            let length = aac.withUnsafeBufferPointer { AACStreamCodec.frameLength($0.baseAddress! + offset) }
            offset += length ?? aac.count
        }
        return starts
    }

    func testPiecesDecodeAsTheWholeFileAtOnce() throws {
        let reference = try Self.referenceDecode(aac)
        XCTAssertEqual(reference.rate, 44100)
        XCTAssertEqual(reference.channels, 2)
        XCTAssertGreaterThan(reference.samples.count, 2 * 44100 * 2)
        for round in 0..<5 {
            let decoded = try decodeInPieces(aac, maxPiece: round == 0 ? 7 : 5000)
            XCTAssertNil(decoded.end, "seed \(seed)")
            XCTAssertEqual(decoded.formats, [AudioFormat(sampleRate: 44100, channels: 2, sample: .float32)], "seed \(seed)")
            XCTAssertEqual(decoded.samples.count, reference.samples.count, "seed \(seed), round \(round)")
            XCTAssertTrue(decoded.samples == reference.samples, "the samples differ: seed \(seed), round \(round)")
        }
    }

    func testGarbageBeforeAndBetweenFramesIsSkipped() throws {
        // Random bytes, a lone ADTS header and an MP3 frame header ahead of the stream and between
        // two of its frames: the codec finds the real frames again and libfaad's state goes on as
        // if the garbage were not there, so the samples are the clean decode's.
        let reference = try Self.referenceDecode(aac)
        let starts = frameStarts()
        let cut = starts[Int.random(in: 5..<(starts.count - 5), using: &generator)]
        let lone: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x11, 0xBF, 0xFC]
        let mp3Header: [UInt8] = [0xFF, 0xFB, 0x90, 0x64]
        // Appended one by one: long `+` chains strain Swift 6.0's type checker under emulation.
        var stream = randomBytes(3000)
        stream.append(contentsOf: lone)
        stream.append(contentsOf: randomBytes(100))
        stream.append(contentsOf: mp3Header)
        stream.append(contentsOf: aac[..<cut])
        stream.append(contentsOf: randomBytes(2000))
        stream.append(contentsOf: lone)
        stream.append(contentsOf: mp3Header)
        stream.append(contentsOf: randomBytes(50))
        stream.append(contentsOf: aac[cut...])
        let decoded = try decodeInPieces(stream)
        XCTAssertNil(decoded.end, "seed \(seed)")
        XCTAssertEqual(decoded.formats.count, 1, "seed \(seed)")
        XCTAssertEqual(decoded.samples.count, reference.samples.count, "seed \(seed), garbage at \(cut)")
        XCTAssertTrue(decoded.samples == reference.samples, "the samples differ: seed \(seed), garbage at \(cut)")
    }

    func testAStreamJoinedMidFrameFindsTheNextFrame() throws {
        // A listener joins a station anywhere: the codec starts at the next whole frame. Its first
        // frame has no predecessor to overlap with, so only what follows is compared.
        let reference = try Self.referenceDecode(aac)
        let starts = frameStarts()
        let index = Int.random(in: 1..<(starts.count / 2), using: &generator)
        let join = Int.random(in: (starts[index - 1] + 1)..<starts[index], using: &generator)
        let decoded = try decodeInPieces(Array(aac[join...]))
        XCTAssertNil(decoded.end, "seed \(seed)")
        XCTAssertEqual(decoded.formats.count, 1, "seed \(seed)")
        let frame = 1024 * 2
        XCTAssertEqual(decoded.samples.count, reference.samples.count - index * frame, "joined in frame \(index - 1): seed \(seed)")
        // Not bit for bit: libfaad carries state from frame to frame beyond the overlap (the
        // generator of noise-substituted bands among it), which a later start does not share. The
        // difference measured: at most 0.00035 (84 dB below the signal).
        let after = decoded.samples.count - frame
        let worst = zip(decoded.samples.suffix(after), reference.samples.suffix(after)).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
        XCTAssertLessThan(worst, 0.002, "joined in frame \(index - 1): seed \(seed)")
    }

    func testATruncatedFrameCostsAFewFramesNotTheStream() throws {
        let reference = try Self.referenceDecode(aac)
        let starts = frameStarts()
        let index = Int.random(in: 5..<(starts.count - 5), using: &generator)
        let half = (starts[index] + starts[index + 1]) / 2
        var stream = Array(aac[..<half])
        stream.append(contentsOf: aac[starts[index + 1]...])
        let decoded = try decodeInPieces(stream)
        XCTAssertNil(decoded.end, "seed \(seed)")
        XCTAssertEqual(decoded.formats.count, 1, "seed \(seed)")
        // Frame `index` is lost and so (being read with the next one's bytes) may be the next.
        let frame = 1024 * 2
        XCTAssertGreaterThanOrEqual(decoded.samples.count, reference.samples.count - 3 * frame, "seed \(seed), cut frame \(index)")
        XCTAssertLessThanOrEqual(decoded.samples.count, reference.samples.count, "seed \(seed), cut frame \(index)")
        XCTAssertTrue(decoded.samples.allSatisfy(\.isFinite), "seed \(seed)")
    }

    func testRandomBytesNeverDecodeAndGarbageAfterAudioFails() throws {
        let noise = try decodeInPieces(randomBytes(300_000), maxPiece: 16 << 10)
        XCTAssertNil(noise.end, "seed \(seed)")
        XCTAssertEqual(noise.formats, [], "random bytes decoded as AAC: seed \(seed)")
        XCTAssertEqual(noise.samples.count, 0)

        let codec = try AACStreamCodec()
        // Whole frames only: a frame cut short and completed by garbage may well decode.
        let audio = try decodeInPieces(Array(aac.prefix(frameStarts()[25])), codec: codec, endOfInput: false)
        XCTAssertEqual(audio.formats.count, 1)
        let after = try decodeInPieces(randomBytes(300_000), maxPiece: 16 << 10, codec: codec)
        guard case .failed(let reason) = after.end else { return XCTFail("\(String(describing: after.end)): seed \(seed)") }
        XCTAssertTrue(reason.hasPrefix("AAC decoding failed (nothing decodable in"), reason)
        codec.close()
    }

    func testTheBytesHeldAreBounded() {
        let bytes = StreamBytes(capacity: 100)
        let chunk = [UInt8](0..<70)
        XCTAssertEqual(chunk.withUnsafeBytes { bytes.append($0) }, 0)
        XCTAssertEqual(chunk.withUnsafeBytes { bytes.append($0) }, 40)
        XCTAssertEqual(bytes.count, 100)
        XCTAssertEqual(bytes.pointer[0], 40, "the oldest went")
        bytes.consume(90)
        XCTAssertEqual(bytes.pointer[0], 60)
        let big = [UInt8](repeating: 7, count: 250)
        XCTAssertEqual(big.withUnsafeBytes { bytes.append($0) }, 160)
        XCTAssertEqual(bytes.count, 100)
        bytes.consume(1000)
        XCTAssertEqual(bytes.count, 0)
    }

    func testADTSIsToldFromMP3ByItsBytes() throws {
        XCTAssertEqual(aac.prefix(4096).withUnsafeBytes { StreamCodecKind.sniff($0) }, .aac)
        let mid = frameStarts()[20] + 3
        XCTAssertEqual(aac[mid...].prefix(4096).withUnsafeBytes { StreamCodecKind.sniff($0) }, .aac, "a stream joined mid-frame")
        let scratch = try Scratch()
        let mp3 = scratch.bytes(try scratch.audio(.mp3, frames: 44100))
        XCTAssertEqual(mp3.prefix(4096).withUnsafeBytes { StreamCodecKind.sniff($0) }, .mp3)
        XCTAssertEqual(randomBytes(4096).withUnsafeBytes { StreamCodecKind.sniff($0) }, .mp3, "seed \(seed)")
        for type in ["audio/aac", "audio/aacp", "audio/x-aac"] {
            XCTAssertEqual(StreamCodecKind.named(contentType: type), .aac, type)
            XCTAssertFalse(StreamCodecKind.knownUnsupported.contains(type), type)
        }
    }
}

/// What a codec made of a stream fed in pieces.
struct DecodedStream {
    var samples: [Float] = []
    var formats: [AudioFormat] = []
    var end: StreamCodecResult?
    var fed = 0
}

/// Feeds `bytes` to `codec` in random pieces (1 byte to `maxPiece`) whenever it asks, asking for a
/// random number of frames each time, until everything is fed and it needs more (or it ends).
/// With `endOfInput`, the codec is told the input ended once everything is fed.
func decodeStreamInPieces(_ bytes: [UInt8], codec: any StreamCodec, maxPiece: Int, generator: inout SeededGenerator,
                          endOfInput: Bool = false) throws -> DecodedStream {
    var decoded = DecodedStream()
    var buffer = [Float](repeating: 0, count: 4096 * 8)
    var told = false
    while true {
        let frames = Int.random(in: 1...4096, using: &generator)
        let result = buffer.withUnsafeMutableBytes { codec.decode(into: $0.baseAddress!, frames: frames) }
        switch result {
        case .frames(let count):
            let channels = try XCTUnwrap(decoded.formats.last).channels
            XCTAssertLessThanOrEqual(count, frames)
            decoded.samples += buffer[0..<(count * channels)]
        case .format(let format):
            decoded.formats.append(format)
        case .needMore:
            if decoded.fed == bytes.count {
                if !endOfInput || told { return decoded }
                codec.endOfInput()
                told = true
                continue
            }
            let piece = min(bytes.count - decoded.fed, Int.random(in: 1...maxPiece, using: &generator))
            bytes[decoded.fed..<(decoded.fed + piece)].withUnsafeBytes { codec.feed($0) }
            decoded.fed += piece
        case .ended, .failed:
            decoded.end = result
            return decoded
        }
    }
}

/// The engine playing AAC from a local server into the test device (skipped without python3).
final class AACRadioTests: XCTestCase {
    private var scratch: Scratch!
    private var server: RadioServer!

    override func setUpWithError() throws {
        try requireRadioServer()
        scratch = try Scratch()
        let mp3 = try scratch.audio(.mp3, frames: 44100)
        let files: [String: (path: String, contentType: String)] = ["aac": (AACStreamTests.fixture, "audio/aac")]
        do { server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: files) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
    }

    override func tearDown() {
        server = nil
        scratch = nil
    }

    private func referenceBytes() throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: AACStreamTests.fixture)))
        let reference = try AACStreamTests.referenceDecode(bytes)
        return reference.samples.withUnsafeBytes { Array($0) }
    }

    func testAPlainHTTPAACFilePlaysAsTheReferenceDecodeAndEnds() throws {
        let reference = try referenceBytes()
        let pcm = try scratch.playedToTheEnd(id: 3, path: server.url("/file/aac"))
        XCTAssertEqual(pcm.events(named: "params").first?.fields["format"], "FLOAT_LE")
        XCTAssertEqual(pcm.events(named: "params").first?.fields["rate"], "44100")
        assertSameAudio(pcm.recording(), reference[...], bytesPerFrame: 8, "plain HTTP AAC")
    }

    func testAnICYStreamWithoutAContentTypeIsRecognisedAndPlaysAsTheReferenceDecode() throws {
        // `type=` sends no Content-Type: the codec is chosen by the bytes; the ICY blocks every
        // 8192 bytes are taken out before the codec sees them.
        let reference = try referenceBytes()
        let (pcm, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 0.5))
        defer { engine.shutdown() }
        playUntilHeard(engine, log, id: 7, path: server.url("/icy?metaint=8192&file=aac&once=1&type="), seconds: 2.5)
        engine.shutdown()
        let recording = pcm.recording()
        XCTAssertGreaterThan(recording.count, 2 * 44100 * 8)
        let count = min(recording.count, reference.count)
        assertSameAudio(Array(recording.prefix(count)), reference.prefix(count), bytesPerFrame: 8, "ICY AAC stream")
    }
}
