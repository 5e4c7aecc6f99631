// SPDX-License-Identifier: MIT

// The sleep timer: `sleep MINUTES`, `sleep track|chapter|folder`, `sleep off`. One shell timer
// (`.sleep`) carries its time in: a timer of minutes asks for a firing at once to learn when it
// started; the other modes plan their firings from the heard position (the shell feeds the
// position before each firing). The last `SleepSettings.fadeSeconds` fade the sound out as volume
// orders (`.setVolume`, never `State.volume`: the user's volume is what is saved), at most one
// every `sleepFadeStepMin` seconds; then the player pauses (and powers off, by setting), and the
// user's volume is ordered again `sleepRestoreDelay` later, once the pause's own fade has played.
// While a timer runs the state file says paused (`savedPhase`): a restart or a power cut never
// brings the music back for longer than the timer allowed. The timer itself is not saved.
extension State {
    /// The sleep timer's steps a button goes through (seconds), then off.
    public static let sleepSteps: [Double] = [900, 1800, 3600]

    /// What the `sleep` button action sets: the step after the running timer's (a timer that is
    /// not a step, or the last one: off), the first with none.
    var nextSleepStep: SleepRequest? {
        guard let timer = sleep else { return .after(State.sleepSteps[0]) }
        guard case .after(let seconds) = timer.request, let i = State.sleepSteps.firstIndex(of: seconds),
              i + 1 < State.sleepSteps.count else { return nil }
        return .after(State.sleepSteps[i + 1])
    }

    /// `Event.sleepTimer`: (re)starts or cancels the sleep timer.
    mutating func setSleepTimer(_ request: SleepRequest?, _ step: inout Step) {
        let wasFading = sleepFade != nil
        if sleep != nil || wasFading { step.commands.append(.cancelTimer(.sleep)) }
        sleep = nil
        if wasFading { restoreSleepVolume(&step) }
        guard let request else {
            message = "sleep timer off"
            return
        }
        switch request {
        case .after(let seconds):
            guard seconds > 0, seconds.isFinite else {
                message = "sleep timer off"
                return
            }
            sleep = SleepTimer(request: request)
            // Fired at once: its time is the start the end counts from.
            step.commands.append(.startTimer(.sleep, after: 0))
            message = "sleep timer: the sound stops in \(TimeFormat.minutes(seconds))"
        case .end(let end):
            guard let track = currentTrack else {
                message = "sleep timer: nothing to wait for (the queue is empty)"
                return
            }
            if end != .folder, track.info.duration == nil, Library.isStreamURL(track.info.path) {
                message = "sleep timer: a live stream has no end (use sleep MINUTES)"
                return
            }
            sleep = SleepTimer(request: request)
            message = "sleep timer: the sound stops at the end of this \(end.rawValue)"
        }
    }

    /// After every event (from `finish`): the `.end` modes plan their next firing when the track,
    /// the place or playing changed; a fade in progress scales every volume order; a fade left
    /// behind by a timer that is gone is undone once the player plays.
    mutating func followSleep(_ step: inout Step) {
        guard var timer = sleep else {
            if sleepFade != nil, phase == .playing {
                // Played again before the volume came back: it comes back first.
                sleepFade = nil
                let at = step.commands.firstIndex {
                    switch $0 {
                    case .startTrack, .resumeOutput: return true
                    default: return false
                    }
                } ?? step.commands.endIndex
                step.commands.insert(contentsOf: [.cancelTimer(.sleep), .setVolume(volume)], at: at)
            }
            return
        }
        if let fraction = sleepFade {
            // A volume change while fading is heard faded too: the fade goes on from the new volume.
            for (i, command) in step.commands.enumerated() {
                if case .setVolume = command { step.commands[i] = .setVolume(fadedVolume(fraction: fraction)) }
            }
        }
        let jumped = step.commands.contains {
            switch $0 {
            case .startTrack, .seekOutput: return true
            default: return false
            }
        }
        let plan = SleepPlan(trackID: currentTrack?.id, playing: phase == .playing)
        guard jumped || plan != timer.plannedFor else { return }
        timer.plannedFor = plan
        if case .end(.chapter) = timer.request { timer.chapterEnd = sleepChapterEnd }
        sleep = timer
        if case .after = timer.request {
            // Playing again within the fade: it goes on at once (the firing brings the time).
            if plan.playing, timer.endsAt != nil, let left = sleepLeftShown, left <= settings.sleep.fadeSeconds {
                step.commands.append(.startTimer(.sleep, after: 0))
            }
            return
        }
        guard plan.playing, let left = sleepFinalLeft else {
            step.commands.append(.cancelTimer(.sleep))
            return
        }
        if left > settings.sleep.fadeSeconds, sleepFade != nil {
            // Moved back out of the fade (a seek, another track): the sound comes back.
            restoreSleepVolume(&step)
        }
        step.commands.append(.startTimer(.sleep, after: nextSleepWake(left: left)))
    }

    /// The `.sleep` timer fired at `at`.
    mutating func sleepTimerFired(at: Double, _ step: inout Step) {
        guard var timer = sleep else {
            // The timer is over: the user's volume comes back (the pause has played out).
            if sleepFade != nil { restoreSleepVolume(&step) }
            return
        }
        timer.seenAt = at
        let fade = settings.sleep.fadeSeconds
        let left: Double
        switch timer.request {
        case .after(let seconds):
            let end = timer.endsAt ?? at + seconds
            timer.endsAt = end
            left = end - at
            sleep = timer
            guard left > State.sleepEndSlack else { return endSleep(&step) }
            if left > fade {
                // Until the fade: a firing when the minutes shown change too, so a paused box's
                // display still counts down (one wake-up a minute).
                var wake = left - fade
                if left > 60 {
                    var untilMark = left - ((left / 60).rounded(.up) - 1) * 60
                    if untilMark < 0.5 { untilMark += 60 }
                    wake = min(wake, untilMark)
                }
                step.commands.append(.startTimer(.sleep, after: wake))
                return
            }
            if phase == .playing { fadeStep(left: left, &step) }
            step.commands.append(.startTimer(.sleep, after: phase == .playing ? min(left, fadeStepSeconds) : left))
        case .end(let end):
            sleep = timer
            guard phase == .playing, let finalLeft = sleepFinalLeft else { return }
            left = finalLeft
            if end == .chapter, timer.chapterEnd != nil, left <= State.sleepEndSlack { return endSleep(&step) }
            if left > fade {
                // Early (a seek back): wait again for the fade.
                step.commands.append(.startTimer(.sleep, after: left - fade))
                return
            }
            fadeStep(left: left, &step)
            // The track's end comes from the engine (`sleepTrackFinished`); a chapter's from here.
            if left > State.sleepEndSlack { step.commands.append(.startTimer(.sleep, after: min(left, fadeStepSeconds))) }
        }
    }

    /// From `engineReport`: the loaded play finished. When the timer ends with this track it is
    /// the end: the place moves on to the next track, paused there (the queue's end stops as
    /// always). Returns whether it handled the event.
    mutating func sleepTrackFinished(_ step: inout Step) -> Bool {
        guard sleepEndsWithTrack else { return false }
        if let target = autoAdvanceTarget() {
            cursor = target
            position = 0
            unload(&step)
            phase = .paused
        } else {
            endOfQueue(&step)
        }
        endSleep(&step)
        return true
    }

    /// The end: pause (a chapter's end is where the place stays), power off by setting, and the
    /// user's volume back a moment later.
    private mutating func endSleep(_ step: inout Step) {
        let chapterEnd = sleep?.chapterEnd
        sleep = nil
        step.commands.append(.cancelTimer(.sleep))
        switch phase {
        case .playing, .waitingForDevice, .waitingForMusic: intent(.pause, &step)
        case .interrupted where afterInterruption == .playing: intent(.pause, &step)
        default: break
        }
        if let chapterEnd, currentTrack != nil { seek(to: chapterEnd, &step) }
        message = "sleep timer: paused"
        step.forceSave = true
        if settings.sleep.then == .poweroff {
            message = "sleep timer: powering off"
            step.commands.append(.report("sleep timer: running \(settings.powerCommand.joined(separator: " "))"))
            step.commands.append(.runProgram(settings.powerCommand))
        }
        if sleepFade != nil { step.commands.append(.startTimer(.sleep, after: State.sleepRestoreDelay)) }
    }

    /// One step of the fade with `left` seconds to go: the volume that is that share of the user's.
    private mutating func fadeStep(left: Double, _ step: inout Step) {
        let fade = settings.sleep.fadeSeconds
        let fraction = fade > 0 ? min(1, max(0, left / fade)) : 0
        let before = sleepFade.map(fadedVolume) ?? volume
        sleepFade = fraction
        let v = fadedVolume(fraction: fraction)
        if v != before { step.commands.append(.setVolume(v)) }
    }

    private func fadedVolume(fraction: Double) -> Int {
        min(volume, max(0, Int((Double(volume) * fraction).rounded())))
    }

    /// The fade's step: one volume point's time, no faster than `sleepFadeStepMin`.
    private var fadeStepSeconds: Double {
        max(State.sleepFadeStepMin, settings.sleep.fadeSeconds / Double(max(volume, 1)))
    }

    /// When an `.end` timer next needs to look, `left` seconds before its end.
    private func nextSleepWake(left: Double) -> Double {
        let fade = settings.sleep.fadeSeconds
        return left > fade ? left - fade : min(left, fadeStepSeconds)
    }

    private mutating func restoreSleepVolume(_ step: inout Step) {
        sleepFade = nil
        step.commands.append(.setVolume(volume))
    }
}
