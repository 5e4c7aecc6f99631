// SPDX-License-Identifier: MIT

/// Where the player is. One enum, so a phase cannot be half-entered.
public enum PlayerPhase: Equatable, Sendable {
    /// Nothing plays and the device is released.
    /// May be followed by: `playing` (play with a non-empty queue), `interrupted`.
    case stopped
    /// Audio is being handed to the device.
    /// May be followed by: `paused`, `stopped` (stop, end of queue, nothing playable),
    /// `waitingForDevice` (the device is busy or gone), `waitingForMusic` (its folder went away),
    /// `interrupted`.
    case playing
    /// The position is held; resume continues at the same frame.
    /// May be followed by: `playing`, `stopped`, `waitingForDevice` (resume while the device is busy),
    /// `interrupted`. After `Settings.releaseDelay` in pause the device is closed; resume reopens
    /// it at the same frame.
    case paused
    /// The player wants to play but cannot have the sound device; it probes the device by itself
    /// (`Command.probeDevice`, at most `Settings.deviceRetryMax` apart) and plays from the
    /// remembered position once the device is free. Skips, seeks and failed tracks while waiting
    /// keep it waiting for the device (never paused), so a probe is always due.
    /// May be followed by: `playing` (device opened), `paused` (pause while waiting, or the device
    /// was lost and `Settings.resumeAfterDeviceLoss` is off), `stopped` (stop, queue cleared),
    /// `interrupted`.
    case waitingForDevice(reason: String)
    /// The player wants to play but the current track's folder is not there (`State.musicMissing`:
    /// a USB stick or a share not mounted yet); nothing is opened, so nothing is skipped or
    /// dropped, and it plays from the remembered position once the shell reports the music back.
    /// May be followed by: `playing` (`Event.musicAppeared`), `paused`, `stopped`, `interrupted`.
    case waitingForMusic
    /// Another program has the device (see `Event.interruptBegan`); the device is released and the
    /// place kept. When the last interruption ends the player goes back to the phase it was in,
    /// or the one asked for meanwhile (play/pause/stop while interrupted).
    /// May be followed by: `playing`, `paused`, `stopped` (when the last interruption ends).
    case interrupted(reason: String)

    /// The phase as people and programs are shown it (the status line, `status --json`).
    public var shown: ShownPhase {
        switch self {
        case .stopped: return .stopped
        case .playing: return .playing
        case .paused: return .paused
        case .waitingForDevice, .waitingForMusic: return .waiting
        case .interrupted: return .interrupted
        }
    }

    /// Short name for logs and the status: `shown`'s text.
    public var name: String { shown.rawValue }
}

/// The phase as shown (`StatusView.phase`): both waits are one `waiting`, without their reasons.
/// The raw value is the text logs and `status --json` carry.
public enum ShownPhase: String, Equatable, Sendable, CaseIterable {
    case stopped, playing, paused, waiting, interrupted
}

/// The phase as the state file keeps it: waiting counts as playing (it wants to play), an
/// interruption as the phase it will go back to (`State.savedPhase`). The raw value is the file's
/// text (`Snapshot.phase`, the place sidecar's `PlaceFile.phase`); the type travels everywhere
/// else.
public enum SavedPhase: String, Equatable, Sendable, CaseIterable, Codable {
    case playing, paused, stopped

    /// The saved phase of a phase that is not an interruption (an interruption saves the phase
    /// it goes back to: `State.savedPhase`).
    public init(_ phase: PlayerPhase) {
        switch phase {
        case .playing, .waitingForDevice, .waitingForMusic: self = .playing
        case .paused: self = .paused
        case .stopped, .interrupted: self = .stopped
        }
    }
}

/// Timers the core asks the shell to run; their expiry comes back as `Event.timerFired`.
public enum TimerID: Equatable, Hashable, Sendable {
    /// Probe the sound device again.
    case deviceRetry
    /// Release the device after a while in pause, so other programs can use it.
    case releaseDevice
    /// A button's bounce window ended: read its line's level and settle on it.
    case debounce(Button)
    /// A button held long enough for its long or hold action (and each hold repeat).
    case gesture(Button)
    /// A button's double-press window ended: its single press counts.
    case doubleTap(Button)
    /// A volume knob or button has been still for `State.volumeSaveDelay`: save the volume now
    /// (an encoder spin is one write, not one per detent).
    case saveVolume
    /// The last save failed (a full or read-only disk): save again, forced, after
    /// `State.saveRetryDelay` (doubling to `State.saveRetryMax`) until a save succeeds.
    case saveRetry
    /// Idle power-off: the countdown starts (`State.powerOffCountdown` before the end), then
    /// fires each second of it to update what it shows, and at its end.
    case idlePowerOff
    /// The sleep timer looks again (`Reduce+Sleep.swift`): its start, a minute shown, a step of
    /// its fade, its end, or the user's volume back after it.
    case sleep
    /// An assignment waiting for the next card (`card assign --next`) has waited
    /// `State.cardAssignWait`: it is dropped, so a card swiped much later is played, not mapped.
    case cardAssign
    /// Every configured podcast is fetched again (`PodcastSettings.refreshMinutes`).
    case podcastRefresh
}
