// SPDX-License-Identifier: MIT
import CFLAC
import Glibc

/// Native FLAC over HTTP through libFLAC's stream decoder.
///
/// libFLAC pulls its bytes through a read callback, which must never wait for the network (that
/// is `StreamDecoder`'s job, with its timeout). So the codec calls `process_single` only when it
/// holds a whole frame's worth for sure (STREAMINFO's largest frame, else the largest a frame of
/// that shape can be) or the input ended; with less it says `.needMore`. If libFLAC still asks for
/// more than is there (a sync search through garbage), the callback aborts and the decoder is
/// flushed: it searches for the next frame with the next bytes. The metadata blocks are read here,
/// not by libFLAC: STREAMINFO is kept and handed on alone, the others (tags, pictures of any size)
/// are passed over as they arrive, so nothing but frames has to be held. Output is 32-bit float
/// (integer samples / 2^(bits-1): a 16-bit sample is exact), the format being the first frame's.
final class FLACStreamCodec: StreamCodec {
    private var decoder: UnsafeMutablePointer<FLAC__StreamDecoder>?
    private var bytes = StreamBytes(capacity: 64 << 10)
    private var inputEnded = false

    private enum Stage {
        /// Looking for "fLaC" (bytes before it are passed over).
        case magic
        /// Reading metadata blocks: `skip` bytes of a block not wanted are still to pass; `last`
        /// when that block is the last.
        case metadata(skip: Int, last: Bool)
        /// Frames: libFLAC decodes; `prefix` ("fLaC" and STREAMINFO, marked last) is read first.
        case frames
    }
    private var stage = Stage.magic
    private var prefix: [UInt8] = []
    private var prefixUsed = 0
    /// Bytes that make a frame surely whole, and the shape every frame has (from STREAMINFO).
    private var frameBytes = 0
    private var shape = (rate: 0, channels: 0, bits: 0)
    /// The read callback ran out (libFLAC wanted more than was held): flush and wait for bytes.
    private var starved = false
    /// libFLAC is at a frame's start (after the metadata, after a frame). Out of sync, the bytes
    /// up to the next frame come first: two largest frames are held before it searches, or it would
    /// run dry in the frame after the search, again and again.
    private var inSync = true
    /// Bytes passed to libFLAC or over since the last decoded frame, and libFLAC's last complaint.
    private var sinceFrame = 0
    private var lastError = ""
    /// "fLaC" and the metadata blocks read so far.
    private(set) var headerBytes = 0

    /// The decoded frame being handed out, and its format.
    private var frame = DecodedFrame()

    /// A FLAC frame larger than this is refused (a stream's are a few KiB; the format allows MiBs).
    static let largestFrame = 1 << 20
    /// Metadata beyond this is refused: it is read past, but a stream of garbage must end somewhere.
    static let largestHeader = 16 << 20

    init() throws(StreamCodecError) {
        guard let decoder = FLAC__stream_decoder_new() else { throw StreamCodecError(reason: "cannot start libFLAC") }
        self.decoder = decoder
        let me = Unmanaged.passUnretained(self).toOpaque()
        let status = FLAC__stream_decoder_init_stream(decoder, { _, buffer, count, client in
            Unmanaged<FLACStreamCodec>.fromOpaque(client!).takeUnretainedValue().read(buffer!, count!)
        }, nil, nil, nil, nil, { _, frame, channels, client in
            Unmanaged<FLACStreamCodec>.fromOpaque(client!).takeUnretainedValue().write(frame!, channels!)
        }, nil, { _, status, client in
            let codec = Unmanaged<FLACStreamCodec>.fromOpaque(client!).takeUnretainedValue()
            codec.inSync = false
            codec.lastError = switch status {
            case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: "lost sync"
            case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: "bad frame header"
            case FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH: "frame CRC mismatch"
            default: "unparseable stream"
            }
        }, me)
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            close()
            throw StreamCodecError(reason: "cannot start libFLAC's stream decoder")
        }
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        sinceFrame += self.bytes.append(bytes)
    }

    func endOfInput() {
        inputEnded = true
    }

    func decode(into buffer: UnsafeMutableRawPointer, frames: Int) -> StreamCodecResult {
        guard let decoder else { return .ended }
        while true {
            if let result = frame.next(into: buffer, frames: frames) { return result }
            if frame.reported != nil && sinceFrame > StreamDecoder.syncLimit {
                return .failed("FLAC decoding failed (nothing decodable in \(sinceFrame >> 10) KiB" + (lastError.isEmpty ? ")" : ": \(lastError))"))
            }
            switch stage {
            case .magic, .metadata:
                if let result = readMetadata() { return result }
            case .frames:
                if !inputEnded && bytes.count < (inSync ? frameBytes : 2 * frameBytes) { return .needMore }
                let decoded = FLAC__stream_decoder_process_single(decoder) != 0
                if starved {
                    // Out of bytes mid-frame (garbage, a frame larger than STREAMINFO said): start
                    // over at the next frame sync with the bytes still to come.
                    starved = false
                    inSync = false
                    guard FLAC__stream_decoder_flush(decoder) != 0 else { return .failed("FLAC decoding failed (libFLAC could not start over)") }
                    return .needMore
                }
                let state = FLAC__stream_decoder_get_state(decoder)
                if state == FLAC__STREAM_DECODER_END_OF_STREAM {
                    if frame.isDrained { return .ended }
                } else if !decoded {
                    return .failed("FLAC decoding failed (" + String(cString: FLAC__stream_decoder_get_resolved_state_string(decoder)) + ")")
                }
            }
        }
    }

    /// Reads "fLaC" and the metadata blocks from `bytes`; returns what `decode` must say, or nil
    /// when it got on (or reached the frames).
    private func readMetadata() -> StreamCodecResult? {
        let wanted: Int
        switch stage {
        case .magic: wanted = 4
        case .metadata(let skip, _) where skip > 0: wanted = 1
        case .metadata(_, last: true): wanted = 0
        case .metadata: wanted = 4
        case .frames: return nil
        }
        guard headerBytes <= Self.largestHeader else { return .failed("not a FLAC stream (over \(Self.largestHeader >> 20) MiB of metadata)") }
        guard bytes.count >= wanted else { return inputEnded ? .ended : .needMore }
        let p = bytes.pointer
        switch stage {
        case .magic:
            if p[0] == 0x66 && p[1] == 0x4C && p[2] == 0x61 && p[3] == 0x43 {  // "fLaC"
                bytes.consume(4)
                headerBytes += 4
                stage = .metadata(skip: 0, last: false)
            } else {
                bytes.consume(1)
                sinceFrame += 1
            }
        case .metadata(let skip, let last) where skip > 0:
            let n = min(skip, bytes.count)
            bytes.consume(n)
            headerBytes += n
            stage = .metadata(skip: skip - n, last: last)
        case .metadata(_, last: true):
            guard !prefix.isEmpty else { return .failed("not a FLAC stream (no STREAMINFO)") }
            // The frames' buffer holds two of the largest frames and a feed.
            let frames = StreamBytes(capacity: max(64 << 10, 2 * frameBytes + (16 << 10)))
            _ = frames.append(UnsafeRawBufferPointer(start: p, count: bytes.count))
            bytes = frames
            stage = .frames
        case .metadata:
            let last = p[0] & 0x80 != 0
            let type = p[0] & 0x7F
            let length = Int(p[1]) << 16 | Int(p[2]) << 8 | Int(p[3])
            if type == 0 {
                guard length == 34, prefix.isEmpty else { return .failed("not a FLAC stream (a STREAMINFO of \(length) bytes)") }
                guard bytes.count >= 4 + length else { return inputEnded ? .ended : .needMore }
                if let failure = keepStreamInfo(UnsafeBufferPointer(start: p, count: 4 + length)) { return failure }
                bytes.consume(4 + length)
                headerBytes += 4 + length
                stage = .metadata(skip: 0, last: last)
            } else {
                guard type != 127, !prefix.isEmpty else { return .failed("not a FLAC stream (no STREAMINFO first)") }
                bytes.consume(4)
                headerBytes += 4
                stage = .metadata(skip: length, last: last)
            }
        case .frames:
            break
        }
        return nil
    }

    /// Keeps STREAMINFO (its 4-byte header and 34 bytes) as the prefix libFLAC reads, marked as the
    /// last block, and the frame size that makes a frame surely whole.
    private func keepStreamInfo(_ block: UnsafeBufferPointer<UInt8>) -> StreamCodecResult? {
        let info = UnsafeBufferPointer(rebasing: block[4...])
        let maxBlock = Int(info[2]) << 8 | Int(info[3])
        let maxFrame = Int(info[7]) << 16 | Int(info[8]) << 8 | Int(info[9])
        let channels = Int((info[12] >> 1) & 0x07) + 1
        let bits = Int(info[12] & 0x01) << 4 + Int(info[13] >> 4) + 1
        shape = (Int(info[10]) << 12 | Int(info[11]) << 4 | Int(info[12] >> 4), channels, bits)
        // Unknown largest frame: a verbatim frame of the largest block (the side channel has a
        // bit more), and its header and footer.
        let worst = maxBlock * channels * (bits + 1) / 8 + 32
        frameBytes = maxFrame > 0 ? maxFrame : worst
        guard maxBlock >= 16, frameBytes <= Self.largestFrame else {
            return .failed("FLAC frames of \(maxBlock) samples are not for a stream")
        }
        prefix = [0x66, 0x4C, 0x61, 0x43]
        prefix.append(contentsOf: block)
        prefix[4] |= 0x80
        return nil
    }

    /// libFLAC's read callback: the prefix, then what is held; never waits. Empty-handed before the
    /// end, it aborts (`decode` flushes and asks for more).
    private func read(_ buffer: UnsafeMutablePointer<FLAC__byte>, _ count: UnsafeMutablePointer<Int>) -> FLAC__StreamDecoderReadStatus {
        let want = count.pointee
        if prefixUsed < prefix.count {
            let n = min(want, prefix.count - prefixUsed)
            prefix.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + prefixUsed, count: n) }
            prefixUsed += n
            count.pointee = n
            return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
        }
        let n = min(want, bytes.count)
        if n == 0 {
            count.pointee = 0
            if inputEnded { return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM }
            starved = true
            return FLAC__STREAM_DECODER_READ_STATUS_ABORT
        }
        buffer.update(from: bytes.pointer, count: n)
        bytes.consume(n)
        sinceFrame += n
        count.pointee = n
        return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
    }

    /// libFLAC's write callback: one decoded frame, planar integers → interleaved float in `frame`.
    private func write(_ frame: UnsafePointer<FLAC__Frame>, _ planes: UnsafePointer<UnsafePointer<FLAC__int32>?>) -> FLAC__StreamDecoderWriteStatus {
        let header = frame.pointee.header
        let channels = Int(header.channels)
        let count = Int(header.blocksize)
        let rate = Int(header.sample_rate)
        // A frame of another shape is a false sync in garbage (libFLAC writes a frame whose CRC
        // failed as silence): a native FLAC stream keeps its STREAMINFO's shape.
        guard channels == shape.channels, rate == shape.rate || shape.rate == 0, rate > 0, Int(header.bits_per_sample) == shape.bits,
              header.bits_per_sample >= 4, header.bits_per_sample <= 32 else {
            return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
        }
        let scale = 1 / Float(sign: .plus, exponent: Int(header.bits_per_sample) - 1, significand: 1)
        var samples = [Float](repeating: 0, count: count * channels)
        samples.withUnsafeMutableBufferPointer { out in
            for channel in 0..<channels {
                guard let plane = planes[channel] else { continue }
                for index in 0..<count { out[index * channels + channel] = Float(plane[index]) * scale }
            }
        }
        self.frame.hold(samples, format: AudioFormat(sampleRate: rate, channels: channels, sample: .float32))
        inSync = true
        sinceFrame = 0
        lastError = ""
        return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
    }

    /// Whether `head` starts as a native FLAC stream does.
    static func looksLikeFLAC(_ head: UnsafeRawBufferPointer) -> Bool {
        head.count >= 4 && head[0] == 0x66 && head[1] == 0x4C && head[2] == 0x61 && head[3] == 0x43
    }

    func close() {
        if let decoder {
            FLAC__stream_decoder_finish(decoder)
            FLAC__stream_decoder_delete(decoder)
        }
        decoder = nil
    }
}
