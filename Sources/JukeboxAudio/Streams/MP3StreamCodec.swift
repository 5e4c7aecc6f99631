// SPDX-License-Identifier: MIT
import CMpg123
import Glibc

/// MP3 through libmpg123's feed API.
///
/// Not libsndfile: its MP3 reader (through mpg123_scan) reads a source of unknown length to its end
/// before the first frame, which on a live stream never comes. The feed API decodes whatever bytes
/// arrived. Output is 32-bit float at the stream's own rate and channels.
final class MP3StreamCodec: StreamCodec {
    private var handle: OpaquePointer?
    /// Bytes per frame of the last format reported; 0 before the first.
    private var frameBytes = 0

    init() throws(StreamCodecError) {
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw StreamCodecError(reason: "cannot start libmpg123: " + String(cString: mpg123_plain_strerror(error)))
        }
        self.handle = handle
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
            close()
            throw StreamCodecError(reason: "cannot start libmpg123's feed")
        }
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let handle, let base = bytes.baseAddress, bytes.count > 0 else { return }
        mpg123_feed(handle, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    func decode(into buffer: UnsafeMutableRawPointer, frames: Int) -> StreamCodecResult {
        guard let handle else { return .ended }
        while true {
            var done = 0
            // Before the first format, a read of 0 bytes parses up to the first frame's header.
            let result = mpg123_read(handle, frameBytes > 0 ? buffer : nil, frames * frameBytes, &done)
            if done > 0 { return .frames(done / frameBytes) }
            switch result {
            case MPG123_OK.rawValue:
                if frameBytes == 0 { return .needMore }
                continue
            case MPG123_NEED_MORE.rawValue:
                return .needMore
            case MPG123_NEW_FORMAT.rawValue:
                var rate = 0
                var channels: Int32 = 0
                var encoding: Int32 = 0
                mpg123_getformat(handle, &rate, &channels, &encoding)
                frameBytes = Int(channels) * MemoryLayout<Float>.size
                return .format(AudioFormat(sampleRate: rate, channels: Int(channels), sample: .float32))
            case MPG123_DONE.rawValue:
                return .ended
            default:
                return .failed("MP3 decoding failed (" + String(cString: mpg123_strerror(handle)) + ")")
            }
        }
    }

    /// libmpg123's own seek in feed mode (`mpg123_feedseek`), fuzzy: the byte from the Xing/Info
    /// header's table of contents (told the file's length) or, without one, from the mean frame
    /// size (exact for a constant bitrate); libmpg123 then decodes forward from that point to the
    /// sample asked (at most 1 % of the file with a table of contents) and says where it lands.
    func startingPoint(seconds: Double, length: Int?) -> (byte: Int, seconds: Double)? {
        guard let handle, frameBytes > 0, seconds > 0, seconds.isFinite else { return nil }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0 else { return nil }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_FUZZY.rawValue), 0)
        if let length, length > 0 { mpg123_set_filesize(handle, length) }
        var input = 0
        let sample = mpg123_feedseek(handle, Int((seconds * Double(rate)).rounded(.down)), SEEK_SET, &input)
        guard sample >= 0, input >= 0 else { return nil }
        return (input, Double(sample) / Double(rate))
    }

    func close() {
        if let handle { mpg123_delete(handle) }
        handle = nil
    }
}
