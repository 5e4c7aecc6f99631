// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// The engine's and the Ogg codec's stream decisions, each one pure function, as tables: where a
/// play starts (a live stream joins what is on air) and the now-playing text a stream's tags make.
final class StreamDecisionsTests: XCTestCase {
    func testAPlayStartsWhereAskedExceptALiveStreamWhichJoinsLive() {
        let rows: [(String, fromSeconds: Double, rate: Int, frameCount: Int64?, live: Bool, Int64)] = [
            ("a file from its start", 0, 44100, 441_000, false, 0),
            ("a file from a place", 1.5, 44100, 441_000, false, 66150),
            ("rounded to the nearest frame", 0.00001, 48000, nil, false, 0),
            ("rounded up past half a frame", 0.000015, 48000, nil, false, 1),
            ("past the end: the end", 20, 44100, 441_000, false, 441_000),
            ("no length known: as asked", 20, 44100, nil, false, 882_000),
            ("a live stream asked for a place joins live", 42.5, 44100, nil, true, 0),
            ("a live stream from its start", 0, 48000, nil, true, 0),
            ("a stream with a length (a file over HTTP) still joins at 0", 3, 44100, 441_000, true, 0),
        ]
        for (name, seconds, rate, count, live, expected) in rows {
            XCTAssertEqual(DecodeJob.startFrame(fromSeconds: seconds, rate: rate, frameCount: count, live: live),
                           expected, name)
        }
    }

    func testAStreamsTagsMakeArtistDashTitle() {
        let rows: [(artist: String, title: String, String?)] = [
            ("Artist", "Song", "Artist - Song"),
            ("", "Song", "Song"),
            ("Artist", "", "Artist"),
            ("", "", nil),
            ("   ", "", nil),
            ("Art\u{1B}[2Jist", "So\u{7}ng", "Art[2Jist - Song"),
            ("Artist", "Song  ", "Artist - Song"),
            (String(repeating: "a", count: 300), "b", String(repeating: "a", count: TagText.maxCharacters)),
        ]
        for (artist, title, expected) in rows {
            XCTAssertEqual(OggCommentTitle.streamTitle(artist: artist, title: title), expected, "\(artist.prefix(20)) / \(title)")
        }
    }

    /// A 206's `Content-Range`: its first byte and total read; anything else (another unit, a
    /// reversed or negative range, a number past Int, a total not past the first byte) is none,
    /// and the stream then refuses the answer rather than decode bytes from an unknown place.
    func testContentRangeReadsOnlyWhatItSays() {
        let cases: [(String, Int?, Int??)] = [
            ("bytes 100-999/1000", 100, .some(1000)),
            ("bytes 0-0/1", 0, .some(1)),
            ("bytes 100-999/*", 100, .some(nil)),
            ("bytes 100-999/100", nil, nil),
            ("bytes -5-9/10", nil, nil),
            ("items 1-2/3", nil, nil),
            ("bytes 99999999999999999999-1/2", nil, nil),
            ("bytes 1-2/99999999999999999999", nil, nil),
            ("bytes 12", nil, nil),
            ("", nil, nil),
        ]
        for (text, first, total) in cases {
            let read = HTTPStream.contentRange(text)
            XCTAssertEqual(read?.first, first, text)
            if let total { XCTAssertEqual(read?.total, total, text) } else { XCTAssertNil(read, text) }
        }
    }
}
