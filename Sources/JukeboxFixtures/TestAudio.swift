// SPDX-License-Identifier: MIT
import CSndfile
import Foundation
import Glibc

/// Writes and reads test audio with libsndfile, so tests need no checked-in media.
///
/// The signal is deterministic and never repeats: two sines plus hashed noise, so an offset, a missing
/// or a doubled frame shows up in a comparison. `decode(path:)` is the oracle the player is checked
/// against: it chooses the sample type the way the player does (8/16-bit PCM → int16, 24/32-bit PCM →
/// int32, everything else → float32) and returns the interleaved little-endian bytes.
public enum TestAudio {
    /// The file types libsndfile 1.2 can write here.
    public enum Kind: String, Sendable, CaseIterable {
        /// WAV, 16-bit PCM.
        case wav16
        /// WAV, 24-bit PCM.
        case wav24
        /// AIFF, 16-bit PCM.
        case aiff
        /// FLAC, 16-bit.
        case flac
        /// Ogg Vorbis.
        case oggVorbis
        /// Ogg Opus (48 kHz only).
        case opus
        /// MP3 (LAME through libsndfile, with a LAME info frame: decodes to the exact length).
        case mp3

        /// The usual file name extension, without the dot.
        public var fileExtension: String {
            switch self {
            case .wav16, .wav24: "wav"
            case .aiff: "aiff"
            case .flac: "flac"
            case .oggVorbis: "ogg"
            case .opus: "opus"
            case .mp3: "mp3"
            }
        }

        /// Whether decoding gives back exactly the samples written.
        public var isLossless: Bool {
            switch self {
            case .wav16, .wav24, .aiff, .flac: true
            case .oggVorbis, .opus, .mp3: false
            }
        }

        /// The only sample rate the format takes, if it is fixed (Opus: 48 kHz).
        public var requiredSampleRate: Int? { self == .opus ? 48000 : nil }

        var sndfileFormat: Int32 {
            let value: Int
            switch self {
            case .wav16: value = SF_FORMAT_WAV | SF_FORMAT_PCM_16
            case .wav24: value = SF_FORMAT_WAV | SF_FORMAT_PCM_24
            case .aiff: value = SF_FORMAT_AIFF | SF_FORMAT_PCM_16
            case .flac: value = SF_FORMAT_FLAC | SF_FORMAT_PCM_16
            case .oggVorbis: value = SF_FORMAT_OGG | SF_FORMAT_VORBIS
            case .opus: value = SF_FORMAT_OGG | SF_FORMAT_OPUS
            case .mp3: value = SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III
            }
            return Int32(value)
        }
    }

    /// Tags libsndfile embeds while writing: RIFF INFO (WAV), AIFF text chunks, Vorbis comments
    /// (FLAC, Ogg, Opus) or ID3 (MP3). Nil fields are left out.
    public struct Tags: Sendable, Equatable {
        /// Title (SF_STR_TITLE).
        public var title: String?
        /// Artist (SF_STR_ARTIST).
        public var artist: String?
        /// Album (SF_STR_ALBUM; AIFF cannot store it).
        public var album: String?
        /// Track number (SF_STR_TRACKNUMBER; AIFF cannot store it).
        public var track: Int?

        /// Creates tags.
        public init(title: String? = nil, artist: String? = nil, album: String? = nil, track: Int? = nil) {
            self.title = title
            self.artist = artist
            self.album = album
            self.track = track
        }
    }

    /// The sample type of decoded bytes.
    public enum SampleType: Sendable, Equatable {
        /// Signed 16-bit (from 8/16-bit PCM).
        case int16
        /// Signed 32-bit, 24-bit sources left-justified (from 24/32-bit PCM).
        case int32
        /// 32-bit float (float sources and lossy codecs).
        case float32

        /// Bytes per sample: 2, 4 or 4.
        public var bytesPerSample: Int { self == .int16 ? 2 : 4 }
    }

    /// A whole file decoded.
    public struct Decoded: Sendable, Equatable {
        /// Frames per second.
        public var sampleRate: Int
        /// Samples per frame.
        public var channels: Int
        /// Frames actually decoded (not the header's claim).
        public var frames: Int
        /// Type of each sample in `bytes`.
        public var sampleType: SampleType
        /// Interleaved samples, native (little-endian) byte order.
        public var bytes: [UInt8]

        /// Bytes per interleaved frame.
        public var bytesPerFrame: Int { channels * sampleType.bytesPerSample }

        /// The bytes of frames `range` (clamped to what was decoded).
        public func bytes(frames range: Range<Int>) -> ArraySlice<UInt8> {
            let lower = min(max(range.lowerBound, 0), frames) * bytesPerFrame
            let upper = min(max(range.upperBound, 0), frames) * bytesPerFrame
            return bytes[lower..<max(lower, upper)]
        }
    }

    /// A failure to write or read test audio.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the path.
        public var description: String
    }

    /// The test signal at `frame` on `channel`, within -0.5...0.5.
    public static func signal(frame: Int, channel: Int, sampleRate: Int) -> Float {
        let t = Double(frame) / Double(sampleRate)
        let tone = 0.3 * sin(2 * Double.pi * (440 + 110 * Double(channel)) * t)
            + 0.1 * sin(2 * Double.pi * 97 * t)
        var x = UInt64(truncatingIfNeeded: frame) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(channel) &* 0xBF58_476D_1CE4_E5B9
        x ^= x >> 31
        x = x &* 0x94D0_49BB_1331_11EB
        x ^= x >> 29
        let noise = Double(x >> 11) / Double(1 << 53) * 2 - 1
        return Float(tone + 0.08 * noise)
    }

    /// Writes `frames` frames of the test signal to `path` as `kind`, starting at frame `startFrame` of
    /// the continuous signal (so a file written from `n` continues exactly where one of `n` frames ended).
    /// `constantBitRate` asks the lossy encoders for a constant bit rate instead of their default
    /// (variable for MP3). Throws when libsndfile refuses (e.g. Opus at a rate other than 48 kHz).
    public static func write(path: String, kind: Kind, frames: Int, startFrame: Int = 0, sampleRate: Int = 44100,
                             channels: Int = 2, tags: Tags? = nil, constantBitRate: Bool = false) throws {
        if let required = kind.requiredSampleRate, required != sampleRate {
            throw Failure(description: "\(kind) needs a sample rate of \(required) Hz, not \(sampleRate)")
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = kind.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw Failure(description: "libsndfile cannot write \(kind) at \(sampleRate) Hz, \(channels) channels")
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw Failure(description: "\(path): " + String(cString: sf_strerror(nil)))
        }
        if constantBitRate && !kind.isLossless {
            var mode = Int32(SF_BITRATE_MODE_CONSTANT)
            // libsndfile 1.2 returns 0 from the set even when it worked: ask for the mode back.
            sf_command(file, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size))
            guard sf_command(file, Int32(SFC_GET_BITRATE_MODE), nil, 0) == Int32(SF_BITRATE_MODE_CONSTANT) else {
                sf_close(file)
                throw Failure(description: "\(path): libsndfile cannot write \(kind) at a constant bit rate")
            }
        }
        // Tags must precede the audio for the Ogg, FLAC and MP3 writers.
        if let tags {
            if let title = tags.title { sf_set_string(file, Int32(SF_STR_TITLE), title) }
            if let artist = tags.artist { sf_set_string(file, Int32(SF_STR_ARTIST), artist) }
            if let album = tags.album { sf_set_string(file, Int32(SF_STR_ALBUM), album) }
            if let track = tags.track { sf_set_string(file, Int32(SF_STR_TRACKNUMBER), String(track)) }
        }
        let block = 4096
        var samples = [Float](repeating: 0, count: block * channels)
        var done = 0
        while done < frames {
            let count = min(block, frames - done)
            for f in 0..<count {
                for c in 0..<channels {
                    samples[f * channels + c] = signal(frame: startFrame + done + f, channel: c, sampleRate: sampleRate)
                }
            }
            let wrote = sf_writef_float(file, &samples, sf_count_t(count))
            if wrote != count {
                let message = String(cString: sf_strerror(file))
                sf_close(file)
                throw Failure(description: "\(path): short write: \(message)")
            }
            done += count
        }
        sf_write_sync(file)
        if sf_close(file) != 0 {
            throw Failure(description: "\(path): close failed")
        }
    }

    /// Decodes the whole file at `path` with libsndfile, in the sample type the player uses for it.
    public static func decode(path: String) throws -> Decoded {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw Failure(description: "\(path): " + String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let type = sampleType(subtype: Int(info.format) & SF_FORMAT_SUBMASK)
        let channels = Int(info.channels)
        let frameBytes = channels * type.bytesPerSample
        let block = 4096
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: block * frameBytes)
        var frames = 0
        while true {
            let got = chunk.withUnsafeMutableBytes { raw -> Int in
                switch type {
                case .int16: Int(sf_readf_short(file, raw.baseAddress!.assumingMemoryBound(to: Int16.self), sf_count_t(block)))
                case .int32: Int(sf_readf_int(file, raw.baseAddress!.assumingMemoryBound(to: Int32.self), sf_count_t(block)))
                case .float32: Int(sf_readf_float(file, raw.baseAddress!.assumingMemoryBound(to: Float.self), sf_count_t(block)))
                }
            }
            if got <= 0 { break }
            bytes.append(contentsOf: chunk[0..<(got * frameBytes)])
            frames += got
        }
        return Decoded(sampleRate: Int(info.samplerate), channels: channels, frames: frames,
                       sampleType: type, bytes: bytes)
    }

    // Kept independent of JukeboxAudio on purpose: the oracle must not share the code it checks.
    private static func sampleType(subtype: Int) -> SampleType {
        switch subtype {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_PCM_16: .int16
        case SF_FORMAT_PCM_24, SF_FORMAT_PCM_32: .int32
        default: .float32
        }
    }

    /// The samples of `decoded` as floats in -1...1 (int16 / 32768, int32 / 2^31), interleaved.
    public static func floats(_ decoded: Decoded) -> [Float] {
        floats(decoded.bytes, type: decoded.sampleType)
    }

    /// Interleaved little-endian `bytes` of `type` as floats in -1...1.
    public static func floats(_ bytes: [UInt8], type: SampleType) -> [Float] {
        bytes.withUnsafeBytes { raw -> [Float] in
            switch type {
            case .int16: raw.bindMemory(to: Int16.self).map { Float($0) / 32768 }
            case .int32: raw.bindMemory(to: Int32.self).map { Float(Double($0) / 2_147_483_648) }
            case .float32: Array(raw.bindMemory(to: Float.self))
            }
        }
    }

    /// Removes the LAME/Xing info frame (the first MPEG frame, when it holds "Xing" or "Info") from the
    /// MP3 file at `path`, in place, as an encoder that writes none would have left it; the decoder
    /// then knows neither the encoder delay nor the padding. Returns false when no info frame was found.
    public static func stripMP3InfoFrame(path: String) throws -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "\(path): cannot read")
        }
        var bytes = [UInt8](data)
        var start = 0
        // Skip an ID3v2 tag: "ID3", version, flags, then a 28-bit synchsafe size.
        if bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 {
            let size = bytes[6...9].reduce(0) { ($0 << 7) | Int($1 & 0x7F) }
            start = 10 + size + ((bytes[5] & 0x10) != 0 ? 10 : 0)
        }
        guard start + 4 <= bytes.count, bytes[start] == 0xFF, bytes[start + 1] & 0xE0 == 0xE0,
              let length = mpegFrameLength(bytes[start..<(start + 4)]), start + length <= bytes.count else {
            return false
        }
        let frame = bytes[start..<(start + length)]
        let isInfo = [Array("Xing".utf8), Array("Info".utf8)].contains { tag in
            (frame.startIndex...(frame.endIndex - 4)).contains { Array(frame[$0..<($0 + 4)]) == tag }
        }
        guard isInfo else { return false }
        bytes.removeSubrange(start..<(start + length))
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw Failure(description: "\(path): cannot write")
        }
        return true
    }

    // The length in bytes of the MPEG-1/2/2.5 layer III frame whose 4-byte header is `header`.
    private static func mpegFrameLength(_ header: ArraySlice<UInt8>) -> Int? {
        let h = Array(header)
        let version = (h[1] >> 3) & 3          // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
        let bitrateIndex = Int(h[2] >> 4)
        let rateIndex = Int((h[2] >> 2) & 3)
        let padding = Int((h[2] >> 1) & 1)
        guard version != 1, bitrateIndex > 0, bitrateIndex < 15, rateIndex < 3 else { return nil }
        let mpeg1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let mpeg2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let baseRates = [44100, 48000, 32000]
        let rate = baseRates[rateIndex] / (version == 3 ? 1 : version == 2 ? 2 : 4)
        let kbps = (version == 3 ? mpeg1 : mpeg2)[bitrateIndex]
        let slots = version == 3 ? 144 : 72
        return slots * kbps * 1000 / rate + padding
    }
}
