// SPDX-License-Identifier: MIT
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

/// Decodes an `HTTPStream` with the `StreamCodec` its Content-Type (else its first bytes) names.
///
/// It holds what every format shares: the start-up buffer, "pending" when the network has nothing
/// yet (never a blocking read inside a codec), re-buffering after the ring ran dry, and what a
/// change of format means. Not thread-safe: one thread (the engine's decoder) uses it.
public final class StreamDecoder {
    /// The stream's URL.
    public let url: String
    /// The PCM shape `read` produces (known after the first decoded frame's header).
    public private(set) var format: AudioFormat
    /// Why decoding stopped for good (the stream failed, or could not be decoded).
    public private(set) var failure: DecodeError?
    /// The stream the bytes come from (its facts: station, title, buffering).
    public let stream: HTTPStream
    /// The second of the file the audio starts at: 0, or where a file started at a place
    /// (`init(stream:startSeconds:isCancelled:)`) really landed.
    public private(set) var startSeconds: Double = 0

    /// The format being decoded (chosen with the first bytes).
    private(set) var kind: StreamCodecKind?
    private var codec: (any StreamCodec)?
    /// The ring ran dry (a slow or lost connection): nothing is fed until it holds the start-up
    /// buffer again, so a source arriving at its real rate plays after one pause instead of
    /// stuttering block by block.
    private var rebuffering = false
    /// The stream ended and the codec was told (`endOfInput`): what it still holds is decoded.
    private var inputEnded = false
    /// Bytes the codec was fed while the format was found, its headers not counted: audio already
    /// taken from the ring, part of the start-up buffer (the ring then waits for that much less).
    private var fedAudio = 0
    /// Bytes the codec was fed while the format was found, all counted: the file's next byte.
    private var fedBytes = 0
    /// Frames still to decode and drop to reach the place of a file whose codec names no byte.
    private var dropFrames = 0
    /// The codec's nominal bitrate as last told to the stream.
    private var toldBitrate: Int?
    /// When the start-up must be done by (`StreamSettings.startSeconds` after the first connection).
    private var startDeadline: Double?
    private let scratch: UnsafeMutableRawPointer
    private static let scratchBytes = 16 << 10
    /// How long one `read` waits for network bytes before saying "pending".
    static let readWait = 0.05
    /// Bytes that may pass without one decodable frame before the stream is refused.
    static let syncLimit = 256 << 10

    /// Waits until the first frame's format is known and then until `stream` has buffered
    /// `stream.settings.bufferSeconds` of audio (by `icy-br`, else the bitrate the stream's header
    /// names, else 128 kbit/s: the format comes first so that a 32 kbit/s Ogg stream does not wait
    /// four times too long). `isCancelled` is polled every 50 ms: a
    /// cancelled opening throws (and the stream is closed). Throws with the stream's own reason
    /// when it fails.
    ///
    /// `startSeconds` above 0 starts a file (a podcast episode: the server gave its length) at
    /// that place: the codec names the byte (`StreamCodec.startingPoint`) and the stream fetches
    /// from there with a range request, so nothing before it is downloaded or decoded;
    /// `startSeconds` then says where it landed. A live stream, or a format that cannot tell,
    /// starts where it is (0).
    init(stream: HTTPStream, startSeconds wanted: Double = 0, isCancelled: () -> Bool) throws(DecodeError) {
        self.url = stream.url
        self.stream = stream
        scratch = UnsafeMutableRawPointer.allocate(byteCount: Self.scratchBytes, alignment: 16)
        format = AudioFormat(sampleRate: 44100, channels: 2, sample: .float32)  // replaced below
        do throws(DecodeError) {
            format = try firstFormat(isCancelled)
            passFacts()
            if wanted > 0 { try start(at: wanted, isCancelled) }
            try prebuffer(isCancelled)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// Unknown for a live stream; an on-demand HLS playlist's length (the sum of its segments'
    /// durations) at the output rate.
    var frameCount: Int64? {
        stream.facts.onDemand.map { Int64(($0.duration * Double(format.sampleRate)).rounded()) }
    }

    /// Decoded frames still to drop before `read` hands any out: an on-demand stream opened at a
    /// segment's start, asked to start later in it (`seek`).
    private var framesToSkip: Int64 = 0

    /// Moves a file's start to `seconds` (see `init`): asks the stream again from the codec's
    /// byte unless that is the very next one, and waits for the new connection's first bytes.
    private func start(at seconds: Double, _ isCancelled: () -> Bool) throws(DecodeError) {
        let facts = stream.facts
        guard let length = facts.length, facts.startByte == 0, let codec else { return }
        guard let point = codec.startingPoint(seconds: seconds, length: length) else {
            // The format names no byte (Ogg, FLAC, AAC): decoded up to the place and dropped,
            // which costs the time to download and decode it, but keeps the place.
            dropFrames = Int((seconds * Double(format.sampleRate)).rounded(.down))
            startSeconds = Double(dropFrames) / Double(format.sampleRate)
            return
        }
        startSeconds = point.seconds
        fedAudio = 0
        guard point.byte != fedBytes else { return }
        // Past the end: one byte before it, so the stream ends (and the track with it) at once.
        stream.restart(atByte: min(point.byte, max(0, length - 1)))
        // The start-up's time counts from the new connection.
        startDeadline = nil
        while true {
            if isCancelled() { throw DecodeError(path: url, reason: "cancelled") }
            let now = stream.facts
            if let failure = now.failure { throw DecodeError(path: url, reason: failure) }
            if now.startByte != nil || now.ended { return }
            try checkStart(now, filled: 0)
            _ = stream.waitForBuffered(1, timeout: Self.readWait)
        }
    }

    private func prebuffer(_ isCancelled: () -> Bool) throws(DecodeError) {
        while true {
            if isCancelled() { throw DecodeError(path: url, reason: "cancelled") }
            let facts = stream.facts
            if let failure = facts.failure { throw DecodeError(path: url, reason: failure) }
            let target = Self.bufferTarget(facts: facts, settings: stream.settings, capacity: stream.capacity)
            let wanted = target - fedAudio
            if wanted <= 0 { return }
            if facts.bitrate == nil, let codec, codec.measuresBitrate {
                // Opus names no bitrate: what arrives is fed (it counts as buffered) until its
                // pages tell the rate, instead of waiting for 128 kbit/s' worth of a 32 kbit/s stream.
                // Bounded like the wait below: a trickle brings bytes each time, never "pending".
                try checkStart(facts, filled: Double(fedAudio) / Double(max(1, target)))
                switch stream.read(into: scratch, count: min(Self.scratchBytes, wanted), timeout: Self.readWait) {
                case .bytes(let count):
                    codec.feed(UnsafeRawBufferPointer(start: scratch, count: count))
                    fedAudio += count
                    passFacts()
                case .pending: break
                case .ended: return
                case .failed(let reason): throw DecodeError(path: url, reason: reason)
                }
                continue
            }
            let have = stream.waitForBuffered(wanted, timeout: Self.readWait)
            if have >= wanted || facts.ended { return }
            try checkStart(facts, filled: Double(have + fedAudio) / Double(max(1, target)))
        }
    }

    /// Gives up when the start-up has taken `StreamSettings.startSeconds` (at least 4 × the
    /// buffer) since the first connection: a server sending a trickle would otherwise show
    /// "buffering 0 %" for ever (the core's give-up counts only time without a connection).
    private func checkStart(_ facts: StreamFacts, filled: Double) throws(DecodeError) {
        let now = monotonicNow()
        let settings = stream.settings
        let limit = max(settings.startSeconds, 4 * settings.bufferSeconds)
        guard let deadline = startDeadline else {
            if facts.connected { startDeadline = now + limit }
            return
        }
        guard now >= deadline else { return }
        let percent = Int((min(1, max(0, filled)) * 100).rounded(.down))
        let seconds = limit == limit.rounded() ? String(Int(limit)) : String(limit)
        throw DecodeError(path: url, reason: "the stream is too slow to start: \(percent) % of the start-up buffer in \(seconds) s")
    }

    /// The bytes buffered before playing: `bufferSeconds` at `icy-br` (else the stream header's
    /// nominal bitrate, else 128 kbit/s), at most the ring.
    static func bufferTarget(facts: StreamFacts, settings: StreamSettings, capacity: Int) -> Int {
        // icy-br is whatever the server sent (and a header's bitrate whatever the stream says): 0 or
        // less says nothing, and a huge one must neither overflow the multiplication nor the
        // conversion back to Int (either traps).
        func positive(_ value: Int?) -> Int? { value.flatMap { $0 > 0 ? $0 : nil } }
        let kbps: Int = positive(facts.bitrate) ?? positive(facts.nominalBitrate) ?? 128
        let bytes = settings.bufferSeconds * Double(kbps) * 125
        return bytes >= Double(capacity) ? capacity : max(1, Int(bytes))
    }

    /// Feeds bytes until the codec reports the first format (within the start-up's bound). The codec is chosen with the first
    /// bytes: by the Content-Type when it names a format, else by what the bytes look like.
    private func firstFormat(_ isCancelled: () -> Bool) throws(DecodeError) -> AudioFormat {
        var fed = 0
        while true {
            if isCancelled() { throw DecodeError(path: url, reason: "cancelled") }
            if let codec {
                let result = codec.decode(into: scratch, frames: 1)
                passFacts()
                switch result {
                case .format(let format):
                    fedAudio = max(0, fed - codec.headerBytes)
                    return format
                case .frames: continue  // not by the contract (a format comes first); nothing to keep
                case .ended: throw DecodeError(path: url, reason: "the stream ended before any audio")
                case .failed(let reason): throw DecodeError(path: url, reason: reason)
                case .needMore:
                    if fed - codec.headerBytes > Self.syncLimit {
                        throw DecodeError(path: url, reason: "not \(kind?.article ?? "an audio") stream (nothing decodable in the first \(Self.syncLimit >> 10) KiB)")
                    }
                }
            }
            let facts = stream.facts
            try checkStart(facts, filled: Double(fed) / Double(max(1, Self.bufferTarget(facts: facts, settings: stream.settings, capacity: stream.capacity))))
            switch stream.read(into: scratch, count: Self.scratchBytes, timeout: Self.readWait) {
            case .bytes(let count):
                let bytes = UnsafeRawBufferPointer(start: scratch, count: count)
                if codec == nil {
                    let kind = stream.facts.contentType.flatMap(StreamCodecKind.named) ?? StreamCodecKind.sniff(bytes)
                    do { codec = try kind.makeCodec() } catch { throw DecodeError(path: url, reason: error.reason) }
                    self.kind = kind
                }
                codec?.feed(bytes)
                fed += count
                fedBytes = fed
            case .pending: continue
            case .ended:
                if let codec, !inputEnded {
                    inputEnded = true
                    codec.endOfInput()
                    continue
                }
                throw DecodeError(path: url, reason: "the stream ended before any audio")
            case .failed(let reason): throw DecodeError(path: url, reason: reason)
            }
        }
    }

    /// Decodes up to `frames` frames. Returns `pcmSourcePending` when the network has nothing yet,
    /// 0 when the stream ended or failed (`failure`), a change of rate or channels included (said in
    /// `failure`: the engine's output stays open in one format for a stream).
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        while framesToSkip > 0 {
            let skipped = decode(into: buffer, frames: Int(min(Int64(frames), framesToSkip)))
            if skipped <= 0 { return skipped }
            framesToSkip -= Int64(skipped)
        }
        return decode(into: buffer, frames: frames)
    }

    private func decode(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let codec, failure == nil, frames > 0 else { return 0 }
        // Bytes that trickle in (a server sending a byte at a time) come on every read: without a
        // bound this loop fed them one by one for minutes before a frame was whole, and the
        // engine's decoder could not see a stop, a next or a shutdown meanwhile.
        let deadline = monotonicNow() + Self.readWait
        while true {
            let result = codec.decode(into: buffer, frames: frames)
            passFacts()
            switch result {
            case .frames(let count) where dropFrames > 0:
                // Dropped on the way to the place; said as "nothing yet", so the engine sees a
                // stop or a seek between chunks.
                let dropped = min(count, dropFrames)
                dropFrames -= dropped
                if dropped == count { return pcmSourcePending }
                let size = format.channels * MemoryLayout<Float>.size
                (buffer).copyMemory(from: buffer + dropped * size, byteCount: (count - dropped) * size)
                return count - dropped
            case .frames(let count):
                return count
            case .format(let next):
                // A chained Ogg stream restates its format with each new track: the same one goes on.
                if next.sampleRate != format.sampleRate || next.channels != format.channels {
                    failure = DecodeError(path: url, reason: "the stream changed its format (\(format.sampleRate) Hz "
                        + "\(format.channels) ch → \(next.sampleRate) Hz \(next.channels) ch): not supported yet")
                    return 0
                }
            case .ended:
                return 0
            case .failed(let reason):
                failure = DecodeError(path: url, reason: reason)
                return 0
            case .needMore:
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
                    codec.feed(UnsafeRawBufferPointer(start: scratch, count: count))
                    if monotonicNow() >= deadline {
                        // Running dry at a trickle: buffer again, as when nothing came.
                        rebuffering = true
                        stream.setRebuffering(true)
                        return pcmSourcePending
                    }
                case .pending:
                    rebuffering = true
                    stream.setRebuffering(true)
                    return pcmSourcePending
                case .ended:
                    if inputEnded { return 0 }
                    inputEnded = true
                    codec.endOfInput()
                case .failed(let reason):
                    failure = DecodeError(path: url, reason: reason)
                    return 0
                }
            }
        }
    }

    /// What the codec read from the stream itself goes to the stream's facts: a title (an Ogg
    /// link's comments), shown as an ICY title would be, and a nominal bitrate when it changed
    /// (each link of a chain may name its own).
    private func passFacts() {
        guard let codec else { return }
        if let title = codec.takeTitle() { stream.setTitle(title) }
        let bitrate = codec.nominalBitrate
        if bitrate != toldBitrate {
            toldBitrate = bitrate
            stream.setNominalBitrate(bitrate)
        }
    }

    /// An on-demand HLS stream, opened at the segment holding the place (`HTTPStream.startAt`),
    /// starts at `frame` of it: the frames between the segment's start and it are decoded and
    /// dropped. A live stream cannot seek (the core refuses seeks on streams it was not told are
    /// on demand): this only reports it.
    func seek(toFrame frame: Int64) throws(DecodeError) {
        guard let onDemand = stream.facts.onDemand else { throw DecodeError(path: url, reason: "a live stream cannot seek") }
        let first = Int64((onDemand.segmentStart * Double(format.sampleRate)).rounded())
        guard frame >= first else { throw DecodeError(path: url, reason: "the stream was opened past the place asked for") }
        framesToSkip = frame - first
    }

    /// Stops the stream's thread and frees the codec. Safe to call more than once.
    func close() {
        stream.close()
        codec?.close()
        codec = nil
    }
}

extension StreamDecoder: PCMSource {}
