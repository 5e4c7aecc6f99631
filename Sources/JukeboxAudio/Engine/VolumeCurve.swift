// SPDX-License-Identifier: MIT
import Glibc

/// The mapping from a volume in percent to sound: ALSA's "mapped volume" (alsa-utils
/// `volume_mapping.c`, what alsamixer shows), used both for mixer controls and for the software gain.
///
/// With a control spanning more than 24 dB, a fraction `f` (0...1) means the normalised amplitude
/// `n = f · (1 − n_min) + n_min` where `n = 10^((dB − dB_max) / 60)`: the cube root of the linear
/// amplitude relative to the maximum, so `amplitude = n³` (a cubic curve, close to perceived
/// loudness), shifted so that 0 lands on the control's minimum. With a range of 24 dB or less the
/// fraction is linear in dB; a control without dB information is linear in its raw steps.
/// All dB values here are in ALSA's unit, 0.01 dB.
public enum VolumeCurve {
    /// Ranges up to this many 0.01 dB map linearly in dB (alsa-utils `MAX_LINEAR_DB_SCALE`).
    public static let maxLinearRange = 2400
    /// ALSA's "muted" minimum (`SND_CTL_TLV_DB_GAIN_MUTE`).
    public static let mute = -9_999_999
    /// The range the software gain spans above silence: 1 % is about −57 dB, 0 % is silence.
    public static let softwareRangeDB = 60.0

    /// The dB value (0.01 dB, unrounded) for `fraction` (clamped to 0...1) on a control spanning
    /// `min...max`. `min` may be `mute`; fraction 0 then returns `mute`.
    public static func dB(fraction: Double, min: Int, max: Int) -> Double {
        let f = Swift.min(Swift.max(fraction, 0), 1)
        guard max > min else { return Double(max) }
        if max - min <= maxLinearRange { return Double(min) + f * Double(max - min) }
        var n = f
        if min != mute {
            let minNorm = pow(10, Double(min - max) / 6000)
            n = f * (1 - minNorm) + minNorm
        }
        guard n > 0 else { return Double(mute) }
        return Swift.max(Double(min), 6000 * log10(n) + Double(max))
    }

    /// The fraction (0...1) a control spanning `min...max` shows at `value` (0.01 dB): the inverse of
    /// `dB(fraction:min:max:)`.
    public static func fraction(dB value: Int, min: Int, max: Int) -> Double {
        guard max > min else { return 1 }
        let v = Swift.min(Swift.max(value, min), max)
        if max - min <= maxLinearRange { return Double(v - min) / Double(max - min) }
        var n = pow(10, Double(v - max) / 6000)
        if min != mute {
            let minNorm = pow(10, Double(min - max) / 6000)
            n = (n - minNorm) / (1 - minNorm)
        }
        return Swift.min(Swift.max(n, 0), 1)
    }

    /// The raw step for `fraction` on a control without dB information: linear, rounded to nearest.
    public static func raw(fraction: Double, min: Int, max: Int) -> Int {
        let f = Swift.min(Swift.max(fraction, 0), 1)
        return min + Int((f * Double(max - min)).rounded())
    }

    /// The fraction a control without dB information shows at raw step `value`.
    public static func fraction(raw value: Int, min: Int, max: Int) -> Double {
        guard max > min else { return 1 }
        return Double(Swift.min(Swift.max(value, min), max) - min) / Double(max - min)
    }

    /// The percent (0...100) nearest to `fraction`.
    public static func percent(fraction: Double) -> Int {
        Int((Swift.min(Swift.max(fraction, 0), 1) * 100).rounded())
    }

    /// The software gain (linear amplitude) for `percent` (clamped to 0...100): the mapped-volume curve
    /// over `softwareRangeDB` dB. Exactly 0 at 0 (silence), exactly 1 at 100 (bit-perfect), strictly
    /// increasing in between (50 % ≈ −15.6 dB, 10 % ≈ −43.3 dB, 1 % ≈ −57.7 dB).
    public static func gain(percent: Int) -> Double {
        let p = Swift.min(Swift.max(percent, 0), 100)
        if p == 0 { return 0 }
        if p == 100 { return 1 }
        let minNorm = pow(10, -softwareRangeDB / 60)
        let n = Double(p) / 100 * (1 - minNorm) + minNorm
        return n * n * n
    }
}
