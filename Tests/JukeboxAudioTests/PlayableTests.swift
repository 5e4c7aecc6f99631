// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// `Decoder.playableProblem`: the one decision the web face's uploads take, by the bytes and not
/// the name (a FLAC named `.mp3` plays; text named `.flac` does not).
final class PlayableTests: XCTestCase {
    func testTheBytesDecideNotTheName() throws {
        let scratch = try Scratch()
        for kind in [TestAudio.Kind.wav16, .aiff, .flac, .oggVorbis, .opus, .mp3] {
            let made = try scratch.audio(kind, frames: 4410, sampleRate: kind.requiredSampleRate ?? 44100)
            let misnamed = scratch.path("misnamed-\(kind.rawValue).mp3")
            XCTAssertEqual(rename(made, misnamed), 0)
            XCTAssertNil(Decoder.playableProblem(path: misnamed), "\(kind) named .mp3")
        }
        // MP4 (AAC, ALAC): the MP4 decoder, chosen by the bytes too.
        for name in ["two-tone.m4a", "two-tone-alac.m4a", "chapters.m4b"] {
            let misnamed = scratch.path("misnamed-\(name).flac")
            try FileManager.default.copyItem(atPath: MP4MovieTests.fixture(name), toPath: misnamed)
            XCTAssertNil(Decoder.playableProblem(path: misnamed), "\(name) named .flac")
        }
        let flac = try Array(Data(contentsOf: URL(fileURLWithPath: try scratch.audio(.flac, frames: 4410))))
        let unknown = "not a recognised audio format"
        let refused: [(String, [UInt8], String?)] = [
            ("text.flac", Array("just some text, not audio at all\n".utf8), unknown),
            ("empty.mp3", [], "file is empty"),
            ("png.mp3", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 4096), unknown),
            ("zip.ogg", [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 7, count: 4096), unknown),
            ("html.wav", Array("<!doctype html><script>alert(1)</script>".utf8), unknown),
            ("magic-only.flac", Array(flac.prefix(4)), unknown),
            // An MP4 header with no audio in it goes to the MP4 decoder, which refuses it.
            ("ftyp.m4a", [0, 0, 0, 16] + Array("ftypM4A ".utf8) + [0, 0, 0, 0], nil),
        ]
        for (name, bytes, reason) in refused {
            let problem = Decoder.playableProblem(path: scratch.file(name, bytes))
            XCTAssertNotNil(problem, name)
            if let reason { XCTAssertEqual(problem, reason, name) }
        }
    }
}
