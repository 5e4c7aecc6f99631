// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// Tags are bounded and cleaned where they enter, by the one definition stream titles use.
final class TagTextTests: XCTestCase {
    func testTextIsCutOnACharacterWithControlAndBidiCharactersDropped() {
        XCTAssertEqual(TagText.clean("  \u{1B}[2J\u{202E}Song\u{2066}\u{061C} \u{85}"), "[2JSong")
        XCTAssertEqual(TagText.clean(String(repeating: "é", count: 1 << 20)).count, TagText.maxCharacters)
        // A character of several scalars is kept whole: 200 flags, not 400 halves.
        let flags = String(repeating: "🇳🇴", count: 300)
        XCTAssertEqual(TagText.clean(flags), String(repeating: "🇳🇴", count: 200))
        XCTAssertNil(TagText.field(" \u{202E} \t"))
        XCTAssertEqual(ICYDemuxer.maxTitleCharacters, TagText.maxCharacters)
        XCTAssertEqual(ICYDemuxer.streamTitle(Array("StreamTitle='A\u{202E}B';".utf8)), "AB")
    }

    /// A 1 MiB TITLE (FLAC) and TIT2 (MP3) are read as their first 200 characters.
    func testAMebibyteTagIsReadAs200Characters() throws {
        let scratch = try Scratch()
        let flac = try scratch.audio(.flac, frames: 4410)
        let huge = String(repeating: "x", count: 1 << 20)
        let tagged = scratch.file("huge.flac", BadMediaTests.insertFLACBlocks(scratch.bytes(flac),
            [(4, BadMediaTests.vorbisComment(["TITLE=" + huge, "ARTIST=\u{202E}" + huge]))]))
        let tags = TagReader.read(path: tagged)
        XCTAssertEqual(tags.title, String(repeating: "x", count: 200))
        XCTAssertEqual(tags.artist, String(repeating: "x", count: 200))
        let mp3 = try scratch.audio(.mp3, frames: 4410)
        let big = scratch.file("huge.mp3", BadMediaTests.id3v2Tag(title: huge, filler: 1) + scratch.bytes(mp3))
        XCTAssertEqual(TagReader.read(path: big).title, String(repeating: "x", count: 200))
    }

    /// An MP3 without a Xing/Info header: libmpg123 estimates its length from the file's size, and
    /// a 50 MB picture in its ID3v2 tag must not count as audio (it made 20 s show as 55 min).
    func testA50MBPictureDoesNotLengthenA20SecondMP3() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.mp3")
        try TestAudio.write(path: plain, kind: .mp3, frames: 44_100 * 20, constantBitRate: true)
        let audio = Self.withoutInfoFrame(scratch.bytes(plain))
        XCTAssertLessThan(audio.count, scratch.bytes(plain).count, "no Info frame was found to take out")
        let bare = scratch.file("bare.mp3", audio)
        let picture = scratch.file("picture.mp3", Self.id3v2Picture(bytes: 50_000_000) + audio)
        let bareSeconds = try XCTUnwrap(TagReader.read(path: bare).durationSeconds)
        XCTAssertEqual(bareSeconds, 20, accuracy: 0.5)
        let seconds = try XCTUnwrap(TagReader.read(path: picture).durationSeconds)
        print("20 s MP3 without an Info header: \(bareSeconds) s; with a 50 MB picture: \(seconds) s")
        XCTAssertEqual(seconds, bareSeconds, accuracy: 0.05)
        // With an Info header the length is exact, picture or not.
        let exact = scratch.file("exact.mp3", Self.id3v2Picture(bytes: 50_000_000) + scratch.bytes(plain))
        XCTAssertEqual(TagReader.read(path: exact).durationSeconds ?? 0, 20, accuracy: 1e-6)
    }

    /// An ID3v2.3 tag holding one APIC frame of `bytes` bytes of picture.
    static func id3v2Picture(bytes: Int) -> [UInt8] {
        let body = [0] + Array("image/jpeg".utf8) + [0, 3, 0] + [UInt8](repeating: 0xD8, count: bytes)
        let size = body.count
        let frame = Array("APIC".utf8) + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 0, 0] + body
        let total = frame.count
        return Array("ID3".utf8) + [3, 0, 0] + [UInt8(total >> 21 & 0x7F), UInt8(total >> 14 & 0x7F), UInt8(total >> 7 & 0x7F), UInt8(total & 0x7F)] + frame
    }

    /// `mp3` without its first frame when that frame is a Xing/Info header (MPEG-1 Layer III).
    static func withoutInfoFrame(_ mp3: [UInt8]) -> [UInt8] {
        guard mp3.count > 200, mp3[0] == 0xFF, mp3[1] & 0xE0 == 0xE0 else { return mp3 }
        let head = Array(mp3[0..<200])
        let hasInfo = (0..<196).contains { i in
            let word = String(decoding: head[i..<(i + 4)], as: UTF8.self)
            return word == "Info" || word == "Xing"
        }
        guard hasInfo else { return mp3 }
        let bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let rates = [44100, 48000, 32000]
        let bitrate = bitrates[Int(mp3[2] >> 4)] * 1000, rate = rates[Int(mp3[2] >> 2 & 3)], padding = Int(mp3[2] >> 1 & 1)
        return Array(mp3[(144 * bitrate / rate + padding)...])
    }
}
