// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// Collects engine reports and lets a test wait for one.
final class ReportLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [AudioEngine.Report] = []

    func append(_ report: AudioEngine.Report) {
        condition.lock()
        items.append(report)
        condition.broadcast()
        condition.unlock()
    }

    var all: [AudioEngine.Report] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }

    /// All reports except `.firstSample`, which arrives once per engine at an engine-chosen moment.
    var tracks: [AudioEngine.Report] { all.filter { $0 != .firstSample } }

    /// Waits until a report matching `predicate` has arrived; false after `timeout` seconds.
    @discardableResult
    func wait(timeout: Double = 15, for predicate: (AudioEngine.Report) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !items.contains(where: predicate) {
            if !condition.wait(until: deadline) { return items.contains(where: predicate) }
        }
        return true
    }

    @discardableResult
    func wait(for report: AudioEngine.Report, timeout: Double = 15) -> Bool {
        wait(timeout: timeout) { $0 == report }
    }
}

/// A fresh directory, removed when the test ends.
final class Scratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("jukebox-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes test audio and returns its path.
    func audio(_ kind: TestAudio.Kind, frames: Int, name: String? = nil, sampleRate: Int? = nil,
               channels: Int = 2, tags: TestAudio.Tags? = nil) throws -> String {
        let path = self.path((name ?? "\(kind.rawValue)") + "." + kind.fileExtension)
        try TestAudio.write(path: path, kind: kind, frames: frames,
                            sampleRate: sampleRate ?? kind.requiredSampleRate ?? 44100, channels: channels, tags: tags)
        return path
    }

    /// Writes `bytes` to a file called `name` and returns its path.
    func file(_ name: String, _ bytes: [UInt8]) -> String {
        let path = self.path(name)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return path
    }

    func bytes(_ path: String) -> [UInt8] {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) } ?? []
    }
}

extension Scratch {
    /// The engine with `AlsaOutput` on a fresh test device here (`device`), paced at `speed` times
    /// real time, with `streams` as its stream settings when given. The caller shuts it down.
    func deviceEngine(speed: Double = 10, streams: StreamSettings? = nil) throws -> (pcm: TestPCM, log: ReportLog, engine: AudioEngine) {
        let pcm = try TestPCM(directory: path("device"), speed: speed)
        let (log, engine) = logAndEngine { AlsaOutput(device: pcm.name, configText: pcm.configText) }
        if let streams { engine.setStreamSettings(streams) }
        return (pcm, log, engine)
    }
}

/// Plays `path` as play `id` from `from` on `engine` and waits up to 15 s for its end.
func playToTheEnd(_ engine: AudioEngine, _ log: ReportLog, id: UInt64, path: String, from: Double = 0,
                  file: StaticString = #filePath, line: UInt = #line) {
    engine.play(id: id, path: path, from: from, paused: false)
    XCTAssertTrue(log.wait(timeout: 15) { if case .finished(id, _) = $0 { true } else { false } }, "\(log.all)",
                  file: file, line: line)
}

/// Starts `path` as play `id` on `engine`, waits up to 10 s for it to start and then up to
/// `timeout` seconds until `seconds` of it were heard.
func playUntilHeard(_ engine: AudioEngine, _ log: ReportLog, id: UInt64, path: String, seconds: Double, timeout: Double = 10,
                    file: StaticString = #filePath, line: UInt = #line) {
    engine.play(id: id, path: path, from: 0, paused: false)
    XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: id) }, "\(log.all)", file: file, line: line)
    XCTAssertTrue(TestPCM.wait(timeout: timeout) { (engine.position()?.seconds ?? 0) >= seconds }, "\(log.all)",
                  file: file, line: line)
}

extension Scratch {
    /// `path` played as play `id` from `from` to its end (15 s at most) by an engine of its own on
    /// a fresh test device at ten times real time; returns the device once the engine is shut down.
    func playedToTheEnd(id: UInt64, path: String, from: Double = 0,
                        file: StaticString = #filePath, line: UInt = #line) throws -> TestPCM {
        let (pcm, log, engine) = try deviceEngine()
        defer { engine.shutdown() }
        playToTheEnd(engine, log, id: id, path: path, from: from, file: file, line: line)
        engine.shutdown()
        return pcm
    }
}

/// A test case with a fresh `Scratch` for each test, dropped (and so removed) when it ends.
class ScratchCase: XCTestCase {
    var scratch: Scratch!

    override func setUpWithError() throws {
        scratch = try Scratch()
    }

    override func tearDown() {
        scratch = nil
    }
}

/// An in-memory `PCMOutput` that records what it is given; can refuse formats, refuse to pause, be slow
/// and lose the device. Every frame written counts as heard at once (delay 0).
final class RecordingOutput: PCMOutput, @unchecked Sendable {
    var refused: [SampleType] = []
    var canPause = true
    /// Throw `.lost` once this many frames have been written.
    var loseAfterFrames: Int?
    /// Microseconds each write takes, so a test can act in the middle of a track.
    var writeMicroseconds: UInt32 = 0
    /// While set, a write that would start at or past this many frames waits until `hold(from:)`
    /// raises or clears it: a test acts at a frame, however late its thread runs (a timed write
    /// does not: under emulation and load the whole track may be written before the test wakes).
    private var _holdFrom: Int?
    private var _held = false
    private let condition = NSCondition()
    private var _opens: [AudioFormat] = []
    private var _bytes: [UInt8] = []
    private var _closes = 0
    private var _pauses: [Bool] = []
    private var _drains = 0
    private var format: AudioFormat?
    private var framesWritten = 0
    private var writes = 0
    private var waitingInWrite = false

    var opens: [AudioFormat] { locked { _opens } }
    /// While a write waits out `writeMicroseconds`: which write it is and the bytes taken before
    /// it. The engine counted every one of those (it counts a write when the write returns, and
    /// writes one at a time), so its position then stands exactly for them; nil otherwise.
    var waitingWrite: (serial: Int, bytes: Int)? { locked { waitingInWrite ? (writes, _bytes.count) : nil } }
    var bytes: [UInt8] { locked { _bytes } }
    var closes: Int { locked { _closes } }
    var pauses: [Bool] { locked { _pauses } }
    var isOpen: Bool { locked { format != nil } }

    /// What a waiting test can look at.
    struct Snapshot {
        var opens: Int
        var closes: Int
        var pauses: [Bool]
        var frames: Int
        /// How many times the engine played out what it had written (`drain`): a pause does, once
        /// its fade-out is written, and writes nothing more until resumed.
        var drains: Int
        /// A write waits at the frame `hold(from:)` named.
        var held: Bool
    }

    /// Holds the writes from `frames` on (nil: lets them go).
    func hold(from frames: Int?) { change { _holdFrom = frames } }

    /// Waits until `predicate` holds; false after `timeout` seconds.
    func wait(timeout: Double = 10, until predicate: (Snapshot) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let snapshot = Snapshot(opens: _opens.count, closes: _closes, pauses: _pauses, frames: framesWritten, drains: _drains, held: _held)
            if predicate(snapshot) { return true }
            if !condition.wait(until: deadline) { return false }
        }
    }

    func open(format: AudioFormat) throws(OutputError) {
        if refused.contains(format.sample) {
            throw OutputError(kind: .unsupported, message: "refuses \(format.sample)")
        }
        change {
            _opens.append(format)
            self.format = format
        }
    }

    func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int {
        guard let format = locked({ format }) else { return 0 }
        if let limit = loseAfterFrames, framesWritten + frames > limit {
            throw OutputError(kind: .lost, message: "unplugged")
        }
        condition.lock()
        while let hold = _holdFrom, framesWritten >= hold {
            if !_held { _held = true; condition.broadcast() }
            condition.wait()
        }
        _held = false
        condition.unlock()
        // A device that takes time to play what it is given (not synchronisation: nothing waits on it).
        if writeMicroseconds > 0 {
            change { writes += 1; waitingInWrite = true }
            usleep(writeMicroseconds)
        }
        change {
            _bytes.append(contentsOf: UnsafeRawBufferPointer(start: buf, count: frames * format.bytesPerFrame))
            framesWritten += frames
            waitingInWrite = false
        }
        return frames
    }

    func delayFrames() -> Int { 0 }

    func pause(_ on: Bool) throws(OutputError) {
        guard canPause else { throw OutputError(kind: .unsupported, message: "cannot pause") }
        change { _pauses.append(on) }
    }

    func drop() {}
    func drain() { change { _drains += 1 } }

    func close() {
        change {
            if format != nil { _closes += 1 }
            format = nil
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private func change(_ body: () -> Void) {
        condition.lock()
        body()
        condition.broadcast()
        condition.unlock()
    }
}

/// Builds an engine whose reports go to `log`.
func makeEngine(_ log: ReportLog, output: @escaping () -> PCMOutput) -> AudioEngine {
    AudioEngine(makeOutput: output, report: { log.append($0) })
}

/// A fresh `RecordingOutput`, a report log and an engine reporting to it that plays into that output.
func recordingEngine() -> (RecordingOutput, ReportLog, AudioEngine) {
    let output = RecordingOutput()
    let (log, engine) = logAndEngine { output }
    return (output, log, engine)
}

/// A fresh report log and an engine reporting to it, on the output `output` makes.
func logAndEngine(output: @escaping () -> PCMOutput) -> (ReportLog, AudioEngine) {
    let log = ReportLog()
    return (log, makeEngine(log, output: output))
}

/// The ALSA file plugin as a recording device: byte-exact, unpaced, no sound card needed.
func fileDevice(_ path: String) -> String { "file:FILE=\(path),FORMAT=raw" }

/// Asserts two byte arrays are equal, reporting the first differing frame instead of dumping both.
func assertSameAudio(_ actual: [UInt8], _ expected: ArraySlice<UInt8>, bytesPerFrame: Int, _ message: String,
                     file: StaticString = #filePath, line: UInt = #line) {
    let expected = Array(expected)
    if actual == expected { return }
    let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, expected.count)
    XCTFail("\(message): \(actual.count / bytesPerFrame) frames recorded, \(expected.count / bytesPerFrame) expected, "
            + "first difference at frame \(firstDifference / bytesPerFrame)", file: file, line: line)
}
