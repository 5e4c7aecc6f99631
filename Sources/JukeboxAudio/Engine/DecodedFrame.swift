// SPDX-License-Identifier: MIT

/// The codecs that decode a whole frame at a time (AAC, FLAC) hold it here and hand it out over as
/// many `StreamCodec.decode` calls as the caller's buffer needs, its format reported first whenever
/// it differs from the one reported last (the `StreamCodec` contract).
struct DecodedFrame {
    /// The format last reported (nil before the first).
    private(set) var reported: AudioFormat?
    /// A format held but not reported yet.
    private var unreported: AudioFormat?
    /// The frame's interleaved samples, and how many went out.
    private var samples: [Float] = []
    private var used = 0

    /// Nothing waits to be handed out: no format, no sample.
    var isDrained: Bool { unreported == nil && used >= samples.count }

    /// Holds a decoded frame (interleaved, a whole number of `format`'s frames), replacing what is
    /// left of the last one.
    mutating func hold(_ frame: [Float], format: AudioFormat) {
        samples = frame
        used = 0
        let last = unreported ?? reported
        if last?.sampleRate != format.sampleRate || last?.channels != format.channels {
            unreported = format
        }
    }

    /// What the next `decode` returns: the format when one waits, else up to `frames` frames copied
    /// into `buffer`; nil when nothing waits (decode the next frame).
    mutating func next(into buffer: UnsafeMutableRawPointer, frames: Int) -> StreamCodecResult? {
        if let format = unreported {
            unreported = nil
            reported = format
            return .format(format)
        }
        guard let format = reported, used < samples.count else { return nil }
        let count = min(frames, (samples.count - used) / format.channels)
        let values = count * format.channels
        samples.withUnsafeBufferPointer { source in
            buffer.copyMemory(from: source.baseAddress! + used, byteCount: values * MemoryLayout<Float>.size)
        }
        used += values
        return .frames(count)
    }
}
