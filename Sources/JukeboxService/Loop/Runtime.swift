// SPDX-License-Identifier: MIT
import CLinux
import JukeboxCore
import Glibc
import JukeboxSystem

/// The one loop that owns `State`: it waits on every source of events (the engine's mailbox,
/// signals, the terminal), feeds each event to `reduce` and carries out the commands through
/// the ports. Nothing else mutates the state; the audio threads never wait on this loop.
public final class Runtime: LoopCore {
    /// The player state (read it only from the loop thread or after `run` returned).
    public private(set) var state: State
    /// Where engine threads post events.
    public let mailbox: Mailbox

    /// The engine, the status, the panel and the sources of events.
    private let adapters: Adapters
    /// The state file, its writer (off the loop) and who waits for a save.
    private let saving: SaveLedger
    /// Jobs on the tag reader's thread (tags for `add`/`load`/cards, file work) and their waiters.
    private let jobs: OffLoopJobs
    let log: Log
    /// Signals and a terminal's keys.
    private var inputs: LoopInputs
    /// The control socket, the console and MPD, each behind its port, polled by the loop.
    private var faces: Faces!
    /// What the wiring plugs in (`Hooks`).
    private var hooks = Hooks()
    private var readiness = Readiness()
    /// Monotonic seconds: timers, ticks, debounce level reads, watchdog pings, uptime. Injected so
    /// that a test drives time (with `step`) instead of sleeping.
    private let clock: () -> Double
    private var times = LoopTimes()
    /// Events a command queued while the loop carries out another's commands.
    private var pending: [Event] = []
    private var exitCode: Int32?
    /// `restart` asked: the quit's exit code is `Runtime.restartExitCode`, for systemd to start it again.
    private var restartAsked = false
    /// The looks at the music the core waits for, off the loop.
    private var music: MusicWatch!
    /// The reads of a state file that could not be read, off the loop.
    private var stateFile: StateFileWatch!
    /// What the player exits with after `restart` (EX_TEMPFAIL): the unit's Restart=on-failure starts it again.
    public static let restartExitCode: Int32 = 75

    /// Seconds an off-loop job (a tag read, a folder listing, a cover read) may go without
    /// progress before it is given up and answered as failed (`JobRunner`); set before the first job.
    public var jobLimit: Double { get { jobs.limit } set { jobs.limit = newValue } }
    /// Reads files, folders and playlists for `add`/`load` (tags are I/O); runs on a thread of
    /// its own, never on the loop.
    public var loadTracks: (@Sendable ([String]) -> (tracks: [TrackInfo], messages: [String]))? { get { jobs.load } set { jobs.load = newValue } }
    /// Reads the picture embedded in a file's tags: its MIME type and bytes, nil when it has none
    /// (MPD's `readpicture`). Called on the tag reader's thread only, like `loadTracks`.
    public var readPicture: (@Sendable (String) -> (type: String, bytes: [UInt8])?)? { get { jobs.readPicture } set { jobs.readPicture = newValue } }
    /// Measures an untagged file's loudness (the audio adapter's scanner), on the loudness
    /// worker's thread only; nil: nothing is measured (every `measureLoudness` is answered with no gain).
    public var measureLoudness: LoudnessWorker.Measure? { get { jobs.measureLoudness } set { jobs.measureLoudness = newValue } }
    /// The loudness cache file (`LoudnessCache`; the wiring puts it beside the state file); nil: none.
    public var loudnessCachePath: String? { get { jobs.loudnessCachePath } set { jobs.loudnessCachePath = newValue } }
    public var releaseColdPages: (() -> Void)? { get { hooks.releaseColdPages } set { hooks.releaseColdPages = newValue } }
    /// Chooses the sound device the next opening uses (`Command.routeOutput`; `RoutedOutput`).
    public var routeOutput: ((OutputRoute) -> Void)? { get { hooks.routeOutput } set { hooks.routeOutput = newValue } }
    /// What the control language's port is told (`ControlSettings`): the version, the music
    /// folders, the Bluetooth tools, `diag`'s lines, the reload.
    public var controlSettings: ControlSettings { get { control.settings } set { control.settings = newValue } }
    /// Sets the Bluetooth speaker's own volume, 0–127 (`take`: its PCM's soft volume turned off
    /// first), off the loop (`Command.takeBluetoothVolume`, `setBluetoothVolume`;
    /// `BluetoothSpeakerSource.setVolume`); an answer it has at once is dispatched. Nil: the
    /// speaker's volume is never taken and the samples are scaled.
    public var bluetoothVolume: ((_ level: Int, _ take: Bool) -> Event?)? { get { hooks.bluetoothVolume } set { hooks.bluetoothVolume = newValue } }
    /// Reads the wall clock as local time and whether it is synchronised (`WallClock.read`; a test
    /// gives its own). Read on every pass of the loop while parental rules are configured, and
    /// sent to the core (`Event.wallClock`) when either changed.
    public var wallClock: (() -> (time: LocalTime, synchronized: Bool))? { get { hooks.wallClock } set { hooks.wallClock = newValue } }
    /// Tells systemd about readiness, status and liveness (a no-op outside a `Type=notify` unit).
    public var notifier: SystemdNotifier? { get { readiness.notifier } set { readiness.notifier = newValue } }
    /// The cards map's worker (`watchCards`); nil: no cards map.
    public var cards: CardMapWorker? { control.cards }
    /// The control language's port: the control socket's and the console's faces.
    var control: ControlPort { faces.control }

    /// Wires a runtime. `keyInput` is a terminal fd to read keys from, if any. `clock` gives
    /// monotonic seconds (CLOCK_MONOTONIC unless a test drives its own); the loop reads it, and the
    /// poll's timeout is the wait until the nearest deadline on it.
    public init(state: State, audio: AudioPort, store: StateStore?, status: StatusSink, log: Log,
                keyInput: Int32? = nil, mailbox: Mailbox = Mailbox(), control: ControlSocket? = nil,
                display: DisplaySink? = nil, sources: [EventSource] = [], clock: @escaping () -> Double = monotonicNow) {
        self.clock = clock
        readiness.startedAt = clock()
        adapters = Adapters(audio: audio, status: status, display: display, sources: sources)
        self.state = state
        self.mailbox = mailbox
        saving = SaveLedger(store: store, mailbox: mailbox)
        jobs = OffLoopJobs(mailbox: mailbox)
        self.log = log
        inputs = LoopInputs(keys: KeyReader(fd: keyInput))
        faces = Faces(control: ControlPort(core: self, log: log, jobs: jobs, saving: saving, clock: clock))
        faces.control.control = control.map { ControlFace(socket: $0) }
        music = MusicWatch(core: self, jobs: jobs, log: log)
        stateFile = StateFileWatch(core: self, jobs: jobs, log: log)
    }

    /// stat(2) for the looks at the music the core waits for (`MusicWatch`); a test holds it to
    /// see the loop go on meanwhile.
    var statMusic: MusicWatch.Stat {
        get { music.stat }
        set { music.stat = newValue }
    }

    /// Reads the state file again while it cannot be read (`StateFileWatch`); a test holds it to
    /// see the loop go on meanwhile.
    var loadStateFile: StateFileWatch.Load {
        get { stateFile.load }
        set { stateFile.load = newValue }
    }

    /// The appliance image's problems file (config `setupProblems`); nil: none is read.
    public var setupProblemsPath: String?

    /// Reads the problems file; a test holds it to see the loop go on meanwhile.
    public var readSetupProblemsFile: @Sendable (String) -> (lines: [String], error: String?) = { SetupProblemsFile.read($0) }
    private let setupProblemsReads = SetupProblemsReads()

    /// Reads the problems file (`SetupProblemsFile`, bounded) on a thread of its own, never on
    /// the loop: its path is the config's, and a file on a stuck disk must not stop the player.
    /// The core gets its lines through the mailbox; one that cannot be read is logged, and is
    /// itself the one line shown. Only the newest read is heard: an older one still going (a dead
    /// disk) is left to end by itself, and its lines are dropped.
    func readSetupProblems() {
        guard let path = setupProblemsPath else { return }
        let read = readSetupProblemsFile, mailbox = self.mailbox, reads = setupProblemsReads
        let generation = reads.next()
        NativeThread(name: "jukebox-setup") {
            let got = read(path)
            reads.ifNewest(generation) {
                if let error = got.error { mailbox.postLog(.warning, "the setup problems file cannot be read: \(error)") }
                mailbox.post(.setupProblems(got.lines))
            }
        }.detach()
    }

    /// Where podcast feeds are fetched (`Command.fetchPodcast`); nil: this player fetches none.
    public var podcasts: PodcastPort? { get { hooks.podcasts } set { hooks.podcasts = newValue } }
    /// Reads the podcasts file at start, on a thread of its own (`PodcastFile.read`; a test holds
    /// it to see the loop go on meanwhile).
    public var readPodcasts: @Sendable (String) -> PodcastFile.Loaded = { PodcastFile.read($0) }
    private var podcastsReader: NativeThread?

    /// Starts watching the cards map at `path` (read off the loop; the first map arrives as an
    /// event like every later one).
    public func watchCards(path: String) { control.cards = CardMapWorker(path: path, mailbox: mailbox) }

    /// The serial console, if one is configured: it speaks through its face (`ConsoleFace`).
    public var console: SerialConsole? {
        get { control.console?.console }
        set { control.console = newValue.map { ConsoleFace(console: $0) } }
    }

    /// Opens the MPD face behind its port (`Faces.openMPD`); returns one line per address it could
    /// not listen on (the player plays on without them).
    public func openMPD(_ settings: MPDSettings, musicFolders: [String] = [], playlists: String? = nil) -> [String] {
        faces.openMPD(MPDPort(core: self, log: log, mailbox: mailbox, clock: clock, jobs: jobs, saving: saving),
                      settings, musicFolders: musicFolders, playlists: playlists)
    }

    /// Builds the MPD library index of the music folders off the loop (when the MPD face is on);
    /// call once `loadTracks` is set. Playback does not wait for it.
    public func startMPDLibrary() { faces.mpd?.startLibrary() }

    /// Where the MPD listener listens (nil when it is off).
    public var mpdListening: [String]? { faces.mpd?.listener.listening }

    deinit {
        jobs.finish()
        faces?.finish()
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
        inputs.signals.open()
        times.lastTick = clock()
        // The start is one step to the outside: READY and the first status come once the state
        // is loaded, not for the empty player the first of these events sees.
        readiness.startingUp = true
        // The bookmarks are read before anything can play (a card, a `load` in `initial`); a file
        // that cannot be read sends nothing, so the core never saves over it.
        let bookmarks = saving.store.map { StartUp.bookmarks($0, limit: state.settings.bookmarkLimit, log: log) } ?? []
        dispatch(.started)
        // The time before the saved state: a restored count meets the day it is read on.
        feedWallClock()
        if let store = saving.store { readPodcastsFile(store.podcastsPath) }
        readSetupProblems()
        for event in bookmarks + initial { dispatch(event) }
        readiness.startingUp = false
        if let view = readiness.startView { show(view) }
    }

    /// Reads the podcasts file on a thread of its own (`jukebox-podfile`), not on the loop: 11.7 MB
    /// for 10 podcasts of 5,000 episodes took 1.5 s to read in a debug build. The core knows it is
    /// being read (`podcastsReading`; a `podcast NAME` meanwhile waits for it) and gets what it
    /// holds through the mailbox, its problems logged; nil when it cannot be read (then the core
    /// never saves over it).
    private func readPodcastsFile(_ path: String) {
        dispatch(.podcastsReading)
        let read = readPodcasts, mailbox = self.mailbox
        podcastsReader = NativeThread(name: "jukebox-podfile") {
            let loaded = read(path)
            for line in loaded.messages { mailbox.postLog(.warning, line) }
            mailbox.post(.podcastsLoaded(loaded.podcasts))
        }
    }

    /// One pass of the loop: waits for an event or the nearest deadline (with `wait` false, takes
    /// only what is ready now), dispatches what came and every timer due by the clock. Returns
    /// false once a command said exit.
    @discardableResult public func step(wait: Bool = true) -> Bool {
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
        hooks.podcasts?.finish()
        // A read still going (a file on a dead disk) is not waited for.
        podcastsReader?.detach()
        faces.finish(waiting: false)
        saving.writer?.finish()
        adapters.audio.shutdown()
        inputs.signals.close()
        return restartAsked && (exitCode ?? 0) == 0 ? Self.restartExitCode : exitCode ?? 0
    }

    /// `restart`: saves and stops as on SIGTERM, then exits with `restartExitCode`.
    func restartPlayer() -> String {
        log.info("restart asked: saving and exiting \(Self.restartExitCode) for systemd to start the player again")
        restartAsked = true
        feedHeard()
        dispatch(.quit)
        return "ok restarting"
    }

    /// READY and watchdog pings (`Readiness.report`).
    private func reportLiveness() {
        if readiness.report(playing: state.phase == .playing, clock: clock) {
            log.debug("READY after \(Int((clock() - readiness.startedAt) * 1000)) ms")
        }
    }

    private func show(_ view: StatusView) {
        adapters.status.render(view)
        notifier?.status(Readiness.systemdStatus(view))
    }

    /// Feeds one event (and any it causes) through `reduce` and carries out the commands.
    public func dispatch(_ event: Event) {
        pending.append(event)
        var started = false
        defer { if started { hooks.releaseColdPages?() } }
        while !pending.isEmpty {
            let next = StartUp.withFacts(pending.removeFirst(), state: state, sources: adapters.sources)
            if case .trackStarted = next {
                readiness.sawStart = true
                started = true
            }
            let streaming = control.streaming
            let buttonsBefore = streaming && next.movesButtons ? state.buttons : nil
            let commands = reduce(&state, next)
            if streaming { control.stream(next, buttonsBefore: buttonsBefore) }
            if log.level == .debug, !next.isRoutine || !commands.isEmpty {
                log.debug("\(next) -> \(commands.map(\.brief))")
            }
            for command in commands { perform(command) }
            faces.mpd?.noticeChanges(next)
            if !readiness.readySent && !readiness.startingUp { reportLiveness() }
        }
    }

    private func perform(_ command: Command) {
        switch command {
        case .startTrack, .setNext, .setSpeed, .clearNext, .pauseOutput, .resumeOutput, .stopOutput, .releaseDevice, .probeDevice, .seekOutput,
             .setVolume:
            adapters.audio.carryOut(command)
        case .routeOutput(let output): hooks.routeOutput?(output)
        case .takeBluetoothVolume(let level): if let answer = hooks.bluetoothVolume?(level, true) { pending.append(answer) }
        case .setBluetoothVolume(let level): if let answer = hooks.bluetoothVolume?(level, false) { pending.append(answer) }
        case .grant(let id): control.grant(id)
        case .persist, .persistPlace, .persistBookmarks, .persistPodcasts: saving.writer?.carryOut(command)
        case .fetchPodcast(let name, let url): hooks.podcasts?.fetch(name: name, url: url)
        case .downloadEpisode(let name, let id, let url, let file, let maxBytes):
            if let podcasts = hooks.podcasts { podcasts.download(name: name, id: id, url: url, file: file, maxBytes: maxBytes) } else {
                pending.append(.episodeDownloadFailed(name: name, id: id, reason: "this player downloads no episodes"))
            }
        case .deleteEpisodeFile(let path): hooks.podcasts?.delete(path: path)
        case .render(let view): if readiness.startingUp { readiness.startView = view } else { show(view) }
        case .show(let frame): adapters.display?.show(frame)
        case .report(let message): adapters.status.report(message)
        case .startTimer(let id, let after): times.timers[id] = clock() + after
        case .cancelTimer(let id): times.timers[id] = nil
        case .readLevel(let button): pending.append(.buttonLevel(button, pressed: adapters.level(of: button), at: clock()))
        case .disconnectBluetooth(let address):
            // Off the loop, as a person's `bluetooth disconnect` (which logs what bluetoothctl said).
            if !control.bluetooth(.disconnect, address: address, pin: nil, { _ in }) {
                log.warning("bluetooth: cannot disconnect \(address): no bluetoothctl (Debian's bluez package)")
            }
        case .exit(let code): exitCode = code
        // Queued, not dispatched, when it cannot start: this runs while a command is carried out.
        case .loadCard(let card, let paths):
            if let refused = jobs.readCard(card, paths: paths, deliver: { [weak self] in self?.dispatch($0) }) { pending.append(refused) }
        case .assignCard(let card, let value): if let refused = control.assignSwiped(card, value: value) { pending.append(refused) }
        case .loadUSB(let path, let through):
            if let refused = jobs.readStick(path, through: through, deliver: { [weak self] in self?.dispatch($0) }) { pending.append(refused) }
        case .measureLoudness(let path): if let refused = jobs.measureLoudness(path) { pending.append(refused) }
        case .runProgram(let argv):
            // After the saves handed over before it (the core puts it behind its step's save): a
            // power command must find the place on disk, whatever it does to the power.
            saving.after(since: 0) { [weak self] _ in
                if let error = startProgram(argv).error { self?.adapters.status.report("cannot run \(argv.first ?? ""): \(error)") }
            }
        }
    }

    // The ticks and the periodic save's tick are the core's to time (`State.tickInterval`).
    private var tickInterval: Double? { state.tickInterval(showsTime: adapters.status.showsTime) }
    private var saveTickDue: Double? { state.saveTickDue(lastTick: times.lastTick) }

    /// When the loop must wake without an event: the next tick, core timer, panel step, watchdog
    /// ping, idle client to drop or one-a-second check of something that went away; nil: never.
    public func nextDeadline() -> Double? {
        var deadlines: [Double] = Array(times.timers.values)
        if let tickInterval { deadlines.append(times.lastTick + tickInterval) }
        // The periodic save is decided on a tick: one falls due exactly then, not up to a tick late.
        if let save = saveTickDue { deadlines.append(save) }
        if let panel = adapters.display?.nextDeadline { deadlines.append(panel) }
        if let interval = notifier?.watchdogInterval { deadlines.append(readiness.lastPing + interval / 2) }
        deadlines += faces.deadlines
        if let job = jobs.nextDeadline { deadlines.append(job) }
        if needsMaintenance { deadlines.append(times.lastMaintain + 1) }
        return deadlines.min()
    }

    /// Something is missing that only a look once a second finds back: a GPIO chip or an input
    /// device that may be plugged in, a serial console to reopen, the music folder (or the music
    /// in the configured folders) or a readable state file the core waits for.
    private var needsMaintenance: Bool {
        adapters.sources.contains { $0.needsMaintenance } || faces.needsMaintenance
            || music.isNeeded || stateFile.isNeeded
    }

    private func waitAndDispatch(wait: Bool) {
        let now = clock()
        let deadline = wait ? nextDeadline() : now
        let timeoutMs = deadline.map { Int32(max(0, min(Double(Int32.max), ($0 - now) * 1000)).rounded(.up)) } ?? -1
        var fds = [pollfd(fd: mailbox.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inputs.signals.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inputs.keys.closed ? -1 : inputs.keys.fd ?? -1, events: Int16(POLLIN), revents: 0)]
        let sourceStart = fds.count, (sourceFDs, owners) = adapters.pollFDs()
        fds += sourceFDs
        let facesStart = fds.count, (faceFDs, controlCount) = faces.pollFDs()
        fds += faceFDs
        let n = poll(&fds, nfds_t(fds.count), timeoutMs)
        if n < 0 && errno != EINTR { log.error("poll: \(errnoText(errno))") }
        // Before anything this pass brings: a play is judged at the time it is asked for.
        feedWallClock()
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
        if fds[2].revents != 0 { readKeys() }
        for (i, source) in owners.enumerated() where fds[sourceStart + i].revents != 0 {
            let events = source.read(fd: fds[sourceStart + i].fd)
            if !events.isEmpty { feedHeard() }
            for event in events { dispatch(event) }
        }
        faces.service(fds[facesStart...], controlCount: controlCount)
        reapChildren()
        let after = clock()
        adapters.display?.tick(now: after)
        if after - times.lastMaintain >= 1 && needsMaintenance {
            times.lastMaintain = after
            for source in adapters.sources { source.maintain() }
            faces.maintain()
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
        faces.endPass(now: end)
    }

    // At most once a second: the music the core waits for (`MusicWatch`) and a state file that
    // could not be read (`StateFileWatch`), both off the loop. inotify would need a watch per
    // missing level of a path and still a probe for network shares.
    private func probeWhatTheCoreWaitsFor() {
        music.look()
        if let store = saving.store { stateFile.look(store) }
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
        case .chunkRead, .updateListed:
            faces.mpd?.settle(result)
        case .cards(let report):
            control.cards?.settle(report, dispatch: dispatch, log: log, status: adapters.status)
        }
    }

    /// Waits until the writer has finished every save handed over, then takes its results as
    /// the loop would. For tests and tools that call `dispatch` without running the loop; the
    /// loop itself never waits.
    public func waitForSaves() {
        saving.writer?.waitUntilIdle()
        for result in mailbox.drainResults() { settle(result) }
    }

    func feedHeard() {
        if let p = adapters.audio.position() { dispatch(.heard(playID: p.id, seconds: p.seconds)) }
    }

    /// The wall clock, when parental rules are configured and it changed (a new minute, the
    /// kernel's synchronisation): a `localtime_r` and an `adjtimex` a pass, no file read.
    func feedWallClock() {
        guard !state.settings.parental.isEmpty, let reading = hooks.newWallClock() else { return }
        dispatch(.wallClock(reading.time, synchronized: reading.synchronized))
    }

    /// A stream's facts (buffering, titles, reconnecting) reach the core with the ticks, only when
    /// they changed: the core decides what to show and when to give up.
    func feedStream() {
        guard let s = adapters.audio.streamStatus() else { return }
        if let last = state.stream, last.playID == s.id, last.status == s.status { return }
        dispatch(.streamStatus(playID: s.id, s.status))
    }

    private func readSignals() {
        for signal in inputs.signals.read() {
            if signal == SIGHUP { _ = control.reloadConfiguration() }
            guard signal == SIGTERM || signal == SIGINT else { continue }
            let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
            // The stop is bounded: whatever gets stuck from here, the process ends in 5 s.
            ShutdownWatchdog.shared.arm(name)
            log.info("signal \(name): saving and stopping")
            feedHeard()
            dispatch(.quit)
        }
    }

    private func readKeys() {
        let (read, closedNow) = inputs.keys.read()
        if closedNow { log.warning("terminal input closed; keys are off") }
        // Only the steps of the settings are read, and no key changes them.
        for event in read.compactMap({ KeyMap.event(for: $0, settings: state.settings, seed: nextSeed()) }) {
            feedHeard()
            dispatch(event)
        }
    }

    func nextSeed() -> UInt64 { inputs.nextSeed() }
}
