// SPDX-License-Identifier: MIT
import CFaad
import Glibc

/// Decodes the sound track of an MP4 file (`.m4a`, `.m4b`, `.mp4`): the container read by
/// `MP4Movie`, AAC (LC, HE-AAC v1/v2) by libfaad2, one coded sample at a time. Output is 32-bit
/// float, 5.1 mixed down to stereo (libfaad's `downMatrix`), as for AAC streams.
///
/// **Gapless**: the frames before the audio (the encoder's delay) and after it (padding) are
/// dropped, as the edit list or iTunes' note says (`MP4AudioTrack.audioSpan`), so an album plays
/// with no gap and no extra samples. Decoding coded sample k gives the media frames from its start
/// time on; libfaad gives nothing for the first sample it decodes after an init (it only primes the
/// overlap), which is encoder delay in every AAC file.
///
/// **Exact seek**: a fresh decoder starts `prerollSamples` coded samples before the one holding the
/// target and the frames before the target are dropped, so a seek gives the frames a play from
/// the start gives (AAC-LC's overlap spans one frame; HE-AAC's SBR needs a little more).
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
    private var handle: NeAACDecHandle?
    private let config: [UInt8]
    /// The audio in media frames at the output rate: `[audioStart, audioEnd)`.
    private var audioStart: Int64 = 0
    private var audioEnd: Int64 = 0
    /// Decoded frames not yet delivered, interleaved, and the coded sample they came from.
    private var pending: [Float] = []
    private var pendingAt = 0
    private var pendingSample = 0
    /// Frames before this media frame are dropped (the audio's start, or a seek's target).
    private var wanted: Int64 = 0
    /// Bad coded samples in a row, and libfaad's last complaint.
    private var badInARow = 0
    private var lastError = ""
    private var delivered: Int64 = 0

    /// Coded samples decoded (and dropped) before a seek target.
    static let prerollSamples = 2
    /// Damaged coded samples in a row before the file is given up on (one is skipped: a scratch
    /// in a long audiobook should not end it).
    static let maxBadInARow = 8
    /// Largest coded sample read: AAC allows 6144 bits per channel per frame (8 channels: 6 KiB);
    /// more is damage.
    static let maxSampleBytes = 64 << 10

    init(path: String, limits: DecodeLimits = .standard) throws(DecodeError) {
        self.path = path
        do throws(MP4Error) {
            source = try MP4File(path: path)
            let movie = try MP4Movie.read(source)
            track = movie.track
            reader = try MP4SampleReader(track.table, source: source)
        } catch {
            throw DecodeError(path: path, reason: error.reason)
        }
        switch track.codec {
        case .aac(let config): self.config = config
        case .alac: throw DecodeError(path: path, reason: "Apple Lossless (ALAC) is not supported yet")
        }
        guard track.table.sampleCount > 0 else { throw DecodeError(path: path, reason: "no audio in file") }
        // The output format is what the first decoded frame says (SBR doubles the rate, PS makes
        // stereo of mono), so decode until there is one.
        try reopen()
        var first: (rate: Int, channels: Int)?
        for _ in 0..<(Self.prerollSamples + Self.maxBadInARow) where first == nil {
            guard let sample = try? reader.next() else { break }
            first = decode(sample)
        }
        guard let first else {
            throw DecodeError(path: path, reason: lastError.isEmpty ? "no audio could be decoded (truncated or damaged file)"
                                                                    : "damaged file (libfaad2: \(lastError))")
        }
        guard limits.sampleRates.contains(first.rate), first.channels <= limits.maxChannels else {
            throw DecodeError(path: path, reason: "unsupported format (\(first.rate) Hz, \(first.channels) channels)")
        }
        format = AudioFormat(sampleRate: first.rate, channels: first.channels, sample: .float32)
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

    /// A fresh libfaad decoder for the track's configuration.
    private func reopen() throws(DecodeError) {
        if let handle { NeAACDecClose(handle) }
        handle = nil
        guard let fresh = NeAACDecOpen() else { throw DecodeError(path: path, reason: "cannot start libfaad2") }
        handle = fresh
        guard let settings = NeAACDecGetCurrentConfiguration(fresh) else { throw DecodeError(path: path, reason: "cannot configure libfaad2") }
        settings.pointee.outputFormat = UInt8(FAAD_FMT_FLOAT)
        settings.pointee.downMatrix = 1
        guard NeAACDecSetConfiguration(fresh, settings) != 0 else { throw DecodeError(path: path, reason: "libfaad2 refused its configuration") }
        var rate: UInt = 0
        var channels: UInt8 = 0
        var bytes = config
        guard NeAACDecInit2(fresh, &bytes, UInt(bytes.count), &rate, &channels) >= 0 else {
            throw DecodeError(path: path, reason: "damaged file: libfaad2 cannot use its AAC configuration")
        }
        pending = []
        pendingAt = 0
    }

    /// Decodes one coded sample into `pending` (placed at its start time); its rate and channels
    /// when it gave frames. A damaged sample gives nothing and is counted.
    private func decode(_ sample: (offset: UInt64, size: Int)) -> (rate: Int, channels: Int)? {
        guard let handle else { return nil }
        guard sample.size > 0, sample.size <= Self.maxSampleBytes, var bytes = try? source.read(at: sample.offset, count: sample.size) else {
            badInARow += 1
            lastError = sample.size > Self.maxSampleBytes ? "a frame of \(sample.size) bytes" : "a frame outside the file"
            return nil
        }
        var info = NeAACDecFrameInfo()
        let output = NeAACDecDecode(handle, &info, &bytes, UInt(bytes.count))
        guard info.error == 0, let output else {
            badInARow += 1
            lastError = String(cString: NeAACDecGetErrorMessage(info.error))
            return nil
        }
        badInARow = 0
        let channels = Int(info.channels)
        guard info.samples > 0, channels > 0 else { return nil }
        let floats = output.assumingMemoryBound(to: Float.self)
        pending = Array(UnsafeBufferPointer(start: floats, count: Int(info.samples)))
        pendingAt = 0
        pendingSample = reader.index - 1
        return (Int(info.samplerate), channels)
    }

    /// The media frame (at the output rate) of the first frame in `pending`: its coded sample's
    /// start time.
    private var pendingFrame: Int64 { Self.scaled(mediaTime(ofSample: pendingSample), rate: format.sampleRate, timescale: track.timescale) }

    /// The start of coded sample `index` in the track's timescale.
    private func mediaTime(ofSample index: Int) -> UInt64 {
        var left = index
        var time: UInt64 = 0
        for run in track.table.durations where left > 0 {
            let n = min(left, Int(run.count))
            time += UInt64(n) * UInt64(run.delta)
            left -= n
        }
        return time
    }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard failure == nil, handle != nil, frames > 0 else { return 0 }
        let channels = format.channels
        let out = buffer.assumingMemoryBound(to: Float.self)
        var written = 0
        var base = pendingFrame
        while written < frames {
            let left = (pending.count - pendingAt) / channels
            if left > 0 {
                // Drop what is before the wanted frame; stop at the audio's end.
                let here = base + Int64(pendingAt / channels)
                if here < wanted {
                    let drop = Int(min(Int64(left), wanted - here))
                    pendingAt += drop * channels
                    continue
                }
                guard here < audioEnd else { return written }
                let n = min(left, frames - written, Int(audioEnd - here))
                pending.withUnsafeBufferPointer { p in
                    (out + written * channels).update(from: p.baseAddress! + pendingAt, count: n * channels)
                }
                pendingAt += n * channels
                written += n
                delivered += Int64(n)
                continue
            }
            let next: (offset: UInt64, size: Int)?
            do throws(MP4Error) { next = try reader.next() } catch {
                failure = DecodeError(path: path, reason: error.reason)
                return written
            }
            guard let sample = next else { break }
            if let got = decode(sample) {
                guard got.rate == format.sampleRate, got.channels == channels else {
                    failure = DecodeError(path: path, reason: "the stream changes format mid-file (\(got.rate) Hz, \(got.channels) channels)")
                    return written
                }
                base = pendingFrame
            }
            if badInARow >= Self.maxBadInARow {
                failure = DecodeError(path: path, reason: "damaged file (libfaad2: \(lastError))")
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
        try reopen()
        do throws(MP4Error) { try reader.seek(toSample: max(0, index - Self.prerollSamples)) } catch {
            throw DecodeError(path: path, reason: error.reason)
        }
        wanted = target
        badInARow = 0
    }

    func close() {
        if let handle { NeAACDecClose(handle) }
        handle = nil
    }
}
