// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The config's Bluetooth speaker and a phone playing through the box, as an event source:
/// `bluealsa-cli monitor` runs as a child whose stdout the loop polls; when it says bluez-alsa
/// runs, `bluealsa-cli list-pcms` (another child, polled the same way) says what is connected
/// already. `BluealsaPresence` reads the lines for the speaker, `BluealsaPhoneStreams` for a
/// phone; each change becomes `Event.bluetoothSpeaker` or `Event.bluetoothPhone` (the core
/// decides what it means). A phone's name (BlueZ's alias, `BluezAlias`) is read by a third
/// child as soon as its PCM is seen, one at a time; a phone that streams before it is read is
/// shown by its address, then by its name, said again as a start. A monitor that ends is a phone's stream that ended (nothing is known
/// of it until the list after its return), so a dead monitor never leaves the player waiting. Nothing here
/// waits: the pipes are non-blocking, a child that ends is seen as the end of its pipe, and the
/// monitor is started again after 1 s, doubling to 60 s while it keeps ending within 30 s. The
/// children die with the player (`setpriv --pdeathsig`, as the test fixtures start players),
/// and `close` ends them.
public final class BluetoothSpeakerSource: EventSource {
    /// The programs run: the monitor's and the list's argument vectors.
    public struct Programs: Sendable {
        /// Runs until it is ended, printing `bluealsa-cli monitor`'s lines.
        public var monitor: [String]
        /// Prints `bluealsa-cli list-pcms`'s lines and exits.
        public var list: [String]
        /// For a phone's PCM path, prints the phone's name as busctl does (`BluezAlias`) and
        /// exits, bounded; nil: phones are shown by their address.
        public var alias: (@Sendable (String) -> [String]?)?
        /// bluealsa-cli itself, for `soft-volume PCM off` and `volume PCM N` (the speaker's own
        /// volume, `setVolume`); nil: the speaker's volume is never taken.
        public var control: [String]?
        /// The argument vectors as given (tests put stand-ins here).
        public init(monitor: [String], list: [String], alias: (@Sendable (String) -> [String]?)? = nil, control: [String]? = nil) {
            self.monitor = monitor
            self.list = list
            self.alias = alias
            self.control = control
        }
        /// bluez-alsa's `bluealsa-cli` at `path`; with `phone`, the monitor prints the PCMs'
        /// `Running` changes and the list each PCM's properties (bluez-alsa 4.1 and later), and
        /// with `timeout` and `busctl` (their paths) a phone's name is read (`BluezAlias`); with
        /// `volume` (a speaker), the monitor prints the PCMs' `Volume` changes too and the
        /// speaker's volume is set through it (`control`).
        public static func bluealsaCLI(_ path: String, phone: Bool = false, volume: Bool = false, timeout: String? = nil, busctl: String? = nil) -> Programs {
            let control: [String]? = volume ? [path] : nil
            let watched: [String] = (phone ? ["Running"] : []) + (volume ? ["Volume"] : [])
            let monitor: [String] = [path, "monitor"] + (watched.isEmpty ? [] : ["--properties=" + watched.joined(separator: ",")])
            guard phone else { return Programs(monitor: monitor, list: [path, "list-pcms"], control: control) }
            var alias: (@Sendable (String) -> [String]?)?
            if let timeout, let busctl { alias = { BluezAlias.argv(timeout: timeout, busctl: busctl, pcm: $0) } }
            return Programs(monitor: monitor, list: [path, "--verbose", "list-pcms"], alias: alias, control: control)
        }
    }

    /// The longest wait before the monitor is started again (seconds).
    public static let maxBackoff = 60.0
    /// Lines of `list-pcms` kept, at most (one per connected device and profile).
    static let maxListLines = 256

    private let programs: Programs
    private let log: Log
    private let now: () -> Double
    /// The speaker's presence; nil when no speaker is configured.
    private var presence: BluealsaPresence?
    /// A phone's streams; nil when they are not watched.
    private var phones: BluealsaPhoneStreams?
    private var monitor: Child?
    private var lister: Child?
    private var listLines: [String] = []
    /// The phones' names read (BlueZ's alias), by address; a phone whose name is not read yet
    /// shows as its address.
    private var aliases: [String: String] = [:]
    /// Phones whose name is to be read (again): address → PCM path. One read runs at a time.
    private var toName: [String: String] = [:]
    /// The read running, and whose.
    private var namer: Child?
    private var naming: String?
    private var namerLines: [String] = []
    /// The phone a start was reported for, while it streams: a name read then is said again.
    private var streamingPhone: String?
    /// The speaker's volume being set: the child (one at a time), what it is doing, what it said.
    private var controller: Child?
    private var controlling: VolumeOrder?
    private var controlLines: [String] = []
    /// What waits for the child running: a take, and the newest level (older ones are passed over).
    private var nextTake: Int?
    private var nextLevel: Int?
    /// Whether a failure to set the speaker's volume has been logged (once, then debug).
    private var volumeFailureSaid = false

    /// What a control child does: turn the soft volume off (then set `level`), or set a level.
    private enum VolumeOrder: Equatable {
        case softVolumeOff(level: Int)
        case level(Int, answering: Bool)
    }

    /// When the monitor is started again; nil while it runs.
    private var restartAt: Double? = 0
    /// 1 s, doubling up to `maxBackoff`; a monitor that ran `steadyRun` before it ended was
    /// working: the next wait is 1 s again.
    private var backoff = RetryBackoff(first: 1, longest: BluetoothSpeakerSource.maxBackoff, steady: BluetoothSpeakerSource.steadyRun)
    /// A monitor that ran this long before it ended was working (seconds).
    static let steadyRun = 30.0

    /// A running child and what of its stdout is not a whole line yet.
    private struct Child {
        var pid: pid_t
        var fd: Int32
        /// A pidfd of the child (-1 when the kernel has none): the loop's `reapChildren` may
        /// collect the child as soon as it ends, and a signal by pid could then reach whatever
        /// process took the pid next; through the pidfd it reaches the child or nobody.
        var pidfd: Int32
        var partial: [UInt8] = []
    }

    /// Watches the speaker at `address` (none: nil) and, with `phone`, a phone's streams; the
    /// monitor starts at once. `now` is the monotonic clock (tests inject theirs).
    public init(address: String?, phone: Bool = false, programs: Programs, log: Log, now: @escaping () -> Double = monotonicNow) {
        self.programs = programs
        self.log = log
        self.now = now
        presence = address.map(BluealsaPresence.init(address:))
        phones = phone ? BluealsaPhoneStreams() : nil
        maintain()
    }

    deinit { close() }

    public var fds: [Int32] { [monitor?.fd, lister?.fd, namer?.fd, controller?.fd].compactMap { $0 } }
    public var needsMaintenance: Bool { monitor == nil }

    public func maintain() {
        guard monitor == nil, let at = restartAt, now() >= at else { return }
        switch Self.spawn(programs.monitor) {
        case .success(let child):
            monitor = child
            backoff.started(at: now())
            restartAt = nil
        case .failure(let error):
            log.warning("bluetooth: cannot run \(programs.monitor.joined(separator: " ")): \(error.message)")
            scheduleRestart()
        }
    }

    public func read(fd: Int32) -> [Event] {
        if fd == monitor?.fd { return readMonitor() }
        if fd == lister?.fd { return readList() }
        if fd == namer?.fd { return readNamer() }
        if fd == controller?.fd { return readController() }
        return []
    }

    /// Sets the speaker's own volume to `level` (0–127) through its PCM's `Volume`; with `take`,
    /// its soft volume is turned off first and `Event.bluetoothVolumeControl` answers (from
    /// `read`, once both programs ended; or at once, returned, when they cannot run). Children
    /// the loop polls, one at a time: nothing waits; a level asked for while one runs waits for
    /// it, the newest only.
    public func setVolume(level: Int, take: Bool) -> Event? {
        let level = min(max(level, 0), BluetoothVolumeLink.maxLevel)
        guard programs.control != nil, presence?.paths.first != nil else {
            return take ? .bluetoothVolumeControl(taken: false, reason: "the speaker's PCM is not known") : nil
        }
        if take {
            nextTake = level
            nextLevel = nil
        } else if nextTake != nil {
            nextTake = level
        } else {
            nextLevel = level
        }
        return startController()
    }

    /// Starts the next control child, if none runs; an answer it has at once.
    private func startController() -> Event? {
        guard controller == nil, let control = programs.control else { return nil }
        guard let path = presence?.paths.first else {
            let answer: Event? = nextTake != nil ? .bluetoothVolumeControl(taken: false, reason: "the speaker's PCM is not known") : nil
            nextTake = nil
            nextLevel = nil
            return answer
        }
        let order: VolumeOrder
        let argv: [String]
        if let level = nextTake {
            nextTake = nil
            order = .softVolumeOff(level: level)
            argv = control + ["soft-volume", path, "off"]
        } else if let level = nextLevel {
            nextLevel = nil
            order = .level(level, answering: false)
            argv = control + ["volume", path, "\(level)"]
        } else {
            return nil
        }
        return run(order, argv)
    }

    private func run(_ order: VolumeOrder, _ argv: [String]) -> Event? {
        switch Self.spawn(argv, errors: true) {
        case .success(let child):
            controller = child
            controlling = order
            controlLines = []
            return nil
        case .failure(let error):
            let reason = "cannot run \(argv.first ?? ""): \(error.message)"
            switch order {
            case .softVolumeOff: return .bluetoothVolumeControl(taken: false, reason: reason)
            case .level(_, let answering):
                volumeFailed(reason)
                return answering ? .bluetoothVolumeControl(taken: true, reason: "") : startController()
            }
        }
    }

    /// A control child's lines; at its end, what it did. bluealsa-cli says nothing when it
    /// succeeds and writes its complaint otherwise (its exit status may be collected by the
    /// loop's `reapChildren` first), so any line is a failure.
    private func readController() -> [Event] {
        guard var child = controller else { return [] }
        let (lines, ended) = Self.drain(&child)
        controller = child
        controlLines += lines.prefix(max(0, 8 - controlLines.count))
        guard ended else { return [] }
        Self.end(child)
        controller = nil
        let said = DisplayText.inert(controlLines.joined(separator: " "), maxBytes: 200)
        let order = controlling
        controlling = nil
        var events: [Event] = []
        switch order {
        case .softVolumeOff(let level):
            if said.isEmpty {
                // The level first, then the answer: the samples go to 100 only once the
                // speaker is at the player's volume.
                let argv = (programs.control ?? []) + ["volume", presence?.paths.first ?? "", "\(nextLevel ?? level)"]
                nextLevel = nil
                if let answer = run(.level(level, answering: true), argv) { events.append(answer) }
            } else {
                events.append(.bluetoothVolumeControl(taken: false, reason: said))
            }
        case .level(_, let answering):
            if !said.isEmpty { volumeFailed(said) }
            if answering { events.append(.bluetoothVolumeControl(taken: true, reason: "")) }
        case nil: break
        }
        if controller == nil, let answer = startController() { events.append(answer) }
        return events
    }

    /// A level that could not be set: logged once, then in the debug log.
    private func volumeFailed(_ reason: String) {
        let line = "bluetooth: cannot set the speaker's volume: " + reason
        if volumeFailureSaid { log.debug(line) } else { log.warning(line) }
        volumeFailureSaid = true
    }

    /// Ends the children (the player stops).
    public func close() {
        for child in [monitor, lister, namer, controller].compactMap({ $0 }) { Self.end(child) }
        monitor = nil
        lister = nil
        namer = nil
        controller = nil
    }

    private func readMonitor() -> [Event] {
        guard var child = monitor else { return [] }
        let (lines, ended) = Self.drain(&child)
        monitor = child
        var events: [Event] = []
        for line in lines {
            var list = false
            if let speaker = presence?.monitor(line) {
                if let connected = speaker.connected {
                    if !connected { forgetVolumeOrders() }
                    events.append(.bluetoothSpeaker(connected: connected))
                }
                list = speaker.list
            }
            // The speaker's volume, while it is there (a line about a PCM that went is stale).
            if let presence, presence.reported == true, let volume = BluealsaVolume.parse(line, speaker: presence) {
                events.append(BluealsaVolume.event(volume))
            }
            if phones != nil { wantName(line, again: line.hasPrefix("PCMAdded ")) }
            if let phone = phones?.monitor(line) {
                if let change = phone.change { events.append(event(change)) }
                list = list || phone.list
            }
            if list { startList() }
        }
        if ended {
            Self.end(child)
            monitor = nil
            presence?.forget()
            if let change = phones?.forget() { events.append(event(change)) }
            let wait = scheduleRestart()
            // Said once a run of ends; a monitor that keeps ending at once (no D-Bus) is not a
            // line a minute.
            let line = "bluetooth: bluealsa-cli monitor ended; started again in \(Int(wait)) s"
            if wait == backoff.first { log.warning(line) } else { log.debug(line) }
        }
        return events
    }

    private func readList() -> [Event] {
        guard var child = lister else { return [] }
        let (lines, ended) = Self.drain(&child)
        lister = child
        listLines += lines.prefix(max(0, Self.maxListLines - listLines.count))
        guard ended else { return [] }
        Self.end(child)
        lister = nil
        let connected = presence?.listed(listLines)
        if connected == false { forgetVolumeOrders() }
        let speaker: [Event] = connected.map { [.bluetoothSpeaker(connected: $0)] } ?? []
        if phones != nil { for line in listLines { wantName(line, again: false) } }
        let phone: [Event] = phones?.listed(listLines).map { [event($0)] } ?? []
        return speaker + phone
    }

    /// The speaker went: what was to be set on its PCM is nobody's (an answer would be taken for
    /// its next connection's).
    private func forgetVolumeOrders() {
        if let controller { Self.end(controller) }
        controller = nil
        controlling = nil
        nextTake = nil
        nextLevel = nil
    }

    /// The core's fact for a change, the phone named by its alias when it has been read.
    private func event(_ change: BluealsaPhoneStreams.Change) -> Event {
        switch change {
        case .started(let address):
            streamingPhone = address
            return .bluetoothPhone(streaming: true, sender: aliases[address] ?? address, address: address)
        case .stopped:
            streamingPhone = nil
            return Self.event(change)
        }
    }

    /// A phone's PCM named in `line` (the monitor's or the list's): its name is read unless it
    /// was (`again`: read anew, a PCM that came back may belong to a renamed phone).
    private func wantName(_ line: String, again: Bool) {
        guard programs.alias != nil else { return }
        for word in line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }) where word.hasPrefix("/org/bluealsa/") {
            let path = String(word)
            guard let address = BluealsaPhoneStreams.phone(path) else { continue }
            if again || (aliases[address] == nil && naming != address) { toName[address] = path }
        }
        startNamer()
    }

    private func startNamer() {
        guard namer == nil, let next = toName.first else { return }
        let address = next.key, path = next.value
        toName.removeValue(forKey: address)
        guard let argv = programs.alias?(path) else { return startNamer() }
        switch Self.spawn(argv) {
        case .success(let child):
            namer = child
            naming = address
            namerLines = []
        case .failure(let error):
            log.debug("bluetooth: cannot read the phone's name: \(error.message)")
        }
    }

    /// The name read: kept, and said again as a start when that phone streams now (the core
    /// shows the new name).
    private func readNamer() -> [Event] {
        guard var child = namer else { return [] }
        let (lines, ended) = Self.drain(&child)
        namer = child
        namerLines += lines.prefix(max(0, 8 - namerLines.count))
        guard ended else { return [] }
        Self.end(child)
        namer = nil
        var events: [Event] = []
        if let address = naming {
            if let name = BluezAlias.parse(namerLines.joined(separator: "\n")) {
                let before = aliases[address]
                aliases[address] = name
                if streamingPhone == address, before != name { events.append(.bluetoothPhone(streaming: true, sender: name, address: address)) }
            } else {
                log.debug("bluetooth: no name for \(address): " + DisplayText.inert(namerLines.joined(separator: " "), maxBytes: 200))
            }
        }
        naming = nil
        startNamer()
        return events
    }

    /// The core's fact for a change of the phone's streams (`Event.bluetoothPhone`).
    public static func event(_ change: BluealsaPhoneStreams.Change) -> Event {
        switch change {
        case .started(let address): return .bluetoothPhone(streaming: true, sender: address, address: address)
        case .stopped: return .bluetoothPhone(streaming: false, sender: "")
        }
    }

    private func startList() {
        if let lister { Self.end(lister) }
        lister = nil
        listLines = []
        presence?.listStarted()
        phones?.listStarted()
        switch Self.spawn(programs.list) {
        case .success(let child): lister = child
        case .failure(let error): log.warning("bluetooth: cannot run \(programs.list.joined(separator: " ")): \(error.message)")
        }
    }

    /// The monitor is started again after the back-off: its wait.
    @discardableResult
    private func scheduleRestart() -> Double {
        let wait = backoff.failed(at: now())
        restartAt = now() + wait
        return wait
    }

    /// Reads what the pipe holds: whole lines (each cut to `BluealsaPresence.maxLine`), and
    /// whether the child's end of it closed.
    private static func drain(_ child: inout Child) -> (lines: [String], ended: Bool) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        var lines: [String] = []
        var ended = false
        // A few reads at most per wake-up: the loop has other work, and comes back while data waits.
        for _ in 0..<4 {
            let n = Glibc.read(child.fd, &chunk, chunk.count)
            if n == 0 { ended = true; break }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN { ended = true }
                break
            }
            child.partial += chunk[0..<n]
            while let end = child.partial.firstIndex(of: 0x0A) {
                lines.append(String(decoding: child.partial[..<end].prefix(BluealsaPresence.maxLine), as: UTF8.self))
                child.partial.removeSubrange(...end)
            }
            // A line without an end that grows past the bound is cut there.
            if child.partial.count > BluealsaPresence.maxLine {
                lines.append(String(decoding: child.partial.prefix(BluealsaPresence.maxLine), as: UTF8.self))
                child.partial.removeAll()
            }
        }
        return (lines, ended)
    }

    /// Ends a child: its pipe closed, the process told to end and collected if it has (the
    /// loop's `reapChildren` collects it otherwise).
    private static func end(_ child: Child) {
        Glibc.close(child.fd)
        if child.pidfd >= 0 {
            _ = clinux_pidfd_send_signal(child.pidfd, SIGTERM)
            Glibc.close(child.pidfd)
        } else {
            kill(child.pid, SIGTERM)
        }
        var status: Int32 = 0
        _ = waitpid(child.pid, &status, WNOHANG)
    }

    /// util-linux's setpriv: `--pdeathsig` makes a child die with the player.
    static let setpriv = "/usr/bin/setpriv"

    /// Starts `argv` (no shell) with stdout on a non-blocking pipe and stdin, stderr on /dev/null,
    /// dying with the player when setpriv is there.
    private static func spawn(_ argv: [String], errors: Bool = false) -> Result<Child, ProgramStartError> {
        guard !argv.isEmpty else { return .failure(ProgramStartError(message: "empty command")) }
        let full = access(setpriv, X_OK) == 0 ? [setpriv, "--pdeathsig", "TERM", "--"] + argv : argv
        return startProgramReading(full, errors: errors).map { child in
            _ = fcntl(child.fd, F_SETFL, fcntl(child.fd, F_GETFL) | O_NONBLOCK)
            // Opened at once, on the loop's thread, before its `reapChildren` can collect it.
            // (A pidfd is close-on-exec from the start.)
            let pidfd = clinux_pidfd_open(child.pid)
            return Child(pid: child.pid, fd: child.fd, pidfd: pidfd)
        }
    }
}

/// The Bluetooth speaker's and the phone's source when the config names a speaker or
/// `bluetooth.phone` and bluez-alsa's `bluealsa-cli` (or `bluealsactl`, its name from 4.3) is
/// there; without it, one line in the log and no Bluetooth output nor phone watch.
public enum BluetoothSources {
    /// The source, or none (no speaker nor phone, or no bluealsa-cli: logged once).
    public static func make(_ settings: BluetoothSpeakerSettings?, phone: Bool = false, log: Log) -> [EventSource] {
        guard settings != nil || phone else { return [] }
        // bluez-alsa 4.3 renamed it bluealsactl (the same commands and lines).
        guard let cli = JukeboxService.findProgram("bluealsa-cli") ?? JukeboxService.findProgram("bluealsactl") else {
            let without = settings == nil ? "not watching for a phone" : "playing without the speaker"
            log.warning("bluetooth: bluealsa-cli not found (bluez-alsa-utils 4.1 or later, Debian 13); " + without)
            return []
        }
        let watched = [settings.map(\.address), phone ? "a phone playing to the box" : nil].compactMap { $0 }
        log.info("bluetooth: watching \(watched.joined(separator: " and ")) through \(cli)")
        // A phone's name (BlueZ's alias) through systemd's busctl; without it, its address.
        let timeout = JukeboxService.findProgram("timeout"), busctl = JukeboxService.findProgram("busctl")
        if phone, timeout == nil || busctl == nil { log.info("bluetooth: busctl or timeout not found: a phone is shown by its address") }
        let programs = BluetoothSpeakerSource.Programs.bluealsaCLI(cli, phone: phone, volume: settings != nil, timeout: timeout, busctl: busctl)
        return [BluetoothSpeakerSource(address: settings?.address, phone: phone, programs: programs, log: log)]
    }
}
