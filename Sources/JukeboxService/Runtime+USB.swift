// SPDX-License-Identifier: MIT
import JukeboxCore

extension Runtime {
    /// `Command.loadUSB`: the stick is read by the tag reader (never on the loop) and comes back
    /// as `Event.usbTracks`; a player that cannot load files says so at once.
    func loadUSB(_ path: String) {
        let started = readSource([path]) { [weak self] tracks, messages, _ in
            self?.dispatch(.usbTracks(path: path, tracks: tracks, messages: messages))
        }
        // Queued, not dispatched: this runs while a command of the loop is carried out.
        if !started { pending.append(.usbTracks(path: path, tracks: [], messages: ["this player cannot load files"])) }
    }
}
