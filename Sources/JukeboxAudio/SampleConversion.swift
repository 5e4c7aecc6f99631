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

    /// Scales `samples` samples of type `type` in place by `gain` (0...1).
    static func applyGain(_ gain: Double, to buffer: UnsafeMutableRawPointer, type: SampleType, samples: Int) {
        for i in 0..<samples {
            switch type {
            case .int16:
                let v = Double(buffer.load(fromByteOffset: i * 2, as: Int16.self)) * gain
                buffer.storeBytes(of: Int16(v.rounded()), toByteOffset: i * 2, as: Int16.self)
            case .int32:
                let v = Double(buffer.load(fromByteOffset: i * 4, as: Int32.self)) * gain
                buffer.storeBytes(of: Int32(v.rounded()), toByteOffset: i * 4, as: Int32.self)
            case .float32:
                let v = buffer.load(fromByteOffset: i * 4, as: Float.self) * Float(gain)
                buffer.storeBytes(of: v, toByteOffset: i * 4, as: Float.self)
            }
        }
    }

    /// The linear gain for a volume in percent: a cubic curve, close to perceived loudness
    /// (50 % ≈ -18 dB, 10 % = -60 dB); 0 is silence, 100 is unity.
    static func gain(percent: Int) -> Double {
        let p = Double(min(max(percent, 0), 100)) / 100
        return p * p * p
    }

    private static func store(_ value: Double, as type: SampleType, into target: UnsafeMutableRawPointer, at i: Int) {
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
