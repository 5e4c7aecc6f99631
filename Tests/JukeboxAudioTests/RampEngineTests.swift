// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import XCTest

/// Fades around pause, resume, seek, skip, stop and volume changes, measured on what the output
/// receives. The test tracks are DC (every sample the same value), so the output divided by that value
/// is the gain envelope, and every frame outside a ramp must be exactly the source value.
final class RampEngineTests: ScratchCase {
    private let level = 30000
    private let rampFrames = GainRamp.frames(rate: 44100)
    /// The largest sample-to-sample change a ramp may cause on this signal: one gain step, plus rounding
    /// and ±1 LSB of dither on both samples.
    private var maxStep: Int { level / rampFrames + 3 }

    /// A 16-bit stereo 44.1 kHz WAV whose every sample is `value`.
    private func dcTrack(_ scratch: Scratch, _ name: String, seconds: Double, value: Int16) -> String {
        let frames = Int(seconds * 44100)
        var data = [UInt8]()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        data += Array("RIFF".utf8); u32(UInt32(36 + frames * 4)); data += Array("WAVEfmt ".utf8)
        u32(16); u16(1); u16(2); u32(44100); u32(44100 * 4); u16(4); u16(16)
        data += Array("data".utf8); u32(UInt32(frames * 4))
        let sample = UInt16(bitPattern: value)
        for _ in 0..<frames * 2 { u16(sample) }
        return scratch.file(name + ".wav", data)
    }

    /// The left channel of what the output received.
    private func left(_ output: RecordingOutput) -> [Int] {
        output.bytes.withUnsafeBytes { raw in
            let s = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: s.count, by: 2).map { Int(s[$0]) }
        }
    }

    /// The largest change between neighbouring frames in `range`.
    private func largestStep(_ l: [Int], _ range: Range<Int>) -> Int {
        guard range.count > 1 else { return 0 }
        return range.dropFirst().map { abs(l[$0] - l[$0 - 1]) }.max() ?? 0
    }

    /// The runs of frames that differ from `value`.
    private func runs(_ l: [Int], differingFrom value: Int) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start: Int?
        for (i, v) in l.enumerated() {
            if v != value, start == nil { start = i }
            if v == value, let s = start { result.append(s..<i); start = nil }
        }
        if let s = start { result.append(s..<l.count) }
        return result
    }

    private func engine(_ log: ReportLog, _ output: RecordingOutput) -> AudioEngine {
        output.writeMicroseconds = 10_000
        return makeEngine(log) { output }
    }

    func testPauseAndResumeFadeOutAndInAndLoseNoFrame() throws {
        let path = dcTrack(scratch, "dc", seconds: 2, value: Int16(level))
        let output = RecordingOutput()
        let log = ReportLog()
        let engine = engine(log, output)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(output.wait { $0.frames >= 10000 })
        engine.pause()
        // The pause is done once its fade-out is played out (on this output, which can only drain).
        XCTAssertTrue(output.wait { $0.drains >= 1 }, "the pause never played out its fade")
        let held = try XCTUnwrap(engine.position())
        XCTAssertEqual(held.seconds * 44100, Double(left(output).count), accuracy: 1, "held where the fade ended")
        engine.resume()
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        let l = left(output)
        XCTAssertEqual(l.count, 88200, "every frame played once")
        XCTAssertEqual(l.first, level, "a track starting at 0 does not fade in")
        XCTAssertEqual(l.last, level, "a track's own end is not faded")
        let ramp = runs(l, differingFrom: level)
        XCTAssertEqual(ramp.count, 1, "one dip: fade-out then fade-in")
        let dip = try XCTUnwrap(ramp.first)
        let bottom = try XCTUnwrap(l[dip].firstIndex(of: 0))
        let step = largestStep(l, 0..<l.count)
        print("ramp pause/resume: fade-out \(bottom - dip.lowerBound + 1) frames, fade-in \(dip.upperBound - bottom - 1) frames "
              + "(\(String(format: "%.1f", Double(dip.count) / 44.1)) ms in all), max step \(step) LSB at level \(level) (bound \(maxStep))")
        XCTAssertEqual(bottom - dip.lowerBound + 1, rampFrames)
        XCTAssertEqual(dip.upperBound - bottom - 1, rampFrames - 1)
        XCTAssertLessThanOrEqual(step, maxStep)
    }

    func testSeekFadesOutAndInAndLeavesTheRestExact() throws {
        let path = dcTrack(scratch, "dc", seconds: 3, value: Int16(level))
        let output = RecordingOutput()
        let log = ReportLog()
        let engine = engine(log, output)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(output.wait { $0.frames >= 10000 })
        engine.seek(to: 2)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        let l = left(output)
        let ramp = runs(l, differingFrom: level)
        XCTAssertEqual(ramp.count, 1, "\(ramp)")
        let dip = try XCTUnwrap(ramp.first)
        XCTAssertEqual(l.count, dip.lowerBound + rampFrames + 44100, "heard up to the fade's end, then from 2 s to the end")
        let step = largestStep(l, 0..<l.count)
        print("ramp seek: \(dip.count) frames faded (out + in), max step \(step) LSB (bound \(maxStep))")
        XCTAssertLessThanOrEqual(step, maxStep)
    }

    func testSkipFadesOutAndTheNextTrackStartsUntouched() throws {
        let first = dcTrack(scratch, "a", seconds: 2, value: Int16(level))
        let second = dcTrack(scratch, "b", seconds: 0.5, value: -20000)
        let output = RecordingOutput()
        let log = ReportLog()
        let engine = engine(log, output)
        defer { engine.shutdown() }
        engine.play(id: 1, path: first, from: 0, paused: false)
        XCTAssertTrue(output.wait { $0.frames >= 10000 })
        engine.play(id: 2, path: second, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .finished(id: 2)))
        let l = left(output)
        let next = try XCTUnwrap(l.firstIndex(of: -20000))
        XCTAssertEqual(l.count - next, 22050)
        XCTAssertTrue(l[next...].allSatisfy { $0 == -20000 }, "the next track is bit-exact from its first frame")
        XCTAssertEqual(l[next - 1], 0, "the skipped track faded to silence")
        let fade = runs(Array(l[..<next]), differingFrom: level)
        XCTAssertEqual(fade, [(next - rampFrames)..<next])
        let step = largestStep(l, 0..<next)
        print("ramp skip: fade-out \(fade.first?.count ?? 0) frames, max step \(step) LSB (bound \(maxStep))")
        XCTAssertLessThanOrEqual(step, maxStep)
    }

    func testStopFadesOutToSilence() throws {
        let path = dcTrack(scratch, "dc", seconds: 2, value: Int16(level))
        let output = RecordingOutput()
        let log = ReportLog()
        let engine = engine(log, output)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(output.wait { $0.frames >= 10000 })
        engine.stop()
        XCTAssertTrue(output.wait { $0.closes == 1 })
        let l = left(output)
        XCTAssertEqual(l.last, 0)
        XCTAssertEqual(runs(l, differingFrom: level), [(l.count - rampFrames)..<l.count])
        let step = largestStep(l, 0..<l.count)
        print("ramp stop: fade-out \(rampFrames) frames, max step \(step) LSB (bound \(maxStep))")
        XCTAssertLessThanOrEqual(step, maxStep)
    }

    func testVolumeChangesRampAndFullVolumeIsExactAgain() throws {
        let path = dcTrack(scratch, "dc", seconds: 3, value: Int16(level))
        let output = RecordingOutput()
        let log = ReportLog()
        let engine = engine(log, output)
        defer { engine.shutdown() }
        // The writes held at a frame while the volume changes, not timed: under qemu-aarch64 and a
        // busy machine the whole track was once written before the test's thread woke.
        output.hold(from: 10000)
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(output.wait { $0.held })
        engine.setVolume(30)
        output.hold(from: 40000)
        XCTAssertTrue(output.wait { $0.held && $0.frames >= 40000 })
        engine.setVolume(100)
        output.hold(from: nil)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        let l = left(output)
        XCTAssertEqual(l.count, 132300)
        let changed = runs(l, differingFrom: level)
        XCTAssertEqual(changed.count, 1, "quieter for a while, then exact again")
        let quiet = try XCTUnwrap(changed.first)
        let target = Double(level) * VolumeCurve.gain(percent: 30)
        let expectedRamp = Int(((1 - VolumeCurve.gain(percent: 30)) * Double(rampFrames)).rounded(.up))
        let down = try XCTUnwrap(l[quiet].firstIndex { abs(Double($0) - target) <= 1.5 }) - quiet.lowerBound + 1
        let up = quiet.upperBound - (try XCTUnwrap(l[quiet].lastIndex { abs(Double($0) - target) <= 1.5 }))
        let step = largestStep(l, 0..<l.count)
        print("ramp volume 100→30→100: down \(down) frames, up \(up) frames (expected ≈ \(expectedRamp)), max step \(step) LSB (bound \(maxStep))")
        XCTAssertEqual(Double(down), Double(expectedRamp), accuracy: 3)
        XCTAssertEqual(Double(up), Double(expectedRamp), accuracy: 3)
        XCTAssertLessThanOrEqual(step, maxStep)
    }

    func testGaplessContinuationAtReducedVolumeHasNoRamp() throws {
        let first = dcTrack(scratch, "a", seconds: 0.5, value: Int16(level))
        let second = dcTrack(scratch, "b", seconds: 0.5, value: Int16(level))
        let (output, log, engine) = recordingEngine()
        defer { engine.shutdown() }
        engine.setVolume(60)
        engine.play(id: 1, path: first, from: 0, paused: false, next: (id: 2, path: second))
        XCTAssertTrue(log.wait(for: .finished(id: 2)))
        let l = left(output)
        XCTAssertEqual(l.count, 44100)
        let target = Double(level) * VolumeCurve.gain(percent: 60)
        let worst = l.map { abs(Double($0) - target) }.max() ?? 0
        XCTAssertLessThanOrEqual(worst, 1.5, "the steady gain from the first frame on, also across the boundary")
    }

    func testPlayFromASavedPositionFadesIn() throws {
        let path = dcTrack(scratch, "dc", seconds: 1.5, value: Int16(level))
        let (output, log, engine) = recordingEngine()
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 1, paused: false)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        let l = left(output)
        XCTAssertEqual(l.count, 22050)
        XCTAssertEqual(runs(l, differingFrom: level), [0..<(rampFrames - 1)])
        XCTAssertLessThanOrEqual(l[0], maxStep)
        XCTAssertLessThanOrEqual(largestStep(l, 0..<l.count), maxStep)
    }
}
