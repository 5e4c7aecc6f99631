// SPDX-License-Identifier: MIT
import CSndfile
import Glibc

/// Decodes one audio file with libsndfile (WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3) into interleaved PCM.
///
/// Not thread-safe: use one decoder from one thread at a time (libsndfile keeps per-handle state).
/// The sample type is chosen per source so playback can be bit-perfect: 8/16-bit PCM → `.int16`,
/// 24/32-bit PCM → `.int32` (left-justified), everything else (float, Vorbis, Opus, MP3) → `.float32`.
public final class Decoder {
    /// The file being decoded.
    public let path: String
    /// The PCM shape `read(into:frames:)` produces.
    public let format: AudioFormat
    /// Total frames, or nil when libsndfile cannot tell. MP3 without a LAME/Xing frame is an estimate.
    public let frameCount: Int64?

    private var handle: OpaquePointer?

    /// Opens `path`. Throws `DecodeError` with a readable reason when the file is missing, empty,
    /// unreadable or not in a format libsndfile decodes.
    public init(path: String) throws(DecodeError) {
        self.path = path
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw DecodeError(path: path, reason: Self.openFailureReason(path: path))
        }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(handle)
            throw DecodeError(path: path, reason: "no audio in file")
        }
        self.handle = handle
        self.format = AudioFormat(sampleRate: Int(info.samplerate), channels: Int(info.channels),
                                  sample: Self.sampleType(forSubtype: Int(info.format) & SF_FORMAT_SUBMASK))
        self.frameCount = info.frames >= 0 && info.frames < Int64.max / 2 ? info.frames : nil
    }

    deinit { close() }

    /// Decodes up to `frames` frames into `buffer` (which must hold `frames * format.bytesPerFrame` bytes).
    /// Returns the frames decoded; 0 at the end of the file or on a decoding error.
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let handle, frames > 0 else { return 0 }
        let count = sf_count_t(frames)
        let got: sf_count_t
        switch format.sample {
        case .int16: got = sf_readf_short(handle, buffer.assumingMemoryBound(to: Int16.self), count)
        case .int32: got = sf_readf_int(handle, buffer.assumingMemoryBound(to: Int32.self), count)
        case .float32: got = sf_readf_float(handle, buffer.assumingMemoryBound(to: Float.self), count)
        }
        return Int(got)
    }

    /// Positions the next `read` at `frame` (clamped to 0). Sample-exact except Ogg Vorbis, where
    /// libsndfile 1.2 may land a few hundred frames off. Throws when the file cannot seek.
    public func seek(toFrame frame: Int64) throws(DecodeError) {
        guard let handle else { throw DecodeError(path: path, reason: "decoder is closed") }
        if sf_seek(handle, sf_count_t(max(0, frame)), SEEK_SET) < 0 {
            throw DecodeError(path: path, reason: "cannot seek: " + String(cString: sf_strerror(handle)))
        }
    }

    /// Releases the file; later reads return 0. Safe to call more than once.
    public func close() {
        if let handle { sf_close(handle) }
        handle = nil
    }

    static func sampleType(forSubtype subtype: Int) -> SampleType {
        switch subtype {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_PCM_16,
             SF_FORMAT_ULAW, SF_FORMAT_ALAW, SF_FORMAT_DWVW_12,
             SF_FORMAT_DWVW_16, SF_FORMAT_DPCM_8, SF_FORMAT_DPCM_16,
             SF_FORMAT_ALAC_16:
            return .int16
        case SF_FORMAT_PCM_24, SF_FORMAT_PCM_32, SF_FORMAT_DWVW_24,
             SF_FORMAT_ALAC_20, SF_FORMAT_ALAC_24, SF_FORMAT_ALAC_32:
            return .int32
        default:
            return .float32
        }
    }

    // libsndfile's own texts are terse ("File contains data in an unknown format."): say it plainly.
    private static func openFailureReason(path: String) -> String {
        var status = stat()
        if stat(path, &status) != 0 {
            return String(cString: strerror(errno)).lowercased()
        }
        if (status.st_mode & S_IFMT) == S_IFDIR { return "is a directory" }
        if status.st_size == 0 { return "file is empty" }
        if access(path, R_OK) != 0 { return String(cString: strerror(errno)).lowercased() }
        // The file exists and is readable, so libsndfile's "does not exist" (code 7, seen when the MPEG
        // probe gives up) and "unimplemented format" (18) both mean it is not audio we know.
        switch Int(sf_error(nil)) {
        case SF_ERR_UNRECOGNISED_FORMAT, 7, 18: return "not a recognised audio format"
        case SF_ERR_MALFORMED_FILE: return "malformed or truncated audio file"
        case SF_ERR_UNSUPPORTED_ENCODING: return "unsupported audio encoding"
        default:
            var text = String(cString: sf_strerror(nil))
            if text.hasSuffix(".") { text.removeLast() }
            return text.isEmpty ? "cannot open audio file" : "damaged audio file (\(text))"
        }
    }
}
