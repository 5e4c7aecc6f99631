// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Ogg Vorbis and Ogg Opus streams: `OggStreamCodec` fed in random pieces against libsndfile's
/// decode of the same file, chained streams, damaged and foreign bytes, and the engine playing an
/// ICY stream of each from a local server (`RadioServer`, skipped without python3) into the test
/// device.
final class OggStreamTests: ScratchCase {
    /// How far a sample may differ from libsndfile's decode. libsndfile decodes with the same
    /// libvorbis (`vorbis_synthesis_pcmout`) and libopus (`opus_multistream_decode_float`) on the
    /// same packets, so the floats should be identical; the slack is only for a libsndfile that
    /// scales or converts on the way (one float ulp near full scale is 6e-8). A wrong offset,
    /// a dropped packet or a missed pre-skip differs by far more (the test signal moves ~0.1 per frame).
    private static let tolerance: Float = 1e-6

    /// What a codec produced: the formats it reported, in order, and the samples.
    private struct Output {
        var formats: [AudioFormat] = []
        var samples: [Float] = []
        var failure: String?
        /// The titles `takeTitle` gave, in order.
        var titles: [String] = []
    }

    /// The seed of the random pieces: JUKEBOX_OGG_SEED replays a run.
    private func seed() -> UInt64 {
        let given: UInt64? = ProcessInfo.processInfo.environment["JUKEBOX_OGG_SEED"].flatMap { UInt64($0) }
        let seed: UInt64 = given ?? UInt64.random(in: 0...UInt64.max)
        print("OggStreamTests seed: \(seed) (JUKEBOX_OGG_SEED=\(seed) replays it)")
        return seed
    }

    /// Feeds `bytes` to a fresh codec in pieces of 1 to `maxPiece` bytes (random), decoding
    /// between pieces in random amounts, until everything is fed and decoded.
    private func decodeInPieces(_ bytes: [UInt8], seed: UInt64, maxPiece: Int = 9000) -> Output {
        var random = SeededGenerator(seed: seed)
        let codec = OggStreamCodec()
        defer { codec.close() }
        var output = Output()
        var channels = 1
        let capacity = 8192
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacity * 8)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < bytes.count {
            let piece: Int = min(bytes.count - offset, 1 + Int(random.next() % UInt64(maxPiece)))
            bytes[offset..<(offset + piece)].withUnsafeBytes { codec.feed($0) }
            offset += piece
            decoding: while true {
                let want: Int = 1 + Int(random.next() % UInt64(capacity))
                let result = codec.decode(into: buffer, frames: want)
                if let title = codec.takeTitle() { output.titles.append(title) }
                switch result {
                case .frames(let count):
                    XCTAssertLessThanOrEqual(count, want)
                    output.samples.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count * channels))
                case .format(let format):
                    output.formats.append(format)
                    channels = format.channels
                case .needMore:
                    break decoding
                case .ended:
                    break decoding
                case .failed(let reason):
                    output.failure = reason
                    return output
                }
            }
        }
        return output
    }

    private func reference(_ path: String) throws -> [Float] {
        let decoded = try TestAudio.decode(path: path)
        XCTAssertEqual(decoded.sampleType, .float32)
        return TestAudio.floats(decoded)
    }

    /// The largest difference between two sample arrays of the same length.
    private func largestDifference(_ a: [Float], _ b: [Float]) -> Float {
        var largest: Float = 0
        for index in 0..<min(a.count, b.count) { largest = max(largest, abs(a[index] - b[index])) }
        return largest
    }

    private func assertSame(_ actual: [Float], _ expected: [Float], channels: Int, _ what: String,
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.count / channels, expected.count / channels, "\(what): frames", file: file, line: line)
        let difference = largestDifference(actual, expected)
        print("\(what): \(actual.count / channels) frames, largest difference from libsndfile \(difference)")
        XCTAssertLessThanOrEqual(difference, Self.tolerance, what, file: file, line: line)
    }

    // MARK: The codec

    func testVorbisFedInRandomPiecesDecodesAsLibsndfile() throws {
        try assertRandomPiecesDecodeAsLibsndfile(.oggVorbis, rate: 44100, label: "Vorbis", prefix: "v")
    }

    func testOpusFedInRandomPiecesDecodesAsLibsndfile() throws {
        try assertRandomPiecesDecodeAsLibsndfile(.opus, rate: 48000, label: "Opus", prefix: "o")
    }

    /// Files of `kind` in 1, 2 and 6 channels, fed in random pieces (seed printed), decode to one
    /// format at `rate` and to libsndfile's samples.
    private func assertRandomPiecesDecodeAsLibsndfile(_ kind: TestAudio.Kind, rate: Int, label: String, prefix: String,
                                                      file: StaticString = #filePath, line: UInt = #line) throws {
        let seed = seed()
        for channels in [1, 2, 6] {
            let path = try scratch.audio(kind, frames: 100_000, name: prefix + String(channels), channels: channels)
            let output = decodeInPieces(scratch.bytes(path), seed: seed &+ UInt64(channels))
            XCTAssertNil(output.failure, "seed \(seed)", file: file, line: line)
            XCTAssertEqual(output.formats, [AudioFormat(sampleRate: rate, channels: channels, sample: .float32)], file: file, line: line)
            assertSame(output.samples, try reference(path), channels: channels, "\(label) \(channels) ch, seed \(seed)", file: file, line: line)
        }
    }

    func testDecodeCostPerAudioMinute() throws {
        // A figure, not a target (the benchmark holds targets): this thread's CPU time to decode
        // 44.1 kHz stereo Vorbis and 48 kHz stereo Opus (libsndfile's default quality), fed 16 KiB at
        // a time, per minute of audio. 20 s are decoded (5 under emulation, where the figure says
        // nothing of a board): encoding the file is the slow part (under emulation most of all). A
        // debug build: the interleaving loop is Swift without optimisation.
        let audioSeconds = ProcessInfo.processInfo.environment["JUKEBOX_QEMU_USER"] == "1" ? 5 : 20
        for kind in [TestAudio.Kind.oggVorbis, .opus] {
            let rate: Int = kind.requiredSampleRate ?? 44100
            let path = try scratch.audio(kind, frames: audioSeconds * rate, name: "twenty")
            let bytes: [UInt8] = scratch.bytes(path)
            let codec = OggStreamCodec()
            defer { codec.close() }
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * 2)
            defer { buffer.deallocate() }
            var frames = 0
            let before = threadCPUSeconds()
            var offset = 0
            while offset < bytes.count {
                let piece: Int = min(16384, bytes.count - offset)
                bytes[offset..<(offset + piece)].withUnsafeBytes { codec.feed($0) }
                offset += piece
                decoding: while true {
                    switch codec.decode(into: buffer, frames: 4096) {
                    case .frames(let count): frames += count
                    case .format: continue
                    default: break decoding
                    }
                }
            }
            let seconds = threadCPUSeconds() - before
            XCTAssertEqual(frames, audioSeconds * rate, "\(kind)")
            print("Ogg stream decode cost: \(kind) " + String(format: "%.0f ms", seconds * 60 / Double(audioSeconds) * 1000)
                  + " of CPU per audio minute (\(bytes.count * 60 / audioSeconds / 1024) KiB a minute, debug build, this machine)")
        }
    }

    private func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    func testOpusOutputGainIsApplied() throws {
        // OpusHead's output gain (Q7.8 dB at bytes 16-17 of the first page's body) set to -6 dB, the
        // page's checksum made right: the samples are the file's at 10^(-6/20).
        let path = try scratch.audio(.opus, frames: 20_000, name: "gain")
        var bytes: [UInt8] = scratch.bytes(path)
        let body: Int = 27 + Int(bytes[26])
        XCTAssertTrue(bytes[body..<(body + 8)].elementsEqual("OpusHead".utf8))
        let gain = Int16(-6 * 256)
        bytes[body + 16] = UInt8(truncatingIfNeeded: gain)
        bytes[body + 17] = UInt8(truncatingIfNeeded: gain >> 8)
        let firstPage: Int = pageStarts(bytes)[1]
        var page: [UInt8] = Array(bytes[0..<firstPage])
        page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        let crc = Self.crc(page)
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(22..<26, with: $0) }
        let output = decodeInPieces(bytes, seed: 5)
        XCTAssertNil(output.failure)
        let factor: Float = Float(pow(10.0, -6.0 / 20.0))
        let expected: [Float] = try reference(path).map { $0 * factor }
        XCTAssertEqual(output.samples.count, expected.count)
        let difference = largestDifference(output.samples, expected)
        print("Opus at -6 dB output gain: largest difference from libsndfile's decode × \(factor): \(difference)")
        // libopus applies the gain in its own float arithmetic (an exp2 approximation): 1e-4 of full scale.
        XCTAssertLessThan(difference, 1e-4)
    }

    func testAChainedStreamDecodesEveryLinkAndSaysOnlyWhenTheFormatChanges() throws {
        let seed = seed()
        let first = try scratch.audio(.oggVorbis, frames: 30_000, name: "first")
        let second = scratch.path("second.ogg")
        try TestAudio.write(path: second, kind: .oggVorbis, frames: 50_000, startFrame: 30_000)
        let third = try scratch.audio(.opus, frames: 40_000, name: "third")
        var bytes: [UInt8] = scratch.bytes(first)
        bytes += scratch.bytes(second)
        bytes += scratch.bytes(third)
        let output = decodeInPieces(bytes, seed: seed)
        XCTAssertNil(output.failure, "seed \(seed)")
        // Vorbis → Vorbis in the same format goes on unsaid; Opus at 48 kHz is a new format.
        let vorbis = AudioFormat(sampleRate: 44100, channels: 2, sample: .float32)
        let opus = AudioFormat(sampleRate: 48000, channels: 2, sample: .float32)
        XCTAssertEqual(output.formats, [vorbis, opus], "seed \(seed)")
        var expected: [Float] = try reference(first)
        expected += try reference(second)
        expected += try reference(third)
        assertSame(output.samples, expected, channels: 2, "chain Vorbis+Vorbis+Opus, seed \(seed)")
    }

    func testDamagedPagesAreSkippedAndDecodingGoesOn() throws {
        let seed = seed()
        var random = SeededGenerator(seed: seed)
        for kind in [TestAudio.Kind.oggVorbis, .opus] {
            let path = try scratch.audio(kind, frames: 200_000, name: "damaged")
            var bytes: [UInt8] = scratch.bytes(path)
            // 32 random bytes inside each of two audio pages (libsndfile writes Opus pages of
            // about a second, Vorbis pages of about a quarter): those pages fail their checksum.
            let pages: [Int] = pageStarts(bytes)
            XCTAssertGreaterThanOrEqual(pages.count, 6, "\(kind)")
            for page in [pages[pages.count / 3], pages[2 * pages.count / 3]] {
                let at: Int = page + 64 + Int(random.next() % 512)
                for index in at..<(at + 32) { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
            }
            let output = decodeInPieces(bytes, seed: seed)
            XCTAssertNil(output.failure, "\(kind), seed \(seed)")
            let frames = output.samples.count / 2
            print("damaged \(kind): \(frames) of 200000 frames decoded, \(pages.count) pages, 2 damaged")
            // Two lost pages cost at most about 2 s of Opus; the rest plays, nothing is made up.
            XCTAssertGreaterThan(frames, 90_000, "\(kind), seed \(seed)")
            XCTAssertLessThan(frames, 200_000, "\(kind), seed \(seed)")
            XCTAssertFalse(output.samples.contains { !$0.isFinite }, "\(kind), seed \(seed)")
        }
    }

    func testMutatedPagesWithValidChecksumsNeverCrashTheDecoders() throws {
        // A small fuzzer: bytes changed inside page bodies (headers included) and the checksum made
        // right again, so libvorbis and libopus get the damaged packets rather than libogg dropping
        // them; a page header's granule position or flags set to extremes (checksum made right);
        // pages duplicated, dropped or cut short. Whatever comes: no crash, no hang, a sane format.
        let seed = seed()
        var random = SeededGenerator(seed: seed)
        let vorbis: [UInt8] = scratch.bytes(try scratch.audio(.oggVorbis, frames: 20_000, name: "fv"))
        let opus: [UInt8] = scratch.bytes(try scratch.audio(.opus, frames: 20_000, name: "fo", channels: 1))
        var decodedFrames = 0
        var failures = 0
        for round in 0..<300 {
            let original: [UInt8] = round % 2 == 0 ? vorbis : opus
            var pages: [[UInt8]] = pageStarts(original).map { start in
                let segments = Int(original[start + 26])
                var size = 27 + segments
                for index in 0..<segments { size += Int(original[start + 27 + index]) }
                return Array(original[start..<(start + size)])
            }
            let changes: Int = 1 + Int(random.next() % 4)
            for _ in 0..<changes {
                let which: Int = Int(random.next() % UInt64(pages.count))
                // A page cut short earlier is left as it is.
                guard pages[which].count > 27 else { continue }
                switch random.next() % 6 {
                case 5:
                    // The header's flags (continued, beginning, end) or granule position: 64 bits
                    // from the network, extremes included.
                    var page = pages[which]
                    if page.count < 27 { break }
                    let extremes: [Int64] = [.max, .max - 1, -1, -2, .min, 0, Int64(truncatingIfNeeded: random.next())]
                    if random.next() % 2 == 0 {
                        page[5] = UInt8(truncatingIfNeeded: random.next() % 8)
                    } else {
                        let granule: Int64 = extremes[Int(random.next() % UInt64(extremes.count))]
                        withUnsafeBytes(of: granule.littleEndian) { page.replaceSubrange(6..<14, with: $0) }
                    }
                    page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
                    let crc = Self.crc(page)
                    withUnsafeBytes(of: crc.littleEndian) { page.replaceSubrange(22..<26, with: $0) }
                    pages[which] = page
                case 0: pages.remove(at: which)
                case 1: pages.insert(pages[which], at: which)
                case 2: pages[which] = Array(pages[which].prefix(Int(random.next() % UInt64(pages[which].count))))
                default:
                    var page = pages[which]
                    let bodyStart: Int = 27 + Int(page[26])
                    if page.count <= bodyStart { break }
                    for _ in 0..<(1 + Int(random.next() % 8)) {
                        let at: Int = bodyStart + Int(random.next() % UInt64(page.count - bodyStart))
                        page[at] = UInt8(truncatingIfNeeded: random.next())
                    }
                    page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
                    let crc = Self.crc(page)
                    withUnsafeBytes(of: crc.littleEndian) { page.replaceSubrange(22..<26, with: $0) }
                    pages[which] = page
                }
                if pages.isEmpty { break }
            }
            let output = decodeInPieces(pages.flatMap { $0 }, seed: seed &+ UInt64(round), maxPiece: 3000)
            for format in output.formats {
                XCTAssertTrue(format.sampleRate > 0 && (1...255).contains(format.channels), "\(format), seed \(seed), round \(round)")
            }
            // No more audio than the pages could hold (duplicated pages included).
            XCTAssertLessThanOrEqual(output.samples.count, 4 * 48_000 * 2, "seed \(seed), round \(round)")
            decodedFrames += output.samples.count
            if output.failure != nil { failures += 1 }
        }
        print("mutated Ogg: 300 streams, \(failures) refused, \(decodedFrames) samples decoded, seed \(seed)")
    }

    func testExtremeGranulePositionsNeitherTrapNorMakeUpAudio() throws {
        // A page header's granule position is 64 bits from the network: Int64.max on an audio page
        // (then more audio after it) must not overflow the Opus voice's sample count (a trap would
        // take the whole player down), nor may any value make more audio than the packets hold.
        for kind in [TestAudio.Kind.oggVorbis, .opus] {
            let original: [UInt8] = scratch.bytes(try scratch.audio(kind, frames: 20_000, name: "granule"))
            let starts: [Int] = pageStarts(original)
            XCTAssertGreaterThanOrEqual(starts.count, 4, "\(kind)")
            let extremes: [Int64] = [Int64.max, Int64.max - 1, 1 << 62, 0]
            for value in extremes {
                var bytes = original
                // Every page after the headers (the first page holds only the first header).
                for start in starts.dropFirst(2) {
                    var page: [UInt8] = Array(bytes[start..<(starts.first { $0 > start } ?? bytes.count)])
                    withUnsafeBytes(of: value.littleEndian) { page.replaceSubrange(6..<14, with: $0) }
                    page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
                    let crc = Self.crc(page)
                    withUnsafeBytes(of: crc.littleEndian) { page.replaceSubrange(22..<26, with: $0) }
                    bytes.replaceSubrange(start..<(start + page.count), with: page)
                }
                let output = decodeInPieces(bytes, seed: UInt64(truncatingIfNeeded: value))
                let channels = output.formats.last?.channels ?? 2
                XCTAssertLessThanOrEqual(output.samples.count / channels, 20_000 + 48_000, "\(kind), granule \(value)")
            }
        }
    }

    /// Where each page of a well-formed Ogg file starts.
    private func pageStarts(_ bytes: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var at = 0
        while at + 27 <= bytes.count {
            starts.append(at)
            let segments = Int(bytes[at + 26])
            var size = 27 + segments
            for index in 0..<segments { size += Int(bytes[at + 27 + index]) }
            at += size
        }
        return starts
    }

    func testNoiseAndForeignOggNeverDecodeAndAreTold() throws {
        let seed = seed()
        var random = SeededGenerator(seed: seed)
        var noise = [UInt8](repeating: 0, count: 1 << 20)
        for index in noise.indices { noise[index] = UInt8(truncatingIfNeeded: random.next()) }
        let output = decodeInPieces(noise, seed: seed)
        XCTAssertNil(output.failure)
        XCTAssertEqual(output.formats, [], "noise decoded: seed \(seed)")
        XCTAssertEqual(output.samples.count, 0)

        // "OggS" and zeros (what the server's /ogg path sends): no page passes its checksum.
        var zeros: [UInt8] = Array("OggS".utf8)
        zeros += [UInt8](repeating: 0, count: 4096)
        XCTAssertEqual(decodeInPieces(zeros, seed: seed).formats, [])

        // An Ogg FLAC stream: told by name, not decoded as noise.
        var flacHead: [UInt8] = [0x7F]
        flacHead += Array("FLAC".utf8)
        flacHead += [UInt8](repeating: 0, count: 40)
        let flac = try oggPage(serial: 7, bos: true, body: flacHead)
        let more = try oggPage(serial: 7, bos: false, body: [UInt8](repeating: 1, count: 100))
        XCTAssertEqual(decodeInPieces(flac + more, seed: seed).failure,
                       "the Ogg stream holds FLAC, not Vorbis or Opus (streams: \(StreamCodecKind.supported))")
    }

    func testWhatLiboggHoldsStaysBoundedWhateverIsFed() throws {
        // 16 MiB of noise with a capture pattern every few KiB (each a page header claiming up to
        // 64 KiB that fails its checksum), fed 16 KiB at a time as the stream decoder does, then a
        // real stream: libogg's buffers stay within a page or two of the feed.
        let seed = seed()
        var random = SeededGenerator(seed: seed)
        let codec = OggStreamCodec()
        defer { codec.close() }
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * 2)
        defer { buffer.deallocate() }
        var piece = [UInt8](repeating: 0, count: 16384)
        var largest = 0
        for _ in 0..<1024 {
            for index in piece.indices { piece[index] = UInt8(truncatingIfNeeded: random.next()) }
            for _ in 0..<4 {
                let at: Int = Int(random.next() % UInt64(piece.count - 32))
                piece.replaceSubrange(at..<(at + 4), with: Array("OggS".utf8))
                piece[at + 4] = 0
                piece[at + 26] = 255  // 255 segments: up to 64 KiB claimed
            }
            piece.withUnsafeBytes { codec.feed($0) }
            XCTAssertEqual(codec.decode(into: buffer, frames: 4096), .needMore, "seed \(seed)")
            largest = max(largest, codec.heldBytes)
        }
        // Longer than the 64 KiB a false page header in the last noise may claim: libogg finds the
        // stream's first page once that claim's bytes are in and fail their checksum.
        let path = try scratch.audio(.oggVorbis, frames: 8 * 44100, name: "after")
        let good: [UInt8] = scratch.bytes(path)
        var frames = 0
        var offset = 0
        while offset < good.count {
            let count: Int = min(16384, good.count - offset)
            good[offset..<(offset + count)].withUnsafeBytes { codec.feed($0) }
            offset += count
            decoding: while true {
                switch codec.decode(into: buffer, frames: 4096) {
                case .frames(let n): frames += n
                case .format: continue
                default: break decoding
                }
            }
            largest = max(largest, codec.heldBytes)
        }
        print("Ogg held at most \(largest) bytes over 16 MiB of noise and a stream, seed \(seed)")
        XCTAssertLessThan(largest, 256 << 10, "seed \(seed)")
        // The stream after the noise plays from its first page.
        XCTAssertEqual(frames, 8 * 44100, "seed \(seed)")
    }

    func testAPacketThatNeverEndsIsRefusedBeforeItGrowsWithoutBound() throws {
        // Valid pages whose one packet continues page after page (every lacing value 255).
        // OpusHead: version 1, 2 channels, pre-skip 312, 48000 Hz, no gain, family 0.
        let fields: [UInt8] = [1, 2, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 0]
        var head: [UInt8] = Array("OpusHead".utf8)
        head += fields
        var bytes: [UInt8] = try oggPage(serial: 3, bos: true, body: head)
        let body = [UInt8](repeating: 0x55, count: 255 * 255)
        for sequence in 1...80 {
            bytes += try oggPage(serial: 3, bos: false, sequence: UInt32(sequence), body: body, continued: sequence > 1, open: true)
        }
        let output = decodeInPieces(bytes, seed: 1)
        XCTAssertEqual(output.failure, "an Ogg packet grew past 4 MiB: not a playable stream")
    }

    func testOggIsChosenByContentTypeOrByItsFirstBytes() {
        for type in ["audio/ogg", "application/ogg", "audio/vorbis", "audio/opus"] {
            XCTAssertEqual(StreamCodecKind.named(contentType: type), .ogg, type)
            XCTAssertNil(HTTPStream.refusal(contentType: type), type)
        }
        let head: [UInt8] = Array("OggS".utf8) + [0, 2]
        XCTAssertEqual(head.withUnsafeBytes { StreamCodecKind.sniff($0) }, .ogg)
        let mp3: [UInt8] = [0xFF, 0xFB, 0x90, 0x64]
        XCTAssertEqual(mp3.withUnsafeBytes { StreamCodecKind.sniff($0) }, .mp3)
    }

    /// One Ogg page with a correct checksum. `open`: the body's last packet continues on the next page.
    private func oggPage(serial: UInt32, bos: Bool, sequence: UInt32 = 0, body: [UInt8], continued: Bool = false,
                         open: Bool = false) throws -> [UInt8] {
        var lacing: [UInt8] = []
        var left = body.count
        while left >= 255 {
            lacing.append(255)
            left -= 255
        }
        if !open { lacing.append(UInt8(left)) }
        guard lacing.count <= 255 else { throw XCTSkip("page body too long") }
        var page: [UInt8] = Array("OggS".utf8)
        page.append(0)
        page.append((continued ? 1 : 0) | (bos ? 2 : 0))
        page += [UInt8](repeating: open ? 0xFF : 0, count: 8)  // granule position: -1 when no packet ends
        page += withUnsafeBytes(of: serial.littleEndian) { Array($0) }
        page += withUnsafeBytes(of: sequence.littleEndian) { Array($0) }
        page += [0, 0, 0, 0]
        page.append(UInt8(lacing.count))
        page += lacing
        page += body
        let crc = Self.crc(page)
        withUnsafeBytes(of: crc.littleEndian) { page.replaceSubrange(22..<26, with: $0) }
        return page
    }

    /// Ogg's CRC-32 (polynomial 0x04C11DB7, no reflection, no final xor).
    private static func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    // MARK: The engine

    /// The engine plays an ICY stream of `kind` (`/icy?metaint=8192&file=…&once=1`: ICY blocks are
    /// taken out before the codec) into the test device; what the device received is libsndfile's
    /// decode of the file.
    private func playICY(_ kind: TestAudio.Kind, contentType: String) throws {
        let mp3 = try scratch.audio(.mp3, frames: 4410)
        let path = try scratch.audio(kind, frames: 132_000, name: "stream")
        let server: RadioServer
        do {
            server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: ["stream": (path, contentType)])
        } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let expected = try reference(path)
        let (pcm, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 0.5, backoff: 0.1...0.4))
        defer { engine.shutdown() }
        playUntilHeard(engine, log, id: 9, path: server.url("/icy?metaint=8192&file=stream&once=1"), seconds: 2.5, timeout: 15)
        engine.shutdown()
        XCTAssertEqual(pcm.events(named: "params").first?.fields["format"], "FLOAT_LE")
        let recording: [Float] = TestAudio.floats(pcm.recording(), type: .float32)
        XCTAssertGreaterThan(recording.count, 2 * 44100 * 2)
        let count = min(recording.count, expected.count)
        assertSame(Array(recording.prefix(count)), Array(expected.prefix(count)), channels: 2, "ICY \(kind) through the engine")
        XCTAssertFalse(log.all.contains { if case .failed = $0 { true } else { false } }, "\(log.all)")
    }

    /// `vorbis` (a well-formed Ogg Vorbis file) with its comment header replaced by one of
    /// `commentBytes` (a cover picture's size), paged as an encoder pages it: the header packets on
    /// pages of their own, the audio pages after them renumbered.
    private func withLargeComment(_ vorbis: [UInt8], commentBytes: Int) throws -> [UInt8] {
        var field: [UInt8] = Array("METADATA_BLOCK_PICTURE=".utf8)
        field += [UInt8](repeating: UInt8(ascii: "A"), count: commentBytes)
        return try withComment(vorbis, fields: [field])
    }

    /// A Vorbis comment header: vendor "jukebox", then `fields` each with its length, or as
    /// `lengths` say when given (a hostile header's lengths).
    private func vorbisComment(fields: [[UInt8]], lengths: [UInt32]? = nil, count: UInt32? = nil) -> [UInt8] {
        var comment: [UInt8] = [3]
        comment += Array("vorbis".utf8)
        comment += [7, 0, 0, 0]
        comment += Array("jukebox".utf8)
        comment += withUnsafeBytes(of: (count ?? UInt32(fields.count)).littleEndian) { Array($0) }
        for (index, field) in fields.enumerated() {
            let length: UInt32 = lengths?[index] ?? UInt32(field.count)
            comment += withUnsafeBytes(of: length.littleEndian) { Array($0) }
            comment += field
        }
        comment.append(1)  // framing bit
        return comment
    }

    /// `vorbis` with its comment header replaced by `comment` (else one of `fields`), paged as
    /// `withLargeComment` says.
    private func withComment(_ vorbis: [UInt8], fields: [[UInt8]], comment given: [UInt8]? = nil) throws -> [UInt8] {
        var packets: [[UInt8]] = []
        var current: [UInt8] = []
        var at = 0
        while packets.count < 3 {
            let segments = Int(vorbis[at + 26])
            var body = at + 27 + segments
            for index in 0..<segments {
                let size = Int(vorbis[at + 27 + index])
                current += vorbis[body..<(body + size)]
                body += size
                if size < 255 {
                    packets.append(current)
                    current = []
                }
            }
            at = body
        }
        let serial = vorbis[14..<18].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        let comment: [UInt8] = given ?? vorbisComment(fields: fields)
        var bytes: [UInt8] = try oggPage(serial: serial, bos: true, body: packets[0])
        var sequence: UInt32 = 1
        var left = comment[...]
        while left.count >= 255 * 255 {
            bytes += try oggPage(serial: serial, bos: false, sequence: sequence, body: Array(left.prefix(255 * 255)),
                                 continued: sequence > 1, open: true)
            left = left.dropFirst(255 * 255)
            sequence += 1
        }
        bytes += try oggPage(serial: serial, bos: false, sequence: sequence, body: Array(left), continued: sequence > 1)
        sequence += 1
        bytes += try oggPage(serial: serial, bos: false, sequence: sequence, body: packets[2])
        for start in pageStarts(vorbis) where start >= at {
            sequence += 1
            let end: Int = pageStarts(vorbis).first { $0 > start } ?? vorbis.count
            var page: [UInt8] = Array(vorbis[start..<end])
            withUnsafeBytes(of: sequence.littleEndian) { page.replaceSubrange(18..<22, with: $0) }
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            let crc = Self.crc(page)
            withUnsafeBytes(of: crc.littleEndian) { page.replaceSubrange(22..<26, with: $0) }
            bytes += page
        }
        return bytes
    }

    func testAVorbisStreamWithACoverPictureInItsCommentHeaderPlays() throws {
        // 600 KB of comment (a cover picture, base64) before the setup header: more than the sync
        // limit, which is for finding a stream, not for reading its headers.
        let path = try scratch.audio(.oggVorbis, frames: 132_000, name: "plain")
        let bytes = try withLargeComment(scratch.bytes(path), commentBytes: 600_000)
        let output = decodeInPieces(bytes, seed: 3)
        XCTAssertNil(output.failure)
        XCTAssertEqual(output.samples.count, try reference(path).count)
        let big = scratch.path("cover.ogg")
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: Data(bytes)))
        let mp3 = try scratch.audio(.mp3, frames: 4410)
        let server: RadioServer
        do {
            server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: ["cover": (big, "audio/ogg")])
        } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let (_, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 0.5, backoff: 0.1...0.4))
        defer { engine.shutdown() }
        engine.play(id: 4, path: server.url("/icy?metaint=8192&file=cover&once=1"), from: 0, paused: false)
        func startedOrFailed(_ report: AudioEngine.Report) -> Bool {
            if case .failed = report { return true }
            return report == .started(id: 4)
        }
        XCTAssertTrue(log.wait(timeout: 20, for: startedOrFailed), "\(log.all)")
        XCTAssertTrue(log.all.contains(.started(id: 4)), "\(log.all)")
        XCTAssertFalse(log.all.contains { if case .failed = $0 { true } else { false } }, "\(log.all)")
    }

    // MARK: Titles from the comments

    func testEachLinksTitleAndArtistAreTakenInOrder() throws {
        let seed = seed()
        let first = try scratch.audio(.oggVorbis, frames: 20_000, name: "first", tags: TestAudio.Tags(title: "One", artist: "Band A"))
        let second = try scratch.audio(.oggVorbis, frames: 20_000, name: "second", tags: TestAudio.Tags(title: "Two"))
        let plain = try scratch.audio(.oggVorbis, frames: 20_000, name: "plain")
        let third = try scratch.audio(.opus, frames: 20_000, name: "third", tags: TestAudio.Tags(title: "Three", artist: "Ensemble Ü"))
        var bytes: [UInt8] = scratch.bytes(first)
        bytes += scratch.bytes(second)
        bytes += scratch.bytes(plain)
        bytes += scratch.bytes(third)
        let output = decodeInPieces(bytes, seed: seed)
        XCTAssertNil(output.failure, "seed \(seed)")
        // A link without TITLE or ARTIST gives none (the one before stays shown).
        XCTAssertEqual(output.titles, ["Band A - One", "Two", "Ensemble Ü - Three"], "seed \(seed)")
    }

    private func littleEndian(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    /// An OpusTags packet of `parts` after its magic.
    private func opusTags(_ parts: [[UInt8]]) -> [UInt8] {
        var packet: [UInt8] = Array("OpusTags".utf8)
        for part in parts { packet += part }
        return packet
    }

    private func opusTitle(_ packet: [UInt8]) -> String? {
        packet.withUnsafeBytes { OggCommentTitle.opusTags($0) }
    }

    func testHostileCommentLengthsNeitherCrashNorMakeUpATitle() throws {
        let title: [UInt8] = Array("TITLE=Fine".utf8)
        let size = UInt32(title.count)
        XCTAssertNil(opusTitle(opusTags([littleEndian(0xFFFF_FFFF)])), "vendor past the end")
        XCTAssertNil(opusTitle(opusTags([littleEndian(0), littleEndian(0xFFFF_FFFF)])), "a huge count, no fields")
        XCTAssertNil(opusTitle(opusTags([littleEndian(0), littleEndian(1), littleEndian(0x7FFF_FFFF), title])))
        XCTAssertNil(opusTitle(opusTags([])))
        XCTAssertNil(opusTitle(Array("Opus".utf8)))
        XCTAssertNil(opusTitle(opusTags([littleEndian(0), littleEndian(1), littleEndian(4), Array("TITL".utf8)])))
        // The fields before one that overruns the packet count.
        let overrun = opusTags([littleEndian(0), littleEndian(2), littleEndian(size), title, littleEndian(0xFFFF_FFF0), title])
        XCTAssertEqual(opusTitle(overrun), "Fine")
        // UTF-8 by the format: invalid bytes are replaced, not read as Latin-1; names ignore case.
        var invalid: [UInt8] = Array("tItLe=A".utf8)
        invalid += [0xFF]
        invalid += Array("B".utf8)
        let replaced = opusTags([littleEndian(0), littleEndian(1), littleEndian(UInt32(invalid.count)), invalid])
        XCTAssertEqual(opusTitle(replaced), "A\u{FFFD}B")

        // Random packets whose lengths are random, small or huge: never a trap.
        let seed = seed()
        var random = SeededGenerator(seed: seed)
        for _ in 0..<20_000 {
            var packet: [UInt8] = Array("OpusTags".utf8)
            let words: Int = Int(random.next() % 8)
            for _ in 0..<words {
                let pick = random.next()
                var value = UInt32((pick >> 40) & 15)
                if pick % 3 == 0 { value = UInt32(truncatingIfNeeded: pick >> 32) }
                packet += littleEndian(value)
                if pick % 2 == 0 { packet += title.prefix(Int(pick >> 8 & 15)) }
            }
            if let shown = opusTitle(packet) { XCTAssertLessThanOrEqual(shown.count, ICYDemuxer.maxTitleCharacters, "seed \(seed)") }
        }

        // A Vorbis comment header whose field or count runs past its end: libvorbis refuses it.
        let path = try scratch.audio(.oggVorbis, frames: 20_000, name: "plain")
        let lying = vorbisComment(fields: [title], lengths: [0xFFFF_FFF0])
        let output = decodeInPieces(try withComment(scratch.bytes(path), fields: [], comment: lying), seed: seed)
        XCTAssertNotNil(output.failure, "seed \(seed)")
        XCTAssertEqual(output.titles, [], "seed \(seed)")
        let counted = vorbisComment(fields: [title], count: 0x7FFF_FFFF)
        let many = decodeInPieces(try withComment(scratch.bytes(path), fields: [], comment: counted), seed: seed)
        XCTAssertEqual(many.titles, [], "seed \(seed)")
    }

    func testAMegabyteTitleIsCappedAndCutOnACharacter() throws {
        let path = try scratch.audio(.oggVorbis, frames: 20_000, name: "plain")
        var title: [UInt8] = Array("TITLE=".utf8)
        for _ in 0..<500_000 { title += [0xC3, 0xA9] }  // "é": 1 MB
        let artist: [UInt8] = Array("artist=  Tab\tbed ".utf8)
        let output = decodeInPieces(try withComment(scratch.bytes(path), fields: [artist, title]), seed: 5)
        XCTAssertNil(output.failure)
        XCTAssertEqual(output.titles.count, 1)
        let shown: String = output.titles.first ?? ""
        XCTAssertEqual(shown.count, ICYDemuxer.maxTitleCharacters)
        XCTAssertTrue(shown.hasPrefix("Tabbed - éé"), String(shown.prefix(20)))
        XCTAssertFalse(shown.contains("\u{FFFD}"))
        XCTAssertEqual(output.samples.count, try reference(path).count)
    }

    func testTheEngineShowsACommentTitleAndBuffersAtTheHeadersBitrateWithoutICY() throws {
        // A plain response (`/file/NAME`): no icy-br, no ICY blocks; the title and the bitrate come
        // from the Vorbis headers.
        // Mono at 22.05 kHz: a nominal bitrate well below the 128 kbit/s assumed without one.
        let tags = TestAudio.Tags(title: "Night", artist: "Owls")
        let path = try scratch.audio(.oggVorbis, frames: 66_000, name: "tagged", sampleRate: 22050, channels: 1, tags: tags)
        let mp3 = try scratch.audio(.mp3, frames: 4410)
        let server: RadioServer
        do {
            server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: ["tagged": (path, "audio/ogg")])
        } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let (_, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 0.5))
        defer { engine.shutdown() }
        engine.play(id: 6, path: server.url("/file/tagged"), from: 0, paused: false)
        XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 6) }, "\(log.all)")
        let live = try XCTUnwrap(engine.streamFacts())
        XCTAssertEqual(live.facts.title, "Owls - Night")
        XCTAssertNil(live.facts.bitrate)
        let kbps = try XCTUnwrap(live.facts.nominalBitrate)
        print("Ogg Vorbis test stream: nominal bitrate \(kbps) kbit/s, buffer target \(live.target) bytes")
        XCTAssertGreaterThan(kbps, 0)
        XCTAssertLessThan(kbps, 100, "the test would not tell the header's bitrate from the default")
        XCTAssertEqual(live.target, Int(0.5 * Double(kbps) * 125))
    }

    /// Ogg Opus names no bitrate in its header: without icy-br the buffer is sized at the rate its
    /// pages' granule positions show (it was 128 kbit/s: four times too long at 32 kbit/s).
    func testAnOpusStreamWithoutICYBuffersAtItsMeasuredBitrate() throws {
        let path = try scratch.audio(.opus, frames: 48_000 * 6, name: "opus", channels: 1)
        let seconds = 6.0
        let fileKbps = Double(scratch.bytes(path).count) * 8 / seconds / 1000
        let mp3 = try scratch.audio(.mp3, frames: 4410)
        let server: RadioServer
        do {
            server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: ["opus": (path, "audio/ogg")])
        } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let (_, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 1))
        defer { engine.shutdown() }
        engine.play(id: 8, path: server.url("/file/opus"), from: 0, paused: false)
        XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 8) }, "\(log.all)")
        let live = try XCTUnwrap(engine.streamFacts())
        XCTAssertNil(live.facts.bitrate)
        let kbps = try XCTUnwrap(live.facts.nominalBitrate, "no bitrate measured")
        print("Ogg Opus test stream: \(String(format: "%.1f", fileKbps)) kbit/s in the file, measured \(kbps) kbit/s, buffer target \(live.target) bytes")
        XCTAssertLessThan(fileKbps, 100, "the test would not tell a measured bitrate from the default")
        XCTAssertEqual(Double(kbps), fileKbps, accuracy: fileKbps * 0.3)
        XCTAssertEqual(live.target, Int(1 * Double(kbps) * 125))
    }

    /// While its rate is measured, a trickling Opus stream is still given up at the start-up bound.
    func testAnOpusStreamTricklingWhileItsRateIsMeasuredIsGivenUp() throws {
        let path = try scratch.audio(.opus, frames: 48_000 * 6, name: "opus", channels: 1)
        // Its headers (OpusHead, OpusTags) at once, then a byte at a time: the format is known, the
        // rate never is.
        let bytes = scratch.bytes(path)
        let starts = pageStarts(bytes)
        XCTAssertGreaterThan(starts.count, 4)
        let fast = starts[2] + 100
        let mp3 = try scratch.audio(.mp3, frames: 4410)
        let server: RadioServer
        do {
            server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: ["opus": (path, "audio/ogg")])
        } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let (_, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 0.5, startSeconds: 1))
        defer { engine.shutdown() }
        let start = Date()
        engine.play(id: 9, path: server.url("/trickle?every=0.02&file=opus&fast=\(fast)"), from: 0, paused: false)
        XCTAssertTrue(log.wait(timeout: 10) { if case .failed(9, _) = $0 { true } else { false } }, "\(log.all)")
        let reason = log.all.compactMap { if case .failed(9, let r) = $0 { r } else { nil } }.first
        print("Opus trickle given up after " + String(format: "%.2f s", Date().timeIntervalSince(start)) + ": \(reason ?? "?")")
        XCTAssertTrue(reason?.hasPrefix("the stream is too slow to start: ") == true && reason?.hasSuffix(" % of the start-up buffer in 2 s") == true,
                      reason ?? "")
        XCTAssertLessThan(Date().timeIntervalSince(start), 6)
    }

    /// A stream that slows to a byte at a time once playing never holds the engine's decoder: it
    /// buffers again, and a shutdown ends at once (it waited 45 s, the decoder feeding the codec
    /// byte by byte until an Opus page was whole).
    func testAStreamThatTricklesAfterItsStartDoesNotHoldTheDecoder() throws {
        let path = try scratch.audio(.opus, frames: 48_000 * 6, name: "opus", channels: 1)
        let mp3 = try scratch.audio(.mp3, frames: 4410)
        let server: RadioServer
        do {
            server = try RadioServer(mp3: mp3, folder: scratch.url.path, files: ["opus": (path, "audio/ogg")])
        } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let (_, log, engine) = try scratch.deviceEngine(streams: StreamSettings(bufferSeconds: 0.25))
        // The headers and the first audio page at once, then a byte every 20 ms.
        let fast = pageStarts(scratch.bytes(path))[3]
        engine.play(id: 10, path: server.url("/trickle?every=0.02&file=opus&fast=\(fast)"), from: 0, paused: false)
        XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 10) }, "\(log.all)")
        XCTAssertTrue(TestPCM.wait(timeout: 10) { engine.streamFacts()?.facts.rebuffering == true }, "never buffered again")
        let start = Date()
        engine.shutdown()
        let seconds = Date().timeIntervalSince(start)
        print("trickling stream: shutdown in " + String(format: "%.2f s", seconds))
        XCTAssertLessThan(seconds, 3)
    }

    func testAnICYVorbisStreamPlaysAsTheReferenceDecode() throws {
        try playICY(.oggVorbis, contentType: "audio/ogg")
    }

    func testAnICYOpusStreamWithoutAContentTypePlaysAsTheReferenceDecode() throws {
        // No Content-Type: the codec is chosen by "OggS" at the start.
        try playICY(.opus, contentType: "")
    }
}
