// SPDX-License-Identifier: MIT

/// Where the player is. One enum, so a phase cannot be half-entered.
public enum PlayerPhase: Equatable, Sendable {
    /// Nothing plays and the device is released.
    /// May be followed by: `playing` (play with a non-empty queue).
    case stopped
    /// Audio is being handed to the device.
    /// May be followed by: `paused`, `stopped` (stop, end of queue, nothing playable),
    /// `waitingForDevice` (the device is busy or gone).
    case playing
    /// The position is held; resume continues at the same frame.
    /// May be followed by: `playing`, `stopped`, `waitingForDevice` (resume while the device is busy).
    case paused
    /// The player wants to play but cannot have the sound device; it retries by itself with
    /// back-off and plays from the remembered position once the device opens.
    /// May be followed by: `playing` (device opened), `paused` (pause while waiting),
    /// `stopped` (stop, queue cleared).
    case waitingForDevice(reason: String)

    /// Short name for logs, the status line and the state file.
    public var name: String {
        switch self {
        case .stopped: return "stopped"
        case .playing: return "playing"
        case .paused: return "paused"
        case .waitingForDevice: return "waiting"
        }
    }
}

/// Timers the core asks the shell to run; their expiry comes back as `Event.timerFired`.
public enum TimerID: String, Equatable, Hashable, Sendable {
    /// Try opening the sound device again.
    case deviceRetry
}
