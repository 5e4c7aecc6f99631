// SPDX-License-Identifier: MIT
import CMpg123
import Glibc
import JukeboxSystem

/// What the decoder thread reads PCM from: a file (`Decoder`, libsndfile) or a stream (`StreamDecoder`).
protocol PCMSource: AnyObject {
    var format: AudioFormat { get }
    /// nil when unknown (a live stream).
    var frameCount: Int64? { get }
    var failure: DecodeError? { get }
    /// Frames decoded; 0 at the end (or on a failure: `failure`); `PCMSourcePending` when nothing
    /// came in time (a stream buffering or reconnecting: ask again).
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int
    func seek(toFrame frame: Int64) throws(DecodeError)
    func close()
}

/// `PCMSource.read`'s "nothing yet".
let pcmSourcePending = -1

extension Decoder: PCMSource {}

/// Whether `path` names an HTTP(S) stream rather than a file (by its scheme alone).
public func isStreamURL(_ path: String) -> Bool {
    let lower = path.prefix(8).lowercased()
    return lower.hasPrefix("http://") || lower.hasPrefix("https://")
}

/// Decodes an MP3 stream with libmpg123's feed API from an `HTTPStream`.
///
/// Not libsndfile: its MP3 reader (through mpg123_scan) reads a source of unknown length to its end
/// before the first frame, which on a live stream never comes. The feed API decodes whatever bytes
/// arrived, so playing starts after the buffer fills. Output is 32-bit float at the stream's own rate
/// and channels. Not thread-safe: one thread (the engine's decoder) uses it.
public final class StreamDecoder {
    /// The stream's URL.
    public let url: String
    /// The PCM shape `read` produces (known after the first MP3 frame).
    public private(set) var format: AudioFormat
    /// Why decoding stopped for good (the stream failed, or was not MP3).
    public private(set) var failure: DecodeError?
    /// The stream the bytes come from (its facts: station, title, buffering).
    public let stream: HTTPStream

    private var handle: OpaquePointer?
    /// The ring ran dry (a slow or lost connection): nothing is fed until it holds the start-up
    /// buffer again, so a source arriving at its real rate plays after one pause instead of
    /// stuttering block by block.
    private var rebuffering = false
    private let scratch: UnsafeMutableRawPointer
    private static let scratchBytes = 16 << 10
    /// How long one `read` waits for network bytes before saying "pending".
    static let readWait = 0.05
    /// Bytes that may pass without one MP3 frame before the stream is called "not MP3".
    static let syncLimit = 256 << 10

    /// Waits until `stream` has buffered `stream.settings.bufferSeconds` of audio (by `icy-br`, else
    /// 128 kbit/s) and the first MP3 frame decodes. `isCancelled` is polled every 50 ms: a cancelled
    /// opening throws (and the stream is closed). Throws with the stream's own reason when it fails.
    init(stream: HTTPStream, isCancelled: () -> Bool) throws(DecodeError) {
        self.url = stream.url
        self.stream = stream
        scratch = UnsafeMutableRawPointer.allocate(byteCount: Self.scratchBytes, alignment: 16)
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            scratch.deallocate()
            stream.close()
            throw DecodeError(path: url, reason: "cannot start libmpg123: " + String(cString: mpg123_plain_strerror(error)))
        }
        self.handle = handle
        format = AudioFormat(sampleRate: 44100, channels: 2, sample: .float32)  // replaced below
        do throws(DecodeError) {
            mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue), 0)
            // Only 32-bit float out, at every rate libmpg123 knows: the engine's writer converts.
            mpg123_format_none(handle)
            var rates: UnsafePointer<Int>?
            var count = 0
            mpg123_rates(&rates, &count)
            for index in 0..<count {
                mpg123_format(handle, rates![index], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue),
                              Int32(MPG123_ENC_FLOAT_32.rawValue))
            }
            guard mpg123_open_feed(handle) == MPG123_OK.rawValue else {
                throw DecodeError(path: url, reason: "cannot start libmpg123's feed")
            }
            try prebuffer(isCancelled)
            format = try firstFormat(isCancelled)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// Unknown: a live stream has no length.
    var frameCount: Int64? { nil }

    private func prebuffer(_ isCancelled: () -> Bool) throws(DecodeError) {
        while true {
            if isCancelled() { throw DecodeError(path: url, reason: "cancelled") }
            let facts = stream.facts
            if let failure = facts.failure { throw DecodeError(path: url, reason: failure) }
            let target = Self.bufferTarget(facts: facts, settings: stream.settings, capacity: stream.capacity)
            let have = stream.waitForBuffered(target, timeout: Self.readWait)
            if have >= target || facts.ended { return }
        }
    }

    /// The bytes buffered before playing: `bufferSeconds` at `icy-br` (else 128 kbit/s), at most the ring.
    static func bufferTarget(facts: StreamFacts, settings: StreamSettings, capacity: Int) -> Int {
        let bytesPerSecond = Double((facts.bitrate ?? 128) * 125)
        return min(capacity, max(1, Int(settings.bufferSeconds * bytesPerSecond)))
    }

    private func firstFormat(_ isCancelled: () -> Bool) throws(DecodeError) -> AudioFormat {
        var fed = 0
        while true {
            if isCancelled() { throw DecodeError(path: url, reason: "cancelled") }
            var done = 0
            let result = mpg123_read(handle, nil, 0, &done)
            if result == MPG123_NEW_FORMAT.rawValue {
                var rate = 0
                var channels: Int32 = 0
                var encoding: Int32 = 0
                mpg123_getformat(handle, &rate, &channels, &encoding)
                return AudioFormat(sampleRate: rate, channels: Int(channels), sample: .float32)
            }
            if result == MPG123_NEED_MORE.rawValue || result == MPG123_OK.rawValue {
                if fed > Self.syncLimit {
                    throw DecodeError(path: url, reason: "not an MP3 stream (no MP3 frame in the first \(Self.syncLimit >> 10) KiB)")
                }
                switch stream.read(into: scratch, count: Self.scratchBytes, timeout: Self.readWait) {
                case .bytes(let count):
                    mpg123_feed(handle, scratch.assumingMemoryBound(to: UInt8.self), count)
                    fed += count
                case .pending: continue
                case .ended: throw DecodeError(path: url, reason: "the stream ended before any audio")
                case .failed(let reason): throw DecodeError(path: url, reason: reason)
                }
                continue
            }
            throw DecodeError(path: url, reason: "not an MP3 stream (" + String(cString: mpg123_strerror(handle)) + ")")
        }
    }

    /// Decodes up to `frames` frames. Returns `pcmSourcePending` when the network has nothing yet,
    /// 0 when the stream ended or failed (`failure`), a change of format included (said in `failure`).
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let handle, failure == nil, frames > 0 else { return 0 }
        let bytesPerFrame = format.bytesPerFrame
        while true {
            var done = 0
            let result = mpg123_read(handle, buffer, frames * bytesPerFrame, &done)
            if done > 0 { return done / bytesPerFrame }
            switch result {
            case MPG123_OK.rawValue:
                continue
            case MPG123_NEED_MORE.rawValue:
                if rebuffering {
                    let facts = stream.facts
                    let target = Self.bufferTarget(facts: facts, settings: stream.settings, capacity: stream.capacity)
                    if stream.waitForBuffered(target, timeout: Self.readWait) < target && !facts.ended && facts.failure == nil {
                        return pcmSourcePending
                    }
                    rebuffering = false
                    stream.setRebuffering(false)
                }
                switch stream.read(into: scratch, count: Self.scratchBytes, timeout: Self.readWait) {
                case .bytes(let count):
                    mpg123_feed(handle, scratch.assumingMemoryBound(to: UInt8.self), count)
                case .pending:
                    rebuffering = true
                    stream.setRebuffering(true)
                    return pcmSourcePending
                case .ended:
                    return 0
                case .failed(let reason):
                    failure = DecodeError(path: url, reason: reason)
                    return 0
                }
            case MPG123_NEW_FORMAT.rawValue:
                var rate = 0
                var channels: Int32 = 0
                var encoding: Int32 = 0
                mpg123_getformat(handle, &rate, &channels, &encoding)
                if rate != format.sampleRate || Int(channels) != format.channels {
                    failure = DecodeError(path: url, reason: "the stream changed its format (\(format.sampleRate) Hz "
                        + "\(format.channels) ch → \(rate) Hz \(channels) ch): not supported yet")
                    return 0
                }
            case MPG123_DONE.rawValue:
                return 0
            default:
                failure = DecodeError(path: url, reason: "MP3 decoding failed (" + String(cString: mpg123_strerror(handle)) + ")")
                return 0
            }
        }
    }

    /// A live stream cannot seek: the core refuses seeks on streams, so this only reports it.
    func seek(toFrame frame: Int64) throws(DecodeError) {
        throw DecodeError(path: url, reason: "a live stream cannot seek")
    }

    /// Stops the stream's thread and frees the decoder. Safe to call more than once.
    func close() {
        stream.close()
        if let handle {
            mpg123_delete(handle)
        }
        handle = nil
    }
}

extension StreamDecoder: PCMSource {}
