// SPDX-License-Identifier: MIT
import CLinux
import JukeboxCore
import Glibc

/// SIGTERM, SIGINT and SIGHUP, taken by the loop through a signalfd (blocked in every thread).
struct SignalInput {
    private(set) var fd: Int32 = -1

    /// Blocks the signals in the calling thread (and so in every thread it creates later).
    static func block() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGHUP)
        return set
    }

    mutating func open() {
        var set = Self.signalSet()
        fd = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
    }

    /// The signals that arrived, oldest first.
    func read() -> [Int32] {
        var info = signalfd_siginfo(), signals: [Int32] = []
        while Glibc.read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            signals.append(Int32(info.ssi_signo))
        }
        return signals
    }

    mutating func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}

extension KeyReader {
    /// Reads what the terminal sent: the keys it makes, and whether the terminal went away just
    /// now (then keys stop being read rather than spinning on POLLHUP).
    mutating func read() -> (keys: [Key], closedNow: Bool) {
        guard let fd else { return ([], false) }
        var buf = [UInt8](repeating: 0, count: 64)
        let n = Glibc.read(fd, &buf, buf.count)
        if n <= 0 {
            if n == 0 || (errno != EAGAIN && errno != EINTR) {
                closed = true
                return ([], true)
            }
            return ([], false)
        }
        return (decoder.feed(Array(buf[0..<n])), false)
    }
}

extension Readiness {
    /// READY once the state is loaded and audio plays (or knowingly waits, or nothing is meant to
    /// play); watchdog pings from the loop itself, so a hung loop gets the service restarted.
    /// True when READY went now.
    mutating func report(playing: Bool, clock: () -> Double) -> Bool {
        guard let notifier else { return false }
        var sent = false
        if !readySent && (!playing || sawStart) {
            readySent = true
            notifier.ready()
            sent = true
        }
        if let interval = notifier.watchdogInterval, clock() - lastPing >= interval / 2 {
            lastPing = clock()
            notifier.watchdogPing()
        }
        return sent
    }

    /// The status line systemd shows for `view`.
    static func systemdStatus(_ view: StatusView) -> String {
        if let message = view.message, view.phase == .waiting || view.phase == .interrupted { return message }
        if view.count == 0 { return "\(view.phase.rawValue): queue empty" }
        return "\(view.phase.rawValue): \(view.title)" + (view.artist.map { " – \($0)" } ?? "")
    }
}

extension Command {
    /// The command as the debug log shows it (a snapshot by its size, not its tracks).
    var brief: String {
        switch self {
        case .persist(let s): return "persist(\(s.tracks.count) tracks @\(s.position))"
        case .persistPlace(let s): return "persistPlace(@\(s.position))"
        case .render: return "render"
        default: return "\(self)"
        }
    }
}

extension Event {
    /// Ticks, positions heard and the wall clock's minutes: too frequent to stream to `events`
    /// clients or to log.
    var isRoutine: Bool {
        switch self {
        case .tick, .heard, .wallClock: return true
        default: return false
        }
    }

    /// Whether the event can change a button's gesture state (edges, level reads, gesture timers).
    var movesButtons: Bool {
        switch self {
        case .buttonEdge, .buttonLevel, .timerFired(.gesture, _), .timerFired(.doubleTap, _), .timerFired(.debounce, _): return true
        default: return false
        }
    }
}

extension AudioPort {
    /// Carries out one of the engine's commands (`Command.startTrack` … `setVolume`); others are
    /// not the engine's.
    func carryOut(_ command: Command) {
        switch command {
        case .startTrack(let id, let path, let at, let paused, let next, let gain, let speed):
            play(id: id, path: path, from: at, paused: paused, next: next.map { ($0.playID, $0.path) },
                 gain: gain ?? 1, nextGain: next?.gain ?? 1, speed: speed ?? 1, nextSpeed: next?.speed ?? 1)
        case .setNext(let id, let path, let gain, let speed): setNext(id: id, path: path, gain: gain ?? 1, speed: speed ?? 1)
        case .setSpeed(let id, let speed): setSpeed(id: id, speed: speed ?? 1)
        case .clearNext: clearNext()
        case .pauseOutput: pause()
        case .resumeOutput: resume()
        case .stopOutput: stop()
        case .releaseDevice(let token): release(token: token)
        case .probeDevice: probe()
        case .seekOutput(let to): seek(to: to)
        case .setVolume(let v): setVolume(v)
        default: break
        }
    }
}

extension StateWriter {
    /// Carries out a save (`Command.persist`, `persistPlace`, `persistBookmarks`, `persistPodcasts`); others are not
    /// the writer's.
    func carryOut(_ command: Command) {
        switch command {
        case .persist(let snapshot): submit(snapshot, queueChanged: true)
        case .persistPlace(let snapshot): submit(snapshot, queueChanged: false)
        case .persistBookmarks(let marks): submitBookmarks(marks)
        case .persistPodcasts(let feeds): submitPodcasts(feeds)
        default: break
        }
    }
}
