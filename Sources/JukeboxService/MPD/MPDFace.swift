// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// The MPD face, a room of its own: the listener and its clients, the sessions' backend, the
/// command table's state (`stats`, the queue's change feed), the library and the stored
/// playlists. Each command becomes the core's events (the same intents the control socket and
/// the console send) or a reply read from the state: the core decides, this only translates. It
/// reaches the loop only through `MPDLoop`; the loop polls its listener like any other source
/// and tells it what each dispatch changed (`noticeChanges`).
final class MPDFace: MPDBackend {
    /// The loop (weakly: the loop owns the face).
    private(set) weak var loop: MPDLoop?
    let settings: MPDSettings
    /// Where relative names and `file:` lines are rooted.
    let musicFolders: [String]
    /// The stored playlists' folder; nil: none.
    let playlists: String?
    /// When the listener opened (the loop's clock), for `stats`' uptime.
    let started: Double
    /// Seconds played before `playingSince`, and when the current stretch of playing began.
    var playedBefore = 0.0
    var playingSince: Double?
    /// Each queue entry's position when last seen, and the queue version at which it was new or
    /// moved (`plchanges` lists those newer than the client's).
    var positions: [UInt64: Int] = [:]
    var changedAt: [UInt64: Int] = [:]
    /// What the clients last saw, to tell which subsystems changed.
    private var seen: MPDWatch
    /// The library index, its updates and cover reads (`MPDLibraryCommands.swift`); nil until
    /// `startLibrary` or the first library command.
    var library: MPDLibraryState?

    /// The loop's clock (kept: the listener reads it too).
    private let clock: () -> Double

    /// The listener and its clients (opened with the face). Sessions hold the face weakly.
    private(set) lazy var listener = MPDListener(settings: settings, clock: clock) { [unowned self] in
        MPDSession(backend: self, known: Self.commandNames, password: settings.password)
    }

    /// Opens the listener of `settings`; `listener.problems` says what could not be opened.
    init(settings: MPDSettings, loop: MPDLoop, musicFolders: [String], playlists: String?) {
        self.settings = settings
        self.loop = loop
        self.musicFolders = musicFolders
        self.playlists = playlists
        clock = loop.clock
        started = loop.clock()
        seen = MPDWatch(loop.state)
        _ = listener
        noteQueueVersion()
    }

    /// The tags jukebox reads (TagLib through `TrackInfo`).
    static let tags = ["Artist", "Album", "Title", "Track", "Disc"]

    /// Every live session (to tell them about changes).
    var sessions: [MPDSession] { listener.sessions }

    func notify(_ changed: Set<MPDSession.Subsystem>) {
        for session in sessions { session.notify(changed) }
    }

    /// After every dispatch: which subsystems the event changed, told to every session.
    func noticeChanges(_ event: Event) {
        guard let loop else { return }
        let now = MPDWatch(loop.state)
        var changed = now.changes(since: seen)
        switch event {
        case .seek, .seekBy, .seekEntry, .setSpeed: changed.insert(.player)
        default: break
        }
        seen = now
        if changed.contains(.playlist) { noteQueueVersion() }
        // `stats`' playtime: the clock is read only when playing starts or ends.
        if (loop.state.phase == .playing) != (playingSince != nil) {
            if let since = playingSince {
                playedBefore += loop.clock() - since
                playingSince = nil
            } else {
                playingSince = loop.clock()
            }
        }
        guard !changed.isEmpty else { return }
        notify(changed)
    }

    /// After every change of the queue: the entries that are new or at a new position get the
    /// new version (what `plchanges` compares against). One pass over the queue per change.
    func noteQueueVersion() {
        guard let state = loop?.state else { return }
        let version = MPDReplies.playlistVersion(state)
        var now: [UInt64: Int] = [:]
        now.reserveCapacity(state.queue.count)
        for (pos, track) in state.queue.enumerated() {
            now[track.id] = pos
            if positions[track.id] != pos { changedAt[track.id] = version }
        }
        for id in changedAt.keys where now[id] == nil { changedAt[id] = nil }
        positions = now
    }

    /// The loop's deadlines for the face: a silent client's timeout, lines waiting for their
    /// turn, a library job to watch.
    func nextDeadline() -> [Double] {
        [listener.nextDeadline(), library?.reader?.nextDeadline].compactMap { $0 }
    }

    /// Watches the library worker's job (given up when it makes no progress).
    func supervise(now: Double) {
        library?.reader?.supervise(now: now)
    }

    /// Stops the library worker (`waiting`: for its job to end).
    func finish(waiting: Bool = true) {
        library?.reader?.finish(waiting: waiting)
    }

    // MARK: helpers the command handlers share

    /// Carries out intents and replies once what they changed is saved (as the control socket's
    /// `ok` does): an OK means the change survives a power cut.
    func intents(_ events: [Event], _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        loop.feedHeard()
        let before = loop.saveNumber
        for event in events { loop.dispatch(event) }
        loop.afterSaves(since: before) { _ in reply(.success([])) }
    }

    /// The queue position `text` names, or nil after replying with MPD's error.
    func position(_ text: String, _ loop: MPDLoop, _ reply: MPDLinesReply) -> Int? {
        guard let p = Int(text), loop.state.queue.indices.contains(p) else {
            reply(.failure(MPDError(.arg, "Bad song index")))
            return nil
        }
        return p
    }

    /// The queue position of the entry with id `text`, or nil after replying with MPD's error.
    func entry(id text: String, _ loop: MPDLoop, _ reply: MPDLinesReply) -> Int? {
        guard let id = UInt64(text), let p = loop.state.queue.firstIndex(where: { $0.id == id }) else {
            reply(.failure(MPDError(.noExist, "No such song")))
            return nil
        }
        return p
    }

    /// Seconds in `text` (finite), or nil after replying with MPD's error.
    func seconds(_ text: String, _ reply: MPDLinesReply) -> Double? {
        guard let t = Double(text), t.isFinite else {
            reply(.failure(MPDError(.arg, "Number expected: \(text)")))
            return nil
        }
        return t
    }

    /// The current track's queue position, if there is one.
    func currentPosition(_ state: State) -> Int? {
        state.currentTrack.flatMap { track in state.queue.firstIndex { $0.id == track.id } }
    }
}

/// What MPD clients watch, to tell which `idle` subsystems an event changed.
struct MPDWatch: Equatable {
    var phase: MPDPlayState
    var current: UInt64?
    var volume: Int
    var repeatMode: RepeatMode
    var shuffle: Bool
    var queueRevision: Int
    /// The chapter playing (a file with chapters): another one is a change of `player`, so a
    /// client waiting in `idle` reads `currentsong`'s `Chapter` again.
    var chapter: Int?

    init(_ state: State) {
        phase = MPDPlayState(state.phase)
        current = state.currentTrack?.id
        volume = state.volume
        repeatMode = state.repeatMode
        shuffle = state.shuffle
        queueRevision = state.queueRevision
        chapter = state.currentChapter?.index
    }

    func changes(since old: MPDWatch) -> Set<MPDSession.Subsystem> {
        var set: Set<MPDSession.Subsystem> = []
        if phase != old.phase || current != old.current || chapter != old.chapter { set.insert(.player) }
        if volume != old.volume { set.insert(.mixer) }
        if repeatMode != old.repeatMode || shuffle != old.shuffle { set.insert(.options) }
        if queueRevision != old.queueRevision { set.insert(.playlist) }
        return set
    }
}
