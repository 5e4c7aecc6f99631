// SPDX-License-Identifier: MIT
import JukeboxCore

// The playback speed for MPD clients. MPD's protocol has no speed (its unknown commands stay
// refused, as MPD refuses them; `sendmessage` is between clients, not for the server), and what
// every client can send is a stored playlist's `load`: as for the sleep timer
// (`MPDSleepPlaylists.swift`), the player lists stored playlists named after the control words
// (`speed 0.75` … `speed 2`, `speed default`), and `load "speed X"` (any speed the control
// language takes) sets the queue's speed through the core as `jukebox ctl speed` does, and
// leaves the queue alone. `status` says the speed as an extra `speed:` line when it is not 1.
extension MPDFace {
    /// The names `listplaylists` offers.
    static let speedPlaylists = ["speed 0.75", "speed 1", "speed 1.25", "speed 1.5", "speed 2", "speed default"]

    /// `listplaylists`' lines for the words that are not playlists: the sleep timer's, then the
    /// speeds (their time: the epoch; they never change).
    static var wordPlaylistLines: [String] {
        (sleepPlaylists + speedPlaylists).flatMap { ["playlist: \($0)", "Last-Modified: 1970-01-01T00:00:00Z"] }
    }

    /// What `load NAME` sets when NAME is a speed's words (nil: it is not; `.some(nil)`: default).
    static func speedRequest(_ name: String) -> Double?? {
        guard name.lowercased().hasPrefix("speed "),
              case .success(.intent(.setSpeed(let speed))) = ControlCommand.parse(name, seed: 0) else { return nil }
        return .some(speed)
    }
}
