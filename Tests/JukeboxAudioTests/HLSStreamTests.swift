// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// HLS stations served by the local `RadioServer` from segments Debian's `ffmpeg` makes: an
/// on-demand playlist plays its segments' audio byte for byte (FFmpeg's own copy of it) and, through
/// the engine, sample for sample as libfaad2 decodes that copy; a master playlist leads to the
/// variant of its rule; a live window rewritten by the test is followed as it slides. Skipped
/// without python3 or ffmpeg.
final class HLSStreamTests: ServedFolderCase {
    override var servedFolderName: String { "hls" }
    override var mp3Frames: Int { 44100 }

    private var settings: StreamSettings {
        var s = StreamSettings(bufferSeconds: 0.5)
        s.connectTimeoutSeconds = 5
        s.stallSeconds = 3
        return s
    }

    /// `ffmpeg -f hls` of a tone into `name`.m3u8 and its segments `name`N.ts; `fmp4`: fragmented
    /// MP4 segments `name`N.m4s and their init section `name`_init.mp4 instead.
    private func makeHLS(_ name: String, seconds: Int, bitrate: String = "64k", fmp4: Bool = false, noise: Bool = true) throws {
        let type: [String] = fmp4 ? ["-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", name + "_init.mp4"] : []
        let segments = folder + "/\(name)%d." + (fmp4 ? "m4s" : "ts")
        // Perceptual noise substitution off (`noise: false`): libfaad2 makes that noise with a
        // generator that runs on from the first frame decoded, so a decode begun at a later segment
        // would differ from the whole's in those bands by design, not by a wrong landing.
        let pns: [String] = noise ? [] : ["-aac_pns", "0"]
        try FFmpeg.run(["-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:a", "aac", "-b:a", bitrate] + pns + [
                        "-f", "hls", "-hls_time", "1", "-hls_list_size", "0", "-hls_playlist_type", "vod"]
                       + type + ["-hls_segment_filename", segments, folder + "/\(name).m3u8"])
    }

    private func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) }

    /// FFmpeg's copy of the playlist's audio, as ADTS.
    private func copiedADTS(_ playlist: String) throws -> [UInt8] {
        let out = folder + "/copy.adts"
        try FFmpeg.run(["-i", folder + "/" + playlist, "-c", "copy", "-f", "adts", out])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// Everything the stream delivers until it ends or fails (`seconds` at most); `during` runs between reads.
    private func drain(_ stream: HTTPStream, seconds: Double = 20, during: () -> Void = {}) -> (audio: [UInt8], end: HTTPStream.ReadResult?) {
        var audio: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let result = buffer.withUnsafeMutableBytes { stream.read(into: $0.baseAddress!, count: 8192, timeout: 0.1) }
            switch result {
            case .bytes(let n): audio += buffer[0..<n]
            case .pending: break
            case .ended, .failed: return (audio, result)
            }
            during()
        }
        return (audio, nil)
    }

    /// Plays `path` to its end (checked): its audio and the stream's last facts.
    private func fetchedWhole(_ path: String) -> (audio: [UInt8], facts: StreamFacts) {
        let stream = HTTPStream(url: server.url(path), settings: settings)
        defer { stream.close() }
        let (audio, end) = drain(stream)
        XCTAssertEqual(end, .ended, "\(path): \(stream.facts)")
        return (audio, stream.facts)
    }

    func testAnOnDemandPlaylistPlaysItsSegmentsAudio() throws {
        try makeHLS("vod", seconds: 4)
        let expected = try copiedADTS("vod.m3u8")
        let (audio, facts) = fetchedWhole("/dir/vod.m3u8")
        XCTAssertTrue(audio == expected, "\(audio.count) bytes, FFmpeg's copy \(expected.count); \(facts)")
        XCTAssertEqual(facts.contentType, "audio/aac")
    }

    func testAnOnDemandStationPlaysAsTheLibrarysDecodeOfItsSegments() throws {
        try playsAsTheLibrarysDecode(fmp4: false)
    }

    func testFragmentedMP4SegmentsPlayAsTheLibrarysDecodeOfThem() throws {
        try playsAsTheLibrarysDecode(fmp4: true)
    }

    func testFragmentedMP4SegmentsPlayTheirAudio() throws {
        try makeHLS("vod", seconds: 4, fmp4: true)
        let expected = try copiedADTS("vod.m3u8")
        let (audio, facts) = fetchedWhole("/dir/vod.m3u8")
        XCTAssertTrue(audio == expected, "\(audio.count) bytes, FFmpeg's copy \(expected.count); \(facts)")
        XCTAssertEqual(facts.contentType, "audio/aac")
    }

    /// A segment whose boxes lie is skipped with its reason, the others play; an init section that
    /// is no MP4 refuses the whole playlist with the reason.
    func testHostileFragmentedMP4IsRefusedWithAReason() throws {
        try makeHLS("vod", seconds: 4, fmp4: true)
        var lying = try bytes("vod1.m4s")
        let trun = try XCTUnwrap(FMP4SegmentTests.find("trun", in: lying))
        lying.replaceSubrange(trun + 4..<trun + 8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        try Data(lying).write(to: URL(fileURLWithPath: folder + "/vod1.m4s"))
        let setup = try FMP4Init.read(try bytes("vod_init.mp4"))
        var expected: [UInt8] = []
        for index in [0, 2, 3, 4] where FileManager.default.fileExists(atPath: folder + "/vod\(index).m4s") {
            expected += try FMP4Fragment.adts(try bytes("vod\(index).m4s"), init: setup)
        }
        let (audio, facts) = fetchedWhole("/dir/vod.m3u8")
        XCTAssertTrue(audio == expected, "\(audio.count) bytes, the other segments' \(expected.count)")
        XCTAssertEqual(facts.notes, ["segment 1 skipped: damaged fragment: box 'trun' says it holds 4294967295 samples"])

        try Data("<html>no</html>".utf8).write(to: URL(fileURLWithPath: folder + "/vod_init.mp4"))
        let stream = HTTPStream(url: server.url("/dir/vod.m3u8"), settings: settings)
        defer { stream.close() }
        let (none, end) = drain(stream)
        XCTAssertEqual(none, [])
        XCTAssertEqual(end, .failed("5 segments in a row failed (last: its init section: not a fragmented MP4 init section)"))
    }

    /// An on-demand playlist opened at a place (a resume after a pause, a restart: the engine
    /// opens the stream there), or sought to it while it plays (the core's seek), starts at the
    /// segment holding it and plays from the exact sample on, as the library's decode of the whole
    /// has it from there.
    func testAnOnDemandStationStartsAtTheSampleAsked() throws {
        try startsAtTheSample(fmp4: false)
    }

    func testAnOnDemandFragmentedMP4StationStartsAtTheSampleAsked() throws {
        try startsAtTheSample(fmp4: true)
    }

    private func startsAtTheSample(fmp4: Bool) throws {
        try makeHLS("vod", seconds: 6, fmp4: fmp4, noise: false)
        let reference = try AACStreamTests.referenceDecode(try copiedADTS("vod.m3u8"))
        let bytesPerFrame = 4 * reference.channels
        let all = reference.samples.withUnsafeBytes { Array($0) }
        // 3.3 s: inside a segment (FFmpeg's are about 1 s), not at its start.
        let place = 3.3
        let first = Int((place * Double(reference.rate)).rounded())
        let tail = all.count / bytesPerFrame - first

        // Opened there: from the frame asked for to the end, the same frames after the fade-in of
        // a play that does not begin its track (as for a file).
        let opened = try record { engine, log in engine.play(id: 5, path: server.url("/dir/vod.m3u8"), from: place, paused: false) }
        XCTAssertEqual(opened.count / bytesPerFrame, tail, "frames from \(place) s to the end")
        let ramp = GainRamp.frames(rate: reference.rate)
        assertSameAudio(Array(opened.dropFirst(ramp * bytesPerFrame)), all[((first + ramp) * bytesPerFrame)...], bytesPerFrame: bytesPerFrame,
                        "HLS on demand from \(place) s after the fade-in, fmp4 \(fmp4)")

        // Sought there while playing from the start (at real speed, so the seek comes well before
        // the end however busy the machine): what was heard from the start, then exactly what the
        // play opened there gave, fade-in included (a landing k frames off would shift it).
        let sought = try record(speed: 1) { engine, log in
            engine.play(id: 5, path: server.url("/dir/vod.m3u8"), from: 0, paused: false)
            XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 5) }, "\(log.all)")
            engine.seek(to: place)
        }
        let before = sought.count - opened.count
        XCTAssertGreaterThan(before, 0, "nothing played before the seek")
        XCTAssertTrue(Array(sought.suffix(opened.count)) == opened, "fmp4 \(fmp4): after the seek, not the play opened at \(place) s")
        let heard = max(0, min(before / bytesPerFrame - 2 * ramp, 1000)) * bytesPerFrame
        XCTAssertTrue(sought.prefix(heard) == all.prefix(heard), "fmp4 \(fmp4): before the seek, not the start")
    }

    /// What a fresh test device records of the engine's play (`start`) to its end.
    private func record(speed: Double = 10, _ start: (AudioEngine, ReportLog) -> Void) throws -> [UInt8] {
        let device = try Scratch()
        let (pcm, log, engine) = try device.deviceEngine(speed: speed)
        defer { engine.shutdown() }
        start(engine, log)
        XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 5) }, "\(log.all)")
        XCTAssertTrue(log.wait(timeout: 20) { if case .finished(5, _) = $0 { true } else { false } }, "\(log.all)")
        engine.shutdown()
        return pcm.recording()
    }

    private func playsAsTheLibrarysDecode(fmp4: Bool) throws {
        try makeHLS("vod", seconds: 3, fmp4: fmp4)
        let reference = try AACStreamTests.referenceDecode(try copiedADTS("vod.m3u8"))
        let expected = reference.samples.withUnsafeBytes { Array($0) }
        let (pcm, log, engine) = try scratch.deviceEngine()
        defer { engine.shutdown() }
        let start = Date()
        engine.play(id: 4, path: server.url("/dir/vod.m3u8"), from: 0, paused: false)
        XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 4) }, "\(log.all)")
        let firstSound = Date().timeIntervalSince(start)
        print("HLS first sound: " + String(format: "%.3f s", firstSound)
              + " from play to the first frame out (on demand, 1 s \(fmp4 ? "fMP4" : "TS") segments, unpaced 127.0.0.1 server)")
        XCTAssertTrue(log.wait(timeout: 15) { if case .finished(4, _) = $0 { true } else { false } }, "\(log.all)")
        engine.shutdown()
        XCTAssertEqual(pcm.events(named: "params").first?.fields["rate"], "44100")
        assertSameAudio(pcm.recording(), expected[...], bytesPerFrame: 4 * reference.channels, "HLS on demand, fmp4 \(fmp4)")
    }

    func testPackedADTSSegmentsPlayWithoutTheirID3Tags() throws {
        try FFmpeg.run(["-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:a", "aac", "-b:a", "64k",
                        "-f", "segment", "-segment_time", "1", "-segment_format", "adts",
                        "-segment_list", folder + "/packed.m3u8", "-segment_list_type", "m3u8", folder + "/packed%d.aac"])
        var expected: [UInt8] = []
        var index = 0
        // Each segment gets the ID3 tag packed audio starts with (RFC 8216 3.4: a PRIV timestamp).
        // The second segment's also names the title.
        let priv = ID3Frames.frame("PRIV", Array("com.apple.streaming.transportStreamTimestamp".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 0])
        while FileManager.default.fileExists(atPath: folder + "/packed\(index).aac") {
            let url = URL(fileURLWithPath: folder + "/packed\(index).aac")
            let bytes = [UInt8](try Data(contentsOf: url))
            expected += bytes
            let titled = index == 1 ? ID3Frames.text("TPE1", "Test FM") + ID3Frames.text("TIT2", "Song\u{7} 2") : []
            try Data(ID3Frames.tag(priv + titled) + bytes).write(to: url)
            index += 1
        }
        XCTAssertGreaterThanOrEqual(index, 3)
        let (audio, facts) = fetchedWhole("/dir/packed.m3u8")
        XCTAssertTrue(audio == expected, "\(audio.count) bytes, the segments' ADTS \(expected.count)")
        XCTAssertEqual(facts.title, "Test FM - Song 2")
    }

    func testAMasterPlaylistPlaysTheVariantOfTheRule() throws {
        try makeHLS("lo", seconds: 2, bitrate: "32k")
        try makeHLS("hi", seconds: 2, bitrate: "96k")
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=40000,CODECS=\"mp4a.40.2\"\nlo.m3u8\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=110000,CODECS=\"mp4a.40.2\"\nhi.m3u8\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=3000000,CODECS=\"avc1.4d401f,mp4a.40.2\"\nvideo.m3u8\n"
        try master.write(toFile: folder + "/master.m3u8", atomically: true, encoding: .utf8)
        let expected = try copiedADTS("hi.m3u8")
        let (audio, facts) = fetchedWhole("/dir/master.m3u8")
        XCTAssertTrue(audio == expected, "\(audio.count) bytes, the 110 kbit/s variant's \(expected.count)")
        XCTAssertEqual(facts.notes, ["HLS: variant 110 kbit/s audio-only of 3 (at or below 320 kbit/s)"])
    }

    func testALiveWindowIsFollowedAsItSlides() throws {
        try followsALiveWindow(fmp4: false)
    }

    func testALiveWindowOfFragmentedMP4IsFollowedAsItSlides() throws {
        try followsALiveWindow(fmp4: true)
    }

    private func followsALiveWindow(fmp4: Bool) throws {
        try makeHLS("seg", seconds: 12, fmp4: fmp4)
        guard case .success(.media(let all)) = HLSPlaylist.parse(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/seg.m3u8"))), url: server.url("/dir/seg.m3u8")) else {
            return XCTFail("ffmpeg's playlist does not read")
        }
        XCTAssertGreaterThanOrEqual(all.segments.count, 12)
        // A window of 6 segments (FFmpeg's are just under 1 s: the edge is 4 from the end), moved on
        // by 2 every 1.5 s; the last with ENDLIST.
        func write(from first: Int) {
            let last = min(all.segments.count, first + 6)
            var text = "#EXTM3U\n#EXT-X-TARGETDURATION:\(all.targetDuration ?? 1)\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
            if fmp4 { text += "#EXT-X-MAP:URI=\"seg_init.mp4\"\n" }
            for segment in all.segments[first..<last] { text += "#EXTINF:\(segment.duration),\nseg\(segment.sequence).\(fmp4 ? "m4s" : "ts")\n" }
            if last == all.segments.count { text += "#EXT-X-ENDLIST\n" }
            try? text.write(toFile: folder + "/live.m3u8", atomically: true, encoding: .utf8)
        }
        write(from: 0)
        var window = HLSMediaPlaylist()
        window.targetDuration = all.targetDuration
        window.segments = Array(all.segments.prefix(6))
        let start = try XCTUnwrap(HLSSession.startSequence(window))
        var demuxer = TSDemuxer()
        var expected: [UInt8] = []
        let setup = fmp4 ? try FMP4Init.read(try bytes("seg_init.mp4")) : nil
        for segment in all.segments[start...] {
            if let setup {
                expected += try FMP4Fragment.adts(try bytes("seg\(segment.sequence).m4s"), init: setup)
            } else {
                expected += demuxer.feed(try bytes("seg\(segment.sequence).ts"))
            }
        }
        let stream = HTTPStream(url: server.url("/dir/live.m3u8"), settings: settings)
        defer { stream.close() }
        var first = 0
        var moved = Date()
        let (audio, end) = drain(stream, seconds: 30) {
            if Date().timeIntervalSince(moved) > 1.5, first + 6 < all.segments.count {
                first += 2
                moved = Date()
                write(from: first)
            }
        }
        XCTAssertEqual(end, .ended, "\(stream.facts)")
        XCTAssertGreaterThan(start, 0, "the live edge is not the first segment")
        XCTAssertTrue(audio == expected, "\(audio.count) bytes from segment \(start) on, expected \(expected.count); \(stream.facts.notes)")
    }
}

/// ID3v2.4 tags made in the tests (HLS packed audio and timed metadata carry them).
enum ID3Frames {
    static func syncsafe(_ n: Int) -> [UInt8] { [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)] }
    static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = Array(id.utf8)
        out += syncsafe(body.count)
        out += [0, 0]
        return out + body
    }
    /// A UTF-8 text frame.
    static func text(_ id: String, _ text: String) -> [UInt8] { frame(id, [3] + Array(text.utf8)) }
    static func tag(_ frames: [UInt8]) -> [UInt8] {
        var out: [UInt8] = Array("ID3".utf8)
        out += [4, 0, 0]
        out += syncsafe(frames.count)
        return out + frames
    }
}
