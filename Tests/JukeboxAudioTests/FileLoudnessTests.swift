// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// ReplayGain tags: the strict value parsing, and the four places they live (FLAC written by
/// metaflac; an ID3v2 `TXXX` frame, Opus comments with R128 gains and an MP4 freeform item built here).
final class FileLoudnessTests: ScratchCase {
    func testValuesParseStrictly() {
        let gains: [(String, Double?)] = [("-7.23 dB", -7.23), ("+1.5 dB", 1.5), (" -6.00 DB ", -6), ("3", 3), ("-0.5db", -0.5),
                                          ("", nil), ("dB", nil), ("nan dB", nil), ("inf", nil), ("1e3", nil), ("-61 dB", nil),
                                          ("31", nil), ("1.2.3 dB", nil), ("--1", nil), ("+-1", nil), ("0x10", nil), (".", nil),
                                          ("-7.23 dB extra", nil), (String(repeating: "1", count: 40), nil)]
        for (text, value) in gains { XCTAssertEqual(FileLoudness.gain(text), value, text) }
        let peaks: [(String, Double?)] = [("0.988", 0.988), ("1.2", 1.2), ("0", 0), ("-0.1", nil), ("11", nil), ("0.9 dB", nil), ("nan", nil)]
        for (text, value) in peaks { XCTAssertEqual(FileLoudness.peak(text), value, text) }
        // Q7.8 dB against -23 LUFS, moved to ReplayGain's -18: +5 dB.
        let r128: [(String, Double?)] = [("0", 5), ("-2560", -5), ("+256", 6), ("-1851", -1851.0 / 256 + 5), ("1.5", nil), ("", nil),
                                         ("-99999999", nil), ("abc", nil), ("- 5", nil)]
        for (text, value) in r128 { XCTAssertEqual(FileLoudness.r128(text), value, text) }
    }

    func testFLACTagsFromMetaflacAreRead() throws {
        let path = try scratch.audio(.flac, frames: 4410)
        try metaflac(["--set-tag=REPLAYGAIN_TRACK_GAIN=-6.00 dB", "--set-tag=replaygain_track_peak=0.5",
                                      "--set-tag=REPLAYGAIN_ALBUM_GAIN=+1.25 dB", "--set-tag=REPLAYGAIN_ALBUM_PEAK=garbage", path])
        let expected = ReplayGainTags(trackGain: -6, trackPeak: 0.5, albumGain: 1.25, albumPeak: nil)
        XCTAssertEqual(FileLoudness.read(path: path), expected)
        XCTAssertEqual(TagReader.read(path: path).loudness, expected)
        // Chapters are still read through the same comment walker.
        XCTAssertNil(FileLoudness.read(path: try scratch.audio(.flac, frames: 4410, name: "plain")))
        XCTAssertNil(TagReader.read(path: MP4MovieTests.fixture("chapters.flac")).loudness)
    }

    func testID3TXXXFramesAreRead() throws {
        func txxx(_ encoding: UInt8, _ key: String, _ value: String, major: UInt8) -> [UInt8] {
            var body: [UInt8] = [encoding]
            if encoding == 1 {
                for text in [key, value] {
                    body += [0xff, 0xfe]
                    for unit in text.utf16 { body += [UInt8(unit & 0xff), UInt8(unit >> 8)] }
                    body += [0, 0]
                }
            } else {
                body += Array(key.utf8) + [0] + Array(value.utf8)
            }
            return FileChaptersTests.frame("TXXX", body, major: major)
        }
        var frames = txxx(0, "replaygain_track_gain", "-7.23 dB", major: 4)
        frames += txxx(1, "REPLAYGAIN_TRACK_PEAK", "0.988", major: 4)
        frames += txxx(3, "REPLAYGAIN_ALBUM_GAIN", "1e9 dB", major: 4)
        frames += FileChaptersTests.frame("TIT2", FileChaptersTests.latin1("REPLAYGAIN_ALBUM_PEAK"), major: 4)
        let path = scratch.file("t.mp3", FileChaptersTests.tag(frames, major: 4))
        XCTAssertEqual(FileLoudness.read(path: path), ReplayGainTags(trackGain: -7.23, trackPeak: 0.988))
        let v23 = scratch.file("v23.mp3", FileChaptersTests.tag(txxx(0, "REPLAYGAIN_ALBUM_GAIN", "-3 dB", major: 3)))
        XCTAssertEqual(FileLoudness.read(path: v23), ReplayGainTags(albumGain: -3))
        // A TXXX cut inside its description: nothing, no trap.
        let cut = scratch.file("cut.mp3", FileChaptersTests.tag(FileChaptersTests.frame("TXXX", [1, 0xff], major: 4), major: 4))
        XCTAssertNil(FileLoudness.read(path: cut))
    }

    func testOpusR128AndReplayGainComments() throws {
        func comments(_ list: [String]) -> [UInt8] {
            var bytes: [UInt8] = Array("OpusTags".utf8)
            bytes += le32(4) + Array("test".utf8)
            bytes += le32(list.count)
            for c in list { bytes += le32(c.utf8.count) + Array(c.utf8) }
            return bytes
        }
        let head: [UInt8] = Array("OpusHead".utf8) + [1, 2, 0, 0, 0x80, 0xbb, 0, 0, 0, 0, 0]
        let path = scratch.file("t.opus", oggPage(head) + oggPage(comments(["R128_TRACK_GAIN=-2560", "r128_album_gain=oops",
                                                                             "REPLAYGAIN_ALBUM_GAIN=-1 dB", "TITLE=x"])))
        // The track's R128 gain at ReplayGain's reference (-10 + 5 dB); the album's a ReplayGain one.
        XCTAssertEqual(FileLoudness.read(path: path), ReplayGainTags(trackGain: -5, albumGain: -1))
        let none = scratch.file("n.opus", oggPage(head) + oggPage(comments(["R128_TRACK_GAIN=9999999"])))
        XCTAssertNil(FileLoudness.read(path: none))
    }

    func testMP4FreeformItemsAreRead() throws {
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { FileChaptersTests.be32(body.count + 8) + Array(type.utf8) + body }
        func item(_ name: String, _ value: String) -> [UInt8] {
            box("----", box("mean", [0, 0, 0, 0] + Array("com.apple.iTunes".utf8)) + box("name", [0, 0, 0, 0] + Array(name.utf8))
                + box("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array(value.utf8)))
        }
        let ilst = box("ilst", item("replaygain_track_gain", "-4.5 dB") + item("REPLAYGAIN_TRACK_PEAK", "0.7")
                       + item("iTunSMPB", " 00000000 00000840 00000000 0000000000015888"))
        let udta = box("udta", box("meta", [0, 0, 0, 0] + ilst))
        let source = MP4Bytes(box("ftyp", Array("M4A ".utf8)) + udta)
        let children = try XCTUnwrap(try MP4Movie.topLevel(source).first(where: { $0.type == "udta" })).children(in: source)
        let found = try MP4Tags.freeform(children, in: source, wanted: { $0.uppercased().hasPrefix("REPLAYGAIN_") })
        XCTAssertEqual(found.map(\.name), ["replaygain_track_gain", "REPLAYGAIN_TRACK_PEAK"])
        XCTAssertEqual(FileLoudness.loudness(Dictionary(uniqueKeysWithValues: found.map { ($0.name.uppercased(), $0.value) })),
                       ReplayGainTags(trackGain: -4.5, trackPeak: 0.7))
        // The gapless item still reads through the same walker.
        XCTAssertEqual(try MP4Tags.iTunSMPB(children, in: source)?.delay, 0x840)
        XCTAssertNil(FileLoudness.read(path: MP4MovieTests.fixture("two-tone.m4a")))
    }

    /// R128 gains are relative to the audio with the Opus header's output gain applied, so the
    /// decoder must apply it: libsndfile does (a header gain of -6 dB halves the decoded peak).
    func testTheOpusHeaderOutputGainIsAppliedByTheDecoder() throws {
        let patched = try Self.opusWithHeaderGain(dB: -6, from: MP4MovieTests.fixture("chapters.opus"), in: scratch)
        func peak(_ path: String) throws -> Float { TestAudio.floats(try TestAudio.decode(path: path)).map(abs).max() ?? 0 }
        XCTAssertEqual(try peak(patched) / peak(MP4MovieTests.fixture("chapters.opus")), 0.5012, accuracy: 0.002)
    }

    /// A copy of the Opus file at `path` whose header says an output gain of `dB`.
    static func opusWithHeaderGain(dB: Int, from path: String, in scratch: Scratch) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let headerEnd = 27 + Int(bytes[26])
        XCTAssertEqual(Array(bytes[headerEnd..<headerEnd + 8]), Array("OpusHead".utf8))
        let gain = Int16(dB * 256)
        bytes[headerEnd + 16] = UInt8(truncatingIfNeeded: gain)
        bytes[headerEnd + 17] = UInt8(truncatingIfNeeded: gain >> 8)
        // The first page's CRC again (libogg checks it): CRC-32, polynomial 0x04c11db7, over the
        // page with its CRC field zeroed.
        let pageEnd = headerEnd + bytes[27..<headerEnd].reduce(0) { $0 + Int($1) }
        bytes.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        var crc: UInt32 = 0
        for byte in bytes[0..<pageEnd] {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04c1_1db7 : crc << 1 }
        }
        let le: [UInt8] = [UInt8(crc & 0xff), UInt8(crc >> 8 & 0xff), UInt8(crc >> 16 & 0xff), UInt8(crc >> 24 & 0xff)]
        bytes.replaceSubrange(22..<26, with: le)
        return scratch.file("gain\(dB).opus", bytes)
    }

    private func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24 & 0xff)] }

    /// One Ogg page of stream 1 holding `packet` whole (CRC not checked by the reader).
    private func oggPage(_ packet: [UInt8]) -> [UInt8] {
        var laces = [UInt8](repeating: 255, count: packet.count / 255)
        laces.append(UInt8(packet.count % 255))
        var bytes: [UInt8] = Array("OggS".utf8) + [0, 0]
        bytes += [UInt8](repeating: 0, count: 8)
        bytes += [1, 0, 0, 0]
        bytes += [UInt8](repeating: 0, count: 8)
        bytes.append(UInt8(laces.count))
        return bytes + laces + packet
    }
}
