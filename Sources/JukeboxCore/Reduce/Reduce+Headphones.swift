// SPDX-License-Identifier: MIT

// The headphone jack: pulled out while sound plays, the sound pauses (as on a phone); plugged in,
// the volume is held to the headphones' cap. The card reports the jack; the rules are here.
extension State {
    /// What the log says when pulling the headphones paused the sound.
    static let headphonesPausedText = "headphones unplugged: paused"

    mutating func headphones(plugged: Bool, _ step: inout Step) {
        let was = headphonesIn
        headphonesIn = plugged
        guard let rules = settings.headphones, was != plugged else { return }
        // Their cap applies at once: a speaker's volume must not reach the ears. Out, the
        // speaker's (parental) cap may be lower than the headphones'.
        if clampVolume(volume) != volume { setVolume(cappedVolume(wanting: volume), &step) }
        // Only a pull is a reason to stop: a box that starts without headphones plays on.
        if !plugged, was == true, rules.pauseOnUnplug, playsOrWillPlay {
            apply(.pause, &step)
            step.commands.append(.report(State.headphonesPausedText))
        }
        // With a device of their own (`routes`), or a Bluetooth speaker that takes over when
        // they are out, the output follows the jack (`Reduce+Outputs.swift`).
        if let device = deviceChange { move(to: device, &step) }
    }
}
