// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import XCTest

/// The percent → sound mapping (ALSA's mapped volume) and the software gain stage, as pure functions.
final class VolumeCurveTests: XCTestCase {
    private let mute = VolumeCurve.mute

    func testSoftwareGainIsSilentAtZeroExactAtHundredAndStrictlyIncreasing() {
        XCTAssertEqual(VolumeCurve.gain(percent: 0), 0)
        XCTAssertEqual(VolumeCurve.gain(percent: -5), 0)
        XCTAssertEqual(VolumeCurve.gain(percent: 100), 1)
        XCTAssertEqual(VolumeCurve.gain(percent: 130), 1)
        for p in 1...100 {
            XCTAssertGreaterThan(VolumeCurve.gain(percent: p), VolumeCurve.gain(percent: p - 1), "at \(p)")
        }
        // The mapped-volume curve over 60 dB: amplitude = (0.1 + 0.9 p)³.
        XCTAssertEqual(20 * log10(VolumeCurve.gain(percent: 1)), -57.75, accuracy: 0.01)
        XCTAssertEqual(20 * log10(VolumeCurve.gain(percent: 10)), -43.27, accuracy: 0.01)
        XCTAssertEqual(20 * log10(VolumeCurve.gain(percent: 50)), -15.58, accuracy: 0.01)
        XCTAssertEqual(VolumeCurve.gain(percent: 50), 0.166375, accuracy: 1e-12)
        // The same numbers come out of the mixer mapping over a −60…0 dB control.
        for p in 1...99 {
            let dB = VolumeCurve.dB(fraction: Double(p) / 100, min: -6000, max: 0) / 2000
            XCTAssertEqual(pow(10, dB), VolumeCurve.gain(percent: p), accuracy: 1e-12)
        }
    }

    func testWideRangesFollowTheCubicCurveOfAlsamixer() {
        // alsa-utils volume_mapping.c, hand-evaluated: −51…0 dB at 50 % → 6000·log10(0.5·(1−10^−0.85)+10^−0.85).
        XCTAssertEqual(VolumeCurve.dB(fraction: 0.5, min: -5100, max: 0), -1461.9, accuracy: 0.1)
        XCTAssertEqual(VolumeCurve.dB(fraction: 0, min: -5100, max: 0), -5100, accuracy: 1e-9)
        XCTAssertEqual(VolumeCurve.dB(fraction: 1, min: -5100, max: 0), 0, accuracy: 1e-9)
        // A range with a mute minimum is the plain cube: amplitude = fraction³, 0 is mute.
        for f in stride(from: 0.01, through: 1, by: 0.01) {
            let dB = VolumeCurve.dB(fraction: f, min: mute, max: 0)
            XCTAssertEqual(pow(10, dB / 2000), f * f * f, accuracy: 1e-12)
        }
        XCTAssertEqual(VolumeCurve.dB(fraction: 0, min: mute, max: 0), Double(mute))
        // The maximum need not be 0 dB (controls with gain above unity).
        XCTAssertEqual(VolumeCurve.dB(fraction: 1, min: -4000, max: 600), 600, accuracy: 1e-9)
    }

    func testRangesUpTo24dBAreLinearInDB() {
        XCTAssertEqual(VolumeCurve.dB(fraction: 0.5, min: -2000, max: 0), -1000)
        XCTAssertEqual(VolumeCurve.dB(fraction: 0.25, min: -2400, max: 0), -1800)
        XCTAssertEqual(VolumeCurve.fraction(dB: -600, min: -2400, max: 0), 0.75)
        // Just above 24 dB the curve is no longer linear.
        XCTAssertNotEqual(VolumeCurve.dB(fraction: 0.5, min: -2401, max: 0), -1200.5, accuracy: 1)
    }

    func testFractionInvertsDBForEveryPercentOnTypicalRanges() {
        for (lo, hi) in [(-2000, 0), (-4650, 0), (-5100, 0), (-10350, 0), (mute, 0), (-6000, 0), (-9000, 600)] {
            var last = -Double.infinity
            for p in 0...100 {
                let dB = VolumeCurve.dB(fraction: Double(p) / 100, min: lo, max: hi)
                XCTAssertGreaterThanOrEqual(dB, last, "monotonic on \(lo)…\(hi) at \(p)")
                last = dB
                let back = VolumeCurve.fraction(dB: Int(dB.rounded()), min: lo, max: hi)
                XCTAssertEqual(VolumeCurve.percent(fraction: back), p, "\(lo)…\(hi) at \(p)")
            }
        }
    }

    func testRawStepsAreLinear() {
        XCTAssertEqual(VolumeCurve.raw(fraction: 0, min: 0, max: 63), 0)
        XCTAssertEqual(VolumeCurve.raw(fraction: 0.5, min: 0, max: 63), 32)
        XCTAssertEqual(VolumeCurve.raw(fraction: 1, min: 0, max: 63), 63)
        XCTAssertEqual(VolumeCurve.raw(fraction: 0.5, min: -10, max: 10), 0)
        for p in 0...100 {
            let raw = VolumeCurve.raw(fraction: Double(p) / 100, min: 0, max: 255)
            XCTAssertEqual(VolumeCurve.percent(fraction: VolumeCurve.fraction(raw: raw, min: 0, max: 255)), p)
        }
    }
}

/// The software gain stage: untouched at unity, bounded slope, silence at 0, dither, no clipping.
final class VolumeGainStageTests: XCTestCase {
    private func apply(_ samples: [Int16], _ ramp: inout GainRamp, channels: Int = 2) -> [Int16] {
        var buffer = samples
        buffer.withUnsafeMutableBytes { ramp.apply(to: $0.baseAddress!, type: .int16, frames: samples.count / channels, channels: channels) }
        return buffer
    }

    func testUnityLeavesEverySampleUntouched() {
        var ramp = GainRamp()
        let input: [Int16] = (0..<4000).map { Int16(truncatingIfNeeded: $0 &* 7919) }
        XCTAssertEqual(apply(input, &ramp), input)
        XCTAssertTrue(ramp.isUnity)
    }

    func testRampFromFullToSilenceTakesFifteenMillisecondsWithBoundedSteps() {
        var ramp = GainRamp()
        ramp.configure(rate: 44100)
        ramp.retarget(0)
        let frames = GainRamp.frames(rate: 44100)
        XCTAssertEqual(frames, 662)
        XCTAssertEqual(GainRamp.frames(rate: 48000), 720)
        let input = [Int16](repeating: 32767, count: 2 * (frames + 100))
        let out = apply(input, &ramp)
        let left = stride(from: 0, to: out.count, by: 2).map { Int(out[$0]) }
        let maxStep = zip(left, left.dropFirst()).map { abs($0 - $1) }.max() ?? 0
        let lastNonZero = left.lastIndex { $0 != 0 } ?? -1
        print("gain stage: full-scale fade over \(lastNonZero + 1) frames (\(frames) expected), max step \(maxStep) LSB (bound \(32767 / frames + 3))")
        XCTAssertEqual(lastNonZero + 1, frames - 1, "the frame at `frames` is the first at exactly 0")
        XCTAssertLessThanOrEqual(maxStep, 32767 / frames + 3)
        XCTAssertTrue(left[frames...].allSatisfy { $0 == 0 }, "silence is exact zero, without dither")
        XCTAssertEqual(ramp.framesToTarget, 0)
    }

    func testSteadyGainRoundsWithTriangularDitherAndNeverClipsOrWraps() {
        var ramp = GainRamp()
        ramp.jump(to: 0.999)
        let input: [Int16] = (0..<20000).map { $0 % 2 == 0 ? 32767 : -32768 }
        let out = apply(input, &ramp, channels: 1)
        for (x, y) in zip(input, out) {
            let exact = Double(x) * 0.999
            XCTAssertLessThanOrEqual(abs(Double(y) - exact), 1.5)
        }
        // Dither is unbiased: the mean error over many samples is near 0.
        ramp.jump(to: 0.3)
        let quiet = [Int16](repeating: 1001, count: 100_000)
        let q = apply(quiet, &ramp, channels: 1)
        let mean = q.reduce(0.0) { $0 + Double($1) } / Double(q.count)
        XCTAssertEqual(mean, 300.3, accuracy: 0.05)
        XCTAssertEqual(Set(q), [299, 300, 301])
    }

    func testInt32AndFloatAreScaledWithoutDither() {
        var ramp = GainRamp()
        ramp.jump(to: 0.5)
        var ints: [Int32] = [Int32.max, Int32.min, 3, -3]
        ints.withUnsafeMutableBytes { ramp.apply(to: $0.baseAddress!, type: .int32, frames: 2, channels: 2) }
        XCTAssertEqual(ints, [1_073_741_824, -1_073_741_824, 2, -2])
        var floats: [Float] = [1, -1, 0.5, 0]
        floats.withUnsafeMutableBytes { ramp.apply(to: $0.baseAddress!, type: .float32, frames: 2, channels: 2) }
        XCTAssertEqual(floats, [0.5, -0.5, 0.25, 0])
    }
}
