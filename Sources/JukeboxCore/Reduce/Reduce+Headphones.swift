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
        if plugged {
            // Their cap applies at once: a speaker's volume must not reach the ears.
            if clampVolume(volume) != volume { setVolume(cappedVolume(wanting: volume), &step) }
            route(to: .headphones, &step)
            return
        }
        // The speaker's parental cap may be lower than the headphones'.
        if clampVolume(volume) != volume { setVolume(cappedVolume(wanting: volume), &step) }
        // Only a pull is a reason to stop: a box that starts without headphones plays on.
        if was == true, rules.pauseOnUnplug {
            switch phase {
            case .playing, .waitingForDevice, .waitingForMusic:
                apply(.pause, &step)
                step.commands.append(.report(State.headphonesPausedText))
            case .interrupted where afterInterruption == .playing:
                apply(.pause, &step)
                step.commands.append(.report(State.headphonesPausedText))
            default:
                break
            }
        }
        route(to: .speaker, &step)
    }

    /// With a device of their own for the headphones (`routes`): the output goes there, or back to
    /// the speaker. What the old device holds is let go (a paused play too: it would resume there);
    /// a play goes on through the new device from where it was heard, a paused one opens it when
    /// it resumes. The first report at start routes too, so the device follows the jack from the
    /// first sound.
    mutating func route(to output: OutputRoute, _ step: inout Step) {
        guard settings.headphones?.routes == true else { return }
        guard loaded != nil || chimePlay != nil else {
            step.commands.append(.routeOutput(output))
            return
        }
        // Stopped before the route changes: nothing of the old play reaches the new device.
        let at = chimePlay != nil ? (afterChime ?? position) : position
        unload(&step)
        step.commands.append(.routeOutput(output))
        if phase == .playing { startCurrent(at: at, paused: false, &step) }
    }
}
