// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

// MPD's queue: adding, deleting, ordering (`addid`, `move`, `moveid`, `shuffle`), listing and the
// change feed (`plchanges`, `plchangesposid`, the old `playlist`). Each change becomes one core
// event (`add`, `remove`, `insert`, `moveRange`, `shuffleEntries`); what the order then is, is
// the core's.
extension MPDFace {
    static let queueCommands: [MPDCommand] = [
        MPDCommand("add", 1...1) { face, loop, r, reply in face.add(r.args[0], at: nil, one: false, loop, reply) },
        MPDCommand("addid", 1...2) { face, loop, r, reply in
            var at: Int?
            if r.args.count == 2 {
                switch MPDQueueArgs.target(r.args[1], current: face.currentPosition(loop.state), count: loop.state.queue.count, room: 0) {
                case .failure(let e): return reply(.failure(e))
                case .success(let p): at = p
                }
            }
            face.add(r.args[0], at: at, one: true, loop, reply)
        },
        MPDCommand("clear", 0...0) { face, loop, _, reply in face.intents([.clear], loop, reply) },
        MPDCommand("delete", 1...1) { face, loop, r, reply in
            let count = loop.state.queue.count
            guard let range = MPDReplies.range(r.args[0], count: count), range.lowerBound < count, range.upperBound <= count else {
                return reply(.failure(MPDError(.arg, "Bad song index")))
            }
            // From the end, so each index still names the entry it named when asked.
            face.intents(range.reversed().map { .remove(at: $0) }, loop, reply)
        },
        MPDCommand("deleteid", 1...1) { face, loop, r, reply in
            guard let p = face.entry(id: r.args[0], loop, reply) else { return }
            face.intents([.remove(at: p)], loop, reply)
        },
        MPDCommand("move", 2...2) { face, loop, r, reply in
            let count = loop.state.queue.count
            guard let range = MPDReplies.range(r.args[0], count: count), !range.isEmpty, range.upperBound <= count else {
                return reply(.failure(MPDError(.arg, "Bad song index")))
            }
            face.move(range, to: r.args[1], loop, reply)
        },
        MPDCommand("moveid", 2...2) { face, loop, r, reply in
            guard let p = face.entry(id: r.args[0], loop, reply) else { return }
            face.move(p..<(p + 1), to: r.args[1], loop, reply)
        },
        MPDCommand("shuffle", 0...1) { face, loop, r, reply in
            let count = loop.state.queue.count
            // A range's end is clipped to the queue, as MPD does; its start must lie inside.
            guard let range = r.args.first.map({ MPDReplies.range($0, count: count) }) ?? 0..<count, range.lowerBound <= count else {
                return reply(.failure(MPDError(.arg, "Bad song index")))
            }
            face.intents([.shuffleEntries(range.clamped(to: 0..<count), seed: loop.nextSeed())], loop, reply)
        },
        MPDCommand("playlistinfo", 0...1) { face, loop, r, reply in
            let state = loop.state
            guard let range = r.args.first.map({ MPDReplies.range($0, count: state.queue.count) }) ?? 0..<state.queue.count else {
                return reply(.failure(MPDError(.arg, "Bad song index")))
            }
            // A single position past the end is an error, as in MPD; a range is clamped.
            if r.args.first.map({ !$0.contains(":") }) == true, !state.queue.indices.contains(range.lowerBound) {
                return reply(.failure(MPDError(.arg, "Bad song index")))
            }
            reply(.success(MPDReplies.songs(state, range, roots: face.musicFolders)))
        },
        MPDCommand("playlistid", 0...1) { face, loop, r, reply in
            let state = loop.state
            guard let first = r.args.first else { return reply(.success(MPDReplies.songs(state, 0..<state.queue.count, roots: face.musicFolders))) }
            guard let p = face.entry(id: first, loop, reply) else { return }
            reply(.success(MPDReplies.song(state.queue[p], pos: p, roots: face.musicFolders)))
        },
        MPDCommand("plchanges", 1...2) { face, loop, r, reply in
            guard let changed = face.changed(r, loop.state, reply) else { return }
            let state = loop.state
            reply(.success(changed.flatMap { MPDReplies.song(state.queue[$0], pos: $0, roots: face.musicFolders) }))
        },
        MPDCommand("plchangesposid", 1...2) { face, loop, r, reply in
            guard let changed = face.changed(r, loop.state, reply) else { return }
            let state = loop.state
            reply(.success(changed.flatMap { ["cpos: \($0)", "Id: \(state.queue[$0].id)"] }))
        },
        MPDCommand("playlist", 0...0) { face, loop, _, reply in
            let state = loop.state
            reply(.success(state.queue.indices.map { "\($0):file: \(MPDReplies.uri(state.queue[$0].info.path, roots: face.musicFolders))" }))
        },
    ]

    private func move(_ range: Range<Int>, to text: String, _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        switch MPDQueueArgs.target(text, current: currentPosition(loop.state), count: loop.state.queue.count, room: range.count) {
        case .failure(let e): reply(.failure(e))
        case .success(let to): intents([.moveRange(range, to: to)], loop, reply)
        }
    }

    // The positions in `plchanges`' range whose entry is new or moved since the client's version.
    private func changed(_ r: MPDRequest, _ state: State, _ reply: MPDLinesReply) -> [Int]? {
        let count = state.queue.count
        guard let version = Int(r.args[0]) else {
            reply(.failure(MPDError(.arg, "Number expected: \(r.args[0])")))
            return nil
        }
        guard let range = r.args.count == 2 ? MPDReplies.range(r.args[1], count: count) : 0..<count else {
            reply(.failure(MPDError(.arg, "Bad song index")))
            return nil
        }
        return range.clamped(to: state.queue.indices).filter { (changedAt[state.queue[$0].id] ?? Int.max) > version }
    }

    // `add URI` (a song, a folder, a playlist) and `addid URI [POS]` (`one`: a single song, its id
    // given back; a folder or playlist refused, as MPD's `addid` takes one song), read by the tag
    // reader, then appended (or inserted) by the core.
    func add(_ uri: String, at: Int?, one: Bool, _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        // `podcast://NAME/KEY`: one episode (`lsinfo podcast://NAME` lists them), from its file
        // or its URL, as the core's model names it.
        if uri.lowercased().hasPrefix(Self.podcastScheme), uri.dropFirst(Self.podcastScheme.count).contains("/") {
            switch Self.podcastEpisode(uri, loop.state) {
            case .failure(let e): return reply(.failure(e))
            case .success(let track): return queued([track], [], at: at, one: one, loop, reply)
            }
        }
        // `podcast://NAME`: the podcast's next episodes, as the core chooses them (docs/PODCASTS.md).
        if uri.lowercased().hasPrefix(Self.podcastScheme) {
            guard !one else { return reply(.failure(MPDError(.arg, "addid takes one song, not a podcast"))) }
            let name = String(uri.dropFirst(Self.podcastScheme.count))
            let before = loop.saveNumber, count = loop.state.queue.count
            loop.dispatch(.queuePodcast(name: name))
            // Refused by the core (an unknown podcast, none yet): the queue is as it was, the reason shown.
            if loop.state.queue.count == count, let refused = loop.state.message {
                return reply(.failure(MPDError(.noExist, refused)))
            }
            return loop.afterSaves(since: before) { _ in reply(.success([])) }
        }
        let path: String
        switch MPDReplies.path(for: uri, roots: musicFolders, allowURLs: settings.allowURLs, exists: fileExists) {
        case .failure(let e): return reply(.failure(e))
        case .success(let p): path = p
        }
        let started = loop.readTracks([path]) { [weak self, weak loop] tracks, messages in
            guard let self, let loop else { return }
            queued(tracks, messages, at: at, one: one, loop, reply)
        }
        if !started { reply(.failure(MPDError(.system, "this player cannot load files"))) }
    }

    /// Appends (or, for `addid`, inserts one song at `at` and gives its id) `tracks` read for
    /// `add`; none: the first of `messages` says why.
    private func queued(_ tracks: [TrackInfo], _ messages: [String], at: Int?, one: Bool, _ loop: MPDLoop,
                        _ reply: @escaping MPDLinesReply) {
        guard one else {
            guard !tracks.isEmpty else { return reply(.failure(MPDError(.noExist, messages.first ?? "No such directory"))) }
            let before = loop.saveNumber
            loop.dispatch(.add(tracks))
            return loop.afterSaves(since: before) { _ in reply(.success([])) }
        }
        guard tracks.count == 1 else {
            return reply(.failure(tracks.isEmpty ? MPDError(.noExist, messages.first ?? "No such song")
                                                 : MPDError(.arg, "addid takes one song, not a folder or playlist")))
        }
        let id = loop.state.nextTrackID
        let before = loop.saveNumber
        loop.feedHeard()
        loop.dispatch(at.map { .insert(tracks, at: $0) } ?? .add(tracks))
        // The queue may have shrunk while the tags were read: the core then refuses.
        guard loop.state.queue.contains(where: { $0.id == id }) else {
            return reply(.failure(MPDError(.arg, loop.state.message ?? "Bad song index")))
        }
        loop.afterSaves(since: before) { _ in reply(.success(["Id: \(id)"])) }
    }
}

extension MPDFace {
    /// The URI scheme of a podcast (`podcast://NAME`) and of its episodes (`podcast://NAME/KEY`).
    static let podcastScheme = "podcast://"
}

/// Parsing of MPD's queue positions, pure (tested in `MPDProtocolTests`).
public enum MPDQueueArgs {
    /// Where `text` puts `room` entries (0 for an insert) in a queue of `count`: an absolute
    /// position, or (MPD 0.23) `+N`/`-N` relative to the current song (`+0` right after it, `-0`
    /// right before it).
    public static func target(_ text: String, current: Int?, count: Int, room: Int) -> Result<Int, MPDError> {
        let limit = room == 0 ? count : count - room
        if let sign = text.first, sign == "+" || sign == "-" {
            guard let n = Int(text.dropFirst()), n >= 0, text.count > 1, text.dropFirst().allSatisfy(\.isNumber) else {
                return .failure(MPDError(.arg, "Integer expected: \(text)"))
            }
            guard let current else { return .failure(MPDError(.playerSync, "No current song")) }
            let p = sign == "+" ? current + 1 + n : current - n
            guard (0...limit).contains(p) else { return .failure(MPDError(.arg, "Bad song index")) }
            return .success(p)
        }
        guard let p = Int(text), (0...limit).contains(p), text.allSatisfy(\.isNumber) else {
            return .failure(MPDError(.arg, "Bad song index"))
        }
        return .success(p)
    }
}
