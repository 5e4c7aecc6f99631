// SPDX-License-Identifier: MIT
import CSoundTouch

/// One track's tempo change with the pitch kept (libSoundTouch through `CSoundTouch`), used by the
/// decoder only when a play's speed is not 1: at 1 no instance exists and samples pass untouched.
///
/// Its output is counted against its input so positions stay in the source's time: output frame
/// `k` of a play that started at source frame `s` is source frame `s + k × speed` (SoundTouch's
/// latency delays when frames come out, not which source time they stand for), and the output
/// is cut at `input / speed` frames after the flush at the end (the flush pads with silence).
final class TimeStretch {
    /// Lowest and highest speed the engine accepts (the core keeps to 0.75...2).
    static let speeds: ClosedRange<Double> = 0.5...4
    let speed: Double
    let channels: Int
    private let handle: OpaquePointer
    /// Source frames handed in since the start of this play.
    private(set) var framesIn: Int64 = 0
    /// Output frames taken out since the start of this play.
    private(set) var framesOut: Int64 = 0
    private(set) var flushed = false

    /// A stretcher for `speed` at `rate` Hz with `channels`; nil when SoundTouch refuses them.
    init?(speed: Double, rate: Int, channels: Int) {
        guard Self.speeds.contains(speed), let handle = jb_stretch_create(Int32(clamping: rate), Int32(clamping: channels)) else { return nil }
        guard jb_stretch_set_tempo(handle, speed) == 0 else {
            jb_stretch_destroy(handle)
            return nil
        }
        self.handle = handle
        self.speed = speed
        self.channels = channels
    }

    deinit { jb_stretch_destroy(handle) }

    /// The most output frames this play may have given `framesIn` (the flush's padding cut off).
    private var outputLimit: Int64 { Int64((Double(framesIn) / speed).rounded()) }

    /// Hands `frames` interleaved float frames in and returns what is ready, as float bytes.
    func process(_ samples: UnsafePointer<Float>, frames: Int) -> [UInt8] {
        guard frames > 0, jb_stretch_put(handle, samples, UInt32(frames)) == 0 else { return [] }
        framesIn += Int64(frames)
        return take()
    }

    /// At the end of the input: what SoundTouch still holds, cut at `framesIn / speed` frames.
    func finish() -> [UInt8] {
        guard !flushed else { return [] }
        flushed = true
        jb_stretch_flush(handle)
        return take()
    }

    private func take() -> [UInt8] {
        let ready = Int(jb_stretch_ready(handle))
        guard ready > 0 else { return [] }
        let frameBytes = channels * MemoryLayout<Float>.size
        var bytes = [UInt8](repeating: 0, count: ready * frameBytes)
        let got = bytes.withUnsafeMutableBytes { raw in
            Int(jb_stretch_receive(handle, raw.baseAddress!.assumingMemoryBound(to: Float.self), UInt32(ready)))
        }
        // After the flush, the padding past the source's end is not the track's.
        let kept = flushed ? Int(max(0, min(Int64(got), outputLimit - framesOut))) : got
        framesOut += Int64(kept)
        if kept < ready { bytes.removeLast((ready - kept) * frameBytes) }
        if flushed { jb_stretch_clear(handle) }
        return bytes
    }
}
