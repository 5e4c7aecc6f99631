// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import Foundation
import JukeboxFixtures
import XCTest

/// Playback speed in the engine (libSoundTouch): at 1 no stretcher is in the path and the samples
/// pass bit-exact; at 1.25 a 4 s sine plays in 3.2 s at its own pitch, and positions stay in the
/// file's time.
final class EngineSpeedTests: ScratchCase {
    private let rate = 44100
    private let hertz = 440.0

    /// A 16-bit stereo WAV of `seconds` of a `hertz` sine at half scale.
    private func sine(seconds: Double) throws -> String {
        let frames = Int(seconds * Double(rate))
        var data = [UInt8]()
        data.reserveCapacity(frames * 4)
        for i in 0..<frames {
            let v = Int16((sin(2 * Double.pi * hertz * Double(i) / Double(rate)) * 16384).rounded())
            let u = UInt16(bitPattern: v)
            for _ in 0..<2 { data += [UInt8(u & 0xFF), UInt8(u >> 8)] }
        }
        func le32(_ n: Int) -> [UInt8] { (0..<4).map { UInt8((n >> (8 * $0)) & 0xFF) } }
        func le16(_ n: Int) -> [UInt8] { [UInt8(n & 0xFF), UInt8(n >> 8)] }
        // In parts: Swift 6.0.3's type checker gives up on long array concatenations.
        var header: [UInt8] = Array("RIFF".utf8)
        header += le32(36 + data.count)
        header += Array("WAVEfmt ".utf8)
        for part: [UInt8] in [le32(16), le16(1), le16(2), le32(rate), le32(rate * 4), le16(4), le16(16)] { header += part }
        header += Array("data".utf8)
        header += le32(data.count)
        let path = scratch.path("sine.wav")
        try Data(header + data).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The frequency of `samples` by rising zero crossings, over their middle (away from the ends).
    private func frequency(_ samples: [Float]) -> Double {
        let from = samples.count / 10
        let to = samples.count - samples.count / 10
        var crossings: [Int] = []
        for i in from..<to where samples[i - 1] < 0 && samples[i] >= 0 { crossings.append(i) }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / Double(last - first)
    }

    /// Linking libSoundTouch (built with crtfastmath) must not leave the process flushing
    /// denormals to zero, on the main thread or on a thread started later.
    func testTheProcessKeepsDenormals() {
        // Read at run time, so that nothing is folded at compile time.
        let one = Double(ProcessInfo.processInfo.environment["JUKEBOX_NO_SUCH_VARIABLE"] ?? "1") ?? 1
        // Bit patterns: with denormals-are-zero, == itself takes 5e-324 for 0.
        XCTAssertEqual((Double.leastNonzeroMagnitude * one).bitPattern, 1, "denormals flushed on the main thread")
        final class Seen: @unchecked Sendable { var value = 0.0 }  // written before the signal, read after
        let seen = Seen(), done = DispatchSemaphore(value: 0)
        Thread { seen.value = Double.leastNonzeroMagnitude * one; done.signal() }.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(seen.value.bitPattern, 1, "denormals flushed on a new thread")
    }

    func testAtOneNothingIsInThePathAndTheSamplesAreBitExact() throws {
        let path = try sine(seconds: 1)
        let source = try TestAudio.decode(path: path)
        let (output, log, engine) = recordingEngine()
        engine.play(id: 1, path: path, from: 0, paused: false, speed: 1)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        XCTAssertEqual(output.opens.map(\.sample), [.int16], "at 1 the decoder's own format")
        XCTAssertEqual(output.bytes, source.bytes, "speed 1 is bit-exact")
    }

    func testAt125AFourSecondSinePlaysIn32SecondsAtItsPitch() throws {
        let path = try sine(seconds: 4)
        let (output, log, engine) = recordingEngine()
        engine.play(id: 1, path: path, from: 0, paused: false, speed: 1.25)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        XCTAssertEqual(output.opens.map(\.sample), [.int16], "stretched as float, handed on in the decoder's format")
        let left = leftSamples(output.bytes)
        let seconds = Double(left.count) / Double(rate)
        let pitch = frequency(left)
        print("speed 1.25: \(left.count) frames = \(seconds) s (3.2 expected), pitch \(pitch) Hz (\(hertz) expected)")
        XCTAssertEqual(seconds, 3.2, accuracy: 3.2 * 0.02)
        XCTAssertEqual(pitch, hertz, accuracy: hertz * 0.01, "the pitch is kept")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)])
    }

    func testPositionsStayInTheFilesTime() throws {
        let path = try sine(seconds: 4)
        let (output, log, engine) = recordingEngine()
        // Slow writes (60 ms each, whatever their size), so the play can be looked at midway.
        output.writeMicroseconds = 60_000
        engine.play(id: 1, path: path, from: 1, paused: false, speed: 1.25)
        var checked = 0
        var worst = 0.0
        while !log.tracks.contains(.finished(id: 1)) && checked < 2000 {
            // Looked at only while one write waits (the same one before and after): the engine's
            // count is then exactly the bytes taken. Elsewhere it may trail them by a whole write,
            // up to 20112 frames here (0.57 s of source), which a loaded machine showed.
            guard let before = output.waitingWrite, let position = engine.position(), position.id == 1,
                  let after = output.waitingWrite, after.serial == before.serial, before.bytes > 0
            else { usleep(1000); continue }
            // Written output frames stand for source time from the start at 1 s, 1.25 s each.
            let heard = 1 + Double(before.bytes / 4) * 1.25 / Double(rate)
            worst = max(worst, abs(position.seconds - heard))
            checked += 1
            usleep(10_000)
        }
        engine.shutdown()
        print("positions checked: \(checked), worst off the written output's source time by \(worst) s")
        XCTAssertGreaterThanOrEqual(checked, 3, "too few looks midway to tell")
        XCTAssertLessThan(worst, 0.15, "a position counted in output time is off by up to 0.8 s here")
        let played = Double(output.bytes.count / 4) / Double(rate)
        XCTAssertEqual(played, 3 / 1.25, accuracy: 2.4 * 0.02, "3 s of source from 1 s at 1.25")
    }
}

/// A speed change in place (`AudioEngine.setSpeed`): what is not yet written plays at the new
/// speed from the source frame where the old one stopped, the device is neither closed nor
/// opened again, the position stays in the file's time, and back at 1 the samples are the
/// source's again, bit for bit.
extension EngineSpeedTests {
    /// Waits until the write starting at `frames` is held (the caller holds from there before the
    /// play starts: held after it, a test thread late by a second under qemu-aarch64 found the
    /// whole track written and waited in vain); then `change` runs, and the write after the held
    /// one is held too. Returns the frames written before it (where the new speed begins) and
    /// the position then.
    private func changeAt(_ frames: Int, _ output: RecordingOutput, _ engine: AudioEngine,
                          change: () -> Void) throws -> (frame: Int, seconds: Double) {
        output.hold(from: frames)
        XCTAssertTrue(output.wait(until: { $0.held }), "the write at frame \(frames) never came")
        // The held write (from `before` on) holds audio taken before the change.
        let before = output.bytes.count / 4
        change()
        output.hold(from: before + 1)
        XCTAssertTrue(output.wait(until: { $0.held && $0.frames > before }), "the write after the change never came")
        let at = output.bytes.count / 4
        let position = try XCTUnwrap(engine.position())
        return (at, position.seconds)
    }

    /// The position when the write at `frames` or later is held.
    private func positionAt(_ frames: Int, _ output: RecordingOutput, _ engine: AudioEngine) throws -> (frame: Int, seconds: Double) {
        output.hold(from: frames)
        XCTAssertTrue(output.wait(until: { $0.held && $0.frames >= frames }))
        return (output.bytes.count / 4, try XCTUnwrap(engine.position()).seconds)
    }

    func testFrom1To125InPlace() throws {
        let path = try sine(seconds: 4)
        let source = try TestAudio.decode(path: path).bytes
        let (output, log, engine) = recordingEngine()
        output.hold(from: rate)
        engine.play(id: 1, path: path, from: 0, paused: false, speed: 1)
        let change = try changeAt(rate, output, engine) { engine.setSpeed(id: 1, speed: 1.25) }
        XCTAssertEqual(change.seconds, Double(change.frame) / Double(rate), accuracy: 1e-9, "at 1 a frame is a source frame")
        let later = try positionAt(change.frame + 4097, output, engine)
        // The new speed begins where the output stops being the source (the writer's held-back
        // tail of the old speed goes first: a few hundred frames).
        let heard = output.bytes
        var first = change.frame
        while first < later.frame, Self.sameFrame(heard, first, source, first) { first += 1 }
        XCTAssertLessThan(first - change.frame, 2048, "more than a held-back tail at the old speed")
        let expected = (Double(first) + Double(later.frame - first) * 1.25) / Double(rate)
        XCTAssertEqual(later.seconds, expected, accuracy: 2.0 / Double(rate), "the place after the change, in the file's time")
        output.hold(from: nil)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        let bytes = output.bytes
        XCTAssertEqual(output.opens.map(\.sample), [.int16], "one stream, in the decoder's format: no reopen")
        let total = Double(bytes.count / 4)
        let wanted = Double(first) + Double(4 * rate - first) / 1.25
        print("1 → 1.25 asked when \(change.frame) frames were out: \(first - change.frame) more frames at 1, "
              + "then 1.25; \(Int(total)) frames, \(Int(wanted)) expected")
        XCTAssertEqual(total, wanted, accuracy: wanted * 0.01)
        let tail = leftSamples(Array(bytes.suffix(rate * 4)))
        XCTAssertEqual(frequency(tail), hertz, accuracy: hertz * 0.01, "the pitch is kept after the change")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)], "one play, not restarted")
    }

    func testFrom125BackTo1IsBitExactAgain() throws {
        try assertBackTo1IsBitExact(try sine(seconds: 4))
    }

    /// The same in a FLAC file (its decoder seeks to the frame, as for WAV).
    func testFrom125BackTo1IsBitExactAgainInAFLAC() throws {
        let path = scratch.path("tone.flac")
        try TestAudio.write(path: path, kind: .flac, frames: 4 * rate)
        try assertBackTo1IsBitExact(path)
    }

    private func assertBackTo1IsBitExact(_ path: String) throws {
        let source = try TestAudio.decode(path: path).bytes
        let (output, log, engine) = recordingEngine()
        output.hold(from: rate / 2)
        engine.play(id: 1, path: path, from: 0, paused: false, speed: 1.25)
        let change = try changeAt(rate / 2, output, engine) { engine.setSpeed(id: 1, speed: 1) }
        output.hold(from: nil)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        let bytes = output.bytes
        XCTAssertEqual(output.opens.map(\.sample), [.int16], "the stretched part too in the decoder's format")
        // From the change on (after the held-back tail at 1.25), the source itself, bit for bit,
        // from the source frame the position names.
        var same = 0
        let (out, into) = (bytes.count / 4, source.count / 4)
        while same < out, same < into, Self.sameFrame(bytes, out - 1 - same, source, into - 1 - same) { same += 1 }
        let switched = bytes.count / 4 - same
        let from = source.count / 4 - same
        print("1.25 → 1 asked when \(change.frame) frames were out (\(change.seconds) s): \(switched - change.frame) more "
              + "frames at 1.25, then the source bit-exact from its frame \(from) to the end (\(same) frames)")
        XCTAssertGreaterThanOrEqual(switched, change.frame)
        XCTAssertLessThan(switched - change.frame, 2048, "more than a held-back tail at the old speed")
        XCTAssertEqual(Double(from), change.seconds * Double(rate) + Double(switched - change.frame) * 1.25, accuracy: 2,
                       "the 1× part begins where the 1.25× part left the source")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)])
    }

    func testFrom125To15AndThePauseKeepsIt() throws {
        let path = try sine(seconds: 4)
        let (output, log, engine) = recordingEngine()
        // Changed while paused: the resume plays on at 1.5 from where it stopped.
        output.hold(from: rate / 2)
        engine.play(id: 1, path: path, from: 0, paused: false, speed: 1.25)
        XCTAssertTrue(output.wait(until: { $0.held }))
        engine.pause()
        engine.setSpeed(id: 1, speed: 1.5)
        output.hold(from: nil)
        XCTAssertTrue(output.wait(until: { $0.drains >= 1 }), "the pause never played out its fade")
        let paused = try XCTUnwrap(engine.position()).seconds
        let stopped = output.bytes.count / 4
        // The first write after the resume is held, then the one after it.
        output.hold(from: stopped)
        engine.resume()
        XCTAssertTrue(output.wait(until: { $0.held }), "no write after the resume")
        let change = (frame: output.bytes.count / 4, seconds: try XCTUnwrap(engine.position()).seconds)
        XCTAssertEqual(change.seconds, paused, accuracy: 1e-9, "the resume goes on where the pause stopped")
        let later = try positionAt(change.frame + 1, output, engine)
        let expected = change.seconds + Double(later.frame - change.frame) * 1.5 / Double(rate)
        XCTAssertEqual(later.seconds, expected, accuracy: 2.0 / Double(rate), "1.5 from the resume on")
        output.hold(from: nil)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        let total = Double(output.bytes.count / 4)
        let wanted = Double(change.frame) + (4 - change.seconds) * Double(rate) / 1.5
        print("1.25 → 1.5 (paused at \(paused) s) at output frame \(change.frame) = \(change.seconds) s: \(Int(total)) frames, \(Int(wanted)) expected")
        XCTAssertEqual(total, wanted, accuracy: wanted * 0.01)
        XCTAssertEqual(frequency(leftSamples(Array(output.bytes.suffix(rate * 4)))), hertz, accuracy: hertz * 0.01)
        XCTAssertEqual(output.opens.count, 1)
    }

    func testTheSuccessorHandedAgainPlaysAtTheNewSpeed() throws {
        // 4 s: the decoder, at most a second and a write ahead, is still in the first track at
        // the change (in a track's last second, all decoded, the rest plays at the old speed).
        let first = try sine(seconds: 4)
        let second = scratch.path("second.wav")
        try FileManager.default.copyItem(atPath: first, toPath: second)
        let (output, log, engine) = recordingEngine()
        output.hold(from: rate / 2)
        engine.play(id: 1, path: first, from: 0, paused: false, next: (2, second))
        // As the core does it: the play in place, the successor handed again at the new speed.
        let change = try changeAt(rate / 2, output, engine) {
            engine.setSpeed(id: 1, speed: 1.25)
            engine.setNext(id: 3, path: second, speed: 1.25)
        }
        output.hold(from: nil)
        XCTAssertTrue(log.wait(for: .finished(id: 3)))
        engine.shutdown()
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1, next: 3), .started(id: 3), .finished(id: 3)])
        let total = Double(output.bytes.count / 4)
        let wanted = Double(change.frame) + Double(4 * rate - change.frame) / 1.25 + Double(4 * rate) / 1.25
        XCTAssertEqual(total, wanted, accuracy: wanted * 0.01, "both at 1.25 from the change on")
        XCTAssertEqual(output.opens.count, 1, "gapless into the successor")
    }

    /// Whether frame `i` of `a` and frame `j` of `b` (16-bit stereo) are the same bytes. Apart:
    /// Swift 6.0.3's type checker gives up on the slices' arithmetic written inline.
    static func sameFrame(_ a: [UInt8], _ i: Int, _ b: [UInt8], _ j: Int) -> Bool {
        let x: ArraySlice<UInt8> = a[(i * 4)..<(i * 4 + 4)]
        let y: ArraySlice<UInt8> = b[(j * 4)..<(j * 4 + 4)]
        return x == y
    }

    /// The left channel of 16-bit stereo output, scaled to ±1.
    private func leftSamples(_ bytes: [UInt8]) -> [Float] {
        bytes.withUnsafeBytes { raw in
            let all = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: all.count, by: 2).map { Float(all[$0]) / 32768 }
        }
    }
}

/// The figure for docs/USING.md: a speed change 1 → 1.25 in place against a restart at the place
/// heard (what `speed X` did before: `play` from the position, the file opened again), on the
/// recording output: silent frames around the change, frames at the old speed after what the
/// writer had taken when the command came, device openings.
extension EngineSpeedTests {
    private struct ChangeFigures {
        var silent = 0, opens = 0, frames = 0
        /// Frames played, and what the file at 1 up to the change and at 1.25 after it makes.
        var total = 0, wanted = 0
    }

    private func measureChange(inPlace: Bool) throws -> ChangeFigures {
        let path = try sine(seconds: 4)
        let source = try TestAudio.decode(path: path).bytes
        let (output, log, engine) = recordingEngine()
        output.hold(from: rate)
        engine.play(id: 1, path: path, from: 0, paused: false, speed: 1)
        XCTAssertTrue(output.wait(until: { $0.held }))
        let before = output.bytes.count / 4
        let heard = try XCTUnwrap(engine.position()).seconds
        if inPlace {
            engine.setSpeed(id: 1, speed: 1.25)
        } else {
            engine.play(id: 2, path: path, from: heard, paused: false, speed: 1.25)
        }
        // What the writer had taken: the held write, let through alone.
        output.hold(from: before + 1)
        XCTAssertTrue(output.wait(until: { $0.held && $0.frames > before }))
        let taken = output.bytes.count / 4
        output.hold(from: nil)
        XCTAssertTrue(log.wait(for: .finished(id: inPlace ? 1 : 2)))
        engine.shutdown()
        let bytes = output.bytes
        // The first frame at the new speed: where the output stops being the source at 1.
        var first = taken
        while first < bytes.count / 4, Self.sameFrame(bytes, first, source, first) { first += 1 }
        // Silent frames from the command on (the sine at half scale is below 1/256 of full
        // scale for at most 2 frames around each zero crossing: a run of 3 or more is a gap).
        let left = leftSamples(bytes)
        var silent = 0, run = 0
        for v in left[before..<min(left.count, before + rate)] {
            if abs(v) < 1.0 / 256 { run += 1 } else { if run >= 3 { silent += run }; run = 0 }
        }
        return ChangeFigures(silent: silent, opens: output.opens.count, frames: first - taken,
                             total: bytes.count / 4, wanted: first + Int(Double(source.count / 4 - first) / 1.25))
    }

    func testTheGapOfAChangeInPlaceAgainstARestart() throws {
        let inPlace = try measureChange(inPlace: true)
        let restart = try measureChange(inPlace: false)
        for (name, f) in [("in place", inPlace), ("by a restart", restart)] {
            print("speed 1 → 1.25 \(name): \(f.silent) silent frames, \(f.frames) frames at 1 after what the writer had taken, "
                  + "\(f.opens) device opening(s)")
        }
        XCTAssertEqual(inPlace.silent, 0, "a change in place inserts no silence")
        XCTAssertEqual(inPlace.opens, 1)
        XCTAssertLessThan(inPlace.frames, 2048, "more than the writer's held-back tail at the old speed")
        XCTAssertEqual(Double(inPlace.total), Double(inPlace.wanted), accuracy: Double(inPlace.wanted) * 0.01,
                       "nothing skipped or repeated: the file at 1 up to the change, at 1.25 after it")
    }
}

extension EngineSpeedTests {
    /// A change the stretcher cannot make (more than 16 channels) ends the track with its reason,
    /// as a play at that speed is refused, and leaves the engine able to play on.
    func testAChangeTheStretcherRefusesEndsTheTrackWithItsReason() throws {
        let path = scratch.path("many.wav")
        try TestAudio.write(path: path, kind: .wav16, frames: 4 * rate, channels: 20)
        let (output, log, engine) = recordingEngine()
        output.hold(from: rate / 2)
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(output.wait(until: { $0.held }))
        engine.setSpeed(id: 1, speed: 1.25)
        output.hold(from: nil)
        XCTAssertTrue(log.wait(for: .failed(id: 1, reason: "cannot play at speed 1.25 (20 channels)")), "\(log.tracks)")
        let other = try sine(seconds: 1)
        engine.play(id: 2, path: other, from: 0, paused: false, speed: 1.25)
        XCTAssertTrue(log.wait(for: .finished(id: 2)), "the engine plays on: \(log.tracks)")
        engine.shutdown()
    }
}
