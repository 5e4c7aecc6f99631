// SPDX-License-Identifier: MIT

// What a start meets: the volume limits before the first sample, music whose folder is not
// there yet, configured folders with nothing to play yet, a state file that cannot be read. None of them may cost the saved place.
extension State {
    mutating func startUp(_ event: Event, _ step: inout Step) {
        switch event {
        case .started:
            // A panel shows the boot splash first, for `splashSeconds` from the start.
            if settings.display != nil { splashUntil = now + settings.splashSeconds }
            volume = cappedVolume(wanting: settings.bootVolume ?? volume)
            step.commands.append(.setVolume(volume))
            // Nothing was read or changed by a person: no reason to write the state file (a
            // restore may follow, and an empty queue must never be saved over it first).
            let saved = savedVolume
            savedMark?.volume = saved
            // Every podcast is fetched at start, then every `refreshMinutes`.
            fetchPodcasts(&step)
        case .musicMissing(let folder):
            if musicMissing != folder { step.commands.append(.report(Self.waitingForMusic(folder))) }
            musicMissing = folder
            switch phase {
            case .playing:
                unload(&step)
                phase = .waitingForMusic
            case .waitingForDevice:
                retryDelay = settings.deviceRetryInitial
                step.commands.append(.cancelTimer(.deviceRetry))
                phase = .waitingForMusic
            case .paused:
                unload(&step)
            case .stopped, .interrupted, .waitingForMusic:
                break
            }
        case .musicAppeared:
            guard let folder = musicMissing else { return }
            musicMissing = nil
            step.commands.append(.report(Self.musicIsThere(folder)))
            if phase == .waitingForMusic {
                phase = .playing
                startCurrent(at: position, paused: false, &step)
            }
        case .musicAwaited(let folders):
            // Only a start that queued nothing waits: a restored queue has music of its own.
            guard queue.isEmpty, !folders.isEmpty else { return }
            if musicAwaited?.folders != folders { step.commands.append(.report(Self.waitingForMusic(in: folders))) }
            musicAwaited = MusicWait(folders: folders, queueRevision: queueRevision)
        case .musicFound(let folders, let tracks, let messages):
            // A read asked for a wait that is over (a person loaded something meanwhile, `finish`
            // ended it) changes nothing.
            guard let wait = musicAwaited, wait.folders == folders, wait.queueRevision == queueRevision, queue.isEmpty else { return }
            // Still nothing to play (a folder made, a file that is not music): it waits on, quietly
            // (the wait was said once; "no audio files" at every change would say nothing new).
            guard !tracks.isEmpty else { return }
            for line in messages { step.commands.append(.report(line)) }
            musicAwaited = nil
            step.commands.append(.report(Self.musicIsThere(folders.joined(separator: ", "))))
            // What the start would have done had the music been there.
            apply(settings.resumePlaying ? .replaceQueue(tracks) : .add(tracks), &step)
        case .stateFileUnreadable(let reason):
            let before = stateUnreadable
            stateUnreadable = reason
            if reason == nil, before != nil {
                step.commands.append(.report("the state file can be read again: saving"))
                step.forceSave = true
            }
        default:
            break
        }
    }

    /// What the status, the panel and the log say while the music is not there.
    static func waitingForMusic(_ folder: String) -> String {
        "waiting for music: \(folder) is not there"
    }

    /// What the status, the panel and the log say while a start that found nothing to play waits
    /// for music in the configured `folders` (`musicAwaited`).
    static func waitingForMusic(in folders: [String]) -> String {
        "waiting for music in " + folders.joined(separator: ", ")
    }

    /// What the log says when the music waited for is there (`folder`: one, or several joined).
    static func musicIsThere(_ folder: String) -> String {
        "music is there: " + folder
    }
}
