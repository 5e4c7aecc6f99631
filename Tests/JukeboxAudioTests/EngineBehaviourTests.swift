// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Engine behaviour against an in-memory output: format negotiation, device loss, volume, commands.
final class EngineBehaviourTests: ScratchCase {
    func testRefusedFloatFallsBackToInt32WithTheSameValues() throws {
        let path = try scratch.audio(.oggVorbis, frames: 3000)
        let source = try TestAudio.decode(path: path)
        let output = RecordingOutput()
        output.refused = [.float32]
        let (log, engine) = logAndEngine { output }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        XCTAssertEqual(output.opens, [AudioFormat(sampleRate: 44100, channels: 2, sample: .int32)])
        let floats = source.bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let ints = output.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        XCTAssertEqual(ints.count, floats.count)
        for (i, (f, n)) in zip(floats, ints).enumerated() where abs(Double(f) - Double(n) / 2_147_483_648) > 1e-7 {
            return XCTFail("sample \(i): \(f) became \(n)")
        }
    }

    func testDeviceRefusingEveryFormatIsUnavailable() throws {
        let path = try scratch.audio(.wav16, frames: 3000)
        let output = RecordingOutput()
        output.refused = [.int16, .int32, .float32]
        let (log, engine) = logAndEngine { output }
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait { if case .deviceUnavailable(let e) = $0 { e.kind == .unsupported } else { false } })
        XCTAssertEqual(log.all.count, 1)
    }

    func testFormatChangeBetweenTracksReopensTheDevice() throws {
        let first = try scratch.audio(.wav16, frames: 3000, name: "a")
        let second = try scratch.audio(.wav24, frames: 3000, name: "b")
        let a = try TestAudio.decode(path: first)
        let b = try TestAudio.decode(path: second)
        let (output, log, engine) = recordingEngine()
        engine.play(id: 1, path: first, from: 0, paused: true)
        engine.setNext(id: 2, path: second)
        engine.resume()
        XCTAssertTrue(log.wait(for: .finished(id: 2)))
        engine.shutdown()
        XCTAssertEqual(output.opens.map(\.sample), [.int16, .int32])
        XCTAssertEqual(output.bytes, a.bytes + b.bytes)
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1, next: 2), .started(id: 2), .finished(id: 2)])
    }

    func testLostDeviceReportsOnceAndReleasesIt() throws {
        let path = try scratch.audio(.wav16, frames: 60000)
        let output = RecordingOutput()
        // Past the first write (the writer joins queued chunks into writes of up to 16384 frames).
        output.loseAfterFrames = 20000
        let (log, engine) = logAndEngine { output }
        defer { engine.shutdown() }
        engine.play(id: 7, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait { if case .deviceUnavailable(let e) = $0 { e.kind == .lost } else { false } })
        XCTAssertEqual(log.tracks.count, 2, "\(log.tracks)")
        XCTAssertEqual(log.tracks.first, .started(id: 7))
        XCTAssertFalse(output.isOpen)
        // The position heard before the loss is kept for the caller's retry (no delay here: all written is heard).
        let position = try XCTUnwrap(engine.position())
        XCTAssertEqual(position.id, 7)
        XCTAssertLessThanOrEqual(position.seconds, 20000.0 / 44100.0)
        XCTAssertGreaterThan(position.seconds, 0)
    }

    func testVolumeBelowFullScalesAndFullIsUntouched() throws {
        let path = try scratch.audio(.wav16, frames: 3000)
        let source = try TestAudio.decode(path: path)
        // The mapped-volume curve over 60 dB (VolumeCurve.gain); 16-bit output is dithered (±1 LSB).
        for (volume, gain) in [(100, 1.0), (50, 0.166375), (0, 0.0)] {
            let (output, log, engine) = recordingEngine()
            engine.setVolume(volume)
            engine.play(id: 1, path: path, from: 0, paused: false)
            XCTAssertTrue(log.wait(for: .finished(id: 1)))
            engine.shutdown()
            let expected = source.bytes.withUnsafeBytes { $0.bindMemory(to: Int16.self).map { Int16((Double($0) * gain).rounded()) } }
            let actual = output.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            XCTAssertEqual(actual.count, expected.count, "volume \(volume)")
            let worst = zip(actual, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, volume == 100 || volume == 0 ? 0 : 1, "volume \(volume)")
        }
    }

    func testPausedPlayOpensNoDeviceUntilResume() throws {
        let path = try scratch.audio(.wav16, frames: 3000)
        let (output, log, engine) = recordingEngine()
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0.01, paused: true)
        engine.pause() // no-op: already paused
        XCTAssertEqual(engine.position()?.id, 1)
        XCTAssertEqual(engine.position()?.seconds ?? -1, 0.01, accuracy: 1e-9)
        // Nothing can have been written: the writer waits for resume.
        XCTAssertFalse(log.wait(timeout: 0.2) { _ in true })
        XCTAssertTrue(output.opens.isEmpty)
        engine.resume()
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)])
    }

    func testStopReportsNothingAndForgetsThePosition() throws {
        let path = try scratch.audio(.wav16, frames: 44100 * 2)
        let (log, engine) = logAndEngine { SilentOutput() }
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .started(id: 1)))
        engine.stop()
        XCTAssertNil(engine.position())
        engine.resume() // no-op while idle
        engine.seek(to: 1) // no-op while idle
        XCTAssertFalse(log.wait(timeout: 0.2) { $0 == .finished(id: 1) })
        XCTAssertEqual(log.tracks, [.started(id: 1)])
    }

    func testFailedNextIsReportedAfterTheCurrentTrackFinishes() throws {
        let path = try scratch.audio(.wav16, frames: 3000)
        let (_, log, engine) = recordingEngine()
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: true)
        engine.setNext(id: 2, path: scratch.path("missing.wav"))
        engine.resume()
        XCTAssertTrue(log.wait { if case .failed = $0 { true } else { false } })
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1, next: 2), .failed(id: 2, reason: "no such file or directory")])
    }
}

/// Pausing mid-track, on a device that can pause and on one that cannot (the Pi headphone jack).
final class EnginePauseTests: XCTestCase {
    private func playPauseResume(canPause: Bool) throws -> (output: RecordingOutput, source: TestAudio.Decoded, log: ReportLog) {
        let scratch = try Scratch()
        // Long enough that a test thread kept off the CPU for a while (a loaded machine) still
        // pauses before the end: the output takes a write's worth every 10 ms, about 10x real time.
        let path = try scratch.audio(.wav16, frames: 44100 * 10)
        let source = try TestAudio.decode(path: path)
        let output = RecordingOutput()
        output.canPause = canPause
        output.writeMicroseconds = 10_000
        let (log, engine) = logAndEngine { output }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(output.wait { $0.frames >= 10000 })
        engine.pause()
        // The pause took effect: the held-back frames were faded out and played out (the drain),
        // then nothing more (the recording's length below says so).
        XCTAssertTrue(output.wait { $0.drains >= 1 }, "the pause never played out its fade")
        let held = try XCTUnwrap(engine.position())
        XCTAssertLessThan(held.seconds, 9.9, "paused too late to test anything")
        engine.resume()
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        return (output, source, log)
    }

    /// A pause fades out (15 ms) and plays out what the device holds instead of pausing it, so it works
    /// the same on devices that cannot pause; resuming fades in. Every frame is played once, and all
    /// but the faded ones are bit-exact.
    private func assertFadedPauseKeepsEveryFrame(canPause: Bool) throws {
        let (output, source, log) = try playPauseResume(canPause: canPause)
        XCTAssertEqual(output.pauses, [])
        XCTAssertEqual(output.opens.count, 1)
        XCTAssertEqual(output.bytes.count, source.bytes.count)
        let differing = zip(output.bytes, source.bytes).enumerated().filter { $0.element.0 != $0.element.1 }.map { $0.offset / 4 }
        let first = try XCTUnwrap(differing.first)
        let last = try XCTUnwrap(differing.last)
        XCTAssertLessThan(last - first, 2 * 662, "only the fade-out and fade-in differ")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)])
    }

    func testPauseOnADeviceThatCanPauseFadesAndKeepsEveryFrame() throws {
        try assertFadedPauseKeepsEveryFrame(canPause: true)
    }

    func testPauseOnADeviceThatCannotPauseFadesAndKeepsEveryFrame() throws {
        try assertFadedPauseKeepsEveryFrame(canPause: false)
    }
}

/// The engine on a manual clock: what it times (the device kept open after an end) waits for that
/// clock, so "at once" and "later" do not depend on the machine's speed.
final class EngineClockTests: ScratchCase {
    func testTheDeviceStaysOpenAfterAnEndUntilTheClockPassesTheLinger() throws {
        let a = try scratch.audio(.wav16, frames: 3000, name: "a")
        let b = try scratch.audio(.wav16, frames: 3000, name: "b")
        let output = RecordingOutput()
        let log = ReportLog()
        let clock = ManualClock()
        let engine = AudioEngine(makeOutput: { output }, clock: clock.read) { log.append($0) }
        defer { engine.shutdown() }
        engine.play(id: 1, path: a, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        // However long the machine took since, no time passed on the engine's clock: the next play
        // continues the stream the end left open.
        engine.play(id: 2, path: b, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .finished(id: 2)))
        XCTAssertEqual(output.opens.count, 1, "the play after the end reopened the device")
        XCTAssertEqual(output.closes, 0)
        // Not before the linger has passed on the engine's clock; then the device is closed. (The
        // engine took the linger's start from its clock before it reported the end.)
        clock.advance(by: AudioEngine.lingerSeconds - 0.1)
        XCTAssertFalse(output.wait(timeout: 0.3) { $0.closes == 1 }, "the device was closed before the linger ended")
        clock.advance(by: 0.2)
        XCTAssertTrue(output.wait { $0.closes == 1 }, "the device stayed open past the linger")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1), .started(id: 2), .finished(id: 2)])
    }
}

/// ReplayGain in the engine: a play's linear gain scales its samples from its first frame
/// (a gapless successor's from its own), saturating; at 1 the samples pass bit-exact.
final class EngineGainTests: ScratchCase {
    /// `source`'s 16-bit samples times `gain`, rounded, clamped to full scale.
    private func scaled(_ source: [UInt8], by gain: Double) -> [Int16] {
        source.withUnsafeBytes { $0.bindMemory(to: Int16.self).map { Int16(min(max((Double($0) * gain).rounded(), -32768), 32767)) } }
    }

    private func samples(_ bytes: [UInt8]) -> [Int16] { bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } }

    func testMinus6dBPlaysAtHalfAmplitudeAndOneIsBitExact() throws {
        let path = try scratch.audio(.wav16, frames: 3000)
        let source = try TestAudio.decode(path: path)
        let half = 0.5000345349769785 // 10^(-6.02/20)
        for gain in [half, 1.0] {
            let (output, log, engine) = recordingEngine()
            engine.play(id: 1, path: path, from: 0, paused: false, gain: gain)
            XCTAssertTrue(log.wait(for: .finished(id: 1)))
            engine.shutdown()
            if gain == 1 {
                XCTAssertEqual(output.bytes, source.bytes, "gain 1 is bit-exact")
            } else {
                XCTAssertEqual(samples(output.bytes), scaled(source.bytes, by: half))
                let peakIn = samples(source.bytes).map { abs(Int($0)) }.max() ?? 0
                let peakOut = samples(output.bytes).map { abs(Int($0)) }.max() ?? 0
                XCTAssertEqual(Double(peakOut) / Double(peakIn), 0.5, accuracy: 0.001)
            }
        }
    }

    func testAGaplessSuccessorGetsItsOwnGainFromItsFirstFrameAndABoostSaturates() throws {
        let first = try scratch.audio(.wav16, frames: 3000, name: "a")
        let second = try scratch.audio(.wav16, frames: 3000, name: "b")
        let a = try TestAudio.decode(path: first)
        let b = try TestAudio.decode(path: second)
        let (output, log, engine) = recordingEngine()
        engine.play(id: 1, path: first, from: 0, paused: true, gain: 1)
        engine.setNext(id: 2, path: second, gain: 4)
        engine.resume()
        XCTAssertTrue(log.wait(for: .finished(id: 2)))
        engine.shutdown()
        let boosted = scaled(b.bytes, by: 4)
        XCTAssertTrue(boosted.contains(32767) && boosted.contains(-32768), "the test signal must reach full scale at +12 dB")
        XCTAssertEqual(samples(output.bytes), samples(a.bytes) + boosted)
    }
}
