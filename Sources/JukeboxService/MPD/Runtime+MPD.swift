// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

// The MPD face on the loop: each command becomes the core's events (the same intents the
// control socket and the console send) or a reply read from the state. The core decides; this
// only translates. Sessions hear about changes through `noticeMPDChanges` after every dispatch.
extension Runtime {
    /// The MPD commands carried out here (the session answers `idle`, `password`, `ping`...).
    static let mpdCommands = ["add", "clear", "consume", "crossfade", "currentsong", "decoders", "delete", "deleteid",
                              "getvol", "mixrampdb", "mixrampdelay", "next", "outputs", "pause", "play", "playid",
                              "playlistid", "playlistinfo", "previous", "random", "repeat", "replay_gain_mode",
                              "replay_gain_status", "seek", "seekcur", "seekid", "setvol", "single", "stats", "status",
                              "stop", "tagtypes", "urlhandlers", "volume"]
        + mpdQueueCommands + mpdPlaylistCommands + mpdLibraryCommands

    /// Opens the MPD listener; returns one line per address it could not listen on (the player
    /// plays on without them). `musicFolders` are where relative `add` names and `file:` lines
    /// are rooted; `playlists` is the stored playlists' folder (nil: none, the commands refuse).
    public func openMPD(_ settings: MPDSettings, musicFolders: [String] = [], playlists: String? = nil) -> [String] {
        let face = MPDFace(runtime: self, started: clock(), playlists: playlists)
        mpdFace = face
        mpdMusicFolders = musicFolders
        noteMPDQueueVersion()
        let listener = MPDListener(settings: settings, clock: clock) {
            MPDSession(backend: face, known: Runtime.mpdCommands, password: settings.password)
        }
        mpd = listener
        mpdSeen = MPDWatch(state)
        return listener.problems
    }

    /// The tags jukebox reads (TagLib through `TrackInfo`).
    static let mpdTags = ["Artist", "Album", "Title", "Track", "Disc"]

    /// Where the MPD listener listens (nil when it is off).
    public var mpdListening: [String]? { mpd?.listening }

    /// After every dispatch: which MPD subsystems the event changed, told to every session.
    func noticeMPDChanges(_ event: Event) {
        guard let mpd else { return }
        let now = MPDWatch(state)
        var changed = mpdSeen.map { now.changes(since: $0) } ?? []
        switch event {
        case .seek, .seekBy: changed.insert(.player)
        default: break
        }
        mpdSeen = now
        if changed.contains(.playlist) { noteMPDQueueVersion() }
        // `stats`' playtime: the clock is read only when playing starts or ends.
        if let face = mpdFace, (state.phase == .playing) != (face.playingSince != nil) {
            if let since = face.playingSince {
                face.playedBefore += clock() - since
                face.playingSince = nil
            } else {
                face.playingSince = clock()
            }
        }
        guard !changed.isEmpty else { return }
        for session in mpd.sessions { session.notify(changed) }
    }

    func mpdRun(_ r: MPDRequest, _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        func fail(_ code: MPDError.Code, _ message: String) { reply(.failure(MPDError(code, message))) }
        func args(_ counts: ClosedRange<Int>) -> Bool {
            if counts.contains(r.args.count) { return true }
            fail(.arg, "wrong number of arguments for \"\(r.name)\"")
            return false
        }
        func position(_ text: String) -> Int? {
            guard let p = Int(text), state.queue.indices.contains(p) else { fail(.arg, "Bad song index"); return nil }
            return p
        }
        func entry(id text: String) -> Int? {
            guard let id = UInt64(text), let p = state.queue.firstIndex(where: { $0.id == id }) else {
                fail(.noExist, "No such song")
                return nil
            }
            return p
        }
        func flag(_ text: String) -> Bool? {
            switch text {
            case "0": return false
            case "1": return true
            default: fail(.arg, "Boolean (0/1) expected: \(text)"); return nil
            }
        }
        func seconds(_ text: String) -> Double? {
            guard let t = Double(text), t.isFinite else { fail(.arg, "Number expected: \(text)"); return nil }
            return t
        }
        func seekTo(_ pos: Int, _ t: Double) {
            let current = state.currentTrack?.id == state.queue[pos].id
            mpdIntents(current ? [.seek(to: t)] : [.playEntry(at: pos), .seek(to: t)], reply)
        }
        switch r.name {
        case "status":
            guard args(0...0) else { return }
            feedHeard()
            reply(.success(MPDReplies.status(state)))
        case "currentsong":
            guard args(0...0) else { return }
            guard let track = state.currentTrack, let pos = state.queue.firstIndex(where: { $0.id == track.id }) else {
                return reply(.success([]))
            }
            reply(.success(MPDReplies.song(track, pos: pos, roots: mpdMusicFolders)))
        case "play":
            guard args(0...1) else { return }
            if r.args.isEmpty || r.args[0] == "-1" { return mpdIntents([.play], reply) }
            guard let p = position(r.args[0]) else { return }
            mpdIntents([.playEntry(at: p)], reply)
        case "playid":
            guard args(0...1) else { return }
            if r.args.isEmpty || r.args[0] == "-1" { return mpdIntents([.play], reply) }
            guard let p = entry(id: r.args[0]) else { return }
            mpdIntents([.playEntry(at: p)], reply)
        case "pause":
            guard args(0...1) else { return }
            if r.args.isEmpty { return mpdIntents([.togglePlayPause], reply) }
            guard let on = flag(r.args[0]) else { return }
            mpdIntents([on ? .pause : .play], reply)
        case "stop", "next", "previous":
            guard args(0...0) else { return }
            mpdIntents([r.name == "stop" ? .stop : r.name == "next" ? .next : .previous], reply)
        case "seekcur":
            guard args(1...1) else { return }
            let text = r.args[0]
            guard let t = seconds(text) else { return }
            feedHeard()
            mpdIntents([text.hasPrefix("+") || text.hasPrefix("-") ? .seekBy(t) : .seek(to: t)], reply)
        case "seek", "seekid":
            guard args(2...2) else { return }
            guard let p = r.name == "seek" ? position(r.args[0]) : entry(id: r.args[0]), let t = seconds(r.args[1]) else { return }
            seekTo(p, t)
        case "setvol":
            guard args(1...1) else { return }
            guard let v = Int(r.args[0]), (0...100).contains(v) else { return fail(.arg, "Invalid volume value") }
            mpdIntents([.setVolume(v)], reply)
        case "volume":
            guard args(1...1) else { return }
            guard let v = Int(r.args[0]), (-100...100).contains(v) else { return fail(.arg, "Invalid volume value") }
            mpdIntents([.changeVolume(by: v)], reply)
        case "getvol":
            guard args(0...0) else { return }
            reply(.success(["volume: \(state.volume)"]))
        case "repeat", "random", "single", "consume":
            guard args(1...1) else { return }
            modes(r.name, r.args[0], reply)
        case "playlistinfo":
            guard args(0...1) else { return }
            guard let range = r.args.first.map({ MPDReplies.range($0, count: state.queue.count) }) ?? 0..<state.queue.count else {
                return fail(.arg, "Bad song index")
            }
            // A single position past the end is an error, as in MPD; a range is clamped.
            if r.args.first.map({ !$0.contains(":") }) == true, !state.queue.indices.contains(range.lowerBound) {
                return fail(.arg, "Bad song index")
            }
            reply(.success(MPDReplies.songs(state, range, roots: mpdMusicFolders)))
        case "playlistid":
            guard args(0...1) else { return }
            guard let first = r.args.first else { return reply(.success(MPDReplies.songs(state, 0..<state.queue.count, roots: mpdMusicFolders))) }
            guard let p = entry(id: first) else { return }
            reply(.success(MPDReplies.song(state.queue[p], pos: p, roots: mpdMusicFolders)))
        case "add":
            guard args(1...1) else { return }
            add(r.args[0], reply)
        case "clear":
            guard args(0...0) else { return }
            mpdIntents([.clear], reply)
        case "delete":
            guard args(1...1) else { return }
            guard let range = MPDReplies.range(r.args[0], count: state.queue.count),
                  range.lowerBound < state.queue.count, range.upperBound <= state.queue.count else {
                return fail(.arg, "Bad song index")
            }
            // From the end, so each index still names the entry it named when asked.
            mpdIntents(range.reversed().map { .remove(at: $0) }, reply)
        case "deleteid":
            guard args(1...1) else { return }
            guard let p = entry(id: r.args[0]) else { return }
            mpdIntents([.remove(at: p)], reply)
        case "tagtypes":
            // `clear`/`all`/`enable`/`disable` (mpc sends them) are accepted; every tag jukebox
            // knows is still sent (clients ignore what they did not ask for).
            if let sub = r.args.first {
                guard ["clear", "all", "enable", "disable"].contains(sub) else { return fail(.arg, "Unknown sub command") }
                return reply(.success([]))
            }
            reply(.success(Self.mpdTags.map { "tagtype: \($0)" }))
        case "outputs":
            guard args(0...0) else { return }
            reply(.success(["outputid: 0", "outputname: jukebox", "plugin: alsa", "outputenabled: 1"]))
        case "decoders":
            guard args(0...0) else { return }
            reply(.success(["plugin: sndfile"] + ["wav", "flac", "ogg", "oga", "opus", "mp3", "aiff", "aif"].map { "suffix: \($0)" }))
        case "stats":
            guard args(0...0) else { return }
            let played = mpdFace.map { $0.playedBefore + ($0.playingSince.map { clock() - $0 } ?? 0) } ?? 0
            // The library's songs once there is a library (MPD on builds it at start), else the queue's.
            let songs = mpdLibrary.map { $0.index.songs.map { ($0.artist, $0.album, $0.duration) } }
                ?? state.queue.map { ($0.info.artist, $0.info.album, $0.info.duration) }
            reply(.success(MPDReplies.stats(songs, uptime: clock() - (mpdFace?.started ?? clock()), playtime: played)))
        case "urlhandlers":
            // The stream schemes (local files are added by path), when clients may add URLs.
            guard args(0...0) else { return }
            reply(.success(mpd?.settings.allowURLs == true ? ["handler: http://", "handler: https://"] : []))
        case "replay_gain_status":
            guard args(0...0) else { return }
            reply(.success(["replay_gain_mode: off"]))
        case "replay_gain_mode":
            guard args(1...1) else { return }
            if r.args[0] == "off" { return reply(.success([])) }
            guard ["track", "album", "auto"].contains(r.args[0]) else { return fail(.arg, "Unrecognized replay gain mode") }
            fail(.arg, "jukebox does not apply replay gain")
        case "crossfade":
            // jukebox joins tracks gaplessly, bit-exact; 0 is what it does already.
            guard args(1...1) else { return }
            guard let n = Int(r.args[0]), n >= 0 else { return fail(.arg, "Integer expected: \(r.args[0])") }
            if n == 0 { return reply(.success([])) }
            fail(.arg, "jukebox has no crossfade: tracks join gaplessly")
        case "mixrampdb", "mixrampdelay":
            // MixRamp only shapes a crossfade, and with crossfade 0 (always, here) MPD ignores both
            // values too: accepted when well-formed, as MPD does, and nothing changes.
            guard args(1...1) else { return }
            guard r.args[0] == "nan" || seconds(r.args[0]) != nil else { return }
            reply(.success([]))
        default:
            if mpdQueue(r, reply) || mpdStoredPlaylist(r, reply) { return }
            fail(.unknown, "unknown command \"\(r.name)\"")
        }
    }

    // MPD's repeat/random/single/consume over jukebox's shuffle and repeat off/all/one. What
    // jukebox has no mode for (single without repeat: stop after the song; consume) is refused.
    private func modes(_ name: String, _ value: String, _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        let (rep, single) = MPDReplies.flags(state.repeatMode)
        func no(_ what: String) { reply(.failure(MPDError(.arg, "jukebox has no \(what) mode"))) }
        guard value == "0" || value == "1" || (value == "oneshot" && (name == "single" || name == "consume")) else {
            return reply(.failure(MPDError(.arg, "Boolean (0/1) expected: \(value)")))
        }
        let on = value == "1"
        switch name {
        case "random": mpdIntents([.setShuffle(on, seed: nextSeed())], reply)
        case "repeat": mpdIntents([.setRepeat(on ? (single ? .one : .all) : .off)], reply)
        case "single":
            if value == "oneshot" { return no("single oneshot") }
            if on && !rep { return no("single-without-repeat (stop after the song)") }
            mpdIntents(on ? [.setRepeat(.one)] : (single ? [.setRepeat(.all)] : []), reply)
        default:
            if on || value == "oneshot" { return no("consume") }
            reply(.success([]))
        }
    }

    // Carries out intents and replies once what they changed is saved (as the control socket's
    // `ok` does): an OK means the change survives a power cut.
    func mpdIntents(_ events: [Event], _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        feedHeard()
        let before = saveNumber
        for event in events { dispatch(event) }
        afterSaves(since: before) { _ in reply(.success([])) }
    }

    private func add(_ uri: String, _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        let path: String
        switch MPDReplies.path(for: uri, roots: mpdMusicFolders, allowURLs: mpd?.settings.allowURLs ?? false, exists: fileExists) {
        case .failure(let e): return reply(.failure(e))
        case .success(let p): path = p
        }
        let started = readTracks([path]) { [weak self] tracks, messages in
            guard let self else { return }
            guard !tracks.isEmpty else { return reply(.failure(MPDError(.noExist, messages.first ?? "No such directory"))) }
            let before = saveNumber
            dispatch(.add(tracks))
            afterSaves(since: before) { _ in reply(.success([])) }
        }
        if !started { reply(.failure(MPDError(.system, "this player cannot load files"))) }
    }
}

/// The session's backend: forwards to the loop (weakly: sessions never keep the runtime alive).
final class MPDFace: MPDBackend {
    /// Not private: the library's commands (`Runtime+MPDLibrary.swift`) reach the loop through it too.
    weak var runtime: Runtime?
    /// When the listener opened (the loop's clock), for `stats`' uptime.
    let started: Double
    /// Seconds played before `playingSince`, and when the current stretch of playing began.
    var playedBefore = 0.0
    var playingSince: Double?
    /// Each queue entry's position when last seen, and the queue version at which it was new or
    /// moved (`plchanges` lists those newer than the client's).
    var positions: [UInt64: Int] = [:]
    var changedAt: [UInt64: Int] = [:]
    /// The stored playlists' folder; nil: none.
    let playlists: String?

    init(runtime: Runtime, started: Double, playlists: String?) {
        self.runtime = runtime
        self.started = started
        self.playlists = playlists
    }

    func run(_ request: MPDRequest, reply: @escaping (Result<[String], MPDError>) -> Void) {
        guard let runtime else { return reply(.failure(MPDError(.system, "the player is stopping"))) }
        runtime.mpdRun(request, reply)
    }
}

/// What MPD clients watch, to tell which `idle` subsystems an event changed.
struct MPDWatch: Equatable {
    var phase: String
    var current: UInt64?
    var volume: Int
    var repeatMode: RepeatMode
    var shuffle: Bool
    var queueRevision: Int

    init(_ state: State) {
        phase = MPDReplies.playState(state.phase)
        current = state.currentTrack?.id
        volume = state.volume
        repeatMode = state.repeatMode
        shuffle = state.shuffle
        queueRevision = state.queueRevision
    }

    func changes(since old: MPDWatch) -> Set<MPDSession.Subsystem> {
        var set: Set<MPDSession.Subsystem> = []
        if phase != old.phase || current != old.current { set.insert(.player) }
        if volume != old.volume { set.insert(.mixer) }
        if repeatMode != old.repeatMode || shuffle != old.shuffle { set.insert(.options) }
        if queueRevision != old.queueRevision { set.insert(.playlist) }
        return set
    }
}
