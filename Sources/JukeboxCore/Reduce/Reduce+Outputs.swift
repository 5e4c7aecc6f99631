// SPDX-License-Identifier: MIT

// Where the sound is heard: headphones in the jack first (a child with headphones on must not be
// heard through a speaker), then a connected Bluetooth speaker, then the box's own card. The
// facts (the jack, bluez-alsa) come as events; the choice and the move are here.
extension State {
    /// What the log says when the speaker going paused the sound.
    static let bluetoothPausedText = "bluetooth speaker gone: paused"
    /// What the log says when the speaker's return resumed the sound it paused.
    static let bluetoothResumedText = "bluetooth speaker back: playing on"

    /// Where the sound is heard now, from the facts and the config (headphones > Bluetooth > card).
    public var output: OutputRoute {
        if headphonesIn == true, settings.headphones != nil { return .headphones }
        if bluetoothConnected == true, settings.bluetooth != nil { return .bluetooth }
        return .card
    }

    /// The sound device that plays `output`: headphones without a device of their own are in
    /// the card's jack.
    func device(of output: OutputRoute) -> OutputRoute {
        output == .headphones && settings.headphones?.routes != true ? .card : output
    }

    /// The device `output` needs when it is not the one routed to; nil: no move.
    var deviceChange: OutputRoute? {
        let wanted = device(of: output)
        return wanted == routedDevice ? nil : wanted
    }

    /// `Event.bluetoothSpeaker`: connected, the play moves to the speaker (a pause it caused
    /// resumes); gone, back to the card (or headphones), or paused (`whenGone: pause`).
    mutating func bluetoothSpeaker(connected: Bool, _ step: inout Step) {
        let was = bluetoothConnected
        bluetoothConnected = connected
        guard let rules = settings.bluetooth, was != connected else { return }
        // The speaker's cap, or the card's when it goes, applies before a sound reaches it.
        if clampVolume(volume) != volume { setVolume(cappedVolume(wanting: volume), &step) }
        // Its PCM is asked to carry the volume before anything plays there.
        bluetoothVolumeFollowsConnection(connected, &step)
        if !connected, routedDevice == .bluetooth, rules.whenGone == .pause, playsOrWillPlay {
            apply(.pause, &step)
            pausedByBluetooth = true
            step.commands.append(.report(State.bluetoothPausedText))
        }
        if let device = deviceChange { move(to: device, &step) }
        if connected, pausedByBluetooth, phase == .paused, output == .bluetooth {
            pausedByBluetooth = false
            apply(.play, &step)
            step.commands.append(.report(State.bluetoothResumedText))
        }
    }

    /// Whether sound plays, or will once what holds it up ends (a device, music, an interruption).
    var playsOrWillPlay: Bool {
        switch phase {
        case .playing, .waitingForDevice, .waitingForMusic: return true
        case .interrupted: return afterInterruption == .playing
        default: return false
        }
    }

    /// Routes to `device`. What the old device holds is let go (a paused play too: it would
    /// resume there); a play goes on through the new device from where it was heard, a paused
    /// one opens it when it resumes. Stopped before the route changes, so nothing of the old
    /// play reaches the new device, and the place is the one heard, however often it moves.
    /// A play waiting for the old device (a write to the speaker failed before bluez-alsa said it
    /// was gone) tries the new one at once, as for a card announced: the wait for a lost device
    /// is long, and nothing announces a Bluetooth speaker's return or the card's presence.
    mutating func move(to device: OutputRoute, _ step: inout Step) {
        routedDevice = device
        guard loaded != nil || chimePlay != nil else {
            step.commands.append(.routeOutput(device))
            if case .waitingForDevice = phase, currentTrack != nil {
                retryDelay = settings.deviceRetryInitial
                probeWaitingDevice(&step)
            }
            return
        }
        let at = chimePlay != nil ? (afterChime ?? position) : position
        let waiting: Bool
        if case .waitingForDevice = phase { waiting = true } else { waiting = false }
        unload(&step)
        step.commands.append(.routeOutput(device))
        if phase == .playing || waiting { startCurrent(at: at, paused: false, &step) }
    }
}
