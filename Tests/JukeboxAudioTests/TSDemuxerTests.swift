// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// `TSDemuxer` against FFmpeg: a transport stream FFmpeg muxes, demuxed here, is byte for byte the
/// elementary stream FFmpeg copies out of it (`-c copy -f adts`, `-f mp3`), fed whole or in random
/// pieces; bytes between packets are skipped; mutated streams neither crash nor grow its memory.
/// Needs Debian's `ffmpeg` (board/setup.sh installs it); skipped without it.
final class TSDemuxerTests: XCTestCase {
    private var folder = ""
    private var seed: UInt64 = 0
    private var random = SeededGenerator(seed: 0)

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "ts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        seed = ProcessInfo.processInfo.environment["JUKEBOX_TS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("TSDemuxerTests seed: \(seed) (JUKEBOX_TS_SEED=\(seed) replays it)")
        random = SeededGenerator(seed: seed)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func testAACInTSIsFFmpegsADTSByteForByte() throws {
        let (ts, adts) = try FFmpeg.transportStream(codec: ["-c:a", "aac", "-b:a", "64k"], elementary: ["-f", "adts"], in: folder)
        var whole = TSDemuxer()
        XCTAssertTrue(whole.feed(ts) == adts, "not FFmpeg's ADTS")
        XCTAssertEqual(whole.audio, .aac)
        XCTAssertEqual(whole.resyncs, 0)
        XCTAssertTrue(inPieces(ts) == adts, "in pieces: not FFmpeg's ADTS")
    }

    func testMP3InTSIsFFmpegsMP3ByteForByte() throws {
        let (ts, mp3) = try FFmpeg.transportStream(codec: ["-c:a", "libmp3lame"],
                                                   elementary: ["-write_xing", "0", "-id3v2_version", "0", "-f", "mp3"], in: folder)
        var demuxer = TSDemuxer()
        let out = demuxer.feed(ts)
        XCTAssertTrue(out == mp3, "not FFmpeg's MP3 (\(out.count) bytes, FFmpeg's \(mp3.count))")
        XCTAssertEqual(demuxer.audio, .mp3)
    }

    func testBytesBetweenPacketsAreSkipped() throws {
        let (ts, adts) = try FFmpeg.transportStream(codec: ["-c:a", "aac"], elementary: ["-f", "adts"], in: folder)
        var noisy: [UInt8] = []
        var insertions = 0
        var last = -2
        for (index, start) in stride(from: 0, to: ts.count, by: TSDemuxer.packetSize).enumerated() {
            // Not twice in a row nor before the last: out of sync, a packet counts only with the
            // next one after it.
            if index > last + 1, start + 2 * TSDemuxer.packetSize <= ts.count, Int.random(in: 0..<10, using: &random) == 0 {
                last = index
                // Noise without a sync byte: a packet boundary lost and found again.
                noisy += (0..<Int.random(in: 1...300, using: &random)).map { _ in UInt8.random(in: 0...0x46, using: &random) }
                insertions += 1
            }
            noisy += ts[start..<min(ts.count, start + TSDemuxer.packetSize)]
        }
        var demuxer = TSDemuxer()
        let out = demuxer.feed(noisy)
        XCTAssertTrue(out == adts, "not FFmpeg's ADTS (\(out.count) bytes, FFmpeg's \(adts.count))")
        XCTAssertEqual(demuxer.resyncs, insertions)
    }

    func testTimedMetadataIsKeptApartFromTheAudio() {
        let tag = ID3Frames.tag(ID3Frames.text("TIT2", "On Air"))
        let audio: [UInt8] = [0xFF, 0xF1, 1, 2, 3]
        var ts = TSPackets.pat(pmt: 0x100) + TSPackets.pmt(0x100, streams: [(0x1B, 0x200), (0x0F, 0x101), (0x15, 0x102)])
        ts += TSPackets.pes(pid: 0x102, streamID: 0xBD, payload: tag)
        ts += TSPackets.pes(pid: 0x101, streamID: 0xC0, payload: audio)
        ts += TSPackets.pes(pid: 0x200, streamID: 0xE0, payload: [9, 9, 9])
        var demuxer = TSDemuxer()
        XCTAssertEqual(demuxer.feed(ts), audio)
        XCTAssertEqual(demuxer.audio, .aac)
        XCTAssertEqual(demuxer.takeMetadata(), [])  // not known to be whole before the next start or a flush
        demuxer.flushMetadata()
        let tags = demuxer.takeMetadata()
        XCTAssertEqual(tags, [tag])
        XCTAssertEqual(tags.first.flatMap(ID3Title.title), "On Air")
        XCTAssertEqual(ID3Title.title(Array(tag.prefix(15))), nil, "a tag cut short is no title")
    }

    /// Mutated transport streams: no crash, output never longer than the input, carry bounded.
    func testMutatedStreamsAreBounded() throws {
        let (ts, _) = try FFmpeg.transportStream(codec: ["-c:a", "aac"], elementary: ["-f", "adts"], in: folder)
        for _ in 0..<300 {
            var bytes = Array(ts.prefix(188 * Int.random(in: 1...40, using: &random)))
            for _ in 0..<Int.random(in: 1...30, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                if Bool.random(using: &random) {
                    bytes[at] = UInt8.random(in: 0...255, using: &random)
                } else {
                    bytes.insert(contentsOf: [0x47, UInt8.random(in: 0...255, using: &random)], at: at)
                }
            }
            var demuxer = TSDemuxer()
            var out = 0
            for piece in pieces(bytes) { out += demuxer.feed(piece).count }
            XCTAssertLessThanOrEqual(out, bytes.count)
        }
    }

    private func pieces(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var offset = 0
        while offset < bytes.count {
            let size = min(bytes.count - offset, Int.random(in: 1...700, using: &random))
            result.append(bytes[offset..<offset + size])
            offset += size
        }
        return result
    }

    private func inPieces(_ bytes: [UInt8]) -> [UInt8] {
        var demuxer = TSDemuxer()
        return pieces(bytes).flatMap { demuxer.feed($0) }
    }
}

/// Debian's `ffmpeg`, making the HLS and transport-stream fixtures in the tests.
enum FFmpeg {
    static let path = "/usr/bin/ffmpeg"

    /// Runs ffmpeg quietly with `arguments`; without it, a missing peer (`missingPeer`).
    static func run(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw missingPeer("ffmpeg is not installed (board/setup.sh installs it)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-hide_banner", "-loglevel", "error", "-y"] + arguments
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg \(arguments)")
    }

    /// `-f lavfi -i sine…`: 3 s of a 440 Hz tone.
    static let tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=3"]

    /// A tone encoded with `codec` into MPEG-TS, and its audio copied out by FFmpeg (`elementary`'s format).
    static func transportStream(codec: [String], elementary: [String], in folder: String) throws -> (ts: [UInt8], audio: [UInt8]) {
        let ts = folder + "/a.ts", audio = folder + "/a.es"
        try run(tone + codec + ["-f", "mpegts", ts])
        try run(["-i", ts, "-c", "copy"] + elementary + [audio])
        return ([UInt8](try Data(contentsOf: URL(fileURLWithPath: ts))), [UInt8](try Data(contentsOf: URL(fileURLWithPath: audio))))
    }
}

/// Transport stream packets made in the tests: PAT, PMT and one-packet PES (CRCs left zero: the
/// demuxer does not check them).
enum TSPackets {
    static func packet(pid: Int, start: Bool, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= 184)
        let header: [UInt8] = [0x47, UInt8(start ? 0x40 : 0) | UInt8(pid >> 8), UInt8(pid & 0xFF), 0x10]
        return header + payload + [UInt8](repeating: 0xFF, count: 184 - payload.count)
    }

    static func section(_ body: [UInt8]) -> [UInt8] { [0] + body + [0, 0, 0, 0] }

    static func pat(pmt: Int) -> [UInt8] {
        let body: [UInt8] = [0x00, 0xB0, 13, 0, 1, 0xC1, 0, 0, 0, 1, UInt8(0xE0 | pmt >> 8), UInt8(pmt & 0xFF)]
        return packet(pid: 0, start: true, section(body))
    }

    static func pmt(_ pid: Int, streams: [(type: UInt8, pid: Int)]) -> [UInt8] {
        var entries: [UInt8] = []
        for stream in streams { entries += [stream.type, UInt8(0xE0 | stream.pid >> 8), UInt8(stream.pid & 0xFF), 0xF0, 0] }
        let length = 9 + entries.count + 4
        let head: [UInt8] = [0x02, UInt8(0xB0 | length >> 8), UInt8(length & 0xFF), 0, 1, 0xC1, 0, 0, 0xE1, 0x00, 0xF0, 0]
        return packet(pid: pid, start: true, section(head + entries))
    }

    static func pes(pid: Int, streamID: UInt8, payload: [UInt8]) -> [UInt8] {
        let length = 3 + payload.count
        let head: [UInt8] = [0, 0, 1, streamID, UInt8(length >> 8), UInt8(length & 0xFF), 0x80, 0, 0]
        return packet(pid: pid, start: true, head + payload)
    }
}
