// SPDX-License-Identifier: MIT

// The speaker's own volume (issue 31). While the play goes to a Bluetooth speaker whose PCM's
// soft volume is off, the volume is one number on the link: the player sends its volume (capped
// by the speaker's `volumeMax`) to the speaker and leaves the samples untouched, and the
// speaker's keys change the player's volume, so the status, display, web and MQTT show it. Where
// the soft volume cannot be turned off, the samples are scaled as before.
extension State {
    /// What the log says once when the speaker's volume cannot be used.
    static func bluetoothVolumeRefusedText(_ reason: String) -> String {
        "bluetooth: the speaker's own volume is not used (\(reason)); the samples are scaled instead"
    }

    /// Whether the speaker's own volume carries the player's volume now.
    var speakerCarriesVolume: Bool {
        settings.bluetooth != nil && bluetoothConnected == true && routedDevice == .bluetooth && bluetoothVolume.taken == true
    }

    /// The speaker connected: its PCM is asked to carry the volume (off the loop); it went: what
    /// was known of its volume goes with it.
    mutating func bluetoothVolumeFollowsConnection(_ connected: Bool, _ step: inout Step) {
        let refusalSaid = bluetoothVolume.refusalSaid
        let carried = bluetoothVolume.carries
        bluetoothVolume = BluetoothVolumeLink()
        bluetoothVolume.refusalSaid = refusalSaid
        bluetoothVolume.carries = carried
        guard connected else { return }
        let level = BluetoothVolumeLink.level(percent: volume)
        bluetoothVolume.send(level)
        step.commands.append(.takeBluetoothVolume(level: level))
    }

    /// `Event.bluetoothVolumeControl`: the answer to `takeBluetoothVolume`.
    mutating func bluetoothVolumeControl(taken: Bool, reason: String, _ step: inout Step) {
        // A late answer for a speaker that went is nobody's.
        guard settings.bluetooth != nil, bluetoothConnected == true, bluetoothVolume.taken == nil else { return }
        bluetoothVolume.taken = taken
        if !taken, !bluetoothVolume.refusalSaid {
            bluetoothVolume.refusalSaid = true
            step.commands.append(.report(State.bluetoothVolumeRefusedText(reason.isEmpty ? "no reason given" : reason)))
        }
    }

    /// `Event.bluetoothVolume`: the speaker's level (its keys, or the echo of what the player sent).
    mutating func bluetoothVolumeReported(level: Int, muted: Bool, _ step: inout Step) {
        guard settings.bluetooth != nil, bluetoothConnected == true, bluetoothVolume.taken == true else { return }
        let level = min(max(level, 0), BluetoothVolumeLink.maxLevel)
        if muted != bluetoothVolume.muted {
            bluetoothVolume.muted = muted
            // bluez-alsa's mute switch, set on the box (AVRCP has none): said, never a volume.
            step.commands.append(.report(muted ? "bluetooth speaker muted (bluez-alsa's mute switch)" : "bluetooth speaker unmuted"))
        }
        // What the player sent, coming back (even after a newer one went): nothing changes, no
        // echo loop. The same level again says nothing new either.
        if bluetoothVolume.isEcho(level) || level == bluetoothVolume.level { return }
        bluetoothVolume.level = level
        // Only while the speaker is what is heard: otherwise its keys change nothing heard.
        guard speakerCarriesVolume else { return }
        step.activity = true
        let wanted = BluetoothVolumeLink.percent(level: level)
        parental.heldVolume = nil
        let v = cappedVolume(wanting: wanted)
        if settings.display != nil { volumeShownUntil = now + settings.volumeOverlaySeconds }
        volume = v
        // The speaker went above the cap (or below the lowest volume): it is set back, since its
        // level is the only one heard.
        if v != wanted {
            let back = BluetoothVolumeLink.level(percent: v)
            bluetoothVolume.send(back)
            step.commands.append(.setBluetoothVolume(level: back))
        }
    }

    /// After each step: while the speaker carries the volume, every volume the step ordered goes
    /// to it and the samples pass untouched; when it stops carrying it (back on the card, the
    /// speaker gone), the samples are scaled again. The speaker's level is set before the samples
    /// go to 100, and both before a play starts, so no moment is louder than asked.
    mutating func followBluetoothVolume(_ step: inout Step) {
        let carries = speakerCarriesVolume
        let was = bluetoothVolume.carries
        bluetoothVolume.carries = carries
        guard carries || was else { return }
        var ordered: Int?
        if carries {
            step.commands.removeAll { command in
                guard case .setVolume(let v) = command else { return false }
                ordered = v
                return true
            }
        }
        var orders: [Command] = []
        if carries {
            if let wanted = ordered ?? (was ? nil : volume) {
                let level = BluetoothVolumeLink.level(percent: wanted)
                if level != bluetoothVolume.level {
                    bluetoothVolume.send(level)
                    orders.append(.setBluetoothVolume(level: level))
                }
            }
            if !was { orders.append(.setVolume(100)) }
        } else if !step.commands.contains(where: { if case .setVolume = $0 { return true } else { return false } }) {
            orders.append(.setVolume(volume))
        }
        let at = step.commands.firstIndex { if case .startTrack = $0 { return true } else { return false } } ?? step.commands.count
        step.commands.insert(contentsOf: orders, at: at)
    }
}
