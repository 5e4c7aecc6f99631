// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

final class TagReaderTests: ScratchCase {
    private let tags = TestAudio.Tags(title: "Blåbær Song", artist: "The Testers", album: "Fixtures", track: 7)

    func testAnEmbeddedPictureIsReadWhereTagLibCanAndNeverOverItsLimit() throws {
        let path = try scratch.audio(.flac, frames: 4410)
        let cover = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 251) }
        try TestAudio.embedPicture(inFLAC: path, mimeType: "image/png", bytes: cover)
        // The file still plays and keeps its tags' reading with the block in it.
        XCTAssertEqual(TagReader.read(path: path).durationSeconds ?? 0, 0.1, accuracy: 1e-9)
        // TagLib 2 (Debian 13, the arm64 suite) reads it; Debian 12's TagLib 1.13 has no C call for it.
        if TagReader.readsPictures {
            XCTAssertEqual(TagReader.picture(path: path, limit: 8 << 20), EmbeddedPicture(mimeType: "image/png", bytes: cover))
            XCTAssertNil(TagReader.picture(path: path, limit: cover.count - 1), "a picture over the limit was read")
        } else {
            XCTAssertNil(TagReader.picture(path: path, limit: 8 << 20))
        }
        let plain = try scratch.audio(.flac, frames: 4410)
        XCTAssertNil(TagReader.picture(path: plain, limit: 8 << 20))
        XCTAssertNil(TagReader.picture(path: scratch.path("missing.flac"), limit: 8 << 20))
    }

    func testTagsWrittenByLibsndfileAreReadBack() throws {
        for kind in [TestAudio.Kind.flac, .oggVorbis, .opus, .mp3, .wav16, .aiff] {
            // libsndfile writes ID3 text as Latin-1 (UTF-8 would turn into mojibake), and AIFF has no
            // album or track chunk: those limits are the writer's, not the reader's.
            var written = tags
            if kind == .mp3 { written.title = "Blabaer Song" }
            let path = try scratch.audio(kind, frames: 48000, tags: written)
            let read = TagReader.read(path: path)
            XCTAssertEqual(read.title, written.title, "\(kind)")
            XCTAssertEqual(read.artist, "The Testers", "\(kind)")
            XCTAssertEqual(read.album, kind == .aiff ? nil : "Fixtures", "\(kind)")
            XCTAssertEqual(read.trackNumber, kind == .aiff ? nil : 7, "\(kind)")
            XCTAssertNil(read.discNumber, "\(kind)")
        }
    }

    func testUntaggedFileHasNoTitleButADuration() throws {
        for kind in [TestAudio.Kind.wav16, .flac, .mp3] {
            let path = try scratch.audio(kind, frames: 22050)
            let read = TagReader.read(path: path)
            XCTAssertNil(read.title, "\(kind)")
            XCTAssertNil(read.trackNumber, "\(kind)")
            XCTAssertEqual(read.durationSeconds ?? 0, 0.5, accuracy: 0.0001, "\(kind)")
        }
    }

    func testDurationIsExactFromLibsndfile() throws {
        let path = try scratch.audio(.opus, frames: 72000, tags: tags)
        XCTAssertEqual(TagReader.read(path: path).durationSeconds ?? 0, 1.5, accuracy: 0.0001)
    }

    func testUnreadableFileGivesEmptyTags() throws {
        let path = scratch.file("junk.flac", Array("not audio at all".utf8))
        XCTAssertEqual(TagReader.read(path: path), TrackTags())
        XCTAssertEqual(TagReader.read(path: "/nonexistent.mp3"), TrackTags())
    }
}
