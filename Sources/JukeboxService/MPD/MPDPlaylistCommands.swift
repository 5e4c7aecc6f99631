// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

// MPD's stored playlists over `MPDPlaylistStore` (M3U files in one folder). Every read and write
// runs on the tag reader's thread (`MPDLoop.offLoop`), in order with `add`/`load`: the loop never
// waits on the disk. What reaches the queue goes through the core (`.add`, `.insert`).
extension MPDFace {
    static let playlistCommands: [MPDCommand] = [
        MPDCommand("listplaylists", 0...0) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            face.work({ _ in store.list().map { FileWorkOutput(lines: MPDFace.wordPlaylistLines + $0.lines) } }, loop, reply)
        },
        MPDCommand("listplaylist", 1...1) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let name = r.args[0]
            face.work({ _ in store.entries(name).map { FileWorkOutput(lines: $0.map { "file: \($0)" }) } }, loop, reply)
        },
        MPDCommand("listplaylistinfo", 1...1) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let name = r.args[0]
            face.work({ load in
                store.entries(name).map { entries in
                    // One read per entry keeps the order and lists a missing song by its name, as MPD does.
                    FileWorkOutput(lines: entries.flatMap { entry -> [String] in
                        let read = store.path(of: entry).map { load([$0]).tracks } ?? []
                        guard read.count == 1 else { return ["file: \(entry)"] }
                        return MPDReplies.songInfo(read[0], roots: store.roots)
                    })
                }
            }, loop, reply)
        },
        MPDCommand("load", 1...3) { face, loop, r, reply in
            if r.args.count == 1, let sleep = MPDFace.sleepRequest(r.args[0]) { return face.intents([.sleepTimer(sleep)], loop, reply) }
            if r.args.count == 1, let speed = MPDFace.speedRequest(r.args[0]) { return face.intents([.setSpeed(speed)], loop, reply) }
            // A podcast is a playlist of its episodes: loaded as `add` queues it.
            if r.args.count == 1, r.args[0].lowercased().hasPrefix(MPDFace.podcastScheme) {
                return face.add(r.args[0], at: nil, one: false, loop, reply)
            }
            guard let store = face.store(r, reply) else { return }
            face.load(store, r.args, loop, reply)
        },
        MPDCommand("save", 1...2) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let args = r.args
            let mode = args.count == 2 ? args[1] : "create"
            guard ["create", "replace", "append"].contains(mode) else { return reply(.failure(MPDError(.arg, "Unrecognized save mode: \(mode)"))) }
            let uris = loop.state.queue.map { MPDReplies.uri($0.info.path, roots: face.musicFolders) }
            face.change({
                guard mode == "append" else { return store.write(args[0], entries: uris, create: mode == "create") }
                let old: [String]
                switch store.entries(args[0]) {
                case .success(let e): old = e
                case .failure(let e) where e.code == .noExist: old = []
                case .failure(let e): return .failure(e)
                }
                return store.write(args[0], entries: old + uris, create: false)
            }, loop, reply)
        },
        MPDCommand("rm", 1...1) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let name = r.args[0]
            face.change({ store.remove(name) }, loop, reply)
        },
        MPDCommand("rename", 2...2) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let args = r.args
            face.change({ store.rename(args[0], to: args[1]) }, loop, reply)
        },
        MPDCommand("playlistclear", 1...1) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let name = r.args[0]
            face.change({ store.entries(name).flatMap { _ in store.write(name, entries: [], create: false) } }, loop, reply)
        },
        MPDCommand("playlistadd", 2...3) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let args = r.args
            let at = args.count == 3 ? Int(args[2]) : nil
            if args.count == 3, (at ?? -1) < 0 { return reply(.failure(MPDError(.arg, "Bad song index"))) }
            face.change({
                guard let path = store.path(of: args[1]) else { return .failure(MPDError(.noExist, "No such song: \(args[1])")) }
                var entries: [String]
                switch store.entries(args[0]) {
                case .success(let e): entries = e
                case .failure(let e) where e.code == .noExist: entries = []
                case .failure(let e): return .failure(e)
                }
                guard at.map({ $0 <= entries.count }) ?? true else { return .failure(MPDError(.arg, "Bad song index")) }
                entries.insert(MPDReplies.uri(path, roots: store.roots), at: at ?? entries.count)
                return store.write(args[0], entries: entries, create: false)
            }, loop, reply)
        },
        // playlistdelete NAME POS|START:END
        MPDCommand("playlistdelete", 2...2) { face, loop, r, reply in
            guard let store = face.store(r, reply) else { return }
            let args = r.args
            face.change({
                store.entries(args[0]).flatMap { entries in
                    guard let range = MPDReplies.range(args[1], count: entries.count), !range.isEmpty,
                          range.upperBound <= entries.count else { return .failure(MPDError(.arg, "Bad song index")) }
                    var rest = entries
                    rest.removeSubrange(range)
                    return store.write(args[0], entries: rest, create: false)
                }
            }, loop, reply)
        },
    ]

    /// The store for a stored-playlist command, or nil after replying: no playlists folder, or a
    /// name that is refused (checked here too, so a bad one is refused before any work is queued).
    private func store(_ r: MPDRequest, _ reply: MPDLinesReply) -> MPDPlaylistStore? {
        guard let folder = playlists else {
            // Clients poll `listplaylists` (Home Assistant at every update): none, not an error
            // to log each time; the others say why.
            if r.name == "listplaylists" { reply(.success(MPDFace.wordPlaylistLines)) } else {
                reply(.failure(MPDError(.system, "stored playlists are off: no playlists folder (mpd.playlists in the config)")))
            }
            return nil
        }
        let names = r.name == "listplaylists" ? [] : r.name == "rename" ? r.args : [r.args[0]]
        if let e = names.lazy.compactMap(MPDPlaylistStore.check).first {
            reply(.failure(e))
            return nil
        }
        return MPDPlaylistStore(folder: folder, roots: musicFolders, allowURLs: settings.allowURLs)
    }

    // `load NAME [START:END] [POS]`: the entries read and their tags, off the loop; appended (or
    // inserted at POS) by the core. Songs that are missing are left out, as MPD does.
    private func load(_ store: MPDPlaylistStore, _ args: [String], _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        let range = args.count >= 2 ? MPDReplies.range(args[1], count: Int.max) : nil
        if args.count >= 2, range == nil { return reply(.failure(MPDError(.arg, "Bad song index"))) }
        var at: Int?
        if args.count == 3 {
            switch MPDQueueArgs.target(args[2], current: currentPosition(loop.state), count: loop.state.queue.count, room: 0) {
            case .failure(let e): return reply(.failure(e))
            case .success(let p): at = p
            }
        }
        let started = loop.offLoop({ load in
            store.entries(args[0]).flatMap { entries in
                guard range.map({ $0.lowerBound <= entries.count }) ?? true else { return .failure(MPDError(.arg, "Bad song index")) }
                let chosen = range.map { Array(entries[$0.clamped(to: entries.indices)]) } ?? entries
                let read = load(chosen.compactMap(store.path(of:)))
                return .success(FileWorkOutput(tracks: read.tracks, lines: read.messages))
            }
        }, then: { [weak loop] result in
            guard let loop else { return }
            switch result {
            case .failure(let e): reply(.failure(e))
            case .success(let out):
                let before = loop.saveNumber
                loop.feedHeard()
                if !out.tracks.isEmpty { loop.dispatch(at.map { .insert(out.tracks, at: $0) } ?? .add(out.tracks)) }
                loop.afterSaves(since: before) { _ in reply(.success([])) }
            }
        })
        if !started { reply(.failure(MPDError(.system, "this player cannot load files"))) }
    }

    // Reads off the loop and replies with the lines.
    private func work(_ job: @escaping @Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult,
                      _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        let started = loop.offLoop(job) { reply($0.map(\.lines)) }
        if !started { reply(.failure(MPDError(.system, "this player cannot read files"))) }
    }

    // Writes off the loop; on success every session hears `stored_playlist`.
    private func change(_ job: @escaping @Sendable () -> Result<Void, MPDError>, _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        let started = loop.offLoop({ _ in job().map { FileWorkOutput() } }) { [weak self] result in
            if case .success = result { self?.notify([.stored_playlist]) }
            reply(result.map { _ in [] })
        }
        if !started { reply(.failure(MPDError(.system, "this player cannot write files"))) }
    }
}
