// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// A podcast episode played from its URL at another speed: the stretcher is in the path and
/// every position stays in the episode's own time, from a place (Ogg Vorbis: decoded up to it,
/// so it lands on the very frame) and through a change in place (the stream cannot go back:
/// what was decoded ahead plays at the old speed, nothing is dropped or heard twice). The
/// episode is `EpisodeStreamTests`'s: 60 s of silence with a tone from 40 s on.
extension EpisodeStreamTests {
    private var rate: Int { 44100 }

    /// The left channel of float stereo output.
    private func left(_ bytes: [UInt8]) -> [Float] {
        bytes.withUnsafeBytes { raw in
            let all = raw.bindMemory(to: Float.self)
            return stride(from: 0, to: all.count, by: 2).map { all[$0] }
        }
    }

    /// An engine on the recording output with these tests' stream settings, playing the Ogg
    /// episode from `from` at `speed`.
    /// The output is set up (writes slowed, held from a frame) before the play starts: set after
    /// it, a test thread late under load could find the stream written already.
    private func playOgg(from: Double, speed: Double, writeMicroseconds: UInt32 = 0,
                         holdFrom: Int? = nil) throws -> (RecordingOutput, ReportLog, AudioEngine) {
        try makeEpisode("episode.ogg", ["-c:a", "libvorbis", "-q:a", "2"])
        let (output, log, engine) = recordingEngine()
        output.writeMicroseconds = writeMicroseconds
        output.hold(from: holdFrom)
        engine.setStreamSettings(settings)
        engine.play(id: 7, path: server.url("/dir/episode.ogg"), from: from, paused: false, speed: speed)
        return (output, log, engine)
    }

    /// Looks at the position of play 7 while a write waits (the engine's count is then exactly the
    /// bytes taken) until it finishes: output frames and the position then, one per write.
    private func looks(_ output: RecordingOutput, _ log: ReportLog, _ engine: AudioEngine) -> [(frames: Int, seconds: Double)] {
        var looks: [(frames: Int, seconds: Double)] = []
        let deadline = monotonicNow() + 60
        while !log.tracks.contains(.finished(id: 7)) && monotonicNow() < deadline {
            guard let before = output.waitingWrite, let position = engine.position(), position.id == 7,
                  let after = output.waitingWrite, after.serial == before.serial, before.bytes > 0
            else { usleep(1000); continue }
            if looks.last?.frames != before.bytes / 8 { looks.append((before.bytes / 8, position.seconds)) }
            usleep(5_000)
        }
        engine.shutdown()
        XCTAssertTrue(log.tracks.contains(.finished(id: 7)), "\(log.all)")
        return looks
    }

    func testAnEpisodeAt15FromItsPlaceCountsInItsOwnTime() throws {
        // Slow writes, so the play can be looked at midway (as `EngineSpeedTests` does for a file).
        let (output, log, engine) = try playOgg(from: 38, speed: 1.5, writeMicroseconds: 60_000)
        let seen = looks(output, log, engine)
        // Written output frames stand for episode time from 38 s, 1.5 s each.
        let worst = seen.map { abs($0.seconds - (38 + Double($0.frames) * 1.5 / Double(rate))) }.max() ?? 0
        let checked = seen.count
        let samples = left(output.bytes)
        let onset = try XCTUnwrap(samples.firstIndex { abs($0) > 0.1 }, "the tone was never played")
        print("episode at 1.5 from 38 s: positions checked \(checked), worst off the output's episode time by "
              + "\(worst) s; tone at output frame \(onset) (\(Int(2 / 1.5 * Double(rate))) expected); "
              + "\(samples.count) frames (\(Int(22 / 1.5 * Double(rate))) expected)")
        XCTAssertGreaterThanOrEqual(checked, 3, "too few looks midway to tell")
        XCTAssertLessThan(worst, 3.0 / Double(rate), "within a few frames (a position counted in output time is off by seconds)")
        XCTAssertEqual(Double(onset) / Double(rate), 2 / 1.5, accuracy: 0.03, "the tone 2 s of the episode in, at 1.5")
        XCTAssertEqual(Double(samples.count) / Double(rate), 22 / 1.5, accuracy: 22 / 1.5 * 0.01)
    }

    /// From 30 s at 1.5, changed to 1 in place after 1 s of output: the stream cannot go back, so
    /// what was decoded ahead and what the stretcher held play at 1.5 first. The positions,
    /// looked at while a write waits, never jump (each step is between 1 and 1.5 times the
    /// output's), and the one the tone is heard at is 40 s: audio the stretcher held and lost,
    /// or decoded ahead and dropped, would put the tone earlier than its position says.
    func testAnEpisodeChangedFrom15To1InPlaceLosesNothing() throws {
        let (output, log, engine) = try playOgg(from: 30, speed: 1.5, writeMicroseconds: 20_000, holdFrom: rate)
        XCTAssertTrue(output.wait(timeout: 30, until: { $0.held }), "\(log.all)")
        engine.setSpeed(id: 7, speed: 1)
        output.hold(from: nil)
        let looks = looks(output, log, engine)
        XCTAssertGreaterThanOrEqual(looks.count, 10, "too few looks to tell")
        let slack = 3.0 / Double(rate)
        for (a, b) in zip(looks, looks.dropFirst()) {
            let out = Double(b.frames - a.frames) / Double(rate)
            XCTAssertTrue((out - slack)...(out * 1.5 + slack) ~= b.seconds - a.seconds,
                          "from \(a) to \(b): a jump (audio dropped or heard twice)")
        }
        let samples = left(output.bytes)
        let onset = try XCTUnwrap(samples.firstIndex { abs($0) > 0.1 }, "the tone was never played")
        // At 1 from well before the tone on: the last look before it, plus the frames since.
        let last = try XCTUnwrap(looks.last { $0.frames <= onset && $0.seconds > 35 }, "no look between 35 s and the tone")
        let heard = last.seconds + Double(onset - last.frames) / Double(rate)
        print("episode 1.5 → 1 in place: \(looks.count) looks, \(samples.count) frames; the tone at output frame "
              + "\(onset), where the position says \(heard) s (40 expected)")
        // At 1 the output is the decoded source: the tone within 5 ms (a SoundTouch held back and lost
        // here: 18 ms).
        XCTAssertEqual(heard, EpisodeStreamTests.toneAt, accuracy: 0.005, "the tone where its position says")
        XCTAssertEqual(output.opens.count, 1, "one device stream: no reopen")
    }
}
