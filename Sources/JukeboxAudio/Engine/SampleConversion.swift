// SPDX-License-Identifier: MIT

/// Sample-type conversion and software gain on interleaved buffers.
enum SampleConversion {
    /// The device formats to try for a source, best first: the source's own type (bit-perfect), then
    /// lossless widenings, then the rest.
    static func candidates(for sample: SampleType) -> [SampleType] {
        switch sample {
        case .int16: [.int16, .int32, .float32]
        case .int32: [.int32, .float32, .int16]
        case .float32: [.float32, .int32, .int16]
        }
    }

    /// Converts `samples` samples from `from` in `source` to `to` in `target`
    /// (which holds `samples * to.bytesPerSample` bytes). Float → int rounds and clips.
    static func convert(_ source: UnsafeRawPointer, from: SampleType, to: SampleType,
                        _ target: UnsafeMutableRawPointer, samples: Int) {
        if from == to {
            target.copyMemory(from: source, byteCount: samples * from.bytesPerSample)
            return
        }
        for i in 0..<samples {
            let value: Double
            switch from {
            case .int16: value = Double(source.load(fromByteOffset: i * 2, as: Int16.self)) / 32768
            case .int32: value = Double(source.load(fromByteOffset: i * 4, as: Int32.self)) / 2_147_483_648
            case .float32: value = Double(source.load(fromByteOffset: i * 4, as: Float.self))
            }
            store(value, as: to, into: target, at: i)
        }
    }

    /// Scales `samples` samples of type `type` in place by a constant `gain` (≥ 0; above 1 for a
    /// ReplayGain boost), rounding to nearest without dither; integers saturate at full scale, never
    /// wrap. At 1 nothing changes (bit-exact); a gain that is not finite or is negative counts as 1.
    static func applyGain(_ gain: Double, to buffer: UnsafeMutableRawPointer, type: SampleType, samples: Int) {
        guard gain != 1, gain.isFinite, gain >= 0 else { return }
        for i in 0..<samples {
            switch type {
            case .int16:
                let v = (Double(buffer.load(fromByteOffset: i * 2, as: Int16.self)) * gain).rounded()
                buffer.storeBytes(of: Int16(min(max(v, -32768), 32767)), toByteOffset: i * 2, as: Int16.self)
            case .int32:
                let v = (Double(buffer.load(fromByteOffset: i * 4, as: Int32.self)) * gain).rounded()
                buffer.storeBytes(of: Int32(min(max(v, -2_147_483_648), 2_147_483_647)), toByteOffset: i * 4, as: Int32.self)
            case .float32:
                let v = buffer.load(fromByteOffset: i * 4, as: Float.self) * Float(gain)
                buffer.storeBytes(of: v, toByteOffset: i * 4, as: Float.self)
            }
        }
    }

    /// Applies `ramp` to `frames` interleaved frames in place, one gain step per frame.
    ///
    /// Per sample: a gain of exactly 1 leaves the sample untouched, exactly 0 writes 0 (digital
    /// silence, no dither); otherwise int16 gets TPDF dither of ±1 LSB before rounding (its rounding
    /// error would be audible as distortion on quiet passages), int32 is rounded to nearest (its
    /// error lies far below any DAC's noise) and float32 is scaled. Results are clamped, so nothing
    /// wraps; with gain ≤ 1 only the dither can reach past full scale.
    static func applyRamp(_ ramp: inout GainRamp, to buffer: UnsafeMutableRawPointer, type: SampleType,
                          frames: Int, channels: Int) {
        switch type {
        case .int16:
            let p = buffer.assumingMemoryBound(to: Int16.self)
            for f in 0..<frames {
                let g = ramp.advance()
                if g == 1 { continue }
                for i in f * channels..<(f + 1) * channels {
                    if g == 0 { p[i] = 0; continue }
                    let v = (Double(p[i]) * g + ramp.dither.next()).rounded()
                    p[i] = Int16(min(max(v, -32768), 32767))
                }
            }
        case .int32:
            let p = buffer.assumingMemoryBound(to: Int32.self)
            for f in 0..<frames {
                let g = ramp.advance()
                if g == 1 { continue }
                for i in f * channels..<(f + 1) * channels {
                    let v = (Double(p[i]) * g).rounded()
                    p[i] = Int32(min(max(v, -2_147_483_648), 2_147_483_647))
                }
            }
        case .float32:
            let p = buffer.assumingMemoryBound(to: Float.self)
            for f in 0..<frames {
                let g = ramp.advance()
                if g == 1 { continue }
                let gf = Float(g)
                for i in f * channels..<(f + 1) * channels { p[i] *= gf }
            }
        }
    }

    /// Calls `body` with `chunk`'s frames as `device` samples, with `ramp` applied when `applying`.
    /// Passes the chunk's own bytes when nothing changes (bit-perfect); otherwise works in `scratch`.
    static func render<R>(_ chunk: PCMChunk, as device: SampleType, ramp: inout GainRamp, applying: Bool,
                          scratch: inout [UInt8], _ body: (UnsafeRawPointer) -> R) -> R {
        if device == chunk.format.sample && !applying {
            return chunk.bytes.withUnsafeBytes { body($0.baseAddress!) }
        }
        let samples = chunk.frames * chunk.format.channels
        let needed = samples * device.bytesPerSample
        if scratch.count < needed { scratch = [UInt8](repeating: 0, count: needed) }
        return scratch.withUnsafeMutableBytes { target in
            chunk.bytes.withUnsafeBytes { source in
                convert(source.baseAddress!, from: chunk.format.sample, to: device, target.baseAddress!, samples: samples)
            }
            if applying {
                ramp.apply(to: target.baseAddress!, type: device, frames: chunk.frames, channels: chunk.format.channels)
            }
            return body(target.baseAddress!)
        }
    }

    /// The linear gain for a volume in percent (`VolumeCurve.gain(percent:)`): ALSA's mapped-volume
    /// cubic curve over 60 dB; 0 is silence, 100 is unity.
    static func gain(percent: Int) -> Double {
        VolumeCurve.gain(percent: percent)
    }

    private static func store(_ value: Double, as type: SampleType, into target: UnsafeMutableRawPointer, at i: Int) {
        // A float source can hold NaN (a damaged or hostile Vorbis stream's codebook, a float file):
        // min/max pass it through and Int16(NaN) traps; it is silence instead.
        let value = value.isNaN ? 0 : value
        switch type {
        case .int16:
            let scaled = min(max((value * 32768).rounded(), -32768), 32767)
            target.storeBytes(of: Int16(scaled), toByteOffset: i * 2, as: Int16.self)
        case .int32:
            let scaled = min(max((value * 2_147_483_648).rounded(), -2_147_483_648), 2_147_483_647)
            target.storeBytes(of: Int32(scaled), toByteOffset: i * 4, as: Int32.self)
        case .float32:
            target.storeBytes(of: Float(value), toByteOffset: i * 4, as: Float.self)
        }
    }
}
