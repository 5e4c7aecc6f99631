// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxSystem
import XCTest

/// HLS playlists (`HLSPlaylist`, `URIReference`) read by tables, the variant rule, and hostile
/// playlists (10^6 lines, endless lines, random mutations: bounded, no crash).
final class HLSPlaylistTests: XCTestCase {
    static let base = "http://radio.example/live/a/index.m3u8?t=1"

    func testURIResolutionFollowsRFC3986() {
        // RFC 3986 section 5.4's examples, and the ones playlists use.
        let base = "http://a/b/c/d;p?q"
        let table: [(String, String)] = [
            ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"), ("g#s", "http://a/b/c/g"), (";x", "http://a/b/c/;x"),
            ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
            ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
            ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
            ("HTTPS://other:8443/x.ts", "HTTPS://other:8443/x.ts"),
        ]
        for (reference, expected) in table {
            XCTAssertEqual(URIReference.resolve(reference, against: base), expected, reference)
        }
        XCTAssertEqual(URIReference.resolve("seg1.ts", against: Self.base), "http://radio.example/live/a/seg1.ts")
        XCTAssertEqual(URIReference.resolve("x.aac", against: "http://h:81"), "http://h:81/x.aac")
    }

    func testMediaPlaylistIsReadWithItsTags() throws {
        let text = """
            \u{FEFF}#EXTM3U\r
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:41
            #EXTINF:5.97,Artist - Song\r
            s41.ts
            #EXTINF:6.0,
              /abs/s42.ts  \t
            #EXT-X-DISCONTINUITY
            #EXTINF:4,
            http://cdn.example/s43.aac
            #EXT-X-UNKNOWN:whatever
            #EXT-X-ENDLIST
            """
        let playlist = try XCTUnwrap(media(text))
        XCTAssertEqual(playlist.targetDuration, 6)
        XCTAssertEqual(playlist.firstSequence, 41)
        XCTAssertTrue(playlist.ended)
        XCTAssertEqual(playlist.segments, [
            HLSSegment(sequence: 41, duration: 5.97, uri: "http://radio.example/live/a/s41.ts", title: "Artist - Song"),
            HLSSegment(sequence: 42, duration: 6, uri: "http://radio.example/abs/s42.ts"),
            HLSSegment(sequence: 43, duration: 4, uri: "http://cdn.example/s43.aac", discontinuity: true),
        ])
    }

    func testKeysMapsAndByteRangesAreRecorded() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="https://k/1",IV=0x1
            #EXTINF:2,
            a.m4s
            #EXT-X-KEY:METHOD=NONE
            #EXT-X-BYTERANGE:100@0
            #EXTINF:2,
            b.m4s
            """
        let playlist = try XCTUnwrap(media(text))
        let one: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]
        XCTAssertEqual(playlist.segments.map(\.key), [.aes128(uri: "https://k/1", iv: one), .none])
        // The IV: `0x` and at most 32 hex digits; else the tag's key is refused. Without one, the sequence number.
        XCTAssertEqual(HLSKeyMethod.initialisationVector("0X0102030405060708090a0B0c0d0e0f10"), Array(1...16))
        for bad in ["1", "0x", "0xZZ", "0x" + String(repeating: "1", count: 33)] { XCTAssertNil(HLSKeyMethod.initialisationVector(bad), bad) }
        XCTAssertEqual(HLSKeyMethod.initialisationVector(sequence: 258), [UInt8](repeating: 0, count: 14) + [1, 2])
        let bad = try XCTUnwrap(media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0xQ\n#EXTINF:2,\na.ts\n"))
        XCTAssertEqual(bad.segments.map(\.key), [.encrypted("AES-128 without a usable key URI or IV")])
        XCTAssertEqual(playlist.segments.map(\.map), ["http://radio.example/live/a/init.mp4", "http://radio.example/live/a/init.mp4"])
        XCTAssertTrue(playlist.byteRanges)
    }

    func testMasterPlaylistAndTheVariantRule() throws {
        let text = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,CODECS="avc1.4d401f,mp4a.40.2"
            video/high.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=48000,CODECS="mp4a.40.5"
            audio/48.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=128000,CODECS="mp4a.40.2"
            audio/128.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=400000,CODECS="mp4a.40.2"
            audio/400.m3u8
            """
        guard case .success(.master(let master)) = HLSPlaylist.parse(Array(text.utf8), url: Self.base) else {
            return XCTFail("not a master playlist")
        }
        XCTAssertEqual(master.variants.count, 4)
        XCTAssertEqual(master.variants[0].codecs, ["avc1.4d401f", "mp4a.40.2"])
        // (cap, chosen): the highest audio-only at or below the cap, else the lowest.
        let table: [(Int, String)] = [
            (320_000, "audio/128.m3u8"), (128_000, "audio/128.m3u8"), (127_999, "audio/48.m3u8"),
            (10_000, "audio/48.m3u8"), (10_000_000, "audio/400.m3u8"),
        ]
        for (cap, expected) in table {
            XCTAssertEqual(HLSSession.chooseVariant(master, maxBandwidth: cap)?.uri,
                           "http://radio.example/live/a/" + expected, "cap \(cap)")
        }
        XCTAssertEqual(HLSSession.chooseVariant(master, maxBandwidth: 320_000)?.why,
                       "HLS: variant 128 kbit/s audio-only of 4 (at or below 320 kbit/s)")
    }

    func testVideoOnlyMastersAndAudioRenditions() throws {
        let videoOnly = HLSMaster(variants: [
            HLSVariant(uri: "v1", bandwidth: 900_000, codecs: ["avc1.64001f", "mp4a.40.2"]),
            HLSVariant(uri: "v2", bandwidth: 500_000, codecs: []),
            HLSVariant(uri: "v3", bandwidth: 100_000, codecs: ["avc1.64001f", "ac-3"]),
        ])
        XCTAssertEqual(HLSSession.chooseVariant(videoOnly, maxBandwidth: 320_000)?.uri, "v2")
        let noAudio = HLSMaster(variants: [HLSVariant(uri: "v", bandwidth: 1, codecs: ["avc1.64001f", "ec-3"])])
        XCTAssertNil(HLSSession.chooseVariant(noAudio, maxBandwidth: 320_000))
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",DEFAULT=NO,URI="en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Main",DEFAULT=YES,URI="main.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=300000,CODECS="mp4a.40.2,avc1.4d401f",AUDIO="aud"
            v.m3u8
            """
        guard case .success(.master(let master)) = HLSPlaylist.parse(Array(text.utf8), url: "http://h/x/m.m3u8") else {
            return XCTFail("not a master playlist")
        }
        XCTAssertEqual(HLSSession.chooseVariant(master, maxBandwidth: 320_000)?.uri, "http://h/x/main.m3u8")
        // Only http(s) playlists are followed.
        let other = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nfile:///etc/passwd\n#EXT-X-STREAM-INF:BANDWIDTH=2\nht=tp://x/y\n"
        XCTAssertEqual(HLSPlaylist.parse(Array(other.utf8), url: "http://h/m.m3u8"), .failure(.empty("the master playlist names no variant")))
    }

    func testWhatIsNotAPlaylist() {
        XCTAssertEqual(HLSPlaylist.parse(Array("<html>".utf8), url: Self.base), .failure(.notHLS))
        XCTAssertEqual(HLSPlaylist.parse([UInt8](), url: Self.base), .failure(.notHLS))
        XCTAssertEqual(HLSPlaylist.parse(Array("#EXTM3U\n#EXTINF:1,\na.ts\n".utf8), url: Self.base),
                       .failure(.empty("the playlist has no EXT-X-TARGETDURATION")))
        XCTAssertEqual(HLSPlaylist.parse(Array("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n".utf8), url: Self.base),
                       .failure(.empty("the master playlist names no variant")))
    }

    func testAMillionLinesAndEndlessLinesAreBounded() throws {
        // 10^6 lines (8 MB): read as far as `maxBytes` (2 MiB), the last 20,000 segments kept.
        var bytes = Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:7\n".utf8)
        let entry = Array("#EXTINF:1,\nx.ts\n".utf8)
        bytes.reserveCapacity(bytes.count + 500_000 * entry.count)
        for _ in 0..<500_000 { bytes.append(contentsOf: entry) }
        let started = monotonicNow()
        let playlist = try XCTUnwrap(media(bytes))
        print("HLSPlaylistTests: 10^6 lines parsed in \(Int((monotonicNow() - started) * 1000)) ms")
        let limits = HLSLimits()
        XCTAssertTrue(playlist.truncated)
        XCTAssertLessThanOrEqual(playlist.segments.count, limits.maxSegments)
        XCTAssertGreaterThan(playlist.dropped, 0)
        // Numbered from its sequence on, whatever was dropped: the tail is where a live edge is.
        XCTAssertEqual(playlist.segments.last?.sequence, 7 + playlist.dropped + playlist.segments.count - 1)
        // Built in parts: Swift 6.0.3 type-checks long `+` chains slowly.
        var long: String = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,"
        long += String(repeating: "t", count: 100_000)
        long += "\n#EXTINF:1,\n"
        long += String(repeating: "a", count: 5000)
        long += ".ts\n#EXTINF:1,\nok.ts\n"
        let bounded = try XCTUnwrap(media(long))
        XCTAssertEqual(bounded.skippedLines, 2)
        XCTAssertEqual(bounded.segments.map(\.uri), ["http://radio.example/live/a/ok.ts"])
    }

    /// Random mutations of seed playlists: parsing never crashes and keeps its bounds.
    func testMutatedPlaylistsKeepTheirBounds() {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_HLS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("HLSPlaylistTests seed: \(seed) (JUKEBOX_HLS_SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let seeds = Self.seedPlaylists.map { Array($0.utf8) }
        var limits = HLSLimits()
        limits.maxSegments = 8
        limits.maxLineBytes = 64
        for _ in 0..<3000 {
            var bytes = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let at = Int.random(in: 0...bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where at < bytes.count: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.insert(contentsOf: Array("\n#EXT-X-DISCONTINUITY\n#EXTINF:-1e308,\n\"=,".utf8).shuffled(using: &random), at: at)
                case 2 where at < bytes.count: bytes.removeSubrange(at..<min(bytes.count, at + 9))
                default: bytes.insert(contentsOf: bytes.prefix(40), at: at)
                }
            }
            switch HLSPlaylist.parse(bytes, url: Self.base, limits: limits) {
            case .success(.media(let playlist)):
                XCTAssertLessThanOrEqual(playlist.segments.count, limits.maxSegments)
                XCTAssertTrue(playlist.segments.allSatisfy { $0.duration.isFinite && $0.duration >= 0 })
                var session = HLSSession(url: Self.base)
                _ = session.playlistArrived(bytes, now: 0)
                _ = session.tick(now: 100)
            case .success(.master(let master)):
                XCTAssertLessThanOrEqual(master.variants.count, limits.maxVariants)
                _ = HLSSession.chooseVariant(master, maxBandwidth: 320_000)
            case .failure: break
            }
        }
    }

    /// The fuzz corpora (`Tests/FuzzCorpus/hls`, `ts`, `fmp4`: seeds and any crasher the fuzzer
    /// found, see board/fuzz.sh) replayed: every playlist parses or is refused, every transport
    /// stream demuxes, every fragmented MP4 segment reads (with the corpus's init section) or is
    /// refused with a reason.
    func testTheFuzzCorporaReplay() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzCorpus").path
        let setup = try FMP4Init.read([UInt8](FileManager.default.contents(atPath: corpus + "/fmp4/init.mp4") ?? Data()))
        for harness in ["hls", "ts", "fmp4"] {
            let folder = corpus + "/" + harness
            let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }.sorted()
            XCTAssertFalse(names.isEmpty, folder)
            for name in names {
                let bytes = [UInt8](FileManager.default.contents(atPath: folder + "/" + name) ?? Data())
                if harness == "hls" {
                    var session = HLSSession(url: Self.base)
                    _ = session.playlistArrived(bytes, now: 0)
                } else if harness == "fmp4" {
                    do throws(MP4Error) {
                        let audio = try FMP4Fragment.adts(bytes, init: setup)
                        XCTAssertLessThanOrEqual(audio.count, 8 * bytes.count, name)
                    } catch {
                        XCTAssertFalse(error.reason.isEmpty, name)
                    }
                } else {
                    var demuxer = TSDemuxer()
                    XCTAssertLessThanOrEqual(demuxer.feed(bytes).count, bytes.count, name)
                }
            }
        }
    }

    static let seedPlaylists = [
        "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:5\n#EXTINF:2,\na.ts\n#EXTINF:2,T\nb.ts\n#EXT-X-ENDLIST\n",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=64000,CODECS=\"mp4a.40.2\"\nlo.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=128000\nhi.m3u8\n",
        "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\"\n#EXTINF:4,\n../x.aac\n",
    ]

    private func media(_ text: String) -> HLSMediaPlaylist? { media(Array(text.utf8)) }

    private func media(_ bytes: [UInt8]) -> HLSMediaPlaylist? {
        guard case .success(.media(let playlist)) = HLSPlaylist.parse(bytes, url: Self.base) else { return nil }
        return playlist
    }
}
