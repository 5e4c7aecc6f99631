// SPDX-License-Identifier: MIT

// Outcomes from the audio engine: tracks starting, ending and failing, and the device coming
// and going. Reports about a play the core no longer cares about (stale ids) are no-ops.
extension State {
    mutating func engineReport(_ event: Event, _ step: inout Step) {
        if let chime = chimePlay {
            switch event {
            case .trackFinished(chime, _), .trackFailed(chime, _, _), .deviceUnavailable:
                // The chime is over (or could not sound): the track it stood in front of starts.
                chimePlay = nil
                let at = afterChime ?? position
                afterChime = nil
                if case .trackFailed = event { step.commands.append(.report("the chime could not be played")) }
                if case .deviceUnavailable = event { break }
                if phase == .playing { startCurrent(at: at, paused: false, &step) }
                return
            case .trackStarted(chime), .heard(chime, _):
                return
            default:
                break
            }
        }
        switch event {
        case .trackStarted(let id):
            if handedNext?.playID == id { advanceIntoHandedNext() } else if let before = continuedBefore(id) { advance(into: before, &step) }
            guard loaded?.playID == id else { return }
            if currentIsStream { streamStarted = true }
            failuresInARow = 0
            retryDelay = settings.deviceRetryInitial
            if case .waitingForDevice = phase { phase = .playing }
        case .trackFinished(let id, let next):
            guard loaded?.playID == id else { return }
            if sleepTrackFinished(&step) { return }
            guard let target = autoAdvanceTarget() else {
                endOfQueue(&step)
                return
            }
            // Only a continuation the engine confirms is trusted: a successor handed too late
            // was not played, and the core starts it itself.
            if let next, handedNext?.playID == next, handedNext?.trackID == order[target] {
                cursor = target
                advanceIntoHandedNext()
            } else if let next, let before = continuedBefore(next), before.trackID == order[target] {
                advance(into: before, &step)
            } else {
                cursor = target
                position = 0
                startCurrent(at: 0, paused: !wantsSound, &step)
            }
        case .trackFailed(let id, let reason, let missing):
            guard loaded?.playID == id, let track = currentTrack else { return }
            // A play that failed because its music is not there (a stick pulled, a share gone)
            // is not the track's fault: skipping would run through the whole queue and lose the
            // place. The music is missing: it is waited for. A stick gone explains a missing
            // folder under it too (its mount point left with it): the stick's removal wins.
            if let path = missing?.goneStick {
                step.activity = true
                return usb(.usbRemoved(path: path), &step)
            }
            if let folder = missing?.goneFolder { return startUp(.musicMissing(folder), &step) }
            if failuresInARow == 0, let cursor { failuresFrom = FailurePlace(cursor: cursor, position: position, wantedSound: wantsSound) }
            failuresInARow += 1
            let name = Library.isStreamURL(track.info.path) ? track.info.path : Paths.fileName(track.info.path)
            message = "skipped \(name): \(reason)"
            step.commands.append(.report("skipped \(track.info.path): \(reason)"))
            loaded = nil
            if failuresInARow >= queue.count {
                stop(&step)
                message = "nothing in the queue can be played"
                step.commands.append(.report("nothing in the queue can be played"))
                if settings.exitWhenQueueEnds { step.exitCode = 1 }
                return
            }
            // A broken track is skipped even under repeat one, or it would fail forever.
            guard let cursor, let target = skipTarget(from: cursor) else {
                endOfQueue(&step)
                return
            }
            self.cursor = target
            position = 0
            // Waiting wants sound too: a paused start would open nothing, report nothing, and leave
            // the player waiting with no probe due (the wedge the fault soak found).
            startCurrent(at: 0, paused: !wantsSound, &step)
        case .deviceAvailable:
            if case .waitingForDevice = phase, loaded == nil, currentTrack != nil {
                step.commands.append(.cancelTimer(.deviceRetry))
                startCurrent(at: position, paused: false, &step)
            }
        case .deviceUnavailable(let reason, let problem):
            if problem == .unsupported, let playID = loaded?.playID, phase == .playing {
                // Waiting cannot help a format the device refuses: skip the track instead.
                engineReport(.trackFailed(playID: playID, reason: "the audio device cannot play it (\(reason))"), &step)
                return
            }
            loaded = nil
            handedNext = nil
            switch phase {
            case .playing where problem == .lost && !settings.resumeAfterDeviceLoss:
                phase = .paused
                message = "audio device lost: \(reason)"
                step.commands.append(.report("audio device lost, paused: \(reason)"))
            case .playing, .waitingForDevice:
                if phase == .playing { step.commands.append(.report("waiting for audio device: \(reason)")) }
                phase = .waitingForDevice(reason: reason)
                // A card that is gone comes back announced, when the shell watches for it: the
                // timer is then only a net, and the wait costs no wake-ups. Another program's hold
                // ends unannounced: polled.
                let most = problem == .lost && deviceReturnAnnounced ? settings.deviceRetryAnnouncedMax : settings.deviceRetryMax
                step.commands.append(.startTimer(.deviceRetry, after: min(retryDelay, most)))
                retryDelay = min(retryDelay * 2, most)
            case .paused, .stopped, .interrupted, .waitingForMusic:
                break  // nothing wants the device now; the next play opens it again
            }
        case .heard(let id, let seconds):
            if loaded?.playID == id { position = seconds }
        default:
            break
        }
    }

    /// Probes the device the player waits for (cheap: an open and a close); the track is opened and
    /// decoded only once the device is free. A play already in flight answers by itself.
    mutating func probeWaitingDevice(_ step: inout Step) {
        guard case .waitingForDevice = phase, currentTrack != nil, loaded == nil else { return }
        step.commands.append(.probeDevice)
        // Its answer restarts the timer; should an answer never come, the wait still cannot
        // outlive its cause: probe again a moment later.
        step.commands.append(.startTimer(.deviceRetry, after: State.probeAnswerTimeout))
    }

    /// Seconds a probe's answer may take before the core probes again (the answer comes from the
    /// engine's writer thread, which may be finishing a drain).
    static let probeAnswerTimeout = 2.5

    /// Whether the player wants the device to sound: playing, or waiting for the device to play.
    var wantsSound: Bool {
        switch phase {
        case .playing, .waitingForDevice, .waitingForMusic: return true
        case .paused, .stopped, .interrupted: return false
        }
    }

    /// Hands the successor again (`syncNext`, at the end of this step): a gain or a speed of it
    /// changed. The one handed first is kept in mind (`handedBefore`): the engine may already be
    /// in it.
    mutating func handNextAgain() {
        if let next = handedNext, let playing = loaded?.playID { handedBefore = HandedBefore(ref: next, after: playing) }
        handedNext = nil
    }

    /// The successor handed before a re-hand, if the engine reports `id` and that successor was
    /// to follow the play loaded now.
    func continuedBefore(_ id: UInt64) -> PlayRef? {
        guard let before = handedBefore, before.ref.playID == id, before.after == loaded?.playID else { return nil }
        return before.ref
    }

    /// The engine continued into a successor handed before a re-hand: it plays on (not started
    /// again from 0), and the engine's later successor, the same track handed again, is
    /// withdrawn; `syncNext` hands the one that follows this.
    mutating func advance(into ref: PlayRef, _ step: inout Step) {
        handedNext = ref
        advanceIntoHandedNext()
        step.commands.append(.clearNext)
    }

    /// The engine continued gaplessly into the successor it was handed.
    mutating func advanceIntoHandedNext() {
        guard let next = handedNext, let index = order.firstIndex(of: next.trackID) else { return }
        cursor = index
        loaded = next
        handedNext = nil
        handedBefore = nil
        position = 0
        // Continued without a gap: it sounds already.
        streamStarted = currentIsStream
        stream = nil
    }

    /// Applies a saved state at start-up; plays at once when it was playing and the settings
    /// say to resume playing.
    mutating func restore(_ snapshot: Snapshot, _ step: inout Step) {
        unload(&step)
        queue = snapshot.tracks.map { info in
            defer { nextTrackID += 1 }
            return Track(id: nextTrackID, info: info)
        }
        let ids = queue.map(\.id)
        order = (snapshot.order ?? Array(ids.indices)).map { ids[$0] }
        cursor = snapshot.current.flatMap { cur in order.firstIndex(of: ids[cur]) }
        position = cursor == nil ? 0 : max(0, snapshot.position - settings.resumeRewind)
        shuffle = snapshot.shuffle && snapshot.order != nil
        shuffleSeed = snapshot.shuffleSeed
        repeatMode = snapshot.repeatMode
        source = snapshot.source
        queueSpeed = snapshot.speed
        volume = cappedVolume(wanting: settings.bootVolume ?? snapshot.volume)
        queueRevision += 1
        step.commands.append(.setVolume(volume))
        // The day's listening survives a restart; a day that ended meanwhile starts again.
        if let listening = snapshot.listening { parental.listening = listening }
        followListeningDay(&step)
        switch (snapshot.phase, cursor) {
        case (_, nil):
            phase = .stopped
        case (.playing, _) where settings.resumePlaying:
            phase = .playing
            startCurrent(at: position, paused: false, &step)
        case (.playing, _), (.paused, _):
            phase = .paused
        default:
            phase = .stopped
        }
        // The place saved with a source playing or paused is its bookmark (the bookmarks file may
        // be older: `followRestoredPlace`); the unrewound position, as it was heard.
        restoredPlace = nil
        bookmarkReset = nil
        if let source = snapshot.source, let current = snapshot.current, snapshot.phase != .stopped {
            let path = snapshot.tracks[current].path
            if let reset = snapshot.bookmarkReset, reset.holds(track: path, position: snapshot.position) {
                // Reset and not played on since: still none, from the place the start rewound to.
                bookmarkReset = BookmarkReset(track: path, position: position)
            } else {
                restoredPlace = bookmark(source, track: path, position: snapshot.position)
            }
        }
        followRestoredPlace()
        // What was just read need not be written back.
        savedMark = saveMark
        savedPosition = position
        savedAt = now
    }
}
