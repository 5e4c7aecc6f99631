// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// `HLSSession`'s decisions, step by step with the time given: the live edge, a sliding window,
/// reload timing, a playlist that stops updating, failed segments, refusals.
final class HLSSessionTests: XCTestCase {
    static let url = "http://h/live.m3u8"

    /// A live (or, with `ended`, on-demand) playlist of `count` segments of `duration` s from `first`.
    static func playlist(first: Int, count: Int, target: Int = 2, duration: Double = 2, ended: Bool = false,
                         extra: String = "") -> [UInt8] {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:\(target)\n#EXT-X-MEDIA-SEQUENCE:\(first)\n" + extra
        for n in first..<first + count { text += "#EXTINF:\(duration),\ns\(n).ts\n" }
        if ended { text += "#EXT-X-ENDLIST\n" }
        return Array(text.utf8)
    }

    static func segment(_ n: Int, _ duration: Double = 2) -> HLSSession.Step {
        .fetchSegment(HLSSegment(sequence: n, duration: duration, uri: "http://h/s\(n).ts"))
    }

    func testOnDemandPlaysFromTheFirstSegmentToTheEnd() {
        var session = HLSSession(url: Self.url)
        XCTAssertEqual(session.start(), .fetchPlaylist(Self.url))
        XCTAssertEqual(session.playlistArrived(Self.playlist(first: 0, count: 3, ended: true), now: 0), Self.segment(0))
        XCTAssertEqual(session.segmentDone(now: 1), Self.segment(1))
        XCTAssertEqual(session.segmentDone(now: 2), Self.segment(2))
        XCTAssertEqual(session.segmentDone(now: 3), .end(failure: nil))
        XCTAssertEqual(session.tick(now: 4), .end(failure: nil))
    }

    /// An on-demand playlist says its length (the sum of its durations) and starts at the segment
    /// holding the place asked for, saying where that segment starts; past the end, the last.
    /// A live one ignores the place and says nothing.
    func testOnDemandStartsAtTheSegmentHoldingThePlace() {
        let cases: [(at: Double, segment: Int, segmentStart: Double)] = [(0, 0, 0), (1.99, 0, 0), (2, 1, 2), (5.5, 2, 4), (99, 2, 4), (-3, 0, 0), (.nan, 0, 0)]
        for (at, segment, segmentStart) in cases {
            var session = HLSSession(url: Self.url, startAt: at)
            XCTAssertEqual(session.playlistArrived(Self.playlist(first: 0, count: 3, ended: true), now: 0), Self.segment(segment), "\(at)")
            XCTAssertEqual(session.onDemand?.duration, 6, "\(at)")
            XCTAssertEqual(session.onDemand?.segmentStart, segmentStart, "\(at)")
        }
        var live = HLSSession(url: Self.url, startAt: 5)
        XCTAssertEqual(live.playlistArrived(Self.playlist(first: 0, count: 5), now: 0), Self.segment(2))
        XCTAssertNil(live.onDemand)
    }

    func testLiveStartsThreeTargetDurationsFromTheEnd() {
        // Segments of 2 s, target 2: the last three make 6 s = 3 target durations.
        var session = HLSSession(url: Self.url)
        XCTAssertEqual(session.playlistArrived(Self.playlist(first: 100, count: 10), now: 0), Self.segment(107))
        // Shorter than three target durations: from its first segment.
        var short = HLSSession(url: Self.url)
        XCTAssertEqual(short.playlistArrived(Self.playlist(first: 5, count: 2), now: 0), Self.segment(5))
        XCTAssertEqual(HLSSession.startSequence(HLSMediaPlaylist()), nil)
    }

    func testASlidingWindowIsFollowedBySequenceNumber() {
        var session = HLSSession(url: Self.url)
        XCTAssertEqual(session.playlistArrived(Self.playlist(first: 0, count: 4), now: 0), Self.segment(1))
        XCTAssertEqual(session.segmentDone(now: 0.5), Self.segment(2))
        XCTAssertEqual(session.segmentDone(now: 1), Self.segment(3))
        // Out of segments: the playlist changed at 0, its last segment is 2 s: reload at 2.
        XCTAssertEqual(session.segmentDone(now: 1.5), .wait(until: 2))
        XCTAssertEqual(session.tick(now: 2), .fetchPlaylist(Self.url))
        // The window slid by two: 4 and 5 are new; the next is 4 whatever the window's start.
        XCTAssertEqual(session.playlistArrived(Self.playlist(first: 2, count: 4), now: 2), Self.segment(4))
        XCTAssertEqual(session.segmentDone(now: 2.5), Self.segment(5))
        // Unchanged on reload: half the target duration to the next.
        XCTAssertEqual(session.segmentDone(now: 3), .wait(until: 4))
        XCTAssertEqual(session.tick(now: 4), .fetchPlaylist(Self.url))
        XCTAssertEqual(session.playlistArrived(Self.playlist(first: 2, count: 4), now: 4), .wait(until: 5))
        XCTAssertEqual(session.takeNotes(), [])
        // Fell behind: the window moved past segment 6; caught up at its start, said.
        XCTAssertEqual(session.tick(now: 5), .fetchPlaylist(Self.url))
        XCTAssertEqual(session.playlistArrived(Self.playlist(first: 9, count: 4), now: 5), Self.segment(9))
        XCTAssertEqual(session.takeNotes(), ["fell behind the live window: segments 6–8 skipped"])
    }

    func testAPlaylistThatStopsUpdatingIsGivenUp() {
        var session = HLSSession(url: Self.url)
        let same = Self.playlist(first: 0, count: 1)
        XCTAssertEqual(session.playlistArrived(same, now: 0), Self.segment(0))
        XCTAssertEqual(session.segmentDone(now: 0), .wait(until: 2))
        var now = 2.0
        var step = session.tick(now: now)
        var reloads = 0
        while case .fetchPlaylist = step, reloads < 100 {
            reloads += 1
            step = session.playlistArrived(same, now: now)
            if case .wait(let until) = step { now = until; step = session.tick(now: now) }
        }
        // Target 2: 4 target durations is 8 s, under the 10 s floor; reloads every 1 s.
        XCTAssertEqual(step, .end(failure: "the live playlist stopped updating: no new segment for 10 s"))
        XCTAssertEqual(now, 10)
        XCTAssertEqual(reloads, 8)
    }

    func testFailedSegmentsAreRetriedThenSkippedWithinABound() {
        var session = HLSSession(url: Self.url)
        XCTAssertEqual(session.playlistArrived(Self.playlist(first: 0, count: 20, ended: true), now: 0), Self.segment(0))
        XCTAssertEqual(session.segmentFailed("HTTP 404 not found", now: 0), Self.segment(0))
        XCTAssertEqual(session.segmentFailed("HTTP 404 not found", now: 0), Self.segment(1))
        XCTAssertEqual(session.takeNotes(), ["segment 0 skipped: HTTP 404 not found"])
        XCTAssertEqual(session.segmentDone(now: 0), Self.segment(2))
        var step = Self.segment(2)
        for _ in 0..<10 where step != .end(failure: "5 segments in a row failed (last: timed out)") {
            step = session.segmentFailed("timed out", now: 0)
        }
        XCTAssertEqual(step, .end(failure: "5 segments in a row failed (last: timed out)"))
        XCTAssertEqual(session.takeNotes().count, 5)
    }

    func testPlaylistFailuresAndRefusals() {
        var first = HLSSession(url: Self.url)
        XCTAssertEqual(first.playlistFailed("HTTP 404 not found", now: 0), .end(failure: "the playlist failed: HTTP 404 not found"))
        var notHLS = HLSSession(url: Self.url)
        XCTAssertEqual(notHLS.playlistArrived(Array("<html>".utf8), now: 0),
                       .end(failure: "the playlist failed: not an HLS playlist (no #EXTM3U)"))
        // Once playing, a reload that fails is tried again, 5 times in a row at most.
        var live = HLSSession(url: Self.url)
        _ = live.playlistArrived(Self.playlist(first: 0, count: 1), now: 0)
        XCTAssertEqual(live.playlistFailed("timed out", now: 3), .wait(until: 4))
        for _ in 0..<3 { _ = live.playlistFailed("timed out", now: 3) }
        XCTAssertEqual(live.playlistFailed("timed out", now: 3), .end(failure: "the playlist failed: timed out"))
        let refusals: [(String, String)] = [
            ("#EXT-X-KEY:METHOD=AES-128\n", "encrypted HLS segments (AES-128 without a usable key URI or IV) are not supported"),
            ("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n", "encrypted HLS segments (SAMPLE-AES) are not supported"),
            ("#EXT-X-MAP:URI=\"init.mp4\",BYTERANGE=\"700@0\"\n", "HLS byte-range segments (EXT-X-BYTERANGE) are not supported"),
            ("#EXT-X-BYTERANGE:10@0\n", "HLS byte-range segments (EXT-X-BYTERANGE) are not supported"),
        ]
        for (tag, reason) in refusals {
            var session = HLSSession(url: Self.url)
            XCTAssertEqual(session.playlistArrived(Self.playlist(first: 0, count: 2, extra: tag), now: 0), .end(failure: reason))
        }
    }

    /// Fragmented MP4 segments are fetched as any, each naming its init section (the stream reads it).
    func testFragmentedMP4SegmentsCarryTheirInitSection() {
        var session = HLSSession(url: Self.url)
        let step = session.playlistArrived(Self.playlist(first: 0, count: 2, ended: true, extra: "#EXT-X-MAP:URI=\"init.mp4\"\n"), now: 0)
        XCTAssertEqual(step, .fetchSegment(HLSSegment(sequence: 0, duration: 2, uri: "http://h/s0.ts", map: "http://h/init.mp4")))
    }

    /// AES-128 segments are fetched as any, each with its key (the stream decrypts them).
    func testAES128SegmentsCarryTheirKey() {
        var session = HLSSession(url: Self.url)
        let step = session.playlistArrived(Self.playlist(first: 0, count: 2, ended: true, extra: "#EXT-X-KEY:METHOD=AES-128,URI=\"k.bin\"\n"), now: 0)
        XCTAssertEqual(step, .fetchSegment(HLSSegment(sequence: 0, duration: 2, uri: "http://h/s0.ts", key: .aes128(uri: "http://h/k.bin", iv: nil))))
    }

    func testAMasterPlaylistLeadsToItsVariant() {
        var session = HLSSession(url: "http://h/master.m3u8")
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS=\"mp4a.40.2\"\nlo/index.m3u8\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=96000,CODECS=\"mp4a.40.2\"\nhi/index.m3u8\n"
        XCTAssertEqual(session.playlistArrived(Array(master.utf8), now: 0), .fetchPlaylist("http://h/hi/index.m3u8"))
        XCTAssertEqual(session.takeNotes(), ["HLS: variant 96 kbit/s audio-only of 2 (at or below 320 kbit/s)"])
        // A media playlist's URIs resolve against its own URL.
        let step = session.playlistArrived(Self.playlist(first: 0, count: 1, ended: true), now: 0)
        XCTAssertEqual(step, .fetchSegment(HLSSegment(sequence: 0, duration: 2, uri: "http://h/hi/s0.ts")))
        XCTAssertEqual(session.playlistArrived(Array(master.utf8), now: 1), .end(failure: "a media playlist turned into a master playlist"))
    }
}
