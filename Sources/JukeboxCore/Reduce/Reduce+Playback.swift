// SPDX-License-Identifier: MIT

// Play, pause, stop, skip and seek: what a person asks of the transport.
extension State {
    mutating func intent(_ event: Event, _ step: inout Step) {
        switch event {
        case .play: play(&step)
        case .pause: pause(&step)
        case .togglePlayPause:
            switch phase {
            case .playing, .waitingForDevice, .waitingForMusic: pause(&step)
            case .paused, .stopped: play(&step)
            case .interrupted: afterInterruption == .playing ? pause(&step) : play(&step)
            }
        case .stop: stop(&step)
        case .next:
            if phase != .stopped, let track = currentTrack, let chapters = track.info.chapters,
               let i = track.info.chapterIndex(at: position), i + 1 < chapters.count {
                seek(to: chapters[i + 1].start, &step)
                return
            }
            intent(.nextFile, &step)
        case .nextFile:
            guard let cursor else { return }
            if let target = skipTarget(from: cursor) {
                go(to: target, &step)
            } else {
                endOfQueue(&step)
            }
        case .previous:
            if phase != .stopped, let track = currentTrack, let chapters = track.info.chapters,
               let i = track.info.chapterIndex(at: position), i > 0 {
                // As for tracks: more than the threshold heard restarts the chapter.
                let into = position - chapters[i].start
                seek(to: into > settings.previousRestartThreshold ? chapters[i].start : chapters[i - 1].start, &step)
                return
            }
            intent(.previousFile, &step)
        case .previousFile:
            guard let cursor else { return }
            // A live stream has no start to go back to: "previous" is the entry before it.
            if phase != .stopped && position > settings.previousRestartThreshold && !currentIsLive {
                seek(to: 0, &step)
            } else if cursor > 0 {
                go(to: cursor - 1, &step)
            } else if repeatMode == .all {
                go(to: order.count - 1, &step)
            } else {
                go(to: 0, &step)
            }
        case .seek(let to): seek(to: to, &step)
        case .seekBy(let delta): seek(to: position + delta, &step)
        case .playEntry(let index):
            guard queue.indices.contains(index), let target = order.firstIndex(of: queue[index].id) else {
                message = "no queue entry \(index + 1)"
                return
            }
            // A paused player starts the entry playing: drop what it holds, so `play` opens anew.
            if phase == .paused { unload(&step) }
            go(to: target, &step)
            play(&step)
        case .seekEntry(let index, let seconds):
            guard queue.indices.contains(index) else {
                message = "no queue entry \(index + 1)"
                return
            }
            if currentTrack?.id != queue[index].id { intent(.playEntry(at: index), &step) }
            seek(to: seconds, &step)
        default: break
        }
    }

    /// stopped → playing (from the remembered position), paused → playing; otherwise a no-op.
    mutating func play(_ step: inout Step) {
        if let track = currentTrack ?? order.first.flatMap({ self.track(id: $0) }), let why = parentalRefusal(path: track.info.path) {
            // Refused by the parental rules: said, nothing else changes.
            message = why
            return
        }
        switch phase {
        case .stopped:
            guard !order.isEmpty else {
                message = "the queue is empty"
                return
            }
            if cursor == nil { cursor = 0; position = 0 }
            phase = .playing
            startCurrent(at: position, paused: false, &step)
        case .paused:
            phase = .playing
            if loaded != nil {
                step.commands.append(.resumeOutput)
            } else {
                startCurrent(at: position, paused: false, &step)
            }
        case .playing, .waitingForDevice, .waitingForMusic:
            break
        case .interrupted:
            if !order.isEmpty {
                if cursor == nil { cursor = 0; position = 0 }
                afterInterruption = .playing
            }
        }
    }

    /// playing → paused (output paused, position kept); waiting → paused (retries end; the
    /// wait for music becomes a pause there).
    mutating func pause(_ step: inout Step) {
        switch phase {
        case .playing where currentIsStream:
            // A live stream cannot wait: pausing disconnects, and play connects again to what is on
            // air now (a buffer that grew while paused would play stale audio, then lose the link).
            // A podcast episode's stream and an on-demand one disconnect too (a server may drop an
            // idle link) but keep their place: play asks for it again from there.
            phase = .paused
            if currentIsLive { position = 0 }
            unload(&step)
        case .playing:
            phase = .paused
            if settings.releaseDelay <= 0 {
                release(&step)
            } else {
                step.commands.append(.pauseOutput)
                step.commands.append(.startTimer(.releaseDevice, after: settings.releaseDelay))
            }
        case .waitingForDevice:
            phase = .paused
            retryDelay = settings.deviceRetryInitial
            step.commands.append(.cancelTimer(.deviceRetry))
        case .waitingForMusic:
            phase = .paused
        case .interrupted:
            if afterInterruption == .playing { afterInterruption = .paused }
        case .paused, .stopped:
            break
        }
    }

    /// Any phase → stopped at the start of the current track; the device is released.
    mutating func stop(_ step: inout Step) {
        // Saved even when already stopped: the rewind is a jump a power cut must not undo.
        if position != 0 { step.forceSave = true }
        position = 0
        if case .interrupted = phase {
            afterInterruption = .stopped
            return
        }
        if case .waitingForDevice = phase { step.commands.append(.cancelTimer(.deviceRetry)) }
        retryDelay = settings.deviceRetryInitial
        phase = .stopped
        unload(&step)
    }

    /// Makes order index `target` current at 0 s, keeping the phase.
    mutating func go(to target: Int, _ step: inout Step) {
        // Back to the start of the same track is a jump like a seek: saved at once (another track
        // is saved anyway).
        if position != 0 { step.forceSave = true }
        cursor = target
        position = 0
        switch phase {
        case .playing: startCurrent(at: 0, paused: false, &step)
        case .paused: if loaded != nil { startCurrent(at: 0, paused: true, &step) }
        case .stopped, .interrupted: break
        case .waitingForDevice:
            // With a play in flight (the device was free at the last probe) the new track replaces
            // it; otherwise the next probe starts it.
            if loaded != nil { startCurrent(at: 0, paused: false, &step) }
        case .waitingForMusic: break  // the music's return starts the new current track
        }
    }

    /// The queue ran out (repeat off): stop and rewind to the first track in play order.
    mutating func endOfQueue(_ step: inout Step) {
        // Played to its end: the next start of this source is from the top.
        forgetBookmark()
        stop(&step)
        cursor = order.isEmpty ? nil : 0
        if settings.exitWhenQueueEnds { step.exitCode = 0 }
    }

    /// Moves within the current track, clamped to [0, duration].
    mutating func seek(to seconds: Double, _ step: inout Step) {
        guard let track = currentTrack, seconds.isFinite else { return }
        var duration = track.info.duration
        if currentIsLive {
            message = "cannot seek in a live stream"
            return
        }
        if let length = currentOnDemandLength {
            duration = length
        }
        var target = max(0, seconds)
        if let duration { target = min(target, duration) }
        // A jump is not playback: saved at once, or a power cut within the save interval (or any
        // time later while paused) would resume where the player was before it.
        if target != position { step.forceSave = true }
        position = target
        guard loaded != nil else { return }
        if case .waitingForDevice = phase {
            // A play in flight opens at the old place: start it again at the new one.
            startCurrent(at: target, paused: false, &step)
        } else if phase == .playing || phase == .paused {
            step.commands.append(.seekOutput(to: target))
        }
    }
}
