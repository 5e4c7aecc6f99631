// SPDX-License-Identifier: MIT

/// What the player knows of a Bluetooth speaker's own volume (AVRCP absolute volume, through
/// bluez-alsa's PCM `Volume`, 0–127). With the PCM's soft volume off, that volume is the one
/// number on the link: the player sends its volume there instead of scaling the samples, and the
/// speaker's keys come back as `Event.bluetoothVolume` (`Reduce+BluetoothVolume`).
public struct BluetoothVolumeLink: Equatable, Sendable {
    /// Whether the speaker's PCM carries the volume: nil while not asked or not answered (the
    /// samples are scaled meanwhile), true once its soft volume is off, false when that failed
    /// (the samples are scaled, as before).
    public var taken: Bool?
    /// The level on the link as last sent or reported; nil: not known.
    public var level: Int?
    /// Levels sent whose report has not come back yet, oldest first (at most `maxInFlight`): a
    /// report of one of them is the echo of what the player sent, even after a newer one went
    /// (a knob turned quickly), and changes nothing.
    public var inFlight: [Int] = []
    /// Whether bluez-alsa last said both channels are muted.
    public var muted = false
    /// Whether the speaker carried the volume at the end of the last step (the samples untouched).
    public var carries = false
    /// Whether a failure to take the speaker's volume has been said (once a run).
    public var refusalSaid = false

    public init() {}

    /// The most levels waited for as echoes.
    public static let maxInFlight = 16

    /// `level` is sent: the level on the link, and an echo to wait for.
    public mutating func send(_ level: Int) {
        self.level = level
        inFlight.append(level)
        if inFlight.count > Self.maxInFlight { inFlight.removeFirst(inFlight.count - Self.maxInFlight) }
    }

    /// Whether a reported `level` is the echo of one sent (it and those sent before it are then
    /// no longer waited for).
    public mutating func isEcho(_ level: Int) -> Bool {
        guard let i = inFlight.firstIndex(of: level) else { return false }
        inFlight.removeSubrange(...i)
        return true
    }

    /// The highest level of bluez-alsa's PCM volume.
    public static let maxLevel = 127

    /// The speaker's level for the player's volume (0–100), linear as AVRCP's 0–127 is.
    public static func level(percent: Int) -> Int {
        let p = min(max(percent, 0), 100)
        return (p * maxLevel + 50) / 100
    }

    /// The player's volume for the speaker's level (0–127).
    public static func percent(level: Int) -> Int {
        let l = min(max(level, 0), maxLevel)
        return (l * 100 + maxLevel / 2) / maxLevel
    }
}
