// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// Which decoder opens a file, told by its first bytes (never by its name): an MP4 file (`ftyp`
/// at byte 4: `.m4a`, `.m4b`, `.mp4`) goes to `MP4Decoder`, everything else to `Decoder` (Ogg Opus
/// through libopusfile; WAV, AIFF, FLAC, Ogg Vorbis, MP3 through libsndfile, which says when it is
/// not audio).
enum FileDecoder {
    static func open(path: String, limits: DecodeLimits = .standard) throws(DecodeError) -> any PCMSource {
        if isMP4(path) { return try MP4Decoder(path: path, limits: limits) }
        return try Decoder(path: path, limits: limits)
    }

    /// Whether the file starts as an MP4 file does (a box of type `ftyp` first).
    static func isMP4(_ path: String) -> Bool {
        guard let fd = try? openRegularFile(path) else { return false }
        defer { Glibc.close(fd) }
        var head = [UInt8](repeating: 0, count: 8)
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, 8, 0) }
        return got == 8 && head[4...7].elementsEqual("ftyp".utf8)
    }
}
