// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// A podcast episode played from its URL starts at its place: the MP3 codec names the byte
/// (libmpg123's fuzzy feed seek), the stream asks the local `RadioServer` for it with a range
/// request, and the decoder says where it landed. The episodes are 60 s of silence with a tone
/// from 40 s on, so where the tone begins in what is decoded tells where the audio really
/// started: the landing said plus the frames before the tone must be 40 s. Skipped without
/// python3 or ffmpeg.
final class EpisodeStreamTests: ServedFolderCase {
    override var servedFolderName: String { "episodes" }

    /// The second the tone begins at in every episode made here.
    static let toneAt = 40.0
    /// How far the landing said may be from where the audio really starts: the Xing/Info table
    /// libmpg123 seeks by names bytes in 1/256 of the file (0.23 s of these 60 s); 0.07 s
    /// measured at 38 s for both bitrates.
    static let landingError = 0.2

    var settings: StreamSettings {
        var s = StreamSettings(bufferSeconds: 1, connectTimeoutSeconds: 5, stallSeconds: 5, backoff: 0.1...0.5)
        s.startSeconds = 20
        return s
    }

    /// Writes episode `name` into the served folder with the encoder's `options`.
    func makeEpisode(_ name: String, _ options: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: FFmpegLoudness.path) else { throw missingPeer("ffmpeg is not installed") }
        let tone = "aevalsrc=if(gte(t\\,\(Int(Self.toneAt)))\\,0.5*sin(2*PI*440*t)\\,0):s=44100:d=60"
        try FFmpegLoudness.run(["-f", "lavfi", "-i", tone, "-ac", "2"] + options + [folder + "/" + name])
    }

    /// Opens `path` at `seconds` and decodes until the tone: where the decoder said it landed, the
    /// second the tone is heard at counted from there, the stream's facts, and the frames decoded.
    private func open(_ path: String, at seconds: Double) throws -> (landed: Double, tone: Double?, facts: StreamFacts, frames: Int) {
        let stream = HTTPStream(url: server.url(path), settings: settings)
        let decoder = try StreamDecoder(stream: stream, startSeconds: seconds, isCancelled: { false })
        defer {
            decoder.close()
            XCTAssertTrue(stream.waitUntilFinished(timeout: 10))
        }
        let facts = stream.facts
        let channels = decoder.format.channels
        let rate = Double(decoder.format.sampleRate)
        let chunk = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * channels)
        defer { buffer.deallocate() }
        var frames = 0
        let deadline = monotonicNow() + 60
        while monotonicNow() < deadline {
            let count = decoder.read(into: buffer, frames: chunk)
            if count == pcmSourcePending { continue }
            if count <= 0 { break }
            for frame in 0..<count where abs(buffer[frame * channels]) > 0.1 {
                return (decoder.startSeconds, decoder.startSeconds + Double(frames + frame) / rate, facts, frames + frame)
            }
            frames += count
        }
        return (decoder.startSeconds, nil, facts, frames)
    }

    /// A constant bitrate (128 kbit/s, with the Info header ffmpeg writes): the byte asked is
    /// about 16,000 a second in, libmpg123 lands on the place it names (decoding forward from
    /// the table's point), and the tone comes where the landing says (within `landingError`).
    func testAConstantBitrateEpisodeStartsAtItsPlaceByARange() throws {
        try makeEpisode("cbr.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"])
        let result = try open("/dir/cbr.mp3", at: 38)
        print("CBR 128 kbit/s from 38 s: landed at \(result.landed) s, from byte \(result.facts.startByte ?? -1) of \(result.facts.length ?? -1); tone at \(result.tone ?? -1) s")
        XCTAssertEqual(result.facts.length, try FileManager.default.attributesOfItem(atPath: folder + "/cbr.mp3")[.size] as? Int)
        XCTAssertGreaterThan(result.facts.startByte ?? 0, 500_000, "a range from near 38 s, not the whole file")
        XCTAssertEqual(result.facts.notes, [], "the server answered the range")
        XCTAssertEqual(result.landed, 38, accuracy: 0.03)
        let tone = try XCTUnwrap(result.tone, "the tone was never heard")
        XCTAssertEqual(tone, Self.toneAt, accuracy: Self.landingError, "the landing said is where the audio starts")
        XCTAssertLessThan(result.frames, 3 * 44100, "about 2 s decoded before the tone, not 40")
    }

    /// A variable bitrate with a Xing table of contents: the codec lands at the place it names
    /// (the table's 1 % steps, then decoded forward to the sample), within `landingError`.
    func testAVariableBitrateEpisodeLandsWhereItSays() throws {
        try makeEpisode("vbr.mp3", ["-c:a", "libmp3lame", "-q:a", "4"])
        let result = try open("/dir/vbr.mp3", at: 38)
        print("VBR from 38 s: landed at \(result.landed) s, from byte \(result.facts.startByte ?? -1) of \(result.facts.length ?? -1); tone at \(result.tone ?? -1) s")
        XCTAssertGreaterThan(result.facts.startByte ?? 0, 0, "a range, not the whole file")
        XCTAssertEqual(result.facts.notes, [], "the server answered the range")
        XCTAssertEqual(result.landed, 38, accuracy: 0.03)
        let tone = try XCTUnwrap(result.tone, "the tone was never heard")
        XCTAssertEqual(tone, Self.toneAt, accuracy: Self.landingError, "the landing said is where the audio starts")
    }

    /// A format whose codec names no byte (Ogg Vorbis) is decoded up to the place and dropped:
    /// it lands on the very frame, from the whole file.
    func testAnOggEpisodeIsDecodedUpToItsPlace() throws {
        try makeEpisode("episode.ogg", ["-c:a", "libvorbis", "-q:a", "2"])
        let result = try open("/dir/episode.ogg", at: 38)
        print("Ogg Vorbis from 38 s: landed at \(result.landed) s, tone at \(result.tone ?? -1) s")
        XCTAssertEqual(result.facts.startByte, 0, "the whole file")
        XCTAssertEqual(result.landed, 38, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(result.tone), Self.toneAt, accuracy: 0.03)
    }

    /// A server that ignores ranges sends the whole file: the bytes before the place are read and
    /// dropped by the stream (none decoded), said once as a note, and the episode lands as with one.
    func testAServerThatIgnoresRangesStillLandsAtThePlace() throws {
        try makeEpisode("cbr.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"])
        let result = try open("/dir/cbr.mp3?norange=1", at: 38)
        XCTAssertEqual(result.landed, 38, accuracy: 0.03)
        XCTAssertEqual(try XCTUnwrap(result.tone), Self.toneAt, accuracy: Self.landingError)
        XCTAssertEqual(result.facts.notes.count, 1)
        XCTAssertTrue(result.facts.notes.first?.hasPrefix("the server ignores byte ranges: ") == true, "\(result.facts.notes)")
    }

    /// A connection lost in the middle of an episode goes on from the byte after the last one
    /// (a range request), so the tone comes at 40 s, not 40 s plus what had been heard. With a
    /// server that ignores ranges, the bytes already had are dropped: the same.
    func testALostConnectionGoesOnFromTheByteAfterTheLast() throws {
        try makeEpisode("cbr.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"])
        for query in ["drop=300000", "drop=300000&norange=1"] {
            let stream = HTTPStream(url: server.url("/dir/cbr.mp3?" + query), settings: settings)
            let decoder = try StreamDecoder(stream: stream, isCancelled: { false })
            defer { decoder.close() }
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * 2)
            defer { buffer.deallocate() }
            var frames = 0
            var tone: Double?
            let deadline = monotonicNow() + 60
            reading: while monotonicNow() < deadline {
                let count = decoder.read(into: buffer, frames: 4096)
                if count == pcmSourcePending { continue }
                if count <= 0 { break }
                for frame in 0..<count where abs(buffer[frame * 2]) > 0.1 {
                    tone = Double(frames + frame) / 44100
                    break reading
                }
                frames += count
            }
            XCTAssertEqual(stream.facts.reconnects, 1, query)
            XCTAssertEqual(try XCTUnwrap(tone, query), Self.toneAt, accuracy: 0.03, query)
        }
    }

    /// Through the engine: an episode asked from 38 s plays from there (the tone 2 s into what
    /// the device got) and the position the engine reports counts from where it landed.
    func testTheEnginePlaysAnEpisodeFromItsPlaceAndCountsFromThere() throws {
        try makeEpisode("cbr.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"])
        let (pcm, log, engine) = try scratch.deviceEngine()
        defer { engine.shutdown() }
        engine.play(id: 7, path: server.url("/dir/cbr.mp3"), from: 38, paused: false)
        var first: Double?
        XCTAssertTrue(TestPCM.wait(timeout: 30) {
            if first == nil, let heard = engine.position(), heard.seconds > 0 { first = heard.seconds }
            return (engine.position()?.seconds ?? 0) >= 45
        }, "\(log.all)")
        engine.shutdown()
        XCTAssertEqual(try XCTUnwrap(first), 38, accuracy: 1, "the position counts from the place, not from 0")
        let samples = TestAudio.floats(pcm.recording(), type: .float32)
        let onset = try XCTUnwrap(samples.firstIndex { abs($0) > 0.1 }, "the tone was never played")
        XCTAssertEqual(Double(onset / 2) / 44100, Self.toneAt - 38, accuracy: Self.landingError)
    }

    /// A place past the end (a file that shrank) ends the track at once; a place in a live
    /// stream (no length) is not gone to: it plays what is on air, from 0.
    func testAPlacePastTheEndEndsAndALiveStreamStartsWhereItIs() throws {
        try makeEpisode("cbr.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"])
        let past = try open("/dir/cbr.mp3", at: 75)
        XCTAssertNil(past.tone)
        XCTAssertLessThan(past.frames, 44100, "nothing much decoded past the end")
        let live = try open("/icy?metaint=8192&once=1", at: 30)
        XCTAssertEqual(live.landed, 0)
        XCTAssertNil(live.facts.length)
        XCTAssertEqual(live.facts.startByte, 0)
    }
}
