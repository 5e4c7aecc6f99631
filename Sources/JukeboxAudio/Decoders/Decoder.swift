// SPDX-License-Identifier: MIT
import CSndfile
import Glibc
import JukeboxSystem

/// Decodes one audio file with libsndfile (WAV, AIFF, FLAC, Ogg Vorbis, MP3) or, for Ogg Opus, libopusfile
/// (`OpusFileReader`: the same samples for less work; libsndfile still takes the Opus files opusfile
/// refuses, so their reasons stay its) into interleaved PCM.
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

    /// Why decoding stopped, when it gave up on the file (nothing at all decodes, or too slow); nil
    /// while all is well and after a normal end. Set when `read` returns 0 for that reason.
    public private(set) var failure: DecodeError?

    /// The bounds this decoder enforces.
    public let limits: DecodeLimits

    /// libsndfile's handle, or (Ogg Opus) the `OpusFileReader`: one of them while open.
    private var handle: OpaquePointer?
    private var opus: OpusFileReader?
    /// Ogg (Vorbis, Opus): libsndfile's `sf_seek` lands on the right frame count but the first few
    /// hundred frames after it are not the file's audio (and seeks into the last page land elsewhere
    /// entirely), so `seek` starts earlier and decodes forward. Kept for opusfile too: after its
    /// own 80 ms pre-roll alone most seeks differ from a decode from the start (SeekAccuracyTests).
    private let seeksWithPreroll: Bool
    /// The frame the next `read` delivers.
    private var position: Int64 = 0
    /// `read` stops here: the header's length plus a second, or what the file size allows.
    private let frameCap: Int64
    /// Seconds spent in libsndfile's read calls and the frames they delivered, for the speed check.
    private var decodeSeconds = 0.0
    /// The CPU clock of the decoding thread (`threadCPUSeconds`; a test's own clock).
    private let clock: () -> Double
    /// `clock` after the previous `read` (or the opening, or the last `seek`).
    private var lastClock: Double
    private var decodedFrames: Int64 = 0

    /// Frames decoded and discarded before an Ogg seek target. libsndfile 1.2's first frames after an
    /// Ogg seek were measured wrong for up to about 1000 frames, and seeks into the last ~4000 frames
    /// landed elsewhere; 16384 frames cover both with room to spare for about 2-4 ms of decoding on
    /// x86 (tens of ms on a Pi-class board).
    public static let oggSeekPrerollFrames: Int64 = 16384

    /// Opens `path`. Throws `DecodeError` with a readable reason when the file is missing, empty,
    /// unreadable, not in a format libsndfile (or, for Opus, libopusfile) decodes, or outside `limits`
    /// (sample rate, channels).
    /// `cpuClock` measures the decoding work for the speed check: the calling thread's CPU time.
    public init(path: String, limits: DecodeLimits = .standard,
                cpuClock: @escaping () -> Double = Decoder.threadCPUSeconds) throws(DecodeError) {
        self.path = path
        self.limits = limits
        self.clock = cpuClock
        let fd: Int32
        do throws(SystemError) { fd = try openRegularFile(path) } catch {
            throw DecodeError(path: path, reason: error.reason ?? (error.errno == EISDIR ? "is a directory" : errnoText(error.errno).lowercased()))
        }
        defer { Glibc.close(fd) }
        var status = stat()
        let bytes = fstat(fd, &status) == 0 ? Int64(status.st_size) : Int64(Int32.max)
        if let opus = OpusFileReader.open(fd: fd) {
            if let reason = Self.limitProblem(rate: OpusFileReader.sampleRate, channels: opus.channels, limits) {
                throw DecodeError(path: path, reason: reason)
            }
            self.opus = opus
            self.format = AudioFormat(sampleRate: OpusFileReader.sampleRate, channels: opus.channels, sample: .float32)
            self.frameCount = opus.frameCount
            self.seeksWithPreroll = true
            self.frameCap = opus.frameCount + Int64(OpusFileReader.sampleRate)
            self.lastClock = cpuClock()
            return
        }
        var info = SF_INFO()
        // libsndfile gets a copy it owns: it closes a descriptor whose open fails whatever
        // close_desc says, and with close_desc 1 `sf_close` closes it after a good open.
        guard let handle = sf_open_fd(dup(fd), Int32(SFM_READ), &info, 1) else {
            throw DecodeError(path: path, reason: Self.openFailureReason(fd: fd))
        }
        func refuse(_ reason: String) -> DecodeError {
            sf_close(handle)
            return DecodeError(path: path, reason: reason)
        }
        guard info.channels > 0, info.samplerate > 0 else { throw refuse("no audio in file") }
        guard info.frames != 0 else { throw refuse("no audio in file") }
        if let reason = Self.limitProblem(rate: Int(info.samplerate), channels: Int(info.channels), limits) {
            throw refuse(reason)
        }
        self.handle = handle
        self.format = AudioFormat(sampleRate: Int(info.samplerate), channels: Int(info.channels),
                                  sample: Self.sampleType(forSubtype: Int(info.format) & SF_FORMAT_SUBMASK))
        let known = info.frames >= 0 && info.frames < Int64.max / 2 ? info.frames : nil
        self.frameCount = known
        self.seeksWithPreroll = Int(info.format) & SF_FORMAT_TYPEMASK == SF_FORMAT_OGG
        self.frameCap = known.map { $0 + Int64(info.samplerate) }
            ?? min(Int64.max / 2, max(bytes, 1) * Self.maxFramesPerByte)
        self.lastClock = cpuClock()
    }

    /// Why `limits` refuse a file of this rate and channel count, nil when they allow it.
    private static func limitProblem(rate: Int, channels: Int, _ limits: DecodeLimits) -> String? {
        guard limits.sampleRates.contains(rate) else {
            return "unsupported sample rate \(rate) Hz "
                + "(playable: \(limits.sampleRates.lowerBound)-\(limits.sampleRates.upperBound) Hz)"
        }
        guard channels <= limits.maxChannels else { return "too many channels (\(channels), at most \(limits.maxChannels))" }
        return nil
    }

    /// No codec libsndfile reads gets near this many frames per byte (FLAC silence reaches a few
    /// hundred): the cap for files whose length is unknown.
    static let maxFramesPerByte: Int64 = 4096

    deinit { close() }

    /// Decodes up to `frames` frames into `buffer` (which must hold `frames * format.bytesPerFrame` bytes).
    /// Returns the frames decoded; 0 at the end of the file, on a decoding error, past the header's
    /// length (plus a second's grace), when not one frame of the file decodes, when the read itself
    /// fails (an I/O error), or when decoding breaks `limits` (in those last three cases `failure`
    /// says why).
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard handle != nil || opus != nil, frames > 0, failure == nil, position < frameCap else { return 0 }
        let count = sf_count_t(min(Int64(frames), frameCap - position))
        let (delivered, readError) = decode(into: buffer, frames: count)
        // One clock read per call (a system call): the decoding thread's CPU time since the last
        // one, i.e. this read and the little the thread did in between, never its sleep.
        let now = clock()
        decodeSeconds += now - lastClock
        lastClock = now
        if let readError {
            // The medium failed under the read (EIO: a USB stick pulled out, a dying card): no end
            // of the track, a failure with its reason, so that the caller can tell a stick that is
            // gone from a damaged file (whose decodable part plays, then ends).
            failure = DecodeError(path: path, reason: "read error: " + readError)
            return 0
        }
        if delivered == 0 && position == 0 && decodedFrames == 0 {
            // The header promised audio but not one frame decodes: cut short inside the first frames,
            // or damaged. Saying so beats an empty track that "plays" in no time.
            failure = DecodeError(path: path, reason: "no audio could be decoded (truncated or damaged file)")
            return 0
        }
        position += delivered
        decodedFrames += delivered
        if decodeSeconds > limits.speedGraceSeconds {
            let audioSeconds = Double(decodedFrames) / Double(format.sampleRate)
            if audioSeconds < decodeSeconds * limits.minimumSpeed {
                failure = DecodeError(path: path, reason: "decoding is too slow to play ("
                    + Self.seconds(audioSeconds) + " of audio took " + Self.seconds(decodeSeconds) + ")")
                return 0
            }
        }
        return Int(delivered)
    }

    /// Up to `frames` frames from libopusfile or libsndfile: the frames delivered (fewer at the end
    /// or on a decoding error) and, when the medium failed under the read, why.
    private func decode(into buffer: UnsafeMutableRawPointer, frames count: sf_count_t) -> (Int64, String?) {
        if let opus {
            let (got, failed) = opus.read(into: buffer.assumingMemoryBound(to: Float.self), frames: Int(count))
            return (Int64(got), failed ? "input/output error" : nil)
        }
        guard let handle else { return (0, nil) }
        let got: sf_count_t
        switch format.sample {
        case .int16: got = sf_readf_short(handle, buffer.assumingMemoryBound(to: Int16.self), count)
        case .int32: got = sf_readf_int(handle, buffer.assumingMemoryBound(to: Int32.self), count)
        case .float32: got = sf_readf_float(handle, buffer.assumingMemoryBound(to: Float.self), count)
        }
        let delivered = max(0, Int64(got))
        if delivered < count && Int(sf_error(handle)) == SF_ERR_SYSTEM { return (delivered, String(cString: sf_strerror(handle))) }
        return (delivered, nil)
    }

    /// Positions the next `read` at `frame` (clamped to 0). Sample-exact in every format libsndfile
    /// reads here: Ogg files (Vorbis, Opus) are sought `oggSeekPrerollFrames` earlier and decoded
    /// forward to the target. A target past the end leaves the decoder at the end (reads return 0)
    /// when the format allows it, or throws. Throws when the file cannot seek.
    public func seek(toFrame frame: Int64) throws(DecodeError) {
        guard handle != nil || opus != nil else { throw DecodeError(path: path, reason: "decoder is closed") }
        let target = max(0, frame)
        let landing = seeksWithPreroll ? max(0, target - Self.oggSeekPrerollFrames) : target
        if let opus {
            // opusfile refuses a frame past the end: there the track has ended (reads return 0).
            if landing >= opus.frameCount {
                position = frameCap
                return
            }
            guard opus.seek(toFrame: landing) else { throw DecodeError(path: path, reason: "cannot seek: damaged Opus file") }
        } else if let handle, sf_seek(handle, sf_count_t(landing), SEEK_SET) < 0 {
            throw DecodeError(path: path, reason: "cannot seek: " + String(cString: sf_strerror(handle)))
        }
        position = landing
        // What the seek cost is not decoding: libFLAC searches the file and decodes its way to the
        // frame (80-170 ms a seek under qemu-aarch64, some of that on a Pi Zero), so charging it to
        // the speed check failed a good FLAC as "too slow to play" after a few dozen seeks (holding
        // next, or the seek tests on arm64). Frames decoded to reach an Ogg target below count.
        lastClock = clock()
        var left = Int(target - landing)
        guard left > 0 else { return }
        let chunk = 4096
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: chunk * format.bytesPerFrame, alignment: 16)
        defer { scratch.deallocate() }
        while left > 0 {
            let got = read(into: scratch, frames: min(chunk, left))
            if got <= 0 { break }  // The file ended first: later reads return 0.
            left -= got
        }
        if let failure { throw failure }
    }

    /// Releases the file; later reads return 0. Safe to call more than once.
    public func close() {
        if let handle { sf_close(handle) }
        handle = nil
        opus?.close()
        opus = nil
    }

    /// CPU seconds of the calling thread, not wall time: a busy or throttled board must never make
    /// a good file look "too slow to play"; only a file that really costs that much work does.
    public static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func seconds(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) s"
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
    private static func openFailureReason(fd: Int32) -> String {
        var status = stat()
        if fstat(fd, &status) != 0 {
            return errnoText(errno).lowercased()
        }
        if status.st_size == 0 { return "file is empty" }
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

/// Bounds that keep a broken or hostile file from stalling the player; checked by `Decoder`.
public struct DecodeLimits: Sendable, Equatable {
    /// Sample rates a file may have; others are refused at open (a 1 Hz "WAV" would play for days).
    public var sampleRates: ClosedRange<Int>
    /// The most channels a file may have.
    public var maxChannels: Int
    /// Decoding must produce audio at least this many times faster than it plays (audio seconds per
    /// CPU second of the decoding thread), or the decoder
    /// gives up (`Decoder.failure`): slower than real time the player could only stutter.
    public var minimumSpeed: Double
    /// CPU seconds spent decoding one file before the speed is judged (start-up costs).
    public var speedGraceSeconds: Double

    /// Creates limits.
    public init(sampleRates: ClosedRange<Int> = 1000...768_000, maxChannels: Int = 32,
                minimumSpeed: Double = 1, speedGraceSeconds: Double = 2) {
        self.sampleRates = sampleRates
        self.maxChannels = maxChannels
        self.minimumSpeed = minimumSpeed
        self.speedGraceSeconds = speedGraceSeconds
    }

    /// 1 kHz to 768 kHz, up to 32 channels, decoding at least as fast as real time after 2 s.
    public static let standard = DecodeLimits()
}
