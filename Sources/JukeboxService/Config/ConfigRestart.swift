// SPDX-License-Identifier: MIT
import JukeboxCore

/// What a reload (SIGHUP, `reload`) gives the running player: the policy, which applies at once,
/// and the config's keys whose change waits for the next start (devices, the board, sockets and
/// the speaker's watcher are opened at start).
public struct ConfigReload: Sendable, Equatable {
    /// The policy read from the file, with what waits for a restart kept as it runs.
    public var settings: Settings
    /// The config keys read with a value other than the running one's, which take effect at the
    /// next start (empty: everything read applies now).
    public var waiting: [String]

    public init(settings: Settings, waiting: [String] = []) {
        self.settings = settings
        self.waiting = waiting
    }

    /// The reply to `reload`: what a page or a technician reads to know whether the file now
    /// read is the one that runs.
    public var reply: String {
        waiting.isEmpty ? "ok configuration reloaded" : "ok configuration reloaded; at the next start: " + waiting.joined(separator: ", ")
    }
}

extension Config {
    /// The keys of `read` (the file read again) that differ from this running config and take
    /// effect only at the next start, in the config file's words, in the file's order.
    public func waitingForRestart(_ read: Config) -> [String] {
        var keys: [String] = []
        func differs(_ key: String, _ changed: Bool) { if changed { keys.append(key) } }
        differs("device", read.device != device)
        differs("output", read.audio != audio || read.snapcast != snapcast)
        differs("state", read.statePath != statePath)
        differs("socket", read.socketPath != socketPath)
        differs("mixer", read.mixer != mixer)
        differs("mixerCard", read.mixerCard != mixerCard)
        differs("mpd", read.mpd != mpd)
        differs("rfid", read.rfid != rfid)
        differs("usb", read.usbRoots != usbRoots || read.usbMountsOnly != usbMountsOnly)
        differs("mqtt", read.mqtt != mqtt)
        differs("radio.bufferSeconds", read.radioBufferSeconds != radioBufferSeconds)
        differs("radio.caFile", read.radioCAFile != radioCAFile)
        // A new speaker (or device, or the section come or gone) keeps the running speaker's
        // rules too: they belong to the watcher made at start.
        differs("bluetooth", read.bluetooth != bluetooth)
        differs("bluetooth.phone", read.bluetoothPhone != bluetoothPhone)
        differs("bluetooth.adapter", read.bluetoothAdapter != bluetoothAdapter)
        differs("airplayMetadata", read.airplayMetadata != airplayMetadata)
        let board = hardware, next = read.hardware
        differs("board", next.board != board.board)
        differs("gpio", next.gpio != board.gpio)
        differs("buttons", next.buttons != board.buttons)
        differs("encoder", next.encoder != board.encoder)
        differs("input", next.input != board.input)
        differs("display", next.display != board.display)
        differs("powerCommand", next.powerCommand != board.powerCommand)
        return keys
    }
}
