// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore

/// The faces the loop polls and streams to, through their ports: the control language's
/// (`ControlPort`, which owns the control socket's and the console's faces) and MPD's
/// (`MPDPort`, once `openMPD` opened the face). Each face is a room of its own (its folder)
/// reaching the loop only through its port.
struct Faces {
    let control: ControlPort
    /// The MPD face, once opened (sessions hold it weakly: kept here), and its port (the face
    /// holds that weakly).
    var mpd: MPDFace?
    var mpdPort: MPDPort?
}

extension Faces {
    /// Opens the MPD face behind `port`; one line per address it could not listen on.
    /// `musicFolders` root relative `add` names and `file:` lines; `playlists` is the stored
    /// playlists' folder (nil: none, the commands refuse).
    mutating func openMPD(_ port: MPDPort, _ settings: MPDSettings, musicFolders: [String], playlists: String?) -> [String] {
        let face = MPDFace(settings: settings, loop: port, musicFolders: musicFolders, playlists: playlists)
        mpd = face
        mpdPort = port
        control.mpd = face
        return face.listener.problems
    }

    /// When a face needs the loop without an event: an idle control client to drop, MPD's jobs
    /// and clients.
    var deadlines: [Double] { [control.control?.nextDeadline].compactMap { $0 } + (mpd?.nextDeadline() ?? []) }

    /// A console to reopen (looked after once a second, `maintain`).
    var needsMaintenance: Bool { control.console?.needsMaintenance == true }

    func maintain() { control.console?.maintain() }

    /// The faces' fds to poll, in the order `service` takes them back: the console's (-1 without
    /// one), the control socket's (`controlCount`), the MPD listener's.
    func pollFDs() -> (fds: [pollfd], controlCount: Int) {
        let controlFDs = control.control?.pollFDs() ?? []
        return ([control.console?.pollFD() ?? pollfd(fd: -1, events: Int16(POLLIN), revents: 0)] + controlFDs
                + (mpd?.listener.pollFDs() ?? []), controlFDs.count)
    }

    /// After a poll of `pollFDs()`: each face reads, answers, drops and accepts.
    func service(_ fds: ArraySlice<pollfd>, controlCount: Int) {
        let controlStart = fds.startIndex + 1, mpdStart = controlStart + controlCount
        control.control?.service(Array(fds[controlStart..<mpdStart]))
        mpd?.listener.service(Array(fds[mpdStart...]))
        control.console?.service(fds[fds.startIndex].revents)
    }

    /// At the end of a pass: MPD's jobs without progress are given up; replies that came from a
    /// worker, and `idle` answers to what happened on this pass, go out.
    func endPass(now: Double) {
        mpd?.supervise(now: now)
        mpd?.listener.sweep()
    }

    func finish(waiting: Bool = true) { mpd?.finish(waiting: waiting) }
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
    /// When the last watchdog ping went, and when the loop started (monotonic).
    var lastPing = 0.0, startedAt = 0.0
}

/// What the wiring plugged into the loop's ports (`Ports.swift`): the engine, the status, the
/// panel, and the sources of events (buttons, encoder, input devices, sticks).
struct Adapters {
    let audio: AudioPort
    let status: StatusSink
    /// The panel, if any.
    let display: DisplaySink?
    let sources: [EventSource]
}

extension Adapters {
    /// The event sources' fds to poll, each with its source.
    func pollFDs() -> (fds: [pollfd], owners: [EventSource]) {
        let pairs = sources.flatMap { source in source.fds.map { (pollfd(fd: $0, events: Int16(POLLIN), revents: 0), source) } }
        return (pairs.map(\.0), pairs.map(\.1))
    }

    /// Whether `button`'s line is active now, read from the first source that has it.
    func level(of button: Button) -> Bool? { sources.lazy.compactMap { $0.level(of: button) }.first }
}

/// What the loop reads by itself besides the mailbox: signals (a signalfd), a terminal's keys, and
/// the clock and process id its shuffle seeds start from.
struct LoopInputs {
    var signals = SignalInput()
    var keys: KeyReader
    private var seed: UInt64

    init(keys: KeyReader) {
        self.keys = keys
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        seed = UInt64(truncatingIfNeeded: ts.tv_nsec) ^ UInt64(truncatingIfNeeded: ts.tv_sec) << 20 ^ UInt64(getpid())
    }

    /// A fresh shuffle seed (for a key, a parsed line, an MPD `random`).
    mutating func nextSeed() -> UInt64 {
        var g = SeededGenerator(seed: seed)
        seed = g.next()
        return seed
    }
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

/// What the wiring plugs into the loop besides the ports and the faces.
struct Hooks {
    /// Gives back memory that start-up or a batch of tags touched once (`ColdPages.release`); called
    /// after each track start and after each batch of tags read, when most of that is done with.
    var releaseColdPages: (() -> Void)?
    /// Chooses the sound device the next opening uses (the headphones' own, or the speaker).
    var routeOutput: ((OutputRoute) -> Void)?
    /// Carries out `Command.takeBluetoothVolume` (`take`) and `setBluetoothVolume` off the loop;
    /// returns an answer it has at once (a program that cannot start).
    var bluetoothVolume: ((_ level: Int, _ take: Bool) -> Event?)?
    /// Where podcast feeds are fetched and episodes downloaded; nil: this player fetches none.
    var podcasts: PodcastPort?
    /// Reads the wall clock as local time and whether it is synchronised (`WallClock.read`; a test
    /// gives its own).
    var wallClock: (() -> (time: LocalTime, synchronized: Bool))?
    /// What was last sent of it.
    private var wallSent: (time: LocalTime, synchronized: Bool)?

    /// The wall clock's reading when it differs from the one last sent (a new minute, the kernel's
    /// synchronisation), taken as sent; nil: no clock or nothing new.
    mutating func newWallClock() -> (time: LocalTime, synchronized: Bool)? {
        guard let wallClock else { return nil }
        let reading = wallClock()
        if let last = wallSent, last.time == reading.time, last.synchronized == reading.synchronized { return nil }
        wallSent = reading
        return reading
    }
}
