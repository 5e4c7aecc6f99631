// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import XCTest

/// Damaged, mislabelled and hostile files: each either plays what is decodable or fails with a reason
/// naming what is wrong, and TagLib survives them too. How long each took is printed, not bounded
/// (the time is the machine's; see `outcome`).
final class BadMediaTests: ScratchCase {
    private static let kinds: [TestAudio.Kind] = [.wav16, .wav24, .aiff, .flac, .oggVorbis, .opus, .mp3]
    /// Every reason the decoder gives for a file it cannot play (beyond I/O errors).
    private static let knownReasons = ["file is empty", "not a recognised audio format", "malformed or truncated audio file",
                                       "unsupported audio encoding", "no audio in file",
                                       "no audio could be decoded (truncated or damaged file)"]
    private static let knownPrefixes = ["damaged audio file (", "unsupported sample rate ", "too many channels (",
                                        "decoding is too slow to play ("]

    private static func isKnown(_ reason: String) -> Bool {
        knownReasons.contains(reason) || knownPrefixes.contains { reason.hasPrefix($0) }
    }

    /// What happened to one file.
    private enum Outcome: Equatable, CustomStringConvertible {
        case played(frames: Int)
        case failed(String)

        var description: String {
            switch self {
            case .played(let frames): "played \(frames)"
            case .failed(let reason): "failed: \(reason)"
            }
        }
    }

    /// Opens and decodes the whole file, timing it; also reads its tags.
    private func outcome(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> (Outcome, Double) {
        let started = monotonic()
        _ = TagReader.read(path: path)
        let result: Outcome
        do throws(DecodeError) {
            let decoder = try Decoder(path: path)
            var buffer = [UInt8](repeating: 0, count: 4096 * decoder.format.bytesPerFrame)
            var total = 0
            while true {
                let got = buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 4096) }
                if got <= 0 { break }
                total += got
            }
            result = decoder.failure.map { .failed($0.reason) } ?? .played(frames: total)
        } catch {
            XCTAssertEqual(error.path, path, file: file, line: line)
            result = .failed(error.reason)
        }
        // Timed for the printed summaries, not bounded: the time is the machine's (1 MB of random
        // bytes called .mp3: 0.7 s here, 94 s under qemu-aarch64, where libmpg123's NEON code is
        // emulated). A file that never finishes hangs the run, which the runner's timeout catches.
        let seconds = monotonic() - started
        if case .failed(let reason) = result {
            XCTAssertTrue(Self.isKnown(reason),
                          "\(path): unexpected reason \(reason)", file: file, line: line)
        }
        return (result, seconds)
    }

    func testZeroByteFilesSayTheyAreEmpty() throws {
        for kind in Self.kinds {
            let path = scratch.file("empty." + kind.fileExtension, [])
            XCTAssertEqual(outcome(path).0, .failed("file is empty"), "\(kind)")
        }
    }

    /// Each format cut inside its header, just after it, and at several points in the audio: the
    /// decoder refuses it with a reason or plays a prefix of the real audio, never more.
    func testTruncatedFilesPlayAPrefixOrFailWithAReason() throws {
        let frames = 44_100
        for kind in Self.kinds {
            let rate = kind.requiredSampleRate ?? 44100
            let path = scratch.path("whole-\(kind.rawValue)." + kind.fileExtension)
            try TestAudio.write(path: path, kind: kind, frames: frames, sampleRate: rate)
            let whole = scratch.bytes(path)
            let decoded = try TestAudio.decode(path: path)
            var cuts = [1, 4, 12, 20, 36, 44, 60, 100, 300, 1000, 5000]
            cuts += [0.1, 0.25, 0.5, 0.75, 0.9, 0.99].map { Int(Double(whole.count) * $0) }
            var summary: [String] = []
            for cut in cuts where cut < whole.count {
                let cutPath = scratch.file("cut-\(cut)-\(kind.rawValue)." + kind.fileExtension, Array(whole.prefix(cut)))
                let (result, _) = outcome(cutPath)
                summary.append("\(cut): \(result)")
                guard case .played(let got) = result else { continue }
                XCTAssertGreaterThan(got, 0, "\(kind) cut at \(cut): an empty track is a failure")
                XCTAssertLessThanOrEqual(got, frames, "\(kind) cut at \(cut)")
                if kind.isLossless, got > 0 {
                    // A prefix of the real audio, not garbage.
                    let head = try TestAudio.decode(path: cutPath)
                    XCTAssertTrue(head.bytes == Array(decoded.bytes(frames: 0..<head.frames)), "\(kind) cut at \(cut)")
                }
            }
            print("truncated \(kind.rawValue) (\(whole.count) bytes): " + summary.joined(separator: "; "))
        }
    }

    func testRandomBytesFailWithAKnownReasonOrDecode() throws {
        var generator = SeededGenerator(seed: 42)
        var summary: [String] = []
        for ext in ["wav", "aiff", "flac", "ogg", "opus", "mp3", "bin"] {
            for size in [3, 100, 4096, 1 << 20] {
                let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let path = scratch.file("noise-\(size).\(ext)", bytes)
                let (result, seconds) = outcome(path)
                summary.append("\(ext) \(size) B: \(result) in " + String(format: "%.2f s", seconds))
            }
        }
        print("random bytes: " + summary.joined(separator: "; "))
    }

    /// libsndfile goes by the content, not the name: a FLAC called .mp3 and a WAV called .ogg play
    /// their audio exactly; text called .wav is not audio.
    func testMislabelledFilesAreJudgedByTheirContent() throws {
        let flac = try scratch.audio(.flac, frames: 10_000)
        let wav = try scratch.audio(.wav16, frames: 10_000)
        let flacAsMP3 = scratch.file("flac.mp3", scratch.bytes(flac))
        let wavAsOgg = scratch.file("wav.ogg", scratch.bytes(wav))
        let textAsWav = scratch.file("text.wav", Array(String(repeating: "This is not a song.\n", count: 200).utf8))
        let riffText = scratch.file("riff.wav", Array("RIFF\u{10}\0\0\0WAVEjust text, no chunks at all".utf8))
        XCTAssertEqual(outcome(flacAsMP3).0, .played(frames: 10_000))
        XCTAssertEqual(try TestAudio.decode(path: flacAsMP3), try TestAudio.decode(path: flac))
        XCTAssertEqual(outcome(wavAsOgg).0, .played(frames: 10_000))
        XCTAssertEqual(outcome(textAsWav).0, .failed("not a recognised audio format"))
        let (riff, _) = outcome(riffText)
        XCTAssertNotEqual(riff, .played(frames: 0), "a RIFF header with no audio is refused, not played as nothing")
        print("mislabelled: flac.mp3 \(outcome(flacAsMP3).0); wav.ogg \(outcome(wavAsOgg).0); "
              + "text.wav \(outcome(textAsWav).0); RIFF without chunks \(riff)")
    }

    /// Headers that are valid but absurd are refused with the number that is wrong.
    func testAbsurdSampleRateIsRefused() throws {
        let path = try scratch.audio(.wav16, frames: 1000, channels: 1)
        var bytes = scratch.bytes(path)
        // Canonical 44-byte header: sample rate at 24, byte rate at 28.
        Self.put(UInt32(1), into: &bytes, at: 24)
        Self.put(UInt32(2), into: &bytes, at: 28)
        let slow = scratch.file("one-hertz.wav", bytes)
        XCTAssertEqual(outcome(slow).0, .failed("unsupported sample rate 1 Hz (playable: 1000-768000 Hz)"))
    }

    /// Tags of several megabytes in front of or inside the audio: the audio plays exactly and TagLib
    /// reads the tags (the times printed).
    func testHugeTagsDoNotStopPlayback() throws {
        // MP3 with a 6 MB ID3v2.3 tag in front (a TXXX frame).
        let mp3 = try scratch.audio(.mp3, frames: 20_000, name: "plain")
        let tag = Self.id3v2Tag(title: "Big Tag", filler: 6 << 20)
        let bigMP3 = scratch.file("big-id3.mp3", tag + scratch.bytes(mp3))
        // FLAC with a 4 MB VORBIS_COMMENT and a 6 MB PICTURE block.
        let flac = try scratch.audio(.flac, frames: 20_000, name: "plain")
        let comment = Self.vorbisComment(["TITLE=Huge Comment", "DESCRIPTION=" + String(repeating: "x", count: 4 << 20)])
        let picture = Self.flacPicture(bytes: 6 << 20)
        let bigFLAC = scratch.file("big-blocks.flac", Self.insertFLACBlocks(scratch.bytes(flac), [(4, comment), (6, picture)]))

        for (big, plain, title) in [(bigMP3, mp3, "Big Tag"), (bigFLAC, flac, "Huge Comment")] {
            let (result, seconds) = outcome(big)
            XCTAssertEqual(result, .played(frames: 20_000), big)
            XCTAssertEqual(try TestAudio.decode(path: big), try TestAudio.decode(path: plain), big)
            let started = monotonic()
            let tags = TagReader.read(path: big)
            XCTAssertEqual(tags.title, title, big)
            XCTAssertEqual(tags.durationSeconds ?? 0, 20_000.0 / 44100, accuracy: 1e-6, big)
            print("huge tags \((big as NSString).lastPathComponent) (\(scratch.bytes(big).count) bytes): \(result), "
                  + String(format: "decode %.2f s, tags %.2f s", seconds, monotonic() - started))
        }
    }

    /// A decoder slower than real time gives up with a reason (here forced by demanding an absurd speed).
    func testDecodingSlowerThanItsLimitFailsWithAReason() throws {
        let path = try scratch.audio(.oggVorbis, frames: 44_100)
        let decoder = try Decoder(path: path, limits: DecodeLimits(minimumSpeed: 1e9, speedGraceSeconds: 0))
        var buffer = [UInt8](repeating: 0, count: 4096 * decoder.format.bytesPerFrame)
        XCTAssertEqual(buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 4096) }, 0)
        let reason = try XCTUnwrap(decoder.failure?.reason)
        XCTAssertTrue(reason.hasPrefix("decoding is too slow to play ("), reason)
        XCTAssertEqual(buffer.withUnsafeMutableBytes { decoder.read(into: $0.baseAddress!, frames: 4096) }, 0)
        // The default limits leave a normal file alone.
        let normal = try Decoder(path: path)
        var total = 0
        while case let got = buffer.withUnsafeMutableBytes({ normal.read(into: $0.baseAddress!, frames: 4096) }), got > 0 {
            total += got
        }
        XCTAssertEqual(total, 44_100)
        XCTAssertNil(normal.failure)
    }

    /// Through the engine: a queue of bad files, played one after the other as the core does after
    /// each `.failed`, then a good one: the failures arrive in order with their reasons and the good
    /// file plays bit for bit. A bad gapless successor fails after the current track finishes.
    func testEngineReportsEachBadFileThenPlaysTheGoodOne() throws {
        let good = try scratch.audio(.flac, frames: 8000, name: "good")
        let goodBytes = scratch.bytes(good)
        let bad: [(String, String)] = [
            (scratch.file("empty.flac", []), "file is empty"),
            (scratch.file("text.wav", Array(String(repeating: "not audio ", count: 100).utf8)), "not a recognised audio format"),
            (scratch.file("header.flac", Array(goodBytes.prefix(20))), ""),
            (scratch.path("missing.ogg"), "no such file or directory"),
            (scratch.file("cut.flac", Array(goodBytes.prefix(1000))), "no audio could be decoded (truncated or damaged file)"),
            (scratch.file("noise.mp3", (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) & 0x7F }), "not a recognised audio format"),
        ]
        let (output, log, engine) = recordingEngine()
        var expected: [AudioEngine.Report] = []
        for (index, (path, reason)) in bad.enumerated() {
            let id = UInt64(index + 1)
            engine.play(id: id, path: path, from: 0, paused: false)
            XCTAssertTrue(log.wait { if case .failed(id, _) = $0 { true } else { false } }, path)
            guard case .failed(_, let got)? = log.tracks.last else { return XCTFail("\(log.tracks)") }
            if reason.isEmpty {
                XCTAssertTrue(Self.isKnown(got), got)
            } else {
                XCTAssertEqual(got, reason, path)
            }
            expected.append(.failed(id: id, reason: got))
        }
        // The good one, with a bad gapless successor.
        engine.play(id: 10, path: good, from: 0, paused: true, next: (id: 11, path: bad[1].0))
        engine.resume()
        XCTAssertTrue(log.wait { if case .failed(11, _) = $0 { true } else { false } })
        engine.shutdown()
        expected += [.started(id: 10), .finished(id: 10, next: 11), .failed(id: 11, reason: "not a recognised audio format")]
        XCTAssertEqual(log.tracks, expected)
        XCTAssertTrue(output.bytes == (try TestAudio.decode(path: good)).bytes, "the good file plays bit for bit")
    }

    // MARK: Building hostile files

    private static func put(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }

    /// An ID3v2.3 tag with a title (TIT2) and a TXXX frame of `filler` bytes.
    static func id3v2Tag(title: String, filler: Int) -> [UInt8] {
        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
            let size = body.count
            return Array(id.utf8) + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF),
                                     UInt8(size & 0xFF), 0, 0] + body
        }
        let frames = frame("TIT2", [0] + Array(title.utf8))
            + frame("TXXX", [0] + Array("filler".utf8) + [0] + [UInt8](repeating: 0x41, count: filler))
        let size = frames.count
        let synchsafe = [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)]
        return Array("ID3".utf8) + [3, 0, 0] + synchsafe + frames
    }

    /// A VORBIS_COMMENT block body (little-endian lengths).
    static func vorbisComment(_ comments: [String]) -> [UInt8] {
        func le(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let vendor = Array("jukebox tests".utf8)
        var body = le(vendor.count) + vendor + le(comments.count)
        for comment in comments { body += le(comment.utf8.count) + Array(comment.utf8) }
        return body
    }

    /// A PICTURE block body: a front cover "image/jpeg" of `bytes` bytes (not a real JPEG).
    static func flacPicture(bytes: Int) -> [UInt8] {
        func be(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let mime = Array("image/jpeg".utf8)
        return be(3) + be(mime.count) + mime + be(0) + be(600) + be(600) + be(24) + be(0) + be(bytes)
            + [UInt8](repeating: 0xD8, count: bytes)
    }

    /// Inserts metadata blocks (type, body) right after STREAMINFO, keeping the last-block flag right.
    static func insertFLACBlocks(_ file: [UInt8], _ blocks: [(UInt8, [UInt8])]) -> [UInt8] {
        precondition(Array(file.prefix(4)) == Array("fLaC".utf8))
        let streamInfoEnd = 4 + 4 + 34
        let streamInfoWasLast = file[4] & 0x80 != 0
        var out = Array(file[0..<4]) + [file[4] & 0x7F] + Array(file[5..<streamInfoEnd])
        for (index, (type, body)) in blocks.enumerated() {
            let last = streamInfoWasLast && index == blocks.count - 1
            let size = body.count
            out += [type | (last ? 0x80 : 0), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + body
        }
        return out + file[streamInfoEnd...]
    }
}
