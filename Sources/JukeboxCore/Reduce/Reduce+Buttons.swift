// SPDX-License-Identifier: MIT

// Buttons, the rotary encoder and media keys: debounce from edge timestamps, gestures (press,
// short, long, hold-to-repeat, double, chord), quadrature decoding. Every timing decision is here,
// driven by the times the shell reports; the shell only delivers edges, runs timers and reads a
// line's level when asked.
extension State {
    mutating func input(_ event: Event, _ step: inout Step) {
        switch event {
        case .buttonEdge(let button, let pressed, let at):
            edge(button, level: pressed, at: at, &step)
        case .buttonLevel(let button, let pressed, let at):
            settle(button, read: pressed, at: at, &step)
        case .encoderEdge(let a, let b, let at):
            encoder(a: a, b: b, at: at, &step)
        case .mediaKey(let code, let value, _):
            mediaKey(code: code, value: value, &step)
        case .timerFired(.debounce(let button), _):
            buttons[button, default: ButtonState()].settling = false
            step.commands.append(.readLevel(button))
        case .timerFired(.gesture(let button), _):
            gestureTimer(button, &step)
        case .timerFired(.doubleTap(let button), _):
            guard var b = buttons[button], b.tapPending else { return }
            b.tapPending = false
            buttons[button] = b
            if let tap = binding(button).tap { perform(tap, &step) }
        default:
            break
        }
    }

    func binding(_ button: Button) -> ButtonBinding {
        settings.buttons[button] ?? ButtonBinding()
    }

    // Leading-edge debounce: the first edge acts at once (no added latency); edges inside the
    // window after it are only remembered, and when the window ends the line's level is read and
    // wins (`settle`).
    mutating func edge(_ button: Button, level: Bool, at: Double, _ step: inout Step) {
        var b = buttons[button] ?? ButtonState()
        // An edge from before the last level read reached the loop late (a busy or slow board
        // read the burst in pieces): the read already saw where the line went after it, so it is
        // old news, not a new press or release (that was a second toggle under load).
        if let readAt = b.readAt, at <= readAt { return }
        b.level = level
        buttons[button] = b
        guard !b.settling, level != b.pressed else { return }
        accept(button, pressed: level, at: at, &step)
    }

    // The window is over and the line's level was read. The level read wins over the last edge
    // received: the kernel queues 16 edges a line and drops what does not fit (uAPI v1 the newest),
    // so after a burst of bounce the last edge received need not be where the line settled. When
    // the line settled somewhere else than the accepted state, that is accepted now (in a window
    // of its own, ended by another read). A line that could not be read leaves the last edge to
    // decide; a read that comes after a new window opened is left to that window.
    mutating func settle(_ button: Button, read: Bool?, at: Double, _ step: inout Step) {
        var b = buttons[button] ?? ButtonState()
        guard !b.settling else { return }
        if let read {
            b.level = read
            b.readAt = at
        }
        buttons[button] = b
        if b.level != b.pressed { accept(button, pressed: b.level, at: at, &step) }
    }

    mutating func accept(_ button: Button, pressed: Bool, at: Double, _ step: inout Step) {
        var b = buttons[button] ?? ButtonState()
        b.pressed = pressed
        if settings.debounce > 0 {
            b.settling = true
            step.commands.append(.startTimer(.debounce(button), after: settings.debounce))
        }
        buttons[button] = b
        pressed ? press(button, at: at, &step) : release(button, &step)
    }

    mutating func press(_ button: Button, at: Double, _ step: inout Step) {
        if button == .mute {
            interruption(.interruptBegan(id: "mute", reason: "mute line"), &step)
            return
        }
        buttons[button]?.longFired = false
        buttons[button]?.consumed = false
        // A chord: this button goes down while its partner is held and not yet used up.
        for chord in settings.chords where chord.first == button || chord.second == button {
            let other = chord.first == button ? chord.second : chord.first
            guard let o = buttons[other], o.pressed, !o.consumed, !o.longFired else { continue }
            buttons[other]?.consumed = true
            buttons[button]?.consumed = true
            if binding(other).long != nil || binding(other).hold != nil {
                step.commands.append(.cancelTimer(.gesture(other)))
            }
            perform(chord.action, &step)
            return
        }
        let bind = binding(button)
        if buttons[button]?.tapPending == true, let double = bind.double {
            buttons[button]?.tapPending = false
            buttons[button]?.consumed = true
            step.commands.append(.cancelTimer(.doubleTap(button)))
            perform(double, &step)
            return
        }
        if let action = bind.press { perform(action, &step) }
        if bind.long != nil || bind.hold != nil {
            step.commands.append(.startTimer(.gesture(button), after: bind.longAfter))
        }
    }

    mutating func release(_ button: Button, _ step: inout Step) {
        if button == .mute {
            interruption(.interruptEnded(id: "mute"), &step)
            return
        }
        let bind = binding(button)
        let b = buttons[button] ?? ButtonState()
        if (bind.long != nil || bind.hold != nil) && !b.longFired && !b.consumed {
            step.commands.append(.cancelTimer(.gesture(button)))
        }
        if b.consumed || b.longFired { return }
        guard let tap = bind.tap else { return }
        if bind.double != nil {
            buttons[button]?.tapPending = true
            step.commands.append(.startTimer(.doubleTap(button), after: settings.doublePressWindow))
        } else {
            perform(tap, &step)
        }
    }

    mutating func gestureTimer(_ button: Button, _ step: inout Step) {
        guard let b = buttons[button], b.pressed, !b.consumed else { return }
        let bind = binding(button)
        if let long = bind.long {
            guard !b.longFired else { return }
            buttons[button]?.longFired = true
            perform(long, &step)
        } else if let hold = bind.hold {
            buttons[button]?.longFired = true
            perform(hold, &step)
            step.commands.append(.startTimer(.gesture(button), after: bind.repeatEvery))
        }
    }

    // Quadrature decoding by transition table: a valid Gray-code step counts ±1, a jump over a
    // state (both lines changed: bounce or a missed edge) counts nothing, and bounce between two
    // neighbouring states cancels itself out.
    mutating func encoder(a: Bool, b: Bool, at: Double, _ step: inout Step) {
        let now: UInt8 = (a ? 2 : 0) | (b ? 1 : 0)
        let before = encoderState.ab
        encoderState.ab = now
        let clockwise: [UInt8: UInt8] = [0b00: 0b01, 0b01: 0b11, 0b11: 0b10, 0b10: 0b00]
        if clockwise[before] == now {
            encoderState.steps += 1
        } else if clockwise[now] == before {
            encoderState.steps -= 1
        } else {
            return
        }
        let perDetent = max(1, settings.encoderStepsPerDetent)
        guard abs(encoderState.steps) >= perDetent else { return }
        let detents = encoderState.steps / perDetent
        encoderState.steps -= detents * perDetent
        var factor = 1
        if settings.encoderAcceleration && encoderState.lastDetentAt >= 0 {
            let gap = at - encoderState.lastDetentAt
            factor = gap < 0.04 ? 4 : gap < 0.1 ? 2 : 1
        }
        encoderState.lastDetentAt = at
        personSetsVolume(volume + detents * factor * settings.volumeStep, &step)
    }

    mutating func mediaKey(code: Int, value: Int, _ step: inout Step) {
        // value 1: down, 2: autorepeat while held, 0: up.
        let repeatable: [Int: ButtonAction] = [
            MediaKey.volumeUp: .volumeUp, MediaKey.volumeDown: .volumeDown,
            MediaKey.fastForward: .seekForward, MediaKey.rewind: .seekBack,
        ]
        let once: [Int: ButtonAction] = [
            MediaKey.playPause: .togglePlay, MediaKey.play: .play, MediaKey.playCD: .play, MediaKey.pause: .pause,
            MediaKey.stopCD: .stop,
            MediaKey.nextSong: .next, MediaKey.previousSong: .previous,
        ]
        if let action = repeatable[code], value == 1 || value == 2 {
            perform(action, &step)
        } else if let action = once[code], value == 1 {
            perform(action, &step)
        }
    }

    /// Carries out a gesture's action exactly as the same intent from a key or the socket.
    mutating func perform(_ action: ButtonAction, _ step: inout Step) {
        switch action {
        case .togglePlay: apply(.togglePlayPause, &step)
        case .play: apply(.play, &step)
        case .pause: apply(.pause, &step)
        case .stop: apply(.stop, &step)
        case .next: apply(.next, &step)
        case .previous: apply(.previous, &step)
        case .seekForward: apply(.seekBy(settings.seekStep), &step)
        case .seekBack: apply(.seekBy(-settings.seekStep), &step)
        case .volumeUp: apply(.changeVolume(by: settings.volumeStep), &step)
        case .volumeDown: apply(.changeVolume(by: -settings.volumeStep), &step)
        case .shuffle: apply(.toggleShuffle(seed: nextShuffleSeed()), &step)
        case .cycleRepeat: apply(.cycleRepeat, &step)
        case .sleep: apply(.sleepTimer(nextSleepStep), &step)
        case .power:
            step.commands.append(.report("power button: running \(settings.powerCommand.joined(separator: " "))"))
            step.commands.append(.runProgram(settings.powerCommand))
        }
    }

    // A button has no seed of its own to give; derive one from the state (deterministic, and
    // different each time the queue or its order changes).
    func nextShuffleSeed() -> UInt64 {
        derivedSeed() ^ UInt64(truncatingIfNeeded: queueRevision) &* 0xD1B5_4A32_D192_ED03 ^ UInt64(bitPattern: Int64(now * 1000))
    }
}
