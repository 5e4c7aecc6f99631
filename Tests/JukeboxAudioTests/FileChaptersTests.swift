// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Chapters outside MP4: an MP3's ID3v2 `CHAP`/`CTOC` frames and Vorbis comments' `CHAPTERnnn`
/// (FLAC, Opus), on files FFmpeg wrote (`Tests/Fixtures/chapters*`, see the README there), on
/// tags built here for what FFmpeg does not write (unsynchronisation, a table out of order,
/// UTF-16LE, 2,000 chapters), and on seeded random damage: chapters or a reason, never a trap.
final class FileChaptersTests: XCTestCase {
    static let expected = [MP4Chapter(start: 0, title: "Opening"), MP4Chapter(start: 1.5, title: "Café au lait"),
                           MP4Chapter(start: 3, title: "<img src=x onerror=alert(1)>")]

    func testID3v23AndV24ChaptersFromFFmpeg() throws {
        // v2.3: sizes plain, "Café" in UTF-16 with a byte-order mark; v2.4: syncsafe sizes, UTF-8.
        for name in ["chapters.mp3", "chapters-v24.mp3"] {
            XCTAssertEqual(try FileChapters.outcome(path: MP4MovieTests.fixture(name)).get(), Self.expected, name)
        }
    }

    func testVorbisCommentChaptersFromFLACAndOpus() throws {
        // FLAC: CHAPTER001…, one number in lower case (`chapter003=0:00:03`); Opus: FFmpeg's CHAPTER000….
        for name in ["chapters.flac", "chapters.opus"] {
            XCTAssertEqual(try FileChapters.outcome(path: MP4MovieTests.fixture(name)).get(), Self.expected, name)
        }
        XCTAssertEqual(FileChapters.read(path: MP4MovieTests.fixture("two-tone-alac-source.flac")), [])
    }

    /// TagReader fills the chapters with the other tags (what `TrackInfo.chapters` gets).
    func testTagReaderReadsThem() {
        let tags = TagReader.read(path: MP4MovieTests.fixture("chapters.mp3"))
        XCTAssertEqual(tags.title, "Chapters in ID3")
        XCTAssertEqual(tags.chapters.map(\.start), [0, 1.5, 3])
        XCTAssertEqual(tags.chapters.map(\.title), Self.expected.map(\.title))
        XCTAssertEqual(TagReader.read(path: MP4MovieTests.fixture("chapters.flac")).chapters.map(\.title), Self.expected.map(\.title))
        XCTAssertEqual(TagReader.read(path: MP4MovieTests.fixture("two-tone-alac-source.flac")).chapters.count, 0)
    }

    // MARK: tags built here

    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
    static func syncsafe(_ v: Int) -> [UInt8] { [UInt8(v >> 21 & 0x7f), UInt8(v >> 14 & 0x7f), UInt8(v >> 7 & 0x7f), UInt8(v & 0x7f)] }

    static func frame(_ id: String, _ body: [UInt8], major: UInt8 = 3, flags: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = Array(id.utf8)
        bytes += major == 4 ? syncsafe(body.count) : be32(body.count)
        bytes += [0, flags]
        return bytes + body
    }

    static func chap(_ id: String, ms: Int, title: [UInt8]?, major: UInt8 = 3) -> [UInt8] {
        // In parts: Swift 6.0's type checker gives up on one long chain of array literals.
        var body: [UInt8] = Array(id.utf8)
        body.append(0)
        body += be32(ms)
        body += be32(ms + 1000)
        body += be32(-1)
        body += be32(-1)
        if let title { body += frame("TIT2", title, major: major) }
        return frame("CHAP", body, major: major)
    }

    static func ctoc(_ id: String, top: Bool, _ children: [String], major: UInt8 = 3) -> [UInt8] {
        var body: [UInt8] = Array(id.utf8)
        body += [0, top ? 3 : 1, UInt8(children.count)]
        for child in children { body += Array(child.utf8) + [0] }
        return frame("CTOC", body, major: major)
    }

    static func tag(_ frames: [UInt8], major: UInt8 = 3, flags: UInt8 = 0, padding: Int = 16) -> [UInt8] {
        var bytes: [UInt8] = Array("ID3".utf8)
        bytes += [major, 0, flags]
        bytes += syncsafe(frames.count + padding)
        bytes += frames
        bytes += [UInt8](repeating: 0, count: padding)
        bytes += [0xff, 0xfb, 0x90, 0x00]
        return bytes
    }

    static func latin1(_ s: String) -> [UInt8] { [0] + s.unicodeScalars.map { UInt8($0.value) } + [0] }

    func testTheTableDecidesWhichChaptersAndTheStartsTheOrder() throws {
        let frames = Self.chap("c", ms: 2000, title: Self.latin1("Two")) + Self.chap("a", ms: 0, title: Self.latin1("Zero"))
            + Self.chap("x", ms: 500, title: Self.latin1("Not in the table")) + Self.chap("b", ms: 1000, title: nil)
            + Self.ctoc("sub", top: false, ["b", "c"]) + Self.ctoc("toc", top: true, ["a", "sub", "a"])
        // The table leaves "x" out; "b" has no title; ordered by start whatever the table's order.
        XCTAssertEqual(try ID3Chapters.read(MP4Bytes(Self.tag(frames))),
                       [MP4Chapter(start: 0, title: "Zero"), MP4Chapter(start: 1, title: ""), MP4Chapter(start: 2, title: "Two")])
        // Without a table: every CHAP; two at one start: the first in the tag's order is kept.
        let untabled = Self.chap("b", ms: 1000, title: Self.latin1("B")) + Self.chap("a", ms: 1000, title: Self.latin1("A"))
        XCTAssertEqual(try ID3Chapters.read(MP4Bytes(Self.tag(untabled))), [MP4Chapter(start: 1, title: "B")])
    }

    func testTextEncodingsAndUnsynchronisation() throws {
        let utf16LE: [UInt8] = [1, 0xff, 0xfe] + Array("Été".utf16.flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] }) + [0, 0]
        let utf16BE: [UInt8] = [2] + Array("Ünï".utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }) + [0, 0]
        let utf8: [UInt8] = [3] + Array("naïve\u{202E}x".utf8) + [0] + Array("second value".utf8)
        let frames = Self.chap("a", ms: 0, title: utf16LE) + Self.chap("b", ms: 1000, title: utf16BE)
            + Self.chap("c", ms: 2000, title: utf8) + Self.chap("d", ms: 3000, title: [9] + Array("bad encoding".utf8))
        // A bidirectional control does not survive (TagText.clean); the second v2.4 value is not the title.
        XCTAssertEqual(try FileChapters.read(MP4Bytes(Self.tag(frames))).map(\.title), ["Été", "Ünï", "naïvex", ""])

        // v2.4 unsynchronised as a whole: the 0xFF 0x00 pairs in the stored bytes lose their zero.
        let title: [UInt8] = [0] + Array("ÿ".unicodeScalars.map { UInt8($0.value) }) + Array("s".utf8) + [0]  // ÿ is 0xFF
        let chapter = Self.chap("a", ms: 0xff, title: title, major: 4)
        var stored: [UInt8] = []
        for b in chapter.dropFirst(10) { stored.append(b); if b == 0xff { stored.append(0) } }
        let frame = Self.frame("CHAP", stored, major: 4)
        XCTAssertEqual(try ID3Chapters.read(MP4Bytes(Self.tag(frame, major: 4, flags: 0x80))), [MP4Chapter(start: 0.255, title: "ÿs")])
        // The same frame with its own flag in a tag without one.
        XCTAssertEqual(try ID3Chapters.read(MP4Bytes(Self.tag(Self.frame("CHAP", stored, major: 4, flags: 0x02), major: 4))),
                       [MP4Chapter(start: 0.255, title: "ÿs")])
        // v2.3 unsynchronised as a whole: refused with its reason.
        XCTAssertThrowsError(try ID3Chapters.read(MP4Bytes(Self.tag(frame, major: 3, flags: 0x80)))) {
            XCTAssertEqual(($0 as? MP4Error)?.reason, "ID3v2.3 tag unsynchronised as a whole: its chapters are not read")
        }
        // Compressed or encrypted chapter frames are skipped; a grouping byte is stepped over.
        let grouped = Self.frame("CHAP", [7] + Array(Self.chap("g", ms: 0, title: Self.latin1("G")).dropFirst(10)), flags: 0x20)
        let compressed = Self.frame("CHAP", Array(Self.chap("z", ms: 5000, title: Self.latin1("Z")).dropFirst(10)), flags: 0x80)
        XCTAssertEqual(try ID3Chapters.read(MP4Bytes(Self.tag(grouped + compressed))), [MP4Chapter(start: 0, title: "G")])
    }

    func testBoundsAndDamage() throws {
        // 2,000 chapters: 1,000 kept.
        let many = (0..<2000).flatMap { Self.chap("c\($0)", ms: $0 * 1000, title: nil) }
        let kept = try ID3Chapters.read(MP4Bytes(Self.tag(many)))
        XCTAssertEqual(kept.count, 1000)
        XCTAssertEqual(kept.last?.start, 999)
        func reason(_ bytes: [UInt8]) -> String? {
            do { _ = try FileChapters.read(MP4Bytes(bytes)); return nil } catch { return error.reason }
        }
        var long = Self.tag(Self.chap("a", ms: 0, title: nil))
        long[9] = 0x7f
        XCTAssertEqual(reason(long), "damaged ID3v2 tag: it says it is longer than the file")
        let overrun = Self.tag(Array("CHAP".utf8) + Self.be32(400) + [0, 0] + [1, 2, 3])
        XCTAssertEqual(reason(overrun), "damaged ID3v2 tag: frame 'CHAP' runs past the tag's end")
        XCTAssertEqual(reason(Array("fLaC".utf8) + [0x84, 0, 1, 0]), "damaged FLAC file: a metadata block runs past the end")
        XCTAssertEqual(reason(Array("fLaC".utf8) + [0x84, 0, 0, 4, 9, 0, 0, 0]), "damaged Vorbis comments: the vendor runs past the end")
        // An Ogg page of another stream whose laces reach past the end is skipped: the next page
        // is looked for past the file's end (a trap the damage test below found: seed 9672545041332454470).
        func page(_ serial: UInt8, _ laces: [UInt8], data: Int) -> [UInt8] {
            var bytes: [UInt8] = Array("OggS".utf8)
            bytes += [0, 2]
            bytes += [UInt8](repeating: 0, count: 8)
            bytes += [serial, 0, 0, 0]
            bytes += [UInt8](repeating: 0, count: 8)
            bytes.append(UInt8(laces.count))
            bytes += laces
            bytes += [UInt8](repeating: 0x41, count: data)
            return bytes
        }
        XCTAssertEqual(try FileChapters.read(MP4Bytes(page(1, [19], data: 19) + page(2, [255, 255], data: 10))), [])
        // An ID3v2.2 tag (no chapters) and a file too short for anything: none, no error.
        XCTAssertEqual(try FileChapters.read(MP4Bytes(Array("ID3".utf8) + [2, 0, 0, 0, 0, 0, 0])), [])
        XCTAssertEqual(try FileChapters.read(MP4Bytes([0x49])), [])
    }

    func testVorbisChapterKeysAndTimes() {
        let table: [(String, Double?)] = [("00:00:01.500", 1.5), ("1:02:03", 3723), ("61:00", 3660), ("7.25", 7.25), (" 0:00:03 ", 3),
                                          ("", nil), ("1:60:00", nil), ("1::2", nil), ("-1", nil), ("1e3", nil), (".5", nil), ("1.2.3", nil),
                                          ("1:2:3:4", nil), ("nan", nil), ("99999999999:00:00", nil)]
        for (text, seconds) in table { XCTAssertEqual(VorbisChapters.seconds(text), seconds, text) }
        let comments: [(key: String, value: [UInt8])] = [
            ("CHAPTER2", Array("0:10".utf8)), ("CHAPTER2NAME", Array("Ten".utf8)), ("CHAPTER1", Array("0:00".utf8)),
            ("CHAPTER1NAME", [0xff, 0x41]), ("CHAPTER3NAME", Array("no start".utf8)), ("CHAPTER12345", Array("0:05".utf8)),
            ("CHAPTERX", Array("0:05".utf8)), ("CHAPTER4", Array("0:10".utf8)), ("CHAPTER4URL", Array("http://x".utf8)),
        ]
        // Invalid UTF-8 as U+FFFD (comments are UTF-8); a number past 4 digits and a start without a
        // chapter number are not chapters; two at 0:10: the lower number kept.
        XCTAssertEqual(VorbisChapters.chapters(comments), [MP4Chapter(start: 0, title: "\u{FFFD}A"), MP4Chapter(start: 10, title: "Ten")])
    }

    // MARK: damage

    /// Every cut of the fixtures, built tags and seeded random damage: chapters (ordered, bounded,
    /// finite) or a reason, never a trap; a read past the file's end is refused by the source.
    func testDamagedFilesNeverTrap() throws {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_CHAPTERS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("FileChaptersTests seed: \(seed) (JUKEBOX_CHAPTERS_SEED=\(seed) replays it)")
        fflush(nil)  // printed before a trap would end the process
        var generator = SeededGenerator(seed: seed)
        var outcomes: [String: Int] = [:]
        var originals = try ["chapters.mp3", "chapters-v24.mp3", "chapters.flac", "chapters.opus"].map {
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: MP4MovieTests.fixture($0))))
        }
        let titled = Self.latin1("T")
        originals.append(Self.tag(Self.chap("a", ms: 0, title: titled, major: 4) + Self.ctoc("t", top: true, ["a", "t"], major: 4), major: 4, flags: 0x80))
        originals.append(Self.tag(Self.chap("a", ms: 5, title: titled) + Self.chap("b", ms: 9, title: titled) + Self.ctoc("t", top: true, ["b", "a"])))
        var runs = 0
        for original in originals {
            // The chapter frames and comments are near the start: damage lands there mostly.
            let head = min(original.count, 400)
            var cases: [[UInt8]] = stride(from: 0, to: head, by: 3).map { Array(original[..<$0]) }
            for _ in 0..<500 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    let at = Int.random(in: 0..<(Bool.random(using: &generator) ? head : bytes.count), using: &generator)
                    bytes[at] = Bool.random(using: &generator) ? UInt8.random(in: 0...255, using: &generator) : [0, 0xff, 0x7f, 0x80][Int.random(in: 0..<4, using: &generator)]
                }
                cases.append(bytes)
            }
            for bytes in cases {
                runs += 1
                do {
                    let chapters = try FileChapters.read(MP4Bytes(bytes))
                    XCTAssertLessThanOrEqual(chapters.count, MP4Chapter.maxCount)
                    XCTAssertTrue(chapters.allSatisfy { $0.start.isFinite && $0.start >= 0 && $0.title.count <= TagText.maxCharacters })
                    XCTAssertTrue(zip(chapters, chapters.dropFirst()).allSatisfy { $0.start < $1.start }, "seed \(seed)")
                    outcomes[chapters.isEmpty ? "none" : "chapters", default: 0] += 1
                } catch {
                    outcomes["error", default: 0] += 1
                }
            }
        }
        print("FileChaptersTests damaged files: \(runs) runs, \(outcomes)")
        XCTAssertGreaterThan(outcomes["error", default: 0], 0)
        XCTAssertGreaterThan(outcomes["chapters", default: 0], 0)
    }
}
