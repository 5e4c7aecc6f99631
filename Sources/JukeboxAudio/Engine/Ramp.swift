// SPDX-License-Identifier: MIT

/// The writer's software gain: the volume's gain times a fade (0 or 1), moving toward its target at
/// a bounded slope, so neither a volume change nor a pause, seek, skip or stop is a step.
///
/// The envelope is linear in amplitude: from one frame to the next the gain changes by at most
/// `step` = 1 / `frames(rate:)`, so a full-scale fade (1 ↔ 0) takes `fullScaleSeconds` and a smaller
/// change proportionally less. While the gain is 1 and settled (`isUnity`) samples are not touched.
struct GainRamp {
    /// Seconds a fade over the whole scale (0 ↔ 1) takes. 15 ms: short enough not to be heard as a
    /// fade, long enough that the envelope's spectrum stays below ~70 Hz (no click).
    static let fullScaleSeconds = 0.015

    /// The gain of the last frame processed.
    private(set) var current = 1.0
    /// Where the gain is heading.
    private(set) var target = 1.0
    /// The largest change of the gain from one frame to the next.
    private(set) var step = 1.0 / Double(frames(rate: 44100))
    /// The dither source for 16-bit output (deterministic, so runs are reproducible).
    var dither = TPDF()

    /// Frames a full-scale fade takes at `rate` (15 ms: 662 frames at 44.1 kHz, 720 at 48 kHz).
    static func frames(rate: Int) -> Int { max(1, Int((fullScaleSeconds * Double(rate)).rounded())) }

    /// Sets the slope for a stream at `rate` frames per second.
    mutating func configure(rate: Int) { step = 1 / Double(Self.frames(rate: rate)) }

    /// The gain is 1 and stays 1: samples pass untouched.
    var isUnity: Bool { current == 1 && target == 1 }

    /// Frames until the gain reaches its target.
    var framesToTarget: Int { Int((abs(target - current) / step).rounded(.up)) }

    /// Heads for `gain` (0...1) from wherever the gain is now.
    mutating func retarget(_ gain: Double) { target = min(max(gain, 0), 1) }

    /// Sets the gain at once (at a stream start, where nothing audible comes before).
    mutating func jump(to gain: Double) {
        target = min(max(gain, 0), 1)
        current = target
    }

    /// Applies the gain to `frames` interleaved frames in place, advancing it by one step per frame
    /// (the first frame already gets `current ± step`).
    mutating func apply(to buffer: UnsafeMutableRawPointer, type: SampleType, frames: Int, channels: Int) {
        SampleConversion.applyRamp(&self, to: buffer, type: type, frames: frames, channels: channels)
    }

    /// Moves `current` one step toward `target`; used per frame by `SampleConversion.applyRamp`.
    @inline(__always)
    mutating func advance() -> Double {
        if current < target {
            current = min(target, current + step)
        } else if current > target {
            current = max(target, current - step)
        }
        return current
    }
}

/// Triangular (TPDF) dither of ±1 LSB peak: the difference of two uniform 16-bit values from one
/// xorshift32 draw. Decorrelates the rounding error of a 16-bit gain from the signal at −96 dBFS-level
/// noise; one multiply-free draw per sample.
struct TPDF {
    private var state: UInt32 = 0x9E37_79B9

    /// The next dither value, in (−1, 1) LSB.
    @inline(__always)
    mutating func next() -> Double {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        return Double(Int(state & 0xFFFF) - Int(state >> 16)) * (1.0 / 65536)
    }
}

/// The writer's fade bookkeeping: the gain, the last frames of the stream held back so there is
/// always audio to fade out (`tail`), and whether the next stream starts with a fade-in.
///
/// Why a tail: audio handed to ALSA cannot be changed, so an interruption (pause, seek, skip, stop)
/// fades out the held-back frames, lets the device play out what it has (`drain`, at most one device
/// buffer, ~200 ms) and only then stops. Works on every device, including those that can neither
/// pause nor rewind. While nothing interrupts, the tail is written unchanged before the next chunk,
/// so gapless continuations and full-volume playback stay bit-exact.
struct FadeState {
    var gain = GainRamp()
    /// The last frames taken from the queue and not yet written, and whether they start their track.
    private(set) var tail: PCMChunk?
    private(set) var tailStarts = false
    /// The next frames written start a stream: the gain jumps to the volume, or starts at 0 (a
    /// fade-in) when they do not begin their track (seek, resume, a play from a saved position).
    var fadeInNext = true
    /// The volume of the last chunk taken (for writing the tail at a track's end), or of the
    /// audio last rewritten at a new volume.
    var volume = 100
    /// While true the gain heads for 0 (the tail being faded out).
    var fadingOut = false

    /// Takes `chunk` from the queue: returns what to write now, in order (the previous tail, then all
    /// but the last `GainRamp.frames(rate:)` frames of `chunk`), and holds those last frames back.
    mutating func take(_ chunk: PCMChunk, volume: Int, starts: Bool) -> [(chunk: PCMChunk, starts: Bool)] {
        self.volume = volume
        var out: [(chunk: PCMChunk, starts: Bool)] = []
        let keep = min(chunk.frames, GainRamp.frames(rate: chunk.format.sampleRate))
        if var joined = tail, keep < chunk.frames, joined.serial == chunk.serial, joined.format == chunk.format,
           joined.startFrame + Int64(joined.frames) == chunk.startFrame {
            // The tail and the chunk's head are one run of the same opening: one write, not two.
            let head = chunk.frames - keep
            joined.bytes += chunk.bytes[0..<head * chunk.format.bytesPerFrame]
            joined.frames += head
            out.append((joined, tailStarts))
            tail = chunk.frames(head..<chunk.frames)
            tailStarts = false
            return out
        }
        if let tail { out.append((tail, tailStarts)) }
        if keep < chunk.frames {
            out.append((chunk.frames(0..<chunk.frames - keep), starts))
            tail = chunk.frames(chunk.frames - keep..<chunk.frames)
            tailStarts = false
        } else {
            tail = chunk
            tailStarts = starts
        }
        return out
    }

    /// Hands over the held-back frames (to write unchanged at a track's end, or to fade out).
    mutating func takeTail() -> (chunk: PCMChunk, starts: Bool)? {
        defer { tail = nil; tailStarts = false }
        return tail.map { ($0, tailStarts) }
    }

    /// Sets the gain for the next frames written (`chunk`) at `volume`; true when samples must be
    /// processed (false: unity, pass them untouched).
    mutating func prepare(for chunk: PCMChunk, volume: Int) -> Bool {
        let level = fadingOut ? 0 : VolumeCurve.gain(percent: volume)
        if fadeInNext {
            fadeInNext = false
            gain.configure(rate: chunk.format.sampleRate)
            gain.jump(to: chunk.startFrame > 0 ? 0 : level)
        }
        gain.retarget(level)
        return !gain.isUnity
    }

    /// Forgets the stream (flush, device loss): nothing held, the next frames start a stream.
    mutating func reset() {
        tail = nil
        tailStarts = false
        fadeInNext = true
        fadingOut = false
    }
}

extension PCMChunk {
    /// The frames `range` of this chunk, as a chunk of their own.
    func frames(_ range: Range<Int>) -> PCMChunk {
        let bpf = format.bytesPerFrame
        var part = self
        part.startFrame = startFrame + Int64(range.lowerBound)
        part.frames = range.count
        part.bytes = Array(bytes[range.lowerBound * bpf..<range.upperBound * bpf])
        return part
    }
}

extension AudioEngine {
    /// Frames a full fade takes at `rate` (`GainRamp.fullScaleSeconds`, 15 ms: 662 at 44.1 kHz). A play
    /// that does not start at a track's beginning (seek, resume, saved position) fades in over this
    /// many frames; pause, seek, skip and stop fade out over as many before the device stops.
    public static func fadeFrames(rate: Int) -> Int { GainRamp.frames(rate: rate) }
}
