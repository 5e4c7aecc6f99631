// SPDX-License-Identifier: MIT
import CFaad
import Glibc

/// Decodes the sound track of an MP4 file (`.m4a`, `.m4b`, `.mp4`): the container read by
/// `MP4Movie`, one coded sample at a time, AAC (LC, HE-AAC v1/v2) by libfaad2 (32-bit float, 5.1
/// mixed down to stereo as for AAC streams), Apple Lossless by `ALACDecoder` (16-bit samples as
/// 16-bit, deeper ones left-justified in 32: bit-perfect).
///
/// **Gapless**: the frames before the audio (the encoder's delay) and after it (padding) are
/// dropped, as the edit list or iTunes' note says (`MP4AudioTrack.audioSpan`), so an album plays
/// with no gap and no extra samples. Decoding coded sample k gives the media frames from its start
/// time on; libfaad gives nothing for the first sample it decodes after an init (it only primes the
/// overlap), which is encoder delay in every AAC file.
///
/// **Seek**: the codec restarts `preroll` coded samples before the one holding the target and the
/// frames before the target are dropped: ALAC's packets stand alone, so its seeks are exact; AAC
/// lands on the frames a play from the start gives, equal within 8.5e-4 (libfaad's state beyond
/// one frame's overlap is not rebuilt by a preroll: MP4DecoderTests).
///
/// Not thread-safe: one decoder on one thread at a time.
final class MP4Decoder: PCMSource {
    let path: String
    private(set) var format = AudioFormat(sampleRate: 44100, channels: 2, sample: .float32)
    private(set) var frameCount: Int64?
    private(set) var failure: DecodeError?

    private let source: MP4File
    private let track: MP4AudioTrack
    private var reader: MP4SampleReader
    private let codec: MP4SampleCodec
    /// The audio in media frames at the output rate: `[audioStart, audioEnd)`.
    private var audioStart: Int64 = 0
    private var audioEnd: Int64 = 0
    /// Decoded bytes not yet delivered, interleaved, and the start time of the coded sample they came from.
    private var pending: [UInt8] = []
    private var pendingAt = 0
    private var pendingTime: UInt64 = 0
    /// Frames before this media frame are dropped (the audio's start, or a seek's target).
    private var wanted: Int64 = 0
    /// Bad coded samples in a row, and the last complaint.
    private var badInARow = 0
    private var lastError = ""

    /// Damaged coded samples in a row before the file is given up on (one is skipped: a scratch
    /// in a long audiobook should not end it).
    static let maxBadInARow = 8
    /// Largest coded sample read: far beyond AAC's (6144 bits per channel) and ALAC's (a 4096-frame
    /// stereo 32-bit packet is 32 KiB); more is damage.
    static let maxSampleBytes = 256 << 10

    init(path: String, limits: DecodeLimits = .standard) throws(DecodeError) {
        self.path = path
        do throws(MP4Error) {
            source = try MP4File(path: path)
            let movie = try MP4Movie.read(source)
            track = movie.track
            reader = try MP4SampleReader(track.table, source: source)
            switch track.codec {
            case .aac(let config): codec = try AACSampleCodec(config: config)
            case .alac(let cookie): codec = try ALACSampleCodec(cookie: cookie)
            }
        } catch {
            throw DecodeError(path: path, reason: error.reason)
        }
        guard track.table.sampleCount > 0 else { throw DecodeError(path: path, reason: "no audio in file") }
        // The output format is what the first decoded frames say (HE-AAC's SBR doubles the rate,
        // PS makes stereo of mono), so decode until there are some.
        var first: (rate: Int, channels: Int)?
        for _ in 0..<(codec.preroll + Self.maxBadInARow) where first == nil {
            guard let sample = try? reader.next() else { break }
            first = decode(sample)
        }
        guard let first else {
            throw DecodeError(path: path, reason: lastError.isEmpty ? "no audio could be decoded (truncated or damaged file)"
                                                                    : "damaged file (\(lastError))")
        }
        guard limits.sampleRates.contains(first.rate), first.channels <= limits.maxChannels else {
            throw DecodeError(path: path, reason: "unsupported format (\(first.rate) Hz, \(first.channels) channels)")
        }
        format = AudioFormat(sampleRate: first.rate, channels: first.channels, sample: codec.sampleType)
        let span = track.audioSpan(outputRate: first.rate)
        let mediaEnd = Self.scaled(track.table.duration, rate: first.rate, timescale: track.timescale)
        audioStart = min(span.skip, mediaEnd)
        audioEnd = span.frames.map { min(mediaEnd, audioStart + $0) } ?? mediaEnd
        frameCount = audioEnd - audioStart
        wanted = audioStart
    }

    deinit { close() }

    static func scaled(_ t: UInt64, rate: Int, timescale: UInt32) -> Int64 {
        let product = t.multipliedFullWidth(by: UInt64(rate))
        let scale = UInt64(max(1, timescale))
        guard product.high < scale else { return Int64.max }
        return Int64(clamping: scale.dividingFullWidth(product).quotient)
    }

    /// Decodes one coded sample into `pending` (placed at its start time); its rate and channels
    /// when it gave frames. A damaged sample gives nothing and is counted.
    private func decode(_ sample: (offset: UInt64, size: Int, start: UInt64)) -> (rate: Int, channels: Int)? {
        guard sample.size > 0, sample.size <= Self.maxSampleBytes else {
            badInARow += 1
            lastError = "a frame of \(sample.size) bytes"
            return nil
        }
        do throws(MP4Error) {
            let bytes = try source.read(at: sample.offset, count: sample.size)
            guard let decoded = try codec.decode(bytes) else { return nil }
            badInARow = 0
            pending = decoded.pcm
            pendingAt = 0
            pendingTime = sample.start
            return (decoded.rate, decoded.channels)
        } catch {
            badInARow += 1
            lastError = error.reason
            return nil
        }
    }

    /// The media frame (at the output rate) of the first frame in `pending`: its coded sample's
    /// start time.
    private var pendingFrame: Int64 { Self.scaled(pendingTime, rate: format.sampleRate, timescale: track.timescale) }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard failure == nil, frames > 0 else { return 0 }
        let size = format.bytesPerFrame
        var written = 0
        var base = pendingFrame
        while written < frames {
            let left = (pending.count - pendingAt) / size
            if left > 0 {
                // Drop what is before the wanted frame; stop at the audio's end.
                let here = base + Int64(pendingAt / size)
                if here < wanted {
                    pendingAt += Int(min(Int64(left), wanted - here)) * size
                    continue
                }
                guard here < audioEnd else { return written }
                let n = min(left, frames - written, Int(audioEnd - here))
                pending.withUnsafeBytes { p in
                    (buffer + written * size).copyMemory(from: p.baseAddress! + pendingAt, byteCount: n * size)
                }
                pendingAt += n * size
                written += n
                continue
            }
            let next: (offset: UInt64, size: Int, start: UInt64)?
            do throws(MP4Error) { next = try reader.next() } catch {
                failure = DecodeError(path: path, reason: error.reason)
                return written
            }
            guard let sample = next else { break }
            if let got = decode(sample) {
                guard got.rate == format.sampleRate, got.channels == format.channels else {
                    failure = DecodeError(path: path, reason: "the stream changes format mid-file (\(got.rate) Hz, \(got.channels) channels)")
                    return written
                }
                base = pendingFrame
            }
            if badInARow >= Self.maxBadInARow {
                failure = DecodeError(path: path, reason: "damaged file (\(lastError))")
                return written
            }
        }
        return written
    }

    func seek(toFrame frame: Int64) throws(DecodeError) {
        let target = min(audioEnd, audioStart + max(0, frame))
        let media = UInt64(target).multipliedFullWidth(by: UInt64(track.timescale))
        let time = UInt64(max(1, format.sampleRate)).dividingFullWidth(media).quotient
        let index = track.table.sample(at: time).index
        do throws(MP4Error) {
            try codec.reset()
            try reader.seek(toSample: max(0, index - codec.preroll))
        } catch {
            throw DecodeError(path: path, reason: error.reason)
        }
        pending = []
        pendingAt = 0
        wanted = target
        badInARow = 0
    }

    func close() { codec.close() }
}

/// One codec of an MP4 file, a coded sample at a time.
protocol MP4SampleCodec: AnyObject {
    /// The PCM type `decode` gives.
    var sampleType: SampleType { get }
    /// Coded samples decoded before a seek target, for the decoder's state to settle.
    var preroll: Int { get }
    /// One coded sample's PCM (interleaved, little-endian `sampleType`) with its rate and channels;
    /// nil when it gives none (a decoder priming); throws for a damaged sample.
    func decode(_ packet: [UInt8]) throws(MP4Error) -> (pcm: [UInt8], rate: Int, channels: Int)?
    /// Forgets everything decoded (before a seek).
    func reset() throws(MP4Error)
    func close()
}

/// AAC through libfaad2. It gives nothing for the first sample after an init (it only primes the
/// overlap), which is encoder delay in every AAC file. A seek restarts it `preroll` samples early:
/// AAC-LC's overlap spans one frame; HE-AAC's SBR needs a little more.
final class AACSampleCodec: MP4SampleCodec {
    private var handle: NeAACDecHandle?
    private let config: [UInt8]
    let sampleType = SampleType.float32
    let preroll = 2

    init(config: [UInt8]) throws(MP4Error) {
        self.config = config
        try reset()
    }

    deinit { close() }

    func reset() throws(MP4Error) {
        close()
        guard let fresh = NeAACDecOpen() else { throw MP4Error("cannot start libfaad2") }
        handle = fresh
        guard let settings = NeAACDecGetCurrentConfiguration(fresh) else { throw MP4Error("cannot configure libfaad2") }
        settings.pointee.outputFormat = UInt8(FAAD_FMT_FLOAT)
        settings.pointee.downMatrix = 1
        guard NeAACDecSetConfiguration(fresh, settings) != 0 else { throw MP4Error("libfaad2 refused its configuration") }
        var rate: UInt = 0
        var channels: UInt8 = 0
        var bytes = config
        guard NeAACDecInit2(fresh, &bytes, UInt(bytes.count), &rate, &channels) >= 0 else {
            throw MP4Error("damaged file: libfaad2 cannot use its AAC configuration")
        }
    }

    func decode(_ packet: [UInt8]) throws(MP4Error) -> (pcm: [UInt8], rate: Int, channels: Int)? {
        guard let handle else { throw MP4Error("libfaad2 is closed") }
        var bytes = packet
        var info = NeAACDecFrameInfo()
        let output = NeAACDecDecode(handle, &info, &bytes, UInt(bytes.count))
        guard info.error == 0, let output else { throw MP4Error("libfaad2: " + String(cString: NeAACDecGetErrorMessage(info.error))) }
        guard info.samples > 0, info.channels > 0 else { return nil }
        let pcm = Array(UnsafeRawBufferPointer(start: output, count: Int(info.samples) * MemoryLayout<Float>.size))
        return (pcm, Int(info.samplerate), Int(info.channels))
    }

    func close() {
        if let handle { NeAACDecClose(handle) }
        handle = nil
    }
}

/// Apple Lossless through `ALACDecoder`: packets stand alone (no preroll: a seek is exact).
/// 16-bit samples stay 16-bit; 20 and 24 go left-justified into 32 bits, as libsndfile gives them.
final class ALACSampleCodec: MP4SampleCodec {
    private let decoder: ALACDecoder
    let preroll = 0
    var sampleType: SampleType { decoder.bitDepth == 16 ? .int16 : .int32 }

    init(cookie: [UInt8]) throws(MP4Error) { decoder = try ALACDecoder(cookie: cookie) }

    func decode(_ packet: [UInt8]) throws(MP4Error) -> (pcm: [UInt8], rate: Int, channels: Int)? {
        let samples = try decoder.decode(packet)
        var pcm: [UInt8]
        if decoder.bitDepth == 16 {
            pcm = [UInt8](repeating: 0, count: samples.count * 2)
            pcm.withUnsafeMutableBytes { out in
                for (i, s) in samples.enumerated() { out.storeBytes(of: Int16(truncatingIfNeeded: s).littleEndian, toByteOffset: 2 * i, as: Int16.self) }
            }
        } else {
            let shift = Int32(32 - decoder.bitDepth)
            pcm = [UInt8](repeating: 0, count: samples.count * 4)
            pcm.withUnsafeMutableBytes { out in
                for (i, s) in samples.enumerated() { out.storeBytes(of: (s << shift).littleEndian, toByteOffset: 4 * i, as: Int32.self) }
            }
        }
        return (pcm, decoder.sampleRate > 0 ? decoder.sampleRate : 44100, decoder.channels)
    }

    func reset() throws(MP4Error) {}
    func close() {}
}
