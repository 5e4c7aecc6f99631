// SPDX-License-Identifier: MIT
import JukeboxCore

/// The faces the loop polls and streams to, and what waits for an interruption's grant. Each
/// face is a room of its own (its folder) reaching the loop through its port (`ControlLoop`,
/// `MPDLoop`); the loop owns them.
struct Faces {
    /// The control socket's face, if a socket is open.
    var control: ControlFace?
    /// The serial console's face, if one is configured.
    var console: ConsoleFace?
    /// The MPD face, once `openMPD` opened it (sessions hold it weakly: kept here).
    var mpd: MPDFace?
    /// What to do when `Command.grant(id)` comes, per interruption id, oldest first, whichever
    /// face asked (`ControlLoop.beginInterruption`).
    var grantWaiters: [String: [() -> Void]] = [:]

    /// Whether a face streams `events` (the loop then makes event lines).
    var streaming: Bool { control?.streams == true || console?.streams == true }

    /// The first waiter for `id`'s grant, taken off its queue.
    mutating func takeGrantWaiter(_ id: String) -> (() -> Void)? {
        guard var queue = grantWaiters[id], !queue.isEmpty else { return nil }
        let first = queue.removeFirst()
        grantWaiters[id] = queue.isEmpty ? nil : queue
        return first
    }
}

/// What the loop tells systemd about its start: READY once, after the state is loaded and the
/// first status is known; watchdog pings.
struct Readiness {
    /// Tells systemd about readiness, status and liveness (a no-op outside a `Type=notify` unit).
    var notifier: SystemdNotifier?
    var readySent = false
    /// While `start` runs its first events: the status waits (`startView`) until they are done.
    var startingUp = false
    var startView: StatusView?
    /// A track has started since the loop did.
    var sawStart = false
    /// When the last watchdog ping went (monotonic).
    var lastPing = 0.0
}

/// Keys from a terminal: its fd, the decoder of escape sequences, and whether it went away.
struct KeyReader {
    let fd: Int32?
    var decoder = KeyDecoder()
    var closed = false
}

/// The loop's own deadlines: the core's timers, and when it last ticked and looked for what went away.
struct LoopTimes {
    var timers: [TimerID: Double] = [:]
    var lastTick = 0.0
    var lastMaintain = 0.0
}

/// What the wiring plugs into the loop besides the ports.
struct Hooks {
    /// Lines about the adapters for `diag` (device, counters, board).
    var diagnostics: (() -> [String])?
    /// Gives back memory that start-up or a batch of tags touched once (`ColdPages.release`); called
    /// after each track start and after each batch of tags read, when most of that is done with.
    var releaseColdPages: (() -> Void)?
    /// Re-reads the configuration for SIGHUP: the new settings, or nil after logging why not.
    var reload: (() -> Settings?)?
    /// The version and build for `version` and `diag`.
    var version = "jukebox"
    /// The music folders `ls --json` lists (the config's `music`).
    var musicFolders: [String] = []
}
