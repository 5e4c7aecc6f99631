// SPDX-License-Identifier: MIT
import CFaad
import Glibc

/// AAC in ADTS frames (AAC-LC, and HE-AAC v1/v2 "AAC+" as libfaad2 decodes them) through libfaad2.
///
/// libfaad decodes one whole frame per call and reads no further, so the codec keeps the bytes
/// itself (`StreamBytes`, bounded) and hands libfaad exactly one ADTS frame at a time. It finds the
/// frames by their headers: out of sync (at the start, after garbage or a bad frame) a header counts
/// only when the next frame's header follows where its length says, with the same rate and
/// channels, so a stray 0xFFF in garbage does not start a decode. The format reported is the one of
/// the first frame *decoded*, not `NeAACDecInit`'s: SBR (HE-AAC) may double the rate and PS turn
/// mono into stereo only once libfaad has seen a frame, and a format reported early would then be a
/// change the stream decoder refuses. Output is 32-bit float; 5.1 is mixed down to stereo by
/// libfaad (`downMatrix`), a board has two channels.
final class AACStreamCodec: StreamCodec {
    private var handle: NeAACDecHandle?
    private var initialised = false
    /// Nothing more will be fed (`endOfInput`).
    private var inputEnded = false
    private let bytes = StreamBytes(capacity: 64 << 10)
    /// A header was trusted and its frame decoded: the next header is taken where the length says.
    private var synced = false
    /// Bytes passed over since the last good frame (garbage, bad frames).
    private var skipped = 0
    /// libfaad's complaint about the last bad frame, for the failure message.
    private var lastError = ""
    /// The decoded frame being handed out, and its format.
    private var frame = DecodedFrame()

    /// The smallest ADTS header (no CRC).
    private static let headerBytes = 7

    init() throws(StreamCodecError) {
        guard let handle = NeAACDecOpen() else { throw StreamCodecError(reason: "cannot start libfaad2") }
        self.handle = handle
        guard let config = NeAACDecGetCurrentConfiguration(handle) else {
            close()
            throw StreamCodecError(reason: "cannot configure libfaad2")
        }
        config.pointee.outputFormat = UInt8(FAAD_FMT_FLOAT)
        config.pointee.downMatrix = 1
        guard NeAACDecSetConfiguration(handle, config) != 0 else {
            close()
            throw StreamCodecError(reason: "libfaad2 refused its configuration")
        }
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        let dropped = self.bytes.append(bytes)
        if dropped > 0 {
            synced = false
            skipped += dropped
        }
    }

    func endOfInput() {
        inputEnded = true
    }

    func decode(into buffer: UnsafeMutableRawPointer, frames: Int) -> StreamCodecResult {
        guard handle != nil else { return .ended }
        while true {
            if let result = frame.next(into: buffer, frames: frames) { return result }
            if let result = decodeFrame() { return result }
        }
    }

    /// Decodes the next frame into `pending` (and `unreported` when its format is new); returns
    /// what `decode` must say instead when there is no frame to decode yet.
    private func decodeFrame() -> StreamCodecResult? {
        while true {
            if frame.reported != nil && skipped > StreamDecoder.syncLimit {
                return .failed("AAC decoding failed (nothing decodable in \(skipped >> 10) KiB" + (lastError.isEmpty ? ")" : ": \(lastError))"))
            }
            let available = bytes.count
            guard available >= Self.headerBytes else { return .needMore }
            guard let length = Self.frameLength(bytes.pointer) else {
                skip()
                continue
            }
            if !synced {
                // Out of sync: the next header must be where this one's length says, alike. At
                // the end a frame that ends exactly there is the last; any other candidate is
                // passed over (a false header in garbage may claim up to 8 KiB that never come).
                if available >= length + Self.headerBytes {
                    guard Self.frameLength(bytes.pointer + length) != nil, Self.sameStream(bytes.pointer, bytes.pointer + length) else {
                        skip()
                        continue
                    }
                } else if !inputEnded {
                    return .needMore
                } else if available != length {
                    skip()
                    continue
                }
            }
            guard available >= length else {
                if !inputEnded { return .needMore }
                skip()  // at the end: a truncated last frame, or garbage claiming more than came
                continue
            }
            if !initialised {
                var rate: UInt = 0
                var channels: UInt8 = 0
                guard NeAACDecInit(handle, bytes.pointer, UInt(length), &rate, &channels) >= 0 else {
                    skip()
                    continue
                }
                initialised = true
            }
            var info = NeAACDecFrameInfo()
            let output = NeAACDecDecode(handle, &info, bytes.pointer, UInt(length))
            if info.error != 0 {
                lastError = String(cString: NeAACDecGetErrorMessage(info.error))
                skip()
                continue
            }
            bytes.consume(length)
            synced = true
            skipped = 0
            let channels = Int(info.channels)
            let rate = Int(info.samplerate)
            guard let output, info.samples > 0, channels > 0, rate > 0 else { continue }  // libfaad's start-up delay
            let samples = Int(info.samples)
            frame.hold(Array(UnsafeBufferPointer(start: output.assumingMemoryBound(to: Float.self), count: samples - samples % channels)),
                       format: AudioFormat(sampleRate: rate, channels: channels, sample: .float32))
            return nil
        }
    }

    /// Passes over one byte: out of sync, the search for a header goes on from the next.
    private func skip() {
        bytes.consume(1)
        synced = false
        skipped += 1
    }

    /// The length of the ADTS frame whose header starts at `p` (7 bytes readable), nil when it is
    /// no ADTS header: sync 0xFFF with layer 00 (an MP3 frame's layer is never 00), a known rate,
    /// a length that holds the header.
    static func frameLength(_ p: UnsafePointer<UInt8>) -> Int? {
        guard p[0] == 0xFF, p[1] & 0xF6 == 0xF0 else { return nil }
        guard (p[2] >> 2) & 0x0F <= 12 else { return nil }
        let length = Int(p[3] & 0x03) << 11 | Int(p[4]) << 3 | Int(p[5] >> 5)
        let header = p[1] & 0x01 == 0 ? 9 : 7  // protection_absent 0: a CRC follows the header
        return length >= header ? length : nil
    }

    /// Whether two headers say the same profile, rate and channels (what does not change within a stream).
    static func sameStream(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>) -> Bool {
        a[1] == b[1] && a[2] & 0xFD == b[2] & 0xFD && a[3] & 0xC0 == b[3] & 0xC0
    }

    /// Whether `head` holds two chained ADTS headers (one frame and the next's header): how a
    /// stream without a Content-Type is recognised as AAC.
    static func looksLikeADTS(_ head: UnsafeRawBufferPointer) -> Bool {
        guard let base = head.baseAddress?.assumingMemoryBound(to: UInt8.self), head.count >= 2 * headerBytes else { return false }
        for offset in 0...(head.count - 2 * headerBytes) where base[offset] == 0xFF {
            guard let length = frameLength(base + offset), offset + length + headerBytes <= head.count else { continue }
            if frameLength(base + offset + length) != nil && sameStream(base + offset, base + offset + length) { return true }
        }
        return false
    }

    func close() {
        if let handle { NeAACDecClose(handle) }
        handle = nil
    }
}

/// A codec's own byte buffer: what was fed and not consumed yet, contiguous, at most `capacity`
/// bytes (the oldest are dropped beyond: a codec that cannot use bytes must not grow without end).
final class StreamBytes {
    private let storage: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var start = 0
    private var end = 0

    init(capacity: Int) {
        self.capacity = capacity
        storage = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// The bytes held.
    var count: Int { end - start }
    /// The first byte held (valid until the next `append` or `consume`).
    var pointer: UnsafeMutablePointer<UInt8> { storage + start }

    /// Appends `bytes`; returns how many bytes were dropped to stay within `capacity` (the oldest).
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard var source = bytes.baseAddress, bytes.count > 0 else { return 0 }
        var incoming = bytes.count
        var dropped = 0
        if incoming > capacity {
            dropped = incoming - capacity
            source += dropped
            incoming = capacity
        }
        if end + incoming > capacity {
            let over = count + incoming - capacity
            if over > 0 {
                dropped += over
                start += over
            }
            if count > 0 { memmove(storage, storage + start, count) }
            end = count
            start = 0
        }
        (storage + end).update(from: source.assumingMemoryBound(to: UInt8.self), count: incoming)
        end += incoming
        return dropped
    }

    /// Forgets the first `n` bytes held.
    func consume(_ n: Int) {
        start += min(n, count)
        if start == end {
            start = 0
            end = 0
        }
    }
}
