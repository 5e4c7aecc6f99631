// SPDX-License-Identifier: MIT
import CLinux
import JukeboxCore
import Glibc
import JukeboxSystem

/// The one loop that owns `State`: it waits on every source of events (the engine's mailbox,
/// signals, the terminal), feeds each event to `reduce` and carries out the commands through
/// the ports. Nothing else mutates the state; the audio threads never wait on this loop.
public final class Runtime {
    /// The player state (read it only from the loop thread or after `run` returned).
    public private(set) var state: State
    /// Where engine threads post events.
    public let mailbox: Mailbox

    private let audio: AudioPort
    /// The state file, its writer (off the loop) and who waits for a save.
    var saving: SaveLedger
    /// Jobs on the tag reader's thread (tags for `add`/`load`/cards, file work) and their waiters.
    let jobs: OffLoopJobs
    let status: StatusSink
    let log: Log
    private var keys: KeyReader
    /// The control socket, the console and MPD: each a room of its own, polled by the loop.
    var faces = Faces()
    /// The panel, if any.
    let display: DisplaySink?
    /// Buttons, encoder, input devices.
    let sources: [EventSource]
    /// What the wiring plugs in (`Hooks`).
    private var hooks = Hooks()
    private var readiness = Readiness()
    /// The cards map's worker (`watchCards`); nil: no cards map.
    public internal(set) var cards: CardMapWorker?
    /// Monotonic seconds: timers, ticks, debounce level reads, watchdog pings, uptime. Injected so
    /// that a test drives time (with `step`) instead of sleeping.
    let clock: () -> Double
    /// When the loop started (monotonic), for uptime.
    let startedAt: Double
    private var times = LoopTimes()
    /// Events a command queued while the loop carries out another's commands.
    private var pending: [Event] = []
    private var exitCode: Int32?
    private var signals = SignalInput()
    private var seedState: UInt64

    /// Seconds an off-loop job (a tag read, a folder listing, a cover read) may go without
    /// progress before it is given up and answered as failed (`JobRunner`); set before the first job.
    public var jobLimit: Double { get { jobs.limit } set { jobs.limit = newValue } }
    /// Reads files, folders and playlists for `add`/`load` (tags are I/O); runs on a thread of
    /// its own, never on the loop.
    public var loadTracks: (@Sendable ([String]) -> (tracks: [TrackInfo], messages: [String]))? { get { jobs.load } set { jobs.load = newValue } }
    /// Reads the picture embedded in a file's tags: its MIME type and bytes, nil when it has none
    /// (MPD's `readpicture`). Called on the tag reader's thread only, like `loadTracks`.
    public var readPicture: (@Sendable (String) -> (type: String, bytes: [UInt8])?)? {
        get { jobs.readPicture }
        set { jobs.readPicture = newValue }
    }
    public var diagnostics: (() -> [String])? { get { hooks.diagnostics } set { hooks.diagnostics = newValue } }
    public var releaseColdPages: (() -> Void)? { get { hooks.releaseColdPages } set { hooks.releaseColdPages = newValue } }
    public var reload: (() -> Settings?)? { get { hooks.reload } set { hooks.reload = newValue } }
    public var version: String { get { hooks.version } set { hooks.version = newValue } }
    /// The music folders `ls --json` lists (`LibraryListing`).
    public var musicFolders: [String] { get { hooks.musicFolders } set { hooks.musicFolders = newValue } }
    /// Tells systemd about readiness, status and liveness (a no-op outside a `Type=notify` unit).
    public var notifier: SystemdNotifier? { get { readiness.notifier } set { readiness.notifier = newValue } }
    /// The state file, its writer, the path for `diag` and the last save (when, its error).
    var writer: StateWriter? { saving.writer }
    var statePath: String? { saving.store?.path }
    var lastSave: (at: Double, error: String?)? { saving.last }
    var mpd: MPDFace? { faces.mpd }

    /// Wires a runtime. `keyInput` is a terminal fd to read keys from, if any. `clock` gives
    /// monotonic seconds (CLOCK_MONOTONIC unless a test drives its own); the loop reads it, and the
    /// poll's timeout is the wait until the nearest deadline on it.
    public init(state: State, audio: AudioPort, store: StateStore?, status: StatusSink, log: Log,
                keyInput: Int32? = nil, mailbox: Mailbox = Mailbox(), control: ControlSocket? = nil,
                display: DisplaySink? = nil, sources: [EventSource] = [], clock: @escaping () -> Double = monotonicNow) {
        self.clock = clock
        self.startedAt = clock()
        self.display = display
        self.sources = sources
        self.state = state
        self.mailbox = mailbox
        self.audio = audio
        saving = SaveLedger(store: store, mailbox: mailbox)
        jobs = OffLoopJobs(mailbox: mailbox)
        self.status = status
        self.log = log
        keys = KeyReader(fd: keyInput)
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        seedState = UInt64(truncatingIfNeeded: ts.tv_nsec) ^ UInt64(truncatingIfNeeded: ts.tv_sec) << 20 ^ UInt64(getpid())
        faces.control = control.map { ControlFace(socket: $0) }
        faces.control?.loop = self
    }

    /// Starts watching the cards map at `path` (read off the loop; the first map arrives as an
    /// event like every later one).
    public func watchCards(path: String) { cards = CardMapWorker(path: path, mailbox: mailbox) }

    /// The serial console, if one is configured: it speaks through its face (`ConsoleFace`).
    public var console: SerialConsole? {
        get { faces.console?.console }
        set {
            faces.console = newValue.map { ConsoleFace(console: $0) }
            faces.console?.loop = self
        }
    }

    deinit {
        jobs.finish()
        faces.mpd?.finish()
        saving.writer?.finish()
    }

    /// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every thread it
    /// creates later), so that they arrive only through the loop's signalfd. Call before any
    /// thread is started.
    public static func blockSignals() { SignalInput.block() }

    /// Runs `Event.started`, then the `initial` events, then loops until a command says exit;
    /// returns the exit code.
    public func run(initial: [Event]) -> Int32 {
        start(initial: initial)
        while step() {}
        return finish()
    }

    /// The first part of `run`: opens the signalfd and runs `Event.started` and the `initial`
    /// events. With `step` and `finish`, for a test that drives the loop one pass at a time on its
    /// own thread (and its time with the clock it gave `init`).
    public func start(initial: [Event]) {
        signals.open()
        times.lastTick = clock()
        // The start is one step to the outside: READY and the first status come once the state
        // is loaded, not for the empty player the first of these events sees.
        readiness.startingUp = true
        // The bookmarks are read before anything can play (a card, a `load` in `initial`); a file
        // that cannot be read sends nothing, so the core never saves over it.
        var bookmarks: [Event] = []
        if let store = saving.store {
            let loaded = BookmarkFile.read(store.bookmarksPath, limit: state.settings.bookmarkLimit)
            for line in loaded.messages { log.warning(line) }
            if let marks = loaded.bookmarks { bookmarks = [.bookmarksLoaded(marks)] }
        }
        for event in [.started] + bookmarks + initial { dispatch(event) }
        readiness.startingUp = false
        if let view = readiness.startView { show(view) }
    }

    /// One pass of the loop: waits for an event or the nearest deadline (with `wait` false, takes
    /// only what is ready now), dispatches what came and every timer due by the clock. Returns
    /// false once a command said exit.
    @discardableResult
    public func step(wait: Bool = true) -> Bool {
        guard exitCode == nil else { return false }
        reportLiveness()
        waitAndDispatch(wait: wait)
        return exitCode == nil
    }

    /// The last part of `run`: the last save reaches the disk, the engine shuts down; the exit code.
    public func finish() -> Int32 {
        notifier?.stopping()
        // The last save (the quit's) is on disk before the process ends; a folder still being
        // read is not waited for.
        jobs.finish(waiting: false)
        faces.mpd?.finish(waiting: false)
        saving.writer?.finish()
        audio.shutdown()
        signals.close()
        return exitCode ?? 0
    }

    /// READY and watchdog pings (`Readiness.report`).
    private func reportLiveness() {
        if readiness.report(playing: state.phase == .playing, clock: clock) {
            log.debug("READY after \(Int((clock() - startedAt) * 1000)) ms")
        }
    }

    private func show(_ view: StatusView) {
        status.render(view)
        notifier?.status(Readiness.systemdStatus(view))
    }

    /// Feeds one event (and any it causes) through `reduce` and carries out the commands.
    public func dispatch(_ event: Event) {
        pending.append(event)
        var started = false
        defer { if started { hooks.releaseColdPages?() } }
        while !pending.isEmpty {
            let next = explained(pending.removeFirst())
            if case .trackStarted = next {
                readiness.sawStart = true
                started = true
            }
            let streaming = faces.streaming
            let buttonsBefore = streaming && Self.movesButtons(next) ? state.buttons : nil
            let commands = reduce(&state, next)
            if streaming, !isQuiet(next) { streamEvent(next) }
            if let before = buttonsBefore {
                for g in ButtonGesture.between(before, state.buttons) {
                    stream("gesture \(g.button.rawValue) \(g.kind.rawValue)", fields: [("button", g.button.rawValue), ("gesture", g.kind.rawValue)])
                }
            }
            if log.level == .debug, !isQuiet(next) || !commands.isEmpty {
                log.debug("\(next) -> \(commands.map(\.brief))")
            }
            for command in commands { perform(command) }
            faces.mpd?.noticeChanges(next)
            if !readiness.readySent && !readiness.startingUp { reportLiveness() }
        }
    }

    // A failed play carries what the file system says about the current track's music: its
    // stick gone, or a folder above it missing. The core decides what that means.
    private func explained(_ event: Event) -> Event {
        guard case .trackFailed(let id, let reason, nil) = event, let track = state.currentTrack else { return event }
        // A stick pulled out leaves its mount point: the folder is there, the music is not.
        if let stick = sources.lazy.compactMap({ ($0 as? USBWatch)?.goneStick(holding: track.info.path) }).first {
            return .trackFailed(playID: id, reason: reason, missing: .stickGone(path: stick))
        }
        guard let folder = StartUp.missingFolder(of: track.info.path) else { return event }
        return .trackFailed(playID: id, reason: reason, missing: .folderGone(folder))
    }

    /// Whether `event` can change a button's gesture state (edges, level reads, gesture timers).
    private static func movesButtons(_ event: Event) -> Bool {
        switch event {
        case .buttonEdge, .buttonLevel, .timerFired(.gesture, _), .timerFired(.doubleTap, _), .timerFired(.debounce, _): return true
        default: return false
        }
    }

    private func isQuiet(_ event: Event) -> Bool {
        switch event {
        case .tick, .heard: return true
        default: return false
        }
    }

    private func perform(_ command: Command) {
        switch command {
        case .startTrack(let id, let path, let at, let paused, let next):
            audio.play(id: id, path: path, from: at, paused: paused, next: next.map { ($0.playID, $0.path) })
        case .setNext(let id, let path): audio.setNext(id: id, path: path)
        case .clearNext: audio.clearNext()
        case .pauseOutput: audio.pause()
        case .resumeOutput: audio.resume()
        case .stopOutput: audio.stop()
        case .releaseDevice(let token): audio.release(token: token)
        case .probeDevice: audio.probe()
        case .grant(let id): grants(id)
        case .seekOutput(let to): audio.seek(to: to)
        case .setVolume(let v): audio.setVolume(v)
        case .persist(let snapshot): saving.writer?.submit(snapshot, queueChanged: true)
        case .persistPlace(let snapshot): saving.writer?.submit(snapshot, queueChanged: false)
        case .persistBookmarks(let marks): saving.writer?.submitBookmarks(marks)
        case .render(let view):
            if readiness.startingUp { readiness.startView = view } else { show(view) }
        case .show(let frame): display?.show(frame)
        case .report(let message): status.report(message)
        case .startTimer(let id, let after): times.timers[id] = clock() + after
        case .cancelTimer(let id): times.timers[id] = nil
        case .readLevel(let button):
            let level = sources.lazy.compactMap { $0.level(of: button) }.first
            pending.append(.buttonLevel(button, pressed: level, at: clock()))
        case .exit(let code): exitCode = code
        // Queued, not dispatched, when it cannot start: this runs while a command is carried out.
        case .loadCard(let card, let paths):
            if let refused = jobs.readCard(card, paths: paths, deliver: { [weak self] in self?.dispatch($0) }) { pending.append(refused) }
        // A swipe after `card assign --next`: the outcome comes back as `Event.cardAssigned`
        // (queued when there is no map: this runs while a command is carried out).
        case .assignCard(let card, let value):
            if let cards {
                cards.assign(id: card, value: value) { [weak self] error in self?.dispatch(.cardAssigned(card: card, value: value, error: error)) }
            } else {
                pending.append(.cardAssigned(card: card, value: value, error: "no cards map is configured"))
            }
        case .loadUSB(let path, let through):
            if let refused = jobs.readStick(path, through: through, deliver: { [weak self] in self?.dispatch($0) }) { pending.append(refused) }
        case .runProgram(let argv):
            if let error = startProgram(argv).error { status.report("cannot run \(argv.first ?? ""): \(error)") }
        }
    }

    // Ticks feed the heard position to the core while it moves (the status and the periodic save
    // keep up), and a panel's frame while it changes with time (scrolling text, an overlay or a
    // message whose time runs out: `DisplayFrame.moves`). A paused or stopped player whose panel
    // shows nothing moving gets no ticks, and the loop sleeps until an event or a timer that is
    // really due (see `nextDeadline`).
    private var tickInterval: Double? {
        if state.phase == .playing { return state.settings.display != nil || status.showsTime ? 0.25 : 1 }
        if let layout = state.settings.display, DisplayFrame.moves(state, layout: layout) { return 0.25 }
        return nil
    }

    /// While playing, when the periodic save falls due and no tick has looked since (nil once one
    /// has: if the core did not save then, e.g. the position did not move, the ticks go on as usual).
    private var saveTickDue: Double? {
        guard state.phase == .playing else { return nil }
        let due = state.placeSaveDue
        return times.lastTick < due ? due : nil
    }

    /// When the loop must wake without an event: the next tick, core timer, panel step, watchdog
    /// ping, idle client to drop or one-a-second check of something that went away; nil: never.
    public func nextDeadline() -> Double? {
        var deadlines: [Double] = Array(times.timers.values)
        if let tickInterval { deadlines.append(times.lastTick + tickInterval) }
        // The periodic save is decided on a tick: one falls due exactly then, not up to a tick late.
        if let save = saveTickDue { deadlines.append(save) }
        if let panel = display?.nextDeadline { deadlines.append(panel) }
        if let interval = notifier?.watchdogInterval { deadlines.append(readiness.lastPing + interval / 2) }
        if let idle = faces.control?.nextDeadline { deadlines.append(idle) }
        deadlines += faces.mpd?.nextDeadline() ?? []
        if let job = jobs.nextDeadline { deadlines.append(job) }
        if needsMaintenance { deadlines.append(times.lastMaintain + 1) }
        return deadlines.min()
    }

    /// Something is missing that only a look once a second finds back: a GPIO chip or an input
    /// device that may be plugged in, a serial console to reopen, the music folder or a readable
    /// state file the core waits for.
    private var needsMaintenance: Bool {
        sources.contains { $0.needsMaintenance }
            || faces.console?.needsMaintenance == true
            || state.awaitedMusicFolder != nil || state.stateUnreadable != nil
    }

    private func waitAndDispatch(wait: Bool) {
        let now = clock()
        let deadline = wait ? nextDeadline() : now
        let timeoutMs = deadline.map { Int32(max(0, min(Double(Int32.max), ($0 - now) * 1000)).rounded(.up)) } ?? -1
        var fds = [pollfd(fd: mailbox.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: keys.closed ? -1 : keys.fd ?? -1, events: Int16(POLLIN), revents: 0)]
        let sourceStart = fds.count
        var owners: [EventSource] = []
        for source in sources {
            for fd in source.fds {
                fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
                owners.append(source)
            }
        }
        let consoleIndex = fds.count
        fds.append(faces.console?.pollFD() ?? pollfd(fd: -1, events: Int16(POLLIN), revents: 0))
        let controlStart = fds.count
        if let control = faces.control { fds += control.pollFDs() }
        let mpdStart = fds.count
        if let mpd = faces.mpd { fds += mpd.listener.pollFDs() }
        let n = poll(&fds, nfds_t(fds.count), timeoutMs)
        if n < 0 && errno != EINTR { log.error("poll: \(errnoText(errno))") }
        if fds[0].revents != 0 {
            for (severity, line) in mailbox.drainLog() { log.write(severity, line) }
            for event in mailbox.drain() {
                // The engine, idle by now, holds the exact frame heard when the device failed: the
                // core must have it before it stops listening to that play's positions.
                if case .deviceUnavailable = event { feedHeard() }
                dispatch(event)
            }
            // After `drain` has reset the eventfd: a result posted meanwhile wakes the next poll.
            for result in mailbox.drainResults() { settle(result) }
            // Once the results (a library's tags among them) are freed: give their pages back.
            faces.mpd?.library?.trimIfDue()
        }
        if fds[1].revents != 0 { readSignals() }
        if fds[2].revents != 0 { readKeys(fds[2].revents) }
        for (i, source) in owners.enumerated() where fds[sourceStart + i].revents != 0 {
            let events = source.read(fd: fds[sourceStart + i].fd)
            if !events.isEmpty { feedHeard() }
            for event in events { dispatch(event) }
        }
        faces.control?.service(Array(fds[controlStart..<mpdStart]))
        if let mpd = faces.mpd { mpd.listener.service(Array(fds[mpdStart...])) }
        faces.console?.service(fds[consoleIndex].revents)
        reapChildren()
        let after = clock()
        display?.tick(now: after)
        if after - times.lastMaintain >= 1 && needsMaintenance {
            times.lastMaintain = after
            for source in sources { source.maintain() }
            faces.console?.maintain()
            probeWhatTheCoreWaitsFor()
        }
        for (id, at) in times.timers where at <= after {
            times.timers[id] = nil
            // The core acts on the position (a release keeps it), so it must be the latest.
            feedHeard()
            dispatch(.timerFired(id, at: after))
        }
        // Without ticks (paused, stopped) the first pass after a long sleep still brings `now` up to date.
        let saveDue = saveTickDue.map { after >= $0 } ?? false
        if after - times.lastTick >= (tickInterval ?? 1) * 0.9 || saveDue {
            times.lastTick = after
            feedHeard()
            feedStream()
            dispatch(.tick(now: after))
        }
        // Jobs handed over on this pass are watched from now; one without progress is given up.
        let end = clock()
        jobs.supervise(now: end)
        faces.mpd?.supervise(now: end)
        // Replies that came from a worker, and `idle` answers to what happened on this pass.
        faces.mpd?.listener.sweep()
    }

    // At most once a second: the music's folder (a stick mounted, a share up) and a state file
    // that could not be read. A stat and an open are cheap; inotify would need a watch per
    // missing level of the path and still a probe for network shares.
    private func probeWhatTheCoreWaitsFor() {
        if let folder = state.awaitedMusicFolder, isDirectory(folder) { dispatch(.musicAppeared) }
        if state.stateUnreadable != nil, let store = saving.store {
            let loaded = store.load()
            guard loaded.unreadable == nil else { return }
            for m in loaded.messages { log.warning(m) }
            log.info("the state file \(store.path) can be read again")
            // The place it holds wins over what played meanwhile; then saving resumes.
            for event in StartUp.events(for: loaded, restoreEmpty: false) { dispatch(event) }
            dispatch(.stateFileUnreadable(nil))
        }
    }

    // A worker's result: a save finished (the core hears it; whoever waits for it is answered), or
    // the tracks of an `add`/`load` were read.
    private func settle(_ result: Mailbox.Result) {
        switch result {
        case .saved(let through, let error):
            let due = saving.finished(through: through, error: error, at: clock())
            dispatch(.saved(error: error))
            for then in due { then(error) }
        case .tracksRead(let id, let tracks, let messages, let marked):
            jobs.tracksRead(id: id, tracks, messages, marked: marked)
            hooks.releaseColdPages?()
        case .workDone(let id, let result):
            jobs.workDone(id: id, result)
        case .chunkRead(let id, let result):
            faces.mpd?.chunkRead(id: id, result)
        case .updateListed(let id, let groups, let problem):
            faces.mpd?.updateListed(id: id, groups, problem: problem)
        case .cards(let report):
            cards?.settle(report, dispatch: dispatch, log: log, status: status)
        }
    }

    /// Calls `then` once every save handed to the writer since number `since` is finished, with
    /// the error of the write that finished it; at once when there is none.
    func afterSaves(since: UInt64, _ then: @escaping (_ error: String?) -> Void) {
        if !saving.wait(since: since, then) { then(nil) }
    }

    /// Waits until the writer has finished every save handed over, then takes its results as
    /// the loop would. For tests and tools that call `dispatch` without running the loop; the
    /// loop itself never waits.
    public func waitForSaves() {
        saving.writer?.waitUntilIdle()
        for result in mailbox.drainResults() { settle(result) }
    }

    /// The number of the last save handed to the writer (0 without one).
    var saveNumber: UInt64 { saving.number }

    func feedHeard() {
        if let p = audio.position() { dispatch(.heard(playID: p.id, seconds: p.seconds)) }
    }

    /// A stream's facts (buffering, titles, reconnecting) reach the core with the ticks, only when
    /// they changed: the core decides what to show and when to give up.
    func feedStream() {
        guard let s = audio.streamStatus() else { return }
        if let last = state.stream, last.playID == s.id, last.status == s.status { return }
        dispatch(.streamStatus(playID: s.id, s.status))
    }

    private func readSignals() {
        for signal in signals.read() {
            switch signal {
            case SIGTERM, SIGINT:
                // The stop is bounded: whatever gets stuck from here, the process ends in 5 s.
                ShutdownWatchdog.shared.arm(signal == SIGTERM ? "SIGTERM" : "SIGINT")
                log.info("signal \(signal == SIGTERM ? "SIGTERM" : "SIGINT"): saving and stopping")
                feedHeard()
                dispatch(.quit)
            case SIGHUP:
                cards?.reload()
                guard let reload = hooks.reload else {
                    log.info("SIGHUP: this player has no configuration file to reload")
                    break
                }
                readiness.notifier?.reloading()
                if let settings = reload() {
                    dispatch(.reconfigured(settings))
                    log.info("SIGHUP: configuration reloaded")
                }
                readiness.notifier?.readyAgain()
            default:
                break
            }
        }
    }

    private func readKeys(_ revents: Int16) {
        let (read, closedNow) = keys.read()
        if closedNow { log.warning("terminal input closed; keys are off") }
        for key in read {
            if let event = KeyMap.event(for: key, settings: state.settings, seed: nextSeed()) {
                feedHeard()
                dispatch(event)
            }
        }
    }

    func nextSeed() -> UInt64 {
        var g = SeededGenerator(seed: seedState)
        seedState = g.next()
        return seedState
    }
}
