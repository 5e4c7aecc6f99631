// SPDX-License-Identifier: MIT
import CEbur128

/// A file's loudness as libebur128 measured it (EBU R128): integrated loudness and sample peak.
public struct MeasuredLoudness: Equatable, Sendable {
    /// Integrated loudness (LUFS).
    public var integrated: Double
    /// The highest sample of any channel (linear, 1.0 full scale).
    public var peak: Double
    /// Seconds of audio measured.
    public var seconds: Double

    /// Creates a measurement.
    public init(integrated: Double, peak: Double, seconds: Double) {
        self.integrated = integrated
        self.peak = peak
        self.seconds = seconds
    }

    /// The ReplayGain-style track gain (dB) that brings the file to `LoudnessScanner.reference`,
    /// clamped to the range a tag may give (`FileLoudness.gainRange`).
    public var trackGain: Double {
        min(max(LoudnessScanner.reference - integrated, FileLoudness.gainRange.lowerBound), FileLoudness.gainRange.upperBound)
    }
}

/// Measures a file with the player's own decoders (`FileDecoder`) into libebur128. Slow (it decodes
/// the whole file), so never on the loop or the audio thread: `LoudnessWorker` runs it.
public enum LoudnessScanner {
    /// ReplayGain 2.0's reference (LUFS): the tags' gains are relative to it (Opus's R128 gains
    /// are moved there by adding 5 dB, `FileLoudness`), so a measured gain is too.
    public static let reference = -18.0
    /// The longest file measured (seconds of audio): past it the scan stops with a reason.
    public static let maxSeconds = 6.0 * 3600
    /// Frames decoded per read.
    static let chunkFrames = 4096

    /// Measures the file at `path`, or says why not (it cannot be decoded, it is longer than
    /// `maxSeconds`, it is silent, `stop` said so). `stop` is asked between chunks.
    public static func measure(path: String, maxSeconds: Double = maxSeconds,
                               stop: () -> Bool = { false }) -> Result<MeasuredLoudness, DecodeError> {
        let source: any PCMSource
        do throws(DecodeError) { source = try FileDecoder.open(path: path) } catch { return .failure(error) }
        defer { source.close() }
        let format = source.format
        if let frames = source.frameCount, Double(frames) > maxSeconds * Double(format.sampleRate) {
            return .failure(DecodeError(path: path, reason: "longer than \(Int(maxSeconds / 60)) minutes: not measured"))
        }
        guard let meter = ebur128_init(UInt32(format.channels), UInt(format.sampleRate),
                                       Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue)) else {
            return .failure(DecodeError(path: path, reason: "libebur128 refused \(format.channels) channels at \(format.sampleRate) Hz"))
        }
        var state: UnsafeMutablePointer<ebur128_state>? = meter
        defer { ebur128_destroy(&state) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkFrames * format.bytesPerFrame, alignment: 8)
        defer { buffer.deallocate() }
        let limit = Int64(maxSeconds * Double(format.sampleRate))
        var total: Int64 = 0
        while true {
            if stop() { return .failure(DecodeError(path: path, reason: "measuring stopped")) }
            let got = source.read(into: buffer, frames: chunkFrames)
            if got <= 0 { break }
            total += Int64(got)
            if total > limit {
                return .failure(DecodeError(path: path, reason: "longer than \(Int(maxSeconds / 60)) minutes: not measured"))
            }
            let added: Int32
            switch format.sample {
            case .int16: added = ebur128_add_frames_short(meter, buffer.assumingMemoryBound(to: Int16.self), got)
            case .int32: added = ebur128_add_frames_int(meter, buffer.assumingMemoryBound(to: Int32.self), got)
            case .float32: added = ebur128_add_frames_float(meter, buffer.assumingMemoryBound(to: Float.self), got)
            }
            guard added == EBUR128_SUCCESS.rawValue else {
                return .failure(DecodeError(path: path, reason: "libebur128 failed (\(added))"))
            }
        }
        if let failure = source.failure { return .failure(failure) }
        var integrated = 0.0
        guard ebur128_loudness_global(meter, &integrated) == EBUR128_SUCCESS.rawValue, integrated.isFinite else {
            return .failure(DecodeError(path: path, reason: "silent or too short to measure"))
        }
        var peak = 0.0
        for channel in 0..<format.channels {
            var p = 0.0
            if ebur128_sample_peak(meter, UInt32(channel), &p) == EBUR128_SUCCESS.rawValue, p.isFinite { peak = max(peak, p) }
        }
        let seconds = Double(total) / Double(format.sampleRate)
        return .success(MeasuredLoudness(integrated: integrated, peak: peak, seconds: seconds))
    }
}
