// SPDX-License-Identifier: MIT

extension Decoder {
    /// Why the player would not play the file at `path`, nil when it would: the player's own
    /// decision, `FileDecoder.open` as the audio engine opens a track (the decoder chosen by the
    /// first bytes, never the name: MP4 to `MP4Decoder`, Ogg Opus to libopusfile, the rest to
    /// libsndfile, which recognises WAV, AIFF, FLAC, Ogg and MP3 by their bytes; then the sample rate and channel limits). The
    /// web face's uploads are accepted by this and nothing else, so what is taken is what plays.
    public static func playableProblem(path: String, limits: DecodeLimits = .standard) -> String? {
        do throws(DecodeError) {
            let decoder = try FileDecoder.open(path: path, limits: limits)
            decoder.close()
            return nil
        } catch {
            return error.reason
        }
    }
}
