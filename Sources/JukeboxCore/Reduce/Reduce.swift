// SPDX-License-Identifier: MIT

/// Applies one event to the state and returns the commands the shell must carry out, in order.
///
/// Pure: no I/O, no clock, no randomness. Every decision of the player is taken here (or in the
/// per-concern files it dispatches to). After each event it also decides whether to hand the
/// engine a new gapless successor, whether to save, and whether the status changed.
public func reduce(_ state: inout State, _ event: Event) -> [Command] {
    var step = Step()
    state.apply(event, &step)
    state.finish(&step)
    return step.commands
}

extension State {
    /// Applies one event without the after-step bookkeeping, so gestures can reuse intents.
    mutating func apply(_ event: Event, _ step: inout Step) {
        switch event {
        case .play, .pause, .togglePlayPause, .stop, .next, .previous, .nextFile, .previousFile, .seek, .seekBy, .playEntry, .seekEntry:
            step.activity = true
            message = nil
            // What a person does gives every track another chance: the count that stops a queue
            // where nothing plays starts again (else, once stopped, a later play would stop at the
            // first failure without ever trying a good track added since: the fault soak's wedge).
            failuresInARow = 0
            // A stop rewinds: the source's place before it is its bookmark.
            if case .stop = event { noteBookmark() }
            intent(event, &step)
        case .setVolume, .changeVolume, .setShuffle, .toggleShuffle, .setRepeat, .cycleRepeat:
            step.activity = true
            message = nil
            modeChange(event, &step)
        case .add, .replaceQueue, .loadSource, .remove, .move, .moveRange, .insert, .shuffleEntries, .clear:
            step.activity = true
            message = nil
            failuresInARow = 0  // another queue: its tracks have not failed yet
            queueChange(event, &step)
        case .restore(let snapshot):
            restore(snapshot, &step)
        case .started, .musicMissing, .musicAppeared, .musicAwaited, .musicFound, .stateFileUnreadable:
            startUp(event, &step)
        case .quit:
            step.forceSave = true
            if loaded != nil { step.commands.append(.stopOutput) }
            loaded = nil
            handedNext = nil
            step.exitCode = 0
        case .trackStarted, .trackFinished, .trackFailed, .deviceUnavailable, .deviceAvailable, .heard:
            let before = (track: currentTrack?.id, position: position)
            // The track playing now was played to its end: finished by the engine, or followed
            // by the successor handed to it.
            var ended: String?
            switch event {
            case .trackFinished(let id, _) where loaded?.playID == id && chimePlay != id: ended = currentTrack?.info.path
            case .trackStarted(let id) where handedNext?.playID == id || continuedBefore(id) != nil: ended = currentTrack?.info.path
            default: break
            }
            if let ended {
                podcastTrackEnded(path: ended)
                followPodcastDownloads(&step)
            }
            engineReport(event, &step)
            // The same track over again from its start (repeat one) is a jump back, like a seek:
            // saved at once, or a power cut then resumes near its end.
            switch event {
            case .trackStarted, .trackFinished:
                if currentTrack?.id == before.track && position == 0 && before.position > 0 { step.forceSave = true }
            default: break
            }
        case .streamStatus(let playID, let status):
            streamReport(playID: playID, status: status, &step)
        case .soundDevicesChanged:
            // A card announced: probe now, and start the waits over (a card back but busy is
            // then polled as closely as any busy device).
            if case .waitingForDevice = phase, currentTrack != nil, loaded == nil {
                retryDelay = settings.deviceRetryInitial
                probeWaitingDevice(&step)
            }
        case .interruptBegan, .interruptEnded, .deviceReleased, .sourceBegan, .sourceSender, .bluetoothPhone:
            interruption(event, &step)
        case .buttonEdge, .buttonLevel, .encoderEdge, .mediaKey, .timerFired(.debounce, _), .timerFired(.gesture, _),
             .timerFired(.doubleTap, _):
            step.byHand = true
            step.activity = true
            input(event, &step)
        case .sleepTimer(let request):
            step.activity = true
            setSleepTimer(request, &step)
        case .setSpeed(let speed):
            step.activity = true
            setSpeed(speed, &step)
        case .timerFired(.sleep, let at):
            sleepTimerFired(at: at, &step)
        case .timerFired(.idlePowerOff, let at):
            idleTimerFired(at: at, &step)
        case .cardRead, .cardRemoved:
            // A card on the reader, or taken off it, is a person at the box (idle power-off waits again).
            step.activity = true
            card(event, &step)
        case .cardsLoaded, .cardTracks, .cardAssignNext, .cardAssigned, .timerFired(.cardAssign, _):
            card(event, &step)
        case .setupProblems(let lines):
            setupProblemsRead(lines)
        case .resetBookmarks(let path):
            resetBookmarks(path, &step)
        case .podcastsReading, .podcastsLoaded, .podcastFetched, .podcastFailed, .timerFired(.podcastRefresh, _), .episodeDownloaded, .episodeDownloadFailed:
            podcast(event, &step)
            followPodcastDownloads(&step)
        case .episodeDownloadProgress:
            podcast(event, &step)
        case .playPodcast, .queuePodcast:
            step.activity = true
            message = nil
            failuresInARow = 0
            podcast(event, &step)
        case .usbInserted, .usbRemoved, .usbTracks, .usbMoreTracks:
            step.activity = true
            usb(event, &step)
        case .battery(let reading):
            batteryReading(reading, &step)
        case .batteryPin(let low):
            batteryPin(low: low, &step)
        case .headphones(let plugged):
            headphones(plugged: plugged, &step)
        case .bluetoothSpeaker(let connected):
            bluetoothSpeaker(connected: connected, &step)
        case .bluetoothVolume(let level, let muted):
            bluetoothVolumeReported(level: level, muted: muted, &step)
        case .bluetoothVolumeControl(let taken, let reason):
            bluetoothVolumeControl(taken: taken, reason: reason, &step)
        case .wallClock(let time, let synchronized):
            wallClock(time, synchronized: synchronized, &step)
        case .bookmarksLoaded(let marks):
            // What this player could not have made (too long, not a number) is not kept.
            bookmarks = Array(marks.filter(\.isValid).suffix(max(settings.bookmarkLimit, 0)))
            bookmarksReady = true
            bookmarksDirty = false
            bookmarksAhead = false
            followRestoredPlace()
        case .timerFired(.saveVolume, _):
            // `finish` finds the volume unsaved and saves it.
            break
        case .saveRequested:
            step.forceSave = true
        case .reconfigured(let new):
            // A new idle time applies from now.
            step.activity = true
            let displayChanged = new.display != settings.display
            let feedsChanged = new.podcasts != settings.podcasts
            let speedsWere = playingSpeeds
            settings = new
            // Folders' speeds changed: the play goes on at its new one, in place.
            followSpeeds(from: speedsWere, &step)
            if displayChanged { shownFrame = nil }
            if feedsChanged {
                followPodcastSettings()
                fetchPodcasts(&step)
            }
            // A narrower volume range applies at once.
            let clamped = cappedVolume(wanting: volume)
            if clamped != volume {
                volume = clamped
                step.commands.append(.setVolume(clamped))
            }
        case .loudnessMeasured(let path, let loudness):
            loudnessMeasured(path: path, loudness)
        case .saved(let error):
            if error != saveError, let error {
                step.commands.append(.report("could not save state: \(error)"))
            }
            if error != nil {
                // What is in memory stands; it is saved again, forced (nothing may change meanwhile),
                // less often the longer the disk stays full.
                step.commands.append(.startTimer(.saveRetry, after: saveRetryDelay))
                saveRetryDelay = min(saveRetryDelay * 2, State.saveRetryMax)
            } else if saveError != nil {
                step.commands.append(.cancelTimer(.saveRetry))
                step.commands.append(.report("state saved again"))
                saveRetryDelay = State.saveRetryFirst
            }
            saveError = error
        case .timerFired(.saveRetry, _):
            if saveError != nil { step.forceSave = true }
        case .tick(let now):
            self.now = now
            countListening(now: now)
            if phase == .playing, now >= placeSaveDue, position != savedPosition {
                step.forceSave = true
                step.placeSave = true
            }
        case .timerFired(.deviceRetry, _):
            probeWaitingDevice(&step)
        case .timerFired(.releaseDevice, _):
            releaseAfterPause(&step)
        }
    }
}

/// What one `reduce` call is collecting.
struct Step {
    var commands: [Command] = []
    var forceSave = false
    var exitCode: Int32?
    /// The event came from a button, knob or media key (which may turn the volume detent by detent).
    var byHand = false
    /// A person (or a client acting for one) did something: idle power-off starts its wait again.
    var activity = false
    /// The save due while playing on (`placeSaveDue`): the bookmarks are not written for it.
    var placeSave = false
}

extension State {
    /// Hands the engine the gapless successor, saves when needed, renders when changed, and
    /// puts `exit` last so it follows the save.
    mutating func finish(_ step: inout Step) {
        // A run of failures ended (a track started, a person acted, another queue): its start
        // is no longer a place to go back to.
        if failuresInARow == 0 { failuresFrom = nil }
        // Only a pause the speaker's going made is the speaker's return to end.
        if phase != .paused { pausedByBluetooth = false }
        // A person loaded, added or cleared while the start waited for music: it waits no more.
        if let wait = musicAwaited, wait.queueRevision != queueRevision { musicAwaited = nil }
        followParental(&step)
        syncNext(&step)
        followLoudness(&step)
        followSleep(&step)
        followBluetoothVolume(&step)
        followIdleness(activity: step.activity, &step)
        let mark = saveMark
        // A state file that cannot be read is never written over (it may hold the only copy of
        // the place); what changed meanwhile is saved once it can be read again.
        if stateUnreadable == nil, step.forceSave || mark != savedMark {
            if !step.forceSave, step.byHand, let saved = savedMark, mark.sameExceptVolume(saved) {
                // A knob turned (or a volume button repeating): one save once it is still, not
                // one per detent. Each change pushes the timer back.
                step.commands.append(.startTimer(.saveVolume, after: State.volumeSaveDelay))
            } else {
                // The queue file is rewritten only when the queue changed; otherwise only the place.
                // On the way out it is written whole, so at rest it alone holds where the player
                // stopped: a copy of it (a backup, another box) resumes there without the sidecar.
                let queueChanged = savedMark.map {
                    $0.queueRevision != mark.queueRevision || $0.shuffle != mark.shuffle || $0.speed != mark.speed
                        || $0.bookmarkReset != mark.bookmarkReset
                } ?? true
                savedMark = mark
                savedPosition = position
                savedAt = now
                // The bookmark follows the saves, but while its source plays on only in memory
                // (`bookmarks --json` shows it): the state file written now holds the same place,
                // and the start makes it the bookmark again after a power cut (`restoredPlace`).
                // Every other save (a pause, a stop, a new track, a seek, another source, sleep,
                // power-off, the exit) writes the bookmarks file too, with what waited.
                let resetBefore = bookmarkReset
                noteBookmark(playsOn: step.placeSave)
                // A source reset where it was has played on and keeps a bookmark again: the queue
                // file, which kept the reset, says so with this save.
                let resetEnded = resetBefore != nil && bookmarkReset == nil
                if resetEnded { savedMark = saveMark }
                if !step.placeSave, bookmarksAhead { bookmarksDirty = true }
                notePodcastPlace()
                step.commands.append(queueChanged || resetEnded || step.exitCode != nil ? .persist(snapshot) : .persistPlace(snapshot))
            }
        }
        if bookmarksDirty, bookmarksReady {
            bookmarksDirty = false
            bookmarksAhead = false
            step.commands.append(.persistBookmarks(bookmarks))
        }
        if podcastsDirty, podcastsReady {
            podcastsDirty = false
            step.commands.append(.persistPodcasts(podcasts + podcastsRemoved))
        }
        // A program (a power command) goes after the saves: the shell runs it once they are on disk.
        let programs = step.commands.filter { if case .runProgram = $0 { true } else { false } }
        if !programs.isEmpty {
            step.commands.removeAll { if case .runProgram = $0 { true } else { false } }
            step.commands += programs
        }
        let view = StatusView(self)
        if view != shown {
            shown = view
            step.commands.append(.render(view))
        }
        if let layout = settings.display {
            let title = shownCurrentInfo?.title
            if title != titleShown { titleShown = title; titleSince = now }
            if message != messageShown {
                messageShown = message
                messageSince = now
                messageUntil = message == nil ? 0 : now + settings.messageSeconds
            }
            let frame = DisplayFrame.make(self, layout: layout)
            if frame != shownFrame {
                shownFrame = frame
                step.commands.append(.show(frame))
            }
        }
        if let code = step.exitCode { step.commands.append(.exit(code: code)) }
    }

    /// Makes the engine's successor match what auto-advance would play next.
    mutating func syncNext(_ step: inout Step) {
        // A sleep timer that ends with this track hands no successor: the engine stops at its end.
        var wanted: UInt64? = (loaded != nil && phase != .stopped && !sleepEndsWithTrack) ? autoAdvanceTarget().map { order[$0] } : nil
        // Nor one the parental rules refuse (quiet hours, the limit): the engine stops at the end.
        if let id = wanted, let track = track(id: id), parentalRefusal(path: track.info.path) != nil { wanted = nil }
        guard wanted != handedNext?.trackID else { return }
        if let wanted, let track = track(id: wanted), let index = autoAdvanceTarget() {
            let ref = PlayRef(playID: nextPlayID, trackID: wanted)
            nextPlayID += 1
            handedNext = ref
            let gain = playGain(at: index)
            let speed = playSpeed(at: index)
            let next = NextPlay(playID: ref.playID, path: track.info.path, gain: gain, speed: speed)
            // A play started in this step takes its successor along (one engine command, no race).
            if case .startTrack(let id, let path, let at, let paused, nil, let own, let ownSpeed)? = step.commands.last,
               id == loaded?.playID {
                step.commands[step.commands.count - 1] = .startTrack(playID: id, path: path, at: at, paused: paused, next: next,
                                                                     gain: own, speed: ownSpeed)
            } else {
                step.commands.append(.setNext(playID: ref.playID, path: track.info.path, gain: gain, speed: speed))
            }
        } else {
            handedNext = nil
            step.commands.append(.clearNext)
        }
    }

    /// The order index auto-advance moves to from the cursor, or nil at the end of the queue.
    func autoAdvanceTarget() -> Int? {
        guard let cursor, !order.isEmpty else { return nil }
        if repeatMode == .one { return cursor }
        return skipTarget(from: cursor)
    }

    /// The order index `next` moves to: the following track, wrapping with repeat all.
    func skipTarget(from cursor: Int) -> Int? {
        if cursor + 1 < order.count { return cursor + 1 }
        return repeatMode == .all ? 0 : nil
    }

    /// Starts the current track in the engine from `at` seconds; while the music is not there,
    /// opens nothing and (unless `paused`) waits for it instead.
    mutating func startCurrent(at seconds: Double, paused: Bool, _ step: inout Step) {
        guard let track = currentTrack else { return }
        if !paused, let why = parentalRefusal(path: track.info.path) {
            // Nothing the rules refuse is opened: the place is kept, paused.
            unload(&step)
            phase = .paused
            message = why
            return
        }
        if musicMissing != nil {
            // Opening a file that is not there would skip it and lose the place, track by track.
            unload(&step)
            if !paused { phase = .waitingForMusic }
            return
        }
        if let chime = settings.chime, !chimePlayed, !paused {
            // The first playback after start is preceded by the chime: it sounds only once the
            // device really opens, at the volume already set, and the track follows it.
            chimePlayed = true
            startChime(chime, thenAt: seconds, &step)
            return
        }
        // A play of the music replaces a chime that still sounds: what follows it is this.
        chimePlay = nil
        afterChime = nil
        let ref = PlayRef(playID: nextPlayID, trackID: track.id)
        nextPlayID += 1
        loaded = ref
        streamStarted = false
        stream = nil
        // The engine forgets its successor when a new play starts.
        handedNext = nil
        step.commands.append(.startTrack(playID: ref.playID, path: track.info.path, at: seconds, paused: paused,
                                         gain: cursor.flatMap { playGain(at: $0) }, speed: cursor.flatMap { playSpeed(at: $0) }))
    }

    /// Releases the engine and the device.
    mutating func unload(_ step: inout Step) {
        if loaded != nil || chimePlay != nil { step.commands.append(.stopOutput) }
        loaded = nil
        handedNext = nil
        chimePlay = nil
        afterChime = nil
    }
}
