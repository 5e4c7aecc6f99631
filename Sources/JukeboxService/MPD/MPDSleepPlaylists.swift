// SPDX-License-Identifier: MIT
import JukeboxCore

// The sleep timer for MPD clients. MPD's protocol has no sleep timer, and what every client can
// send is a stored playlist's `load`: so the player lists stored playlists named after the control
// words (`sleep 15`, `sleep 30`, `sleep 60`, `sleep track`, `sleep chapter`, `sleep folder`, `sleep
// off`), and `load "sleep N"` (any `sleep` words the control language takes, listed or not) sets
// the timer through the core as `jukebox ctl sleep` does, and leaves the queue alone. They are
// listed with or without a playlists folder; a file of the same name is shadowed.
extension MPDFace {
    /// The names `listplaylists` offers.
    static let sleepPlaylists = ["sleep 15", "sleep 30", "sleep 60", "sleep track", "sleep chapter", "sleep folder", "sleep off"]

    /// What `load NAME` sets when NAME is a sleep timer's words (nil: it is not; `.some(nil)`: off).
    static func sleepRequest(_ name: String) -> SleepRequest?? {
        guard name.lowercased().hasPrefix("sleep "),
              case .success(.intent(.sleepTimer(let request))) = ControlCommand.parse(name, seed: 0) else { return nil }
        return .some(request)
    }
}
