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

    /// The left channel of float output.
    private func leftFloats(_ bytes: [UInt8]) -> [Float] {
        bytes.withUnsafeBytes { raw in
            let all = raw.bindMemory(to: Float.self)
            return stride(from: 0, to: all.count, by: 2).map { all[$0] }
        }
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
        XCTAssertEqual(output.opens.map(\.sample), [.float32])
        let left = leftFloats(output.bytes)
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
            let heard = 1 + Double(before.bytes / 8) * 1.25 / Double(rate)
            worst = max(worst, abs(position.seconds - heard))
            checked += 1
            usleep(10_000)
        }
        engine.shutdown()
        print("positions checked: \(checked), worst off the written output's source time by \(worst) s")
        XCTAssertGreaterThanOrEqual(checked, 3, "too few looks midway to tell")
        XCTAssertLessThan(worst, 0.15, "a position counted in output time is off by up to 0.8 s here")
        let played = Double(output.bytes.count / 8) / Double(rate)
        XCTAssertEqual(played, 3 / 1.25, accuracy: 2.4 * 0.02, "3 s of source from 1 s at 1.25")
    }
}
