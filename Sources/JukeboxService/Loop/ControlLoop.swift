// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// The one port through which the faces that speak the control language (the control socket,
/// `ControlFace`; the serial console, `ConsoleFace`) reach the loop: they read the state, hand the
/// core events, wait for saves and grants, and share the answers to the commands that only read
/// or load (`answer`, `answerLater`). `Runtime` is its one implementation; the faces never see
/// the runtime's other parts.
protocol ControlLoop: AnyObject {
    /// The player state (the face reads it; only `dispatch` changes it).
    var state: State { get }
    /// The loop's monotonic clock (what the status counts the sleep timer's time left from).
    var now: Double { get }
    var log: Log { get }
    /// The version and build for `version` and `diag`.
    var version: String { get }
    /// The number of the last save handed to the writer (0 without one).
    var saveNumber: UInt64 { get }
    /// Whether the player saves its state (a state file is configured).
    var saves: Bool { get }
    /// The path of the state file, for `save`'s reply.
    var statePath: String? { get }
    /// Brings the core's position up to the frame heard.
    func feedHeard()
    /// Feeds one event through the core and carries out its commands.
    func dispatch(_ event: Event)
    /// A fresh shuffle seed (for parsing a line).
    func nextSeed() -> UInt64
    /// Calls `then` once every save since number `since` is finished.
    func afterSaves(since: UInt64, _ then: @escaping (_ error: String?) -> Void)
    /// Reads a source's `paths` on the tag reader; false when this player cannot load files.
    func readSource(_ paths: [String], then: @escaping (_ tracks: [TrackInfo], _ messages: [String], _ marked: Bool) -> Void) -> Bool
    /// `ls --json [PATH]` (`LibraryListing`), read off the loop; `reply` gets the line on the
    /// loop. False when this player cannot read files.
    func listLibrary(_ path: String?, from: Int, _ reply: @escaping ([String]) -> Void) -> Bool
    /// `search --json TEXT` (`LibrarySearch`), read off the loop like `listLibrary`.
    func searchLibrary(_ text: String, _ reply: @escaping ([String]) -> Void) -> Bool
    /// `card assign`: false when no cards map is configured.
    func assignCard(id: String?, value: String, _ reply: @escaping ([String]) -> Void) -> Bool
    /// `card delete`: false when no cards map is configured.
    func deleteCard(id: String, _ reply: @escaping ([String]) -> Void) -> Bool
    /// Whether a cards map is configured (`card assign --next` needs one to write to).
    var hasCardsMap: Bool { get }
    /// The lines of `diag`.
    func diagLines() -> [String]
    /// `reload`: the config file read again, as on SIGHUP; the reply line.
    func reloadConfiguration() -> String
    /// `restart`: saves, stops and exits for systemd to start it again; the reply line.
    func restartPlayer() -> String
    /// `update [FOLDER]`: the MPD library index reads the folder again; the reply line.
    func updateLibrary(_ path: String?) -> String
    /// `system --json` (`SystemJSON`), read off the loop; false when this player has no worker.
    func systemFacts(_ reply: @escaping ([String]) -> Void) -> Bool
    /// `bluetooth ACTION ADDRESS [pin PIN]`: bluetoothctl run off the loop (`BluetoothControl`);
    /// false when bluetoothctl is not installed or this player has no worker (`answer` then says why).
    func bluetooth(_ action: BluetoothAction, address: String, pin: String?, _ reply: @escaping ([String]) -> Void) -> Bool
    /// Hands the core `interruptBegan` and calls `granted` once its `Command.grant` comes (the
    /// waiters for one interruption id are granted in turn, whichever face they came from).
    func beginInterruption(id: String, reason: String, granted: @escaping () -> Void)
    /// Hands the core `sourceBegan`; true when it took the source (`granted` is then called once
    /// its grant comes, as for `beginInterruption`), false when it refused it (`state.message`
    /// says why; `granted` is dropped).
    func beginSource(name: String, sender: String, granted: @escaping () -> Void) -> Bool
}

/// Reply lines the faces of the control language share.
enum ControlReply {
    /// The reply to a change whose save failed: no `ok`, as that promises the change is on
    /// disk. The change stands in the player (`done` says what it was), and the core saves it
    /// again until a save succeeds (`State.saveRetry`).
    static func notSaved(_ done: String, _ error: String) -> String {
        "error: \(done), but not saved: \(error); the player keeps it and tries to save it again"
    }
}

extension ControlLoop {
    /// The reply lines for commands that only read or load (shared by the socket and the console);
    /// nil for the ones that need the client (interruptions, events).
    func answer(_ command: ControlCommand) -> [String]? {
        switch command {
        case .statusJSON:
            feedHeard()
            return ["ok " + statusJSON()]
        case .queue(let page):
            let perPage = 20
            let pages = max(1, (state.queue.count + perPage - 1) / perPage)
            guard page <= pages else { return ["error: there " + (pages == 1 ? "is 1 page" : "are \(pages) pages")] }
            let current = state.currentTrack?.id
            let lines = state.queue.enumerated().dropFirst((page - 1) * perPage).prefix(perPage).map { i, t in
                (t.id == current ? "> " : "  ") + "\(i + 1). \(t.info.title)" + (t.info.artist.map { " – \($0)" } ?? "")
                    + "  " + TimeFormat.clock(t.info.duration)
            }
            return lines.map { "  " + $0 } + ["ok queue page \(page)/\(pages), \(state.queue.count) tracks"]
        case .queueJSON(let from):
            return ["ok " + QueueJSON.text(state, from: from)]
        case .add, .load:
            return ["error: this player cannot load files"]
        case .lsJSON, .searchJSON:
            return ["error: this player cannot list files"]
        case .cardAssign, .cardDelete:
            return ["error: no cards map is configured (config \"rfid\")"]
        case .cardsJSON:
            return ["ok " + CardsJSON.text(state)]
        case .bookmarksJSON:
            return ["ok " + CardsJSON.bookmarks(state)]
        case .podcastsJSON:
            return ["ok " + PodcastsJSON.text(state)]
        case .cardAssignNext(let value):
            guard hasCardsMap else { return ["error: no cards map is configured (config \"rfid\")"] }
            let before = state.cards.assignNext
            dispatch(.cardAssignNext(value))
            if value != nil { return ["ok swipe a card now (within \(Int(State.cardAssignWait)) s)"] }
            return before?.stage == .waiting ? ["ok cancelled"] : ["error: no assignment is waiting for a card"]
        case .bookmarkReset(let path):
            let before = state.bookmarks.count
            dispatch(.resetBookmarks(path: path))
            let gone = before - state.bookmarks.count
            guard gone > 0 else { return ["error: " + (path.map { "no bookmark for " + DisplayText.inert(String($0.prefix(200))) } ?? "no bookmarks")] }
            return ["ok \(gone) bookmark\(gone == 1 ? "" : "s") reset"]
        case .save:
            if let reason = state.stateUnreadable { return ["error: not saving: the state file cannot be read (\(reason))"] }
            return ["error: no state file is configured"]
        case .log(let count):
            return log.recent.suffix(count).map { "  " + $0 } + ["ok \(min(count, log.recent.count)) lines"]
        case .version:
            return ["ok " + version]
        case .diag:
            feedHeard()
            return diagLines().map { "  " + $0 } + ["ok"]
        case .reload:
            return [reloadConfiguration()]
        case .restart:
            return [restartPlayer()]
        case .libraryUpdate(let path):
            return [updateLibrary(path)]
        case .systemJSON:
            return ["error: this player cannot read the system's facts"]
        case .bluetooth:
            return ["error: bluetoothctl was not found (Debian's bluez package): cannot pair, trust or forget"]
        case .help:
            return ["ok " + ControlCommand.helpText.split(separator: "\n").joined(separator: " · ")]
        default:
            return nil
        }
    }

    /// Starts the commands whose answer waits for a worker (`add`/`load`: the tag reader, then the
    /// save; `save`: the writer), without blocking the loop; `reply` gets the lines later, on the
    /// loop. False for every other command, and when the player cannot do it (then `answer` says why).
    func answerLater(_ command: ControlCommand, _ reply: @escaping ([String]) -> Void) -> Bool {
        switch command {
        case .add(let path), .load(let path):
            let replace = command == .load(path: path)
            return readSource([path]) { [weak self] tracks, messages, marked in
                guard let self else { return }
                guard !tracks.isEmpty else { return reply(["error: " + (messages.first ?? "nothing to play in \(path)")]) }
                let before = saveNumber
                // A `load` names its source: its bookmark applies (an `add` has none).
                dispatch(replace ? .loadSource(QueueSource(paths: [path], marked: marked), tracks: tracks) : .add(tracks))
                let done = "\(tracks.count) track\(tracks.count == 1 ? "" : "s") " + (replace ? "loaded" : "added")
                afterSaves(since: before) { error in
                    reply(messages.map { "  " + $0 } + [error.map { ControlReply.notSaved(done, $0) } ?? "ok " + done])
                }
            }
        case .lsJSON(let path, let from):
            return listLibrary(path, from: from, reply)
        case .searchJSON(let text):
            return searchLibrary(text, reply)
        case .cardAssign(let id, let value):
            return assignCard(id: id, value: value, reply)
        case .systemJSON:
            return systemFacts(reply)
        case .cardDelete(let id):
            return deleteCard(id: id, reply)
        case .bluetooth(let action, let address, let pin):
            return bluetooth(action, address: address, pin: pin, reply)
        case .save:
            guard saves, state.stateUnreadable == nil else { return false }
            feedHeard()
            let before = saveNumber
            dispatch(.saveRequested)
            afterSaves(since: before) { [weak self] error in
                reply([error.map { "error: \($0)" } ?? "ok saved to \(self?.statePath ?? "")"])
            }
            return true
        default:
            return false
        }
    }

    func statusJSON() -> String { PlayerStatusJSON(state, now: now).text }
}

/// What every face's port needs of the loop itself: the state, the core's one entry, the heard
/// position and fresh seeds. `Runtime` is its one implementation; the ports (`ControlPort`,
/// `MPDPort`) hold it unowned (the loop owns them).
protocol LoopCore: AnyObject {
    /// The player state (only `dispatch` changes it).
    var state: State { get }
    /// Brings the core's position up to the frame heard.
    func feedHeard()
    /// Feeds one event through the core and carries out its commands.
    func dispatch(_ event: Event)
    /// A fresh shuffle seed.
    func nextSeed() -> UInt64
    /// Tells systemd about reloading (`reload`, SIGHUP).
    var notifier: SystemdNotifier? { get }
    /// `restart`: save, stop, exit for systemd to start the player again; the reply line.
    func restartPlayer() -> String
    /// Reads the appliance image's problems file again (at a reload) and hands the core its lines.
    func readSetupProblems()
}

/// What to do when `Command.grant(id)` comes, per interruption id, oldest first, whichever face
/// asked: the socket's and the console's waiters for one id share one queue.
struct GrantWaiters {
    var queues: [String: [() -> Void]] = [:]

    /// The first waiter for `id`'s grant, taken off its queue.
    mutating func take(_ id: String) -> (() -> Void)? {
        guard var queue = queues[id], !queue.isEmpty else { return nil }
        let first = queue.removeFirst()
        queues[id] = queue.isEmpty ? nil : queue
        return first
    }
}

/// The control language's port (`ControlLoop`): it owns the faces that speak it (the control
/// socket's `ControlFace`, the console's `ConsoleFace`), the waiters for interruption grants and
/// the cards map's worker, and reaches the loop only through `LoopCore`, the tag reader
/// (`OffLoopJobs`) and the saves (`SaveLedger`).
final class ControlPort: ControlLoop {
    private unowned let core: LoopCore
    let log: Log
    private let jobs: OffLoopJobs
    private let saving: SaveLedger
    private let clock: () -> Double
    /// When the loop started (monotonic), for uptime.
    private let startedAt: Double
    /// What the wiring told (`Runtime.controlSettings`).
    var settings = ControlSettings()
    var version: String { settings.version }
    /// The cards map's worker (`Runtime.watchCards`); nil: no cards map.
    var cards: CardMapWorker?
    /// The control socket's face, if a socket is open.
    var control: ControlFace? { didSet { control?.loop = self } }
    /// The serial console's face, if one is configured.
    var console: ConsoleFace? { didSet { console?.loop = self } }
    /// The MPD face, for `diag`'s line about it.
    weak var mpd: MPDFace?
    /// Who waits for an interruption's grant, whichever face asked (`beginInterruption`).
    private var grantWaiters = GrantWaiters()

    var now: Double { clock() }
    init(core: LoopCore, log: Log, jobs: OffLoopJobs, saving: SaveLedger, clock: @escaping () -> Double) {
        self.core = core
        self.log = log
        self.jobs = jobs
        self.saving = saving
        self.clock = clock
        startedAt = clock()
    }

    var state: State { core.state }
    func feedHeard() { core.feedHeard() }
    func dispatch(_ event: Event) { core.dispatch(event) }
    func nextSeed() -> UInt64 { core.nextSeed() }
    var saveNumber: UInt64 { saving.number }
    var saves: Bool { saving.writer != nil }
    var statePath: String? { saving.store?.path }

    func afterSaves(since: UInt64, _ then: @escaping (_ error: String?) -> Void) {
        saving.after(since: since, then)
    }

    /// `readTracks` for a source (a card's paths, a `load`): `marked` tells whether one of its
    /// folders holds `LibraryLoader.resumeMarker` (looked for on the tag reader's thread).
    func readSource(_ paths: [String], then: @escaping (_ tracks: [TrackInfo], _ messages: [String], _ marked: Bool) -> Void) -> Bool {
        jobs.read(paths, then: then)
    }

    func listLibrary(_ path: String?, from: Int, _ reply: @escaping ([String]) -> Void) -> Bool {
        let roots = settings.musicFolders
        return jobs.perform({ load in
            // The tags of a folder's files are read once across its pages (`SearchTagCache.tracks`).
            LibraryListing.json(path: path, from: from, roots: roots, load: { SearchTagCache.shared.tracks($0, load: load) })
                .map { FileWorkOutput(lines: ["ok " + $0]) }
                .flatMapError { .success(FileWorkOutput(lines: ["error: " + $0.message])) }
        }, then: { result in
            switch result {
            case .success(let output): reply(output.lines)
            case .failure(let error): reply(["error: " + error.message])
            }
        })
    }

    func searchLibrary(_ text: String, _ reply: @escaping ([String]) -> Void) -> Bool {
        let roots = settings.musicFolders
        return jobs.perform({ load in
            switch LibrarySearch.json(text: text, roots: roots, load: load) {
            case .success(let json): return .success(FileWorkOutput(lines: ["ok " + json]))
            case .failure(let error): return .success(FileWorkOutput(lines: ["error: " + error.message]))
            }
        }, then: { result in
            switch result {
            case .success(let output): reply(output.lines)
            case .failure(let error): reply(["error: " + error.message])
            }
        })
    }

    func assignCard(id: String?, value: String, _ reply: @escaping ([String]) -> Void) -> Bool {
        guard let cards else { return false }
        cards.assign(id: id, value: value, lastUnknown: state.cards.lastUnknown, reply)
        return true
    }

    func deleteCard(id: String, _ reply: @escaping ([String]) -> Void) -> Bool {
        guard let cards else { return false }
        cards.delete(id: id, reply)
        return true
    }

    var hasCardsMap: Bool { cards != nil }

    /// `Command.assignCard` (a swipe after `card assign --next`): the outcome comes back as
    /// `Event.cardAssigned`. Nil once started; without a map, the event that says so (to queue:
    /// this runs while a command is carried out).
    func assignSwiped(_ card: String, value: String) -> Event? {
        guard let cards else { return .cardAssigned(card: card, value: value, error: "no cards map is configured") }
        cards.assign(id: card, value: value) { [weak self] error in self?.dispatch(.cardAssigned(card: card, value: value, error: error)) }
        return nil
    }

    func beginInterruption(id: String, reason: String, granted: @escaping () -> Void) {
        grantWaiters.queues[id, default: []].append(granted)
        feedHeard()
        dispatch(.interruptBegan(id: id, reason: reason))
    }

    func beginSource(name: String, sender: String, granted: @escaping () -> Void) -> Bool {
        let id = OtherSource.interruptionID(name)
        let before = state.interruptions.count
        feedHeard()
        dispatch(.sourceBegan(name: name, sender: sender))
        // The core decides; the count says whether it took the source.
        guard state.interruptions.count > before else { return false }
        grantWaiters.queues[id, default: []].append(granted)
        return true
    }

    /// Carries out `Command.grant(id)`: the first waiter for that interruption learns the device is free.
    func grant(_ id: String) { grantWaiters.take(id)?() }

    /// Whether a face streams `events` (the loop then makes event lines).
    var streaming: Bool { control?.streams == true || console?.streams == true }

    /// Sends what `event` did to every client streaming `events` and to the console when it
    /// streams: its summary (not for ticks and positions heard), then the button gestures it
    /// completed since `buttonsBefore` (`event 04:47:43.250 gesture next long → playing`, which
    /// no event names by itself).
    func stream(_ event: Event, buttonsBefore: [Button: ButtonState]?) {
        if case .cardRead(let id, _) = event {
            stream(event.summary, card: id)
        } else if !event.isRoutine {
            stream(event.summary)
        }
        guard let before = buttonsBefore else { return }
        for g in ButtonGesture.between(before, state.buttons) {
            stream("gesture \(g.button.rawValue) \(g.kind.rawValue)", gesture: g)
        }
    }

    /// Streams `what` as an event line (`EventLine`).
    private func stream(_ what: String, card: String? = nil, gesture: ButtonGesture? = nil) {
        let line = EventLine(time: wallClockText(wallClockNow(), dateAndTime: false), what: what, phase: state.phase.name,
                             card: card, gesture: gesture)
        control?.stream(line)
        console?.stream(line)
    }

    /// SIGHUP's and the `reload` line's work: the cards map and the config file read again; the
    /// policy applies at once (what needs a restart is logged as such). The reply line.
    func reloadConfiguration() -> String {
        cards?.reload()
        core.readSetupProblems()
        guard let reload = settings.reload else {
            log.info("SIGHUP: this player has no configuration file to reload")
            return "error: this player has no configuration file to reload"
        }
        core.notifier?.reloading()
        defer { core.notifier?.readyAgain() }
        guard let read = reload() else {
            return "error: the configuration was not reloaded; the log says why (log 5)"
        }
        core.dispatch(.reconfigured(read.settings))
        log.info("SIGHUP: configuration reloaded")
        return read.reply
    }
    func restartPlayer() -> String { core.restartPlayer() }

    func updateLibrary(_ path: String?) -> String {
        guard let mpd else { return "ok nothing to update: the MPD face is off (the web and `ls` read the folders as they are)" }
        // MPD's URIs are relative to the music folders; the folder must be one of them or inside one.
        var uri = ""
        if let path {
            let folder = Paths.resolve(path, against: "/")
            let roots = settings.musicFolders.map { Paths.resolve($0, against: "/") }
            guard path.hasPrefix("/"), let root = roots.first(where: { Paths.isInside(folder, folder: $0) }) else {
                return "error: not a folder in the music folders: " + DisplayText.inert(String(path.prefix(200)))
            }
            uri = String(folder.dropFirst(root.count).drop { $0 == "/" })
        }
        guard let job = mpd.update(uri) else { return "error: the MPD library's update queue is full; try again later" }
        return "ok updating the MPD library" + (uri.isEmpty ? "" : " under " + DisplayText.inert(uri)) + ": job \(job)"
    }

    func bluetooth(_ action: BluetoothAction, address: String, pin: String?, _ reply: @escaping ([String]) -> Void) -> Bool {
        guard let program = settings.bluetoothctl else { return false }
        // The PIN is not logged: it is the speaker's, as a password is.
        // Which program runs is said by the reply (busctl's adapters, or bluetoothctl's words).
        log.info("bluetooth \(action.rawValue) \(address)" + (pin == nil ? "" : " with a PIN"))
        let adapter = settings.bluetoothAdapter, bus = settings.bluetoothBus
        return jobs.perform({ _ in
            .success(FileWorkOutput(lines: [BluetoothControl.run(program: program, action, address: address, pin: pin, adapter: adapter, bus: bus)]))
        }, then: { [log] result in
            let lines: [String]
            switch result {
            case .success(let output): lines = output.lines
            case .failure(let error): lines = ["error: " + error.message]
            }
            log.info("bluetooth \(action.rawValue) \(address): " + (lines.first ?? ""))
            reply(lines)
        })
    }

    func systemFacts(_ reply: @escaping ([String]) -> Void) -> Bool {
        let folders = settings.musicFolders + (statePath.map { [Paths.directory($0)] } ?? [])
        let version = version, uptime = clock() - startedAt, problems = state.setupProblems
        return jobs.perform({ _ in
            .success(FileWorkOutput(lines: ["ok " + SystemJSON.text(folders: folders, version: version, playerUptime: uptime, setupProblems: problems)]))
        }, then: { result in
            switch result {
            case .success(let output): reply(output.lines)
            case .failure(let error): reply(["error: " + error.message])
            }
        })
    }

    func diagLines() -> [String] {
        var lines = [version, "uptime \(TimeFormat.clock(clock() - startedAt))"]
        if let status = readFileText("/proc/self/status") {
            let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ") }
            lines.append("memory \(rss ?? "?") resident")
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        lines.append("cpu \(Int(cpu * 1000)) ms since start")
        lines.append("player " + StatusView(state).line)
        lines += settings.diagnostics?() ?? []
        lines.append("state file \(statePath ?? "none")" + (saving.last.map { s in
            ", last save \(Int(clock() - s.at)) s ago: " + (s.error ?? "ok")
        } ?? ", not saved yet") + (state.stateUnreadable.map { ", not saving: it cannot be read (\($0))" } ?? ""))
        lines.append("control clients \(control?.clientCount ?? 0)")
        // The appliance image's boot-time problems (`jukebox-setup`), one line each.
        lines += state.setupProblems.map { "setup problem: " + $0 }
        if let mpd { lines.append("mpd on \(mpd.listener.listening.joined(separator: ", ")), \(mpd.listener.clients.count) clients") }
        return lines
    }
}
