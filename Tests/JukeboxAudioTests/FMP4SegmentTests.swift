// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// `FMP4Init` and `FMP4Fragment` against FFmpeg: the fragmented MP4 segments `ffmpeg -f hls
/// -hls_segment_type fmp4` makes, read here, give byte for byte the ADTS FFmpeg copies out of
/// them; mutated boxes (lying counts, sizes and offsets, cut segments) are refused with a reason,
/// never a trap, and never more out than the bound. Skipped without ffmpeg.
final class FMP4SegmentTests: XCTestCase {
    private var folder = ""
    private var random = SeededGenerator(seed: 0)
    private var seed: UInt64 = 0

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "fmp4-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        seed = ProcessInfo.processInfo.environment["JUKEBOX_FMP4_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("FMP4SegmentTests seed: \(seed) (JUKEBOX_FMP4_SEED=\(seed) replays it)")
        random = SeededGenerator(seed: seed)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// FFmpeg's fMP4 HLS of a tone: the init section, the segments, and FFmpeg's copy of the audio as ADTS.
    private func made(seconds: Int = 3) throws -> (setup: [UInt8], segments: [[UInt8]], adts: [UInt8]) {
        try FFmpeg.run(["-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:a", "aac", "-b:a", "48k",
                        "-f", "hls", "-hls_time", "1", "-hls_list_size", "0", "-hls_playlist_type", "vod",
                        "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "f_init.mp4",
                        "-hls_segment_filename", folder + "/f%d.m4s", folder + "/f.m3u8"])
        try FFmpeg.run(["-i", folder + "/f.m3u8", "-c", "copy", "-f", "adts", folder + "/copy.adts"])
        func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) }
        var segments: [[UInt8]] = []
        while FileManager.default.fileExists(atPath: folder + "/f\(segments.count).m4s") { segments.append(try bytes("f\(segments.count).m4s")) }
        return (try bytes("f_init.mp4"), segments, try bytes("copy.adts"))
    }

    func testFFmpegsFragmentsGiveFFmpegsADTS() throws {
        let (setupBytes, segments, expected) = try made()
        let setup = try FMP4Init.read(setupBytes)
        XCTAssertEqual(Array(setup.config.prefix(2)), [0x12, 0x08], "AAC-LC, 44.1 kHz, mono")
        XCTAssertGreaterThanOrEqual(segments.count, 3)
        var audio: [UInt8] = []
        for segment in segments { audio += try FMP4Fragment.adts(segment, init: setup) }
        XCTAssertGreaterThan(expected.count, 1000)
        XCTAssertTrue(audio == expected, "\(audio.count) bytes, FFmpeg's copy \(expected.count)")
    }

    /// HE-AAC signalled explicitly (object type 5: the core AAC-LC at 24 kHz, SBR to 48 kHz) goes
    /// into ADTS as its core; other object types and channel layouts ADTS cannot carry are refused.
    func testTheADTSHeaderOfAConfiguration() throws {
        let he = try ADTSFields([0x2B, 0x11, 0x88])
        XCTAssertEqual([he.profile, he.rateIndex, he.channels], [1, 6, 2])
        XCTAssertEqual(try ADTSFields([0x12, 0x10]).header(payload: 100), [0xFF, 0xF1, 0x50, 0x80, 0x0D, 0x7F, 0xFC])
        let refused: [([UInt8], String)] = [
            ([0x12], "damaged init section: the AAC configuration is cut short"),
            ([0x17, 0x80, 0x00, 0x00, 0x00], "the AAC configuration states its sampling rate outright, which ADTS cannot carry"),
            ([0x16, 0x90], "damaged init section: AAC sampling rate index 13"),
            ([0x12, 0x00], "AAC channel configuration 0 is not supported in fragmented MP4 HLS (plays: 1 to 7)"),
            ([0xF8, 0x0A, 0x20], "AAC object type 32 is not supported in fragmented MP4 HLS (plays: AAC-LC, HE-AAC v1/v2)"),
        ]
        for (config, reason) in refused {
            XCTAssertThrowsError(try ADTSFields(config), "\(config)") { XCTAssertEqual(($0 as? MP4Error)?.reason, reason) }
        }
    }

    /// Boxes that lie, each refused with its reason.
    func testLyingBoxesAreRefusedWithAReason() throws {
        let (setupBytes, segments, _) = try made(seconds: 2)
        let setup = try FMP4Init.read(setupBytes)
        let segment = segments[0]
        let trun = try XCTUnwrap(Self.find("trun", in: segment))
        let flags = Int(segment[trun + 1]) << 16 | Int(segment[trun + 2]) << 8 | Int(segment[trun + 3])
        XCTAssertEqual(flags & 0x201, 0x201, "FFmpeg's trun gives a data offset and each sample's size")
        // The first sample's size: after flags, count, data offset, first-sample flags, its duration.
        let firstSize = trun + 12 + (flags & 0x4 != 0 ? 4 : 0) + (flags & 0x100 != 0 ? 4 : 0)
        func patched(_ at: Int, _ value: UInt32) -> [UInt8] {
            var bytes = segment
            bytes.replaceSubrange(at..<at + 4, with: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
            return bytes
        }
        let moof = try XCTUnwrap(Self.find("moof", in: segment))
        let mdat = try XCTUnwrap(Self.find("mdat", in: segment))
        let cases: [(String, [UInt8], String)] = [
            ("a count of 2^32 - 1", patched(trun + 4, 0xFFFF_FFFF), "damaged fragment: box 'trun' says it holds 4294967295 samples"),
            ("a frame of 9000 bytes", patched(firstSize, 9000), "damaged fragment: an AAC frame of 9000 bytes (at most 8184 fit ADTS)"),
            ("a data offset far past the end", patched(trun + 8, 0x7FFF_FFFF), "damaged fragment: its data lies outside it"),
            ("a negative data offset", patched(trun + 8, UInt32(bitPattern: -100_000)), "damaged fragment: its data lies outside it"),
            ("data in the moof, not the mdat", patched(trun + 8, 8), "damaged fragment: its samples lie outside its 'mdat'"),
            ("a moof longer than the segment", patched(moof - 8, 0x00FF_FFFF), "damaged file: box 'moof' runs past the end of the file (truncated?)"),
            ("a segment cut in its mdat", Array(segment.prefix(mdat + 100)), "damaged fragment: its samples lie outside its 'mdat'"),
            ("no moof", Array(segment[..<(moof - 8)]), "not a fragmented MP4 segment (no 'moof')"),
            ("only its mdat", Array(segment[(mdat - 8)...]), "not a fragmented MP4 segment"),
            ("not MP4 at all", Array("<html>not found</html>".utf8), "not a fragmented MP4 segment"),
            ("three bytes", Array(segment.prefix(3)), "not a fragmented MP4 segment"),
        ]
        for (what, bytes, reason) in cases {
            XCTAssertThrowsError(try FMP4Fragment.adts(bytes, init: setup), what) { XCTAssertEqual(($0 as? MP4Error)?.reason, reason, what) }
        }
        // Two runs of the same bytes over and over cannot multiply the output: a segment whose
        // runs claim more than it holds is refused.
        XCTAssertThrowsError(try FMP4Fragment.adts(Self.repeatingRuns(segment, moof: moof, trun: trun), init: setup)) {
            XCTAssertEqual(($0 as? MP4Error)?.reason, "damaged fragment: its samples claim more bytes than it holds")
        }
        let stsd = try XCTUnwrap(Self.find("mp4a", in: setupBytes))
        var other = setupBytes
        other.replaceSubrange(stsd - 4..<stsd, with: Array("alaw".utf8))
        XCTAssertThrowsError(try FMP4Init.read(other)) {
            XCTAssertEqual(($0 as? MP4Error)?.reason, "audio codec 'alaw' in MP4 is not supported (plays: AAC, ALAC)")
        }
        XCTAssertThrowsError(try FMP4Init.read(segment)) {
            XCTAssertEqual(($0 as? MP4Error)?.reason, "not a fragmented MP4 init section (no 'moov')", "a segment is no init section")
        }
    }

    /// Random mutations of a real init section and segment: read or refused with a reason, the
    /// output always ADTS frames, never more than 8 bytes out per byte in.
    func testMutatedSegmentsAreBounded() throws {
        let (setupBytes, segments, _) = try made(seconds: 2)
        let setup = try FMP4Init.read(setupBytes)
        for round in 0..<400 {
            let original = round % 2 == 0 ? segments[0] : setupBytes
            var bytes = original
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes[at] = [0x00, 0xFF, 0x7F, 0x80][Int.random(in: 0..<4, using: &random)]
                default: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...64, using: &random)))
                }
                if bytes.isEmpty { bytes = [0] }
            }
            do throws(MP4Error) {
                let audio = try FMP4Fragment.adts(bytes, init: setup)
                XCTAssertLessThanOrEqual(audio.count, 8 * bytes.count, "seed \(seed), round \(round)")
            } catch {
                XCTAssertFalse(error.reason.isEmpty, "seed \(seed), round \(round)")
            }
            do throws(MP4Error) { _ = try FMP4Init.read(bytes) } catch {
                XCTAssertFalse(error.reason.isEmpty, "seed \(seed), round \(round)")
            }
        }
    }

    /// Where the content of the first box of `type` starts (after its type), nil when there is none.
    static func find(_ type: String, in bytes: [UInt8]) -> Int? {
        let wanted = Array(type.utf8)
        guard bytes.count >= 8 else { return nil }
        for i in 4...(bytes.count - 4) where Array(bytes[i..<i + 4]) == wanted { return i + 4 }
        return nil
    }

    /// The segment with its `traf` repeated until its runs claim more bytes than the segment
    /// holds (each copy's run points at the same `mdat` bytes); the sizes of `moof` and the offsets fixed.
    static func repeatingRuns(_ segment: [UInt8], moof: Int, trun: Int) -> [UInt8] {
        guard let traf = find("traf", in: segment), let mdat = find("mdat", in: segment) else { return segment }
        let trafStart = traf - 8
        let trafSize = Int(segment[trafStart]) << 24 | Int(segment[trafStart + 1]) << 16 | Int(segment[trafStart + 2]) << 8 | Int(segment[trafStart + 3])
        let copy = Array(segment[trafStart..<trafStart + trafSize])
        let copies = 4
        let added = copy.count * copies
        var out = Array(segment[..<(moof - 8)])
        let moofSize = (mdat - 8) - (moof - 8) + added
        out += [UInt8(moofSize >> 24 & 0xFF), UInt8(moofSize >> 16 & 0xFF), UInt8(moofSize >> 8 & 0xFF), UInt8(moofSize & 0xFF)]
        out += segment[(moof - 4)..<(trafStart + trafSize)]
        for _ in 0..<copies { out += copy }
        out += segment[(trafStart + trafSize)...]
        // Every run's data offset is from the moof (FFmpeg sets default-base-is-moof): moved on by what was added.
        var at = moof - 8
        while let found = find("trun", in: Array(out[at...])) {
            let offsetAt = at + found + 8
            let old = Int(out[offsetAt]) << 24 | Int(out[offsetAt + 1]) << 16 | Int(out[offsetAt + 2]) << 8 | Int(out[offsetAt + 3])
            let value = old + added
            out.replaceSubrange(offsetAt..<offsetAt + 4, with: [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
            at = offsetAt
            if at >= out.count - 8 { break }
        }
        return out
    }
}
