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
}
