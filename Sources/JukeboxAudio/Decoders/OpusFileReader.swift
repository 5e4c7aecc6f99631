// SPDX-License-Identifier: MIT
import COpusFile
import Glibc

/// An Ogg Opus file read by libopusfile, for `Decoder`: 32-bit float at 48 kHz (what libopus
/// decodes, with the header's output gain applied, as libsndfile gave it), the encoder's pre-skip
/// and the last page's end trim handled by opusfile, the length from the last granule position,
/// mono and stereo packets decoded by `OpusPacketDecoder`.
///
/// Why not libsndfile for Opus: it (like opusfile itself) decodes through libopus's multistream
/// decoder, which costs about twice the one-stream decoder's work on the project's VM (see
/// `OpusPacketDecoder`). Not thread-safe: one decoder on one thread at a time.
final class OpusFileReader {
    /// Interleaved channels, the same in every link of a chained file (others are left to libsndfile).
    let channels: Int
    /// Frames at 48 kHz, all links together.
    let frameCount: Int64
    private var file: OpaquePointer?
    /// opusfile's packet decoder for mono and stereo files (its callback's context: kept here).
    private let packets: OpusPacketDecoder

    /// Opus always decodes at this rate here (the header's input rate is only a note of the source's).
    static let sampleRate = 48000
    /// Bytes looked at to tell Ogg Opus: the first page holds the whole OpusHead packet (at most
    /// 27 + 255 + 276 bytes with 255 channels).
    static let probeBytes = 1024

    private init(file: OpaquePointer, channels: Int, frameCount: Int64) {
        self.file = file
        self.channels = channels
        self.frameCount = frameCount
        packets = OpusPacketDecoder(file: file)
        packets.install()
    }

    deinit { close() }

    /// Opens `fd` (left open: opusfile reads a duplicate of its own) when its first page is an Ogg
    /// Opus header and opusfile can read it as one seekable file with a known length and one
    /// channel count in every link; nil otherwise, and libsndfile then decodes the file or says
    /// why not (so a damaged Opus file gets the same reasons as before).
    static func open(fd: Int32) -> OpusFileReader? {
        var head = [UInt8](repeating: 0, count: probeBytes)
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, probeBytes, 0) }
        guard got > 0, head.withUnsafeBufferPointer({ op_test(nil, $0.baseAddress!, got) }) == 0 else { return nil }
        let copy = dup(fd)
        guard copy >= 0 else { return nil }
        var callbacks = OpusFileCallbacks()
        guard let stream = op_fdopen(&callbacks, copy, "rb") else {
            Glibc.close(copy)
            return nil
        }
        var error: Int32 = 0
        guard let file = op_open_callbacks(stream, &callbacks, nil, 0, &error) else {
            _ = callbacks.close?(stream)  // opusfile leaves the stream open when the open fails
            return nil
        }
        let total = op_pcm_total(file, -1)
        let links = op_link_count(file)
        let channels = op_head(file, 0).map { Int($0.pointee.channel_count) } ?? 0
        var sameChannels = op_seekable(file) != 0 && links >= 1 && channels > 0
        for link in 1..<max(1, links) where sameChannels {
            sameChannels = op_head(file, link).map { Int($0.pointee.channel_count) } == channels
        }
        guard sameChannels, total > 0 else {
            op_free(file)
            return nil
        }
        return OpusFileReader(file: file, channels: channels, frameCount: total)
    }

    /// Decodes up to `frames` frames into `buffer`. `frames` is less than asked at the end of the
    /// file or when decoding stops on damage opusfile cannot step over; `readFailed` when the
    /// medium failed under the read (an I/O error). A hole in the data (a lost or damaged page)
    /// is stepped over, as a player should.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> (frames: Int, readFailed: Bool) {
        guard let file else { return (0, false) }
        var done = 0
        while done < frames {
            let room = Int32(clamping: (frames - done) * channels)
            let got = op_read_float(file, buffer + done * channels, room, nil)
            if got > 0 {
                done += Int(got)
            } else if got == OP_HOLE {
                continue
            } else {
                return (done, got == OP_EREAD)
            }
        }
        return (done, false)
    }

    /// Positions the next read at `frame` (48 kHz), sample-exactly; false when opusfile refuses
    /// (a frame past the end, or a file that breaks under the seek).
    func seek(toFrame frame: Int64) -> Bool {
        guard let file else { return false }
        return op_pcm_seek(file, frame) == 0
    }

    /// Releases the file. Safe to call more than once.
    func close() {
        if let file { op_free(file) }
        file = nil
    }
}
