// SPDX-License-Identifier: MIT

// Other programs and signal lines taking the sound device: release it, keep the place, and come
// back by itself when the last interruption ends.
extension State {
    mutating func interruption(_ event: Event, _ step: inout Step) {
        switch event {
        case .sourceBegan(let name, let sender):
            sourceBegan(name: name, sender: sender, &step)
        case .sourceSender(let name, let sender):
            sourceSender(name: name, sender: sender)
        case .bluetoothPhone(let streaming, let sender, let address):
            bluetoothPhone(streaming: streaming, sender: sender, address: address, &step)
        case .interruptBegan(let id, let reason):
            beginInterruption(Interruption(id: id, reason: reason), &step)
        case .interruptEnded(let id):
            guard let index = interruptions.lastIndex(where: { $0.id == id }) else {
                message = "no interruption to end"
                return
            }
            let ended = interruptions.remove(at: index)
            if let source = ended.source { sourceSenders[source] = nil }
            if let pending = pendingGrants.lastIndex(of: id) { pendingGrants.remove(at: pending) }
            // A source whose policy is to stay paused takes the "play on" with it.
            if let source = ended.source, settings.sources.policy(for: source) == .stayPaused,
               afterInterruption == .playing {
                afterInterruption = .paused
            }
            if let latest = interruptions.last {
                phase = .interrupted(reason: latest.reason)
                return
            }
            switch afterInterruption {
            case .playing where currentTrack != nil:
                phase = .playing
                startCurrent(at: position, paused: false, &step)
            case .paused where currentTrack != nil:
                phase = .paused
            default:
                phase = .stopped
            }
        case .deviceReleased(let token, let heard):
            guard token == releaseToken else { return }
            releaseToken = nil
            // Where the fade-out really ended, unless a new play has started meanwhile.
            if let heard, heard.playID == releasedPlay, loaded == nil {
                position = heard.seconds
                // The exact place to come back to: worth a write, so a power cut now loses nothing.
                step.forceSave = true
            }
            releasedPlay = nil
            for id in pendingGrants { step.commands.append(.grant(id: id)) }
            pendingGrants = []
        default:
            break
        }
    }

    /// Another program starts to play through the box: refused when its policy forbids it (the
    /// device stays the player's, nothing is granted), else an interruption it holds.
    private mutating func sourceBegan(name: String, sender: String, _ step: inout Step) {
        guard OtherSource.isValidName(name) else {
            message = "no such source"
            return
        }
        if settings.sources.policy(for: name) == .forbidden {
            message = OtherSource.label(name) + " refused: other sources are not allowed on this box"
            return
        }
        // A begin that names no sender shows the one learnt apart from it (AirPlay's metadata).
        let who = sender[...].trimmingSpaces().isEmpty ? sourceSenders[name] ?? "" : sender
        let shown = OtherSource.shown(name, sender: who)
        beginInterruption(Interruption(id: OtherSource.interruptionID(name), reason: shown, source: name), &step)
    }

    /// Who sends to source `name`, learnt apart from its begin: kept (inert, bounded) for its
    /// next begin, and shown at once by its interruption in force (the phase too when that one
    /// is the latest). A name that is not a source's changes nothing.
    private mutating func sourceSender(name: String, sender: String) {
        guard OtherSource.isValidName(name) else { return }
        let who = OtherSource.inertSender(sender)
        sourceSenders[name] = who.isEmpty ? nil : who
        let id = OtherSource.interruptionID(name)
        guard let index = interruptions.lastIndex(where: { $0.id == id }) else { return }
        interruptions[index].reason = OtherSource.shown(name, sender: who)
        if index == interruptions.count - 1 { phase = .interrupted(reason: interruptions[index].reason) }
    }

    /// A phone's stream through bluez-alsa is the source `bluetooth`: its start begins the source
    /// (once: a start said again changes nothing but the name shown, which the adapter may learn
    /// after the start: BlueZ's alias, read off the loop, replacing the address), its end ends it.
    /// An end with no such interruption (refused by `forbidden`, or never begun) changes nothing,
    /// so a refusal stays said and a flapping stream never ends another interruption. A phone
    /// refused by `forbidden` is also disconnected (its address known): on a box that plays a
    /// phone through bluealsa-aplay, keeping the card would not keep the phone out (it plays as
    /// soon as the card is let go, or at once on a shared device).
    private mutating func bluetoothPhone(streaming: Bool, sender: String, address: String, _ step: inout Step) {
        let name = "bluetooth"
        let id = OtherSource.interruptionID(name)
        if streaming {
            guard let index = interruptions.firstIndex(where: { $0.id == id }) else {
                if settings.sources.policy(for: name) == .forbidden, let phone = BluetoothAddress.normalised(address) {
                    step.commands.append(.disconnectBluetooth(address: phone))
                }
                return sourceBegan(name: name, sender: sender, &step)
            }
            let shown = OtherSource.shown(name, sender: sender)
            interruptions[index].reason = shown
            if index == interruptions.count - 1, case .interrupted = phase { phase = .interrupted(reason: shown) }
            return
        }
        if interruptions.contains(where: { $0.id == id }) {
            interruption(.interruptEnded(id: id), &step)
        }
    }

    /// Puts `interruption` in force: the phase to come back to is noted (by the first), the
    /// device is released, and its grant waits for the release.
    private mutating func beginInterruption(_ interruption: Interruption, _ step: inout Step) {
        let id = interruption.id
        let reason = interruption.reason
        if interruptions.isEmpty {
            switch phase {
            case .playing, .waitingForDevice, .waitingForMusic: afterInterruption = .playing
            case .paused: afterInterruption = .paused
            case .stopped: afterInterruption = .stopped
            case .interrupted: break
            }
            if case .waitingForDevice = phase {
                retryDelay = settings.deviceRetryInitial
                step.commands.append(.cancelTimer(.deviceRetry))
            }
        }
        interruptions.append(interruption)
        phase = .interrupted(reason: reason)
        pendingGrants.append(id)
        // Always ask the engine, even when the core thinks nothing is open: only the engine
        // knows when the device is really closed, and the grant must not come before that.
        release(&step)
    }

    /// Releases the device after the pause delay, so other programs can use it; resume reopens
    /// it at the same frame.
    mutating func releaseAfterPause(_ step: inout Step) {
        guard phase == .paused, loaded != nil else { return }
        release(&step)
    }

    /// Has the engine close the device and report where the sound stopped (one release at a time;
    /// later requests share the one under way, unless a play was started since it was asked: the
    /// engine opens the device again for that play after the release, so a new release must
    /// follow it, and only its report grants).
    mutating func release(_ step: inout Step) {
        let startedSince = releaseToken != nil && loaded != nil
        if let playID = loaded?.playID { releasedPlay = playID }
        loaded = nil
        handedNext = nil
        guard releaseToken == nil || startedSince else { return }
        let token = nextReleaseToken
        nextReleaseToken += 1
        releaseToken = token
        step.commands.append(.releaseDevice(token: token))
    }
}
