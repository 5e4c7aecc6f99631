// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// Real-time behaviour, with `SilentOutput` as the paced device. Lower bounds only: a loaded machine
/// may be slower, never faster.
final class SilentOutputTests: XCTestCase {
    func testWritesArePacedToRealTime() throws {
        let output = SilentOutput(bufferSeconds: 0.1)
        try output.open(format: AudioFormat(sampleRate: 8000, channels: 1, sample: .int16))
        let block = [Int16](repeating: 0, count: 800)
        let start = Date()
        for _ in 0..<6 { _ = try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 800) } }
        output.drain()
        // 0.6 s of audio: at least 0.55 s must pass.
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.55)
    }

    func testALongWriteNeverQueuesMoreThanTheBufferAndAnInterruptEndsIt() throws {
        let output = SilentOutput(bufferSeconds: 0.1)
        try output.open(format: AudioFormat(sampleRate: 8000, channels: 1, sample: .int16))
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        output.setInterrupt(fds[0])
        XCTAssertEqual(write(fds[1], "x", 1), 1)
        // 1 s of audio into a 0.1 s buffer with a command waiting: what fits is queued, and the
        // write returns instead of waiting 0.9 s for the rest to play out.
        let block = [Int16](repeating: 0, count: 8000)
        let start = Date()
        let queued = try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 8000) }
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
        XCTAssertGreaterThanOrEqual(queued, 800)
        XCTAssertLessThan(queued, 8000)
        XCTAssertLessThanOrEqual(output.delayFrames(), 800)
        // Without the command, the same write takes the time its audio beyond the buffer plays.
        var byte: UInt8 = 0
        XCTAssertEqual(read(fds[0], &byte, 1), 1)
        output.drop()
        let again = Date()
        XCTAssertEqual(try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 8000) }, 8000)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(again), 0.85)
        XCTAssertLessThanOrEqual(output.delayFrames(), 800)
        XCTAssertEqual(output.cutMethod, .drop)
    }

    func testEnginePlaysInRealTimeAndPositionFollows() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav16, frames: 22050) // 0.5 s
        let (log, engine) = logAndEngine { SilentOutput() }
        defer { engine.shutdown() }
        let start = Date()
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .started(id: 1)))
        var last = 0.0
        while !log.all.contains(.finished(id: 1)), let position = engine.position() {
            XCTAssertEqual(position.id, 1)
            XCTAssertGreaterThanOrEqual(position.seconds, last - 1e-9, "position went backwards")
            XCTAssertLessThanOrEqual(position.seconds, Date().timeIntervalSince(start) + 0.01, "ahead of the clock")
            last = position.seconds
            usleep(20_000)  // how often the position is sampled as it plays in real time; not synchronisation
        }
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.45)
        XCTAssertGreaterThan(last, 0.2)
        XCTAssertNil(engine.position())
    }

    func testPauseHoldsThePositionAndResumeContinues() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav16, frames: 44100 * 2)
        let log = ReportLog()
        let output = DrainWatch(SilentOutput())
        let engine = makeEngine(log) { output }
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0.5, paused: false)
        XCTAssertTrue(log.wait(for: .started(id: 1)))
        let before = try XCTUnwrap(engine.position())
        engine.pause()
        // The pause fades out and plays out what the output holds (its drain, which takes the
        // device's real time); the position follows that sound (never back) and then holds.
        var readings = [before.seconds]
        XCTAssertTrue(waitFor(10) {
            engine.position().map { readings.append($0.seconds) }
            return output.drains >= 1
        }, "the pause never played out its fade")
        let held = try XCTUnwrap(engine.position())
        readings.append(held.seconds)
        XCTAssertEqual(readings, readings.sorted(), "the position went back while the pause settled")
        XCTAssertEqual(held.id, 1)
        XCTAssertGreaterThanOrEqual(held.seconds, 0.5)
        XCTAssertLessThan(held.seconds, 1.5)
        // Real time passes on a real-time device and the position must not follow it: the time is
        // what is tested, not a wait for something to happen.
        usleep(150_000)
        XCTAssertEqual(engine.position()?.seconds, held.seconds)
        engine.resume()
        engine.resume() // no-op
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)])
    }

    func testSeekMovesThePositionWithoutAnotherStarted() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav16, frames: 44100 * 3)
        let (log, engine) = logAndEngine { SilentOutput() }
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .started(id: 1)))
        engine.seek(to: 2.8)
        let position = try XCTUnwrap(engine.position())
        XCTAssertGreaterThanOrEqual(position.seconds, 2.8)
        XCTAssertTrue(log.wait(for: .finished(id: 1), timeout: 5))
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)])
    }
}

/// A paced output (`SilentOutput`) that counts its drains: the engine drains once a pause's fade
/// is written, and writes nothing more until resumed.
final class DrainWatch: PCMOutput, @unchecked Sendable {
    private let inner: PCMOutput
    private let count = NSLock()
    private var _drains = 0

    init(_ inner: PCMOutput) { self.inner = inner }

    /// How many drains have ended.
    var drains: Int {
        count.lock()
        defer { count.unlock() }
        return _drains
    }

    func open(format: AudioFormat) throws(OutputError) { try inner.open(format: format) }
    func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int { try inner.write(buf, frames: frames) }
    func delayFrames() -> Int { inner.delayFrames() }
    func pause(_ on: Bool) throws(OutputError) { try inner.pause(on) }
    func drop() { inner.drop() }
    func drain() {
        inner.drain()
        count.lock()
        _drains += 1
        count.unlock()
    }
    func close() { inner.close() }
    var isOpen: Bool { inner.isOpen }
}
