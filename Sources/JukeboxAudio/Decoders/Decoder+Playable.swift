// SPDX-License-Identifier: MIT

extension Decoder {
    /// Why the player would not play the file at `path`, nil when it would: the player's own
    /// decision (this decoder opening it: libsndfile recognises the format by its first bytes,
    /// whatever the name says, then the sample rate and channel limits). The web face's uploads
    /// are accepted by this and nothing else, so what is taken is what plays.
    public static func playableProblem(path: String, limits: DecodeLimits = .standard) -> String? {
        do throws(DecodeError) {
            let decoder = try Decoder(path: path, limits: limits)
            decoder.close()
            return nil
        } catch {
            return error.reason
        }
    }
}
