// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

// MPD's stored playlists over `MPDPlaylistStore` (M3U files in one folder). Every read and write
// runs on the tag reader's thread (`offLoop`), in order with `add`/`load`: the loop never waits
// on the disk. What reaches the queue goes through the core (`.add`, `.insert`).
extension Runtime {
    /// The stored-playlist commands (listed in `mpdCommands`).
    static let mpdPlaylistCommands = ["listplaylist", "listplaylistinfo", "listplaylists", "load", "playlistadd",
                                      "playlistclear", "playlistdelete", "rename", "rm", "save"]

    /// Carries out `r` when it is one of `mpdPlaylistCommands`; false when it is not.
    func mpdStoredPlaylist(_ r: MPDRequest, _ reply: @escaping (Result<[String], MPDError>) -> Void) -> Bool {
        guard Self.mpdPlaylistCommands.contains(r.name) else { return false }
        func fail(_ code: MPDError.Code, _ message: String) { reply(.failure(MPDError(code, message))) }
        let counts: ClosedRange<Int> = switch r.name {
        case "listplaylists": 0...0
        case "load": 1...3
        case "save": 1...2
        case "rename": 2...2
        case "playlistadd": 2...3
        case "playlistdelete": 2...2
        default: 1...1
        }
        guard counts.contains(r.args.count) else {
            fail(.arg, "wrong number of arguments for \"\(r.name)\"")
            return true
        }
        guard let folder = mpdFace?.playlists else {
            // Clients poll `listplaylists` (Home Assistant at every update): none, not an error
            // to log each time; the others say why.
            if r.name == "listplaylists" { reply(.success([])) } else {
                fail(.system, "stored playlists are off: no playlists folder (mpd.playlists in the config)")
            }
            return true
        }
        // Names are checked here too, so a bad one is refused before any work is queued.
        let names = ["listplaylists"].contains(r.name) ? [] : r.name == "rename" ? r.args : [r.args[0]]
        if let e = names.lazy.compactMap(MPDPlaylistStore.check).first {
            reply(.failure(e))
            return true
        }
        let store = MPDPlaylistStore(folder: folder, roots: mpdMusicFolders, allowURLs: mpd?.settings.allowURLs ?? false)
        let args = r.args
        switch r.name {
        case "listplaylists":
            work({ _ in store.list() }, reply)
        case "listplaylist":
            work({ _ in store.entries(args[0]).map { FileWorkOutput(lines: $0.map { "file: \($0)" }) } }, reply)
        case "listplaylistinfo":
            work({ load in
                store.entries(args[0]).map { entries in
                    // One read per entry keeps the order and lists a missing song by its name, as MPD does.
                    FileWorkOutput(lines: entries.flatMap { entry -> [String] in
                        let read = store.path(of: entry).map { load([$0]).tracks } ?? []
                        guard read.count == 1 else { return ["file: \(entry)"] }
                        return MPDReplies.songInfo(read[0], roots: store.roots)
                    })
                }
            }, reply)
        case "load":
            loadPlaylist(store, args, reply)
        case "save":
            let mode = args.count == 2 ? args[1] : "create"
            guard ["create", "replace", "append"].contains(mode) else { fail(.arg, "Unrecognized save mode: \(mode)"); return true }
            let uris = state.queue.map { MPDReplies.uri($0.info.path, roots: mpdMusicFolders) }
            change({
                guard mode == "append" else { return store.write(args[0], entries: uris, create: mode == "create") }
                let old: [String]
                switch store.entries(args[0]) {
                case .success(let e): old = e
                case .failure(let e) where e.code == .noExist: old = []
                case .failure(let e): return .failure(e)
                }
                return store.write(args[0], entries: old + uris, create: false)
            }, reply)
        case "rm":
            change({ store.remove(args[0]) }, reply)
        case "rename":
            change({ store.rename(args[0], to: args[1]) }, reply)
        case "playlistclear":
            change({ store.entries(args[0]).flatMap { _ in store.write(args[0], entries: [], create: false) } }, reply)
        case "playlistadd":
            let at = args.count == 3 ? Int(args[2]) : nil
            if args.count == 3, (at ?? -1) < 0 { fail(.arg, "Bad song index"); return true }
            change({
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
            }, reply)
        default: // playlistdelete NAME POS|START:END
            change({
                store.entries(args[0]).flatMap { entries in
                    guard let range = MPDReplies.range(args[1], count: entries.count), !range.isEmpty,
                          range.upperBound <= entries.count else { return .failure(MPDError(.arg, "Bad song index")) }
                    var rest = entries
                    rest.removeSubrange(range)
                    return store.write(args[0], entries: rest, create: false)
                }
            }, reply)
        }
        return true
    }

    // `load NAME [START:END] [POS]`: the entries read and their tags, off the loop; appended (or
    // inserted at POS) by the core. Songs that are missing are left out, as MPD does.
    private func loadPlaylist(_ store: MPDPlaylistStore, _ args: [String], _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        let range = args.count >= 2 ? MPDReplies.range(args[1], count: Int.max) : nil
        if args.count >= 2, range == nil { return reply(.failure(MPDError(.arg, "Bad song index"))) }
        var at: Int?
        if args.count == 3 {
            switch MPDQueueArgs.target(args[2], current: currentPosition, count: state.queue.count, room: 0) {
            case .failure(let e): return reply(.failure(e))
            case .success(let p): at = p
            }
        }
        let started = offLoop({ load in
            store.entries(args[0]).flatMap { entries in
                guard range.map({ $0.lowerBound <= entries.count }) ?? true else { return .failure(MPDError(.arg, "Bad song index")) }
                let chosen = range.map { Array(entries[$0.clamped(to: entries.indices)]) } ?? entries
                let read = load(chosen.compactMap(store.path(of:)))
                return .success(FileWorkOutput(tracks: read.tracks, lines: read.messages))
            }
        }, then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let e): reply(.failure(e))
            case .success(let out):
                let before = saveNumber
                feedHeard()
                if !out.tracks.isEmpty { dispatch(at.map { .insert(out.tracks, at: $0) } ?? .add(out.tracks)) }
                afterSaves(since: before) { _ in reply(.success([])) }
            }
        })
        if !started { reply(.failure(MPDError(.system, "this player cannot load files"))) }
    }

    // Reads off the loop and replies with the lines.
    private func work(_ job: @escaping @Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult,
                      _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        let started = offLoop(job) { reply($0.map(\.lines)) }
        if !started { reply(.failure(MPDError(.system, "this player cannot read files"))) }
    }

    // Writes off the loop; on success every session hears `stored_playlist`.
    private func change(_ job: @escaping @Sendable () -> Result<Void, MPDError>, _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        let started = offLoop({ _ in job().map { FileWorkOutput() } }) { [weak self] result in
            if case .success = result { for session in self?.mpd?.sessions ?? [] { session.notify([.stored_playlist]) } }
            reply(result.map { _ in [] })
        }
        if !started { reply(.failure(MPDError(.system, "this player cannot write files"))) }
    }
}
