// SPDX-License-Identifier: MIT

/// The sample encoding of interleaved PCM frames as they travel from a `Decoder` to a `PCMOutput`.
/// All types are native little-endian signed; `int32` holds 24-bit sources left-justified.
public enum SampleType: Sendable, Equatable {
    /// Signed 16-bit integers (2 bytes per sample).
    case int16
    /// Signed 32-bit integers (4 bytes per sample).
    case int32
    /// 32-bit IEEE floats, nominal range -1...1 (4 bytes per sample).
    case float32

    /// Bytes one sample of this type occupies: 2, 4 or 4.
    public var bytesPerSample: Int {
        switch self {
        case .int16: 2
        case .int32, .float32: 4
        }
    }
}

/// The shape of an interleaved PCM stream.
public struct AudioFormat: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Int
    /// Samples per frame.
    public var channels: Int
    /// Encoding of each sample.
    public var sample: SampleType

    /// Creates a format; no validation happens here (the output rejects what it cannot play).
    public init(sampleRate: Int, channels: Int, sample: SampleType) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sample = sample
    }

    /// Bytes one interleaved frame occupies.
    public var bytesPerFrame: Int { channels * sample.bytesPerSample }
}
