// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore
import JukeboxSystem

/// The face's side of the MPD library: the index (`MPDLibrary`), the updates that refill it on
/// the tag reader, and the cover reads on a worker. Only the loop's thread touches it.
final class MPDLibraryState {
    /// The index (empty until the first update ends).
    var index: MPDLibrary
    /// Update jobs asked for and not finished, oldest first (`status`'s `updating_db`), with their URI.
    var updating: [(job: Int, uri: String)] = []
    /// Most updates waiting at once (MPD's own queue holds 32): a client repeating `update` in a
    /// loop must not queue folder walks without end.
    static let maxUpdates = 32
    var lastJob = 0
    /// Lists folders for updates and reads covers, off the loop (started at the first need).
    var reader: WorkerThread?
    var nextRead = 1
    var readWaiters: [Int: (Result<FileChunk, MPDError>) -> Void] = [:]
    var listWaiters: [Int: ([[String]]?) -> Void] = [:]

    /// Set when an update's tags were taken into the index.
    var trimDue = false

    init(roots: [String]) {
        index = MPDLibrary(roots: roots)
    }

    /// After an update, once the loop has dropped the mailbox's results: the tags were read into
    /// the tag reader's own malloc arena and are freed now (the index keeps its own copy), so
    /// those pages are given back rather than kept resident (about 1 MB for 2,000 songs).
    func trimIfDue() {
        guard trimDue else { return }
        trimDue = false
        _ = malloc_trim(0)
    }
}

// MPD's database commands (browsing, searching, listing, updating) and covers. The loop itself
// never stats, opens or walks for them: every browse or search reply comes from the index, and
// reads run on the MPD worker or the tag reader.
extension MPDFace {
    static let libraryCommands: [MPDCommand] = [
        MPDCommand("update", 0...1) { face, _, r, reply in face.update(r, reply) },
        MPDCommand("rescan", 0...1) { face, _, r, reply in face.update(r, reply) },
        MPDCommand("lsinfo", 0...1) { face, loop, r, reply in
            if let uri = r.args.first, uri.lowercased().hasPrefix(MPDFace.podcastScheme) {
                return reply(MPDFace.podcastListing(uri, loop.state))
            }
            let listed = face.index().index.lsinfo(r.args.first ?? "")
            // At the root MPD lists the stored playlists too (`mpc lsplaylists` asks this way);
            // their folder is read off the loop, like every playlist read.
            guard MPDLibrary.normalized(r.args.first ?? "").isEmpty, case .success(let music) = listed,
                  let folder = face.playlists else {
                return reply(listed)
            }
            let store = MPDPlaylistStore(folder: folder, roots: face.musicFolders, allowURLs: face.settings.allowURLs)
            let started = loop.offLoop({ _ in store.list() }) { playlists in
                // A playlists folder that cannot be read leaves the music's listing as it is.
                reply(.success(music + ((try? playlists.get().lines) ?? [])))
            }
            if !started { reply(listed) }
        },
        MPDCommand("listall", 0...1) { face, _, r, reply in reply(face.index().index.listall(r.args.first ?? "", info: false)) },
        MPDCommand("listallinfo", 0...1) { face, _, r, reply in reply(face.index().index.listall(r.args.first ?? "", info: true)) },
        MPDCommand("find", MPDCommand.anyCount) { face, loop, r, reply in face.find(r, loop, reply) },
        MPDCommand("search", MPDCommand.anyCount) { face, loop, r, reply in face.find(r, loop, reply) },
        MPDCommand("findadd", MPDCommand.anyCount) { face, loop, r, reply in face.find(r, loop, reply) },
        MPDCommand("searchadd", MPDCommand.anyCount) { face, loop, r, reply in face.find(r, loop, reply) },
        MPDCommand("list", MPDCommand.anyCount) { face, _, r, reply in
            guard r.args.count >= 1 else { return reply(.failure(MPDError(.arg, "too few arguments for \"list\""))) }
            var rest = Array(r.args.dropFirst())
            var groups: [String] = []
            while rest.count >= 2, rest[rest.count - 2].lowercased() == "group" {
                groups.insert(rest.removeLast(), at: 0)
                rest.removeLast()
            }
            // The old form `list album ARTIST`.
            if r.args[0].lowercased() == "album", rest.count == 1, !rest[0].hasPrefix("(") { rest = ["artist", rest[0]] }
            switch MPDFilter.parse(rest, fold: false, allowEmpty: true) {
            case .failure(let e): reply(.failure(e))
            case .success(let filter): reply(face.index().index.list(r.args[0], filter: filter, groups: groups))
            }
        },
        MPDCommand("count", MPDCommand.anyCount) { face, _, r, reply in
            var rest = r.args
            var group: String?
            if rest.count >= 2, rest[rest.count - 2].lowercased() == "group" {
                group = rest.removeLast()
                rest.removeLast()
            }
            switch MPDFilter.parse(rest, fold: false, allowEmpty: group != nil) {
            case .failure(let e): reply(.failure(e))
            case .success(let filter): reply(face.index().index.count(filter, group: group))
            }
        },
        MPDCommand("albumart", 2...2, binary: { face, _, r, limit, reply in
            guard let offset = Int(r.args[1]), offset >= 0 else { return reply(.failure(MPDError(.arg, "Bad file offset"))) }
            face.readCover(r.args[0], offset: offset, limit: limit, lib: face.index()) { result in
                reply(result.map { MPDReply(lines: ["size: \($0.size)"], binary: $0.bytes) })
            }
        }),
        // The picture in the song's tags, read on the tag reader (TagLib is used from one
        // thread), a chunk per request as MPD sends it. Without one (or with TagLib 1.13,
        // Debian 12's, whose C API reads no pictures) an empty reply, as MPD gives.
        MPDCommand("readpicture", 2...2, binary: { face, loop, r, limit, reply in
            guard let offset = Int(r.args[1]), offset >= 0 else { return reply(.failure(MPDError(.arg, "Bad file offset"))) }
            let lib = face.index()
            let uri = MPDLibrary.normalized(r.args[0])
            guard let song = lib.index.song(uri) else {
                return lib.updating.isEmpty ? reply(.failure(MPDError(.noExist, "No such song"))) : reply(.success(MPDReply(lines: [])))
            }
            guard let readPicture = loop.readPicture else { return reply(.success(MPDReply(lines: []))) }
            let path = lib.index.path(of: song)
            let started = loop.offLoop({ _ in MPDCovers.pictureChunk(readPicture(path), offset: offset, limit: limit) }) { result in
                reply(result.map { MPDReply(lines: $0.lines, binary: $0.bytes) })
            }
            if !started { reply(.success(MPDReply(lines: []))) }
        }),
    ]

    /// The library, made (empty) at the first need.
    func index() -> MPDLibraryState {
        if let library { return library }
        let lib = MPDLibraryState(roots: musicFolders)
        library = lib
        return lib
    }

    /// Builds the library index of the music folders off the loop; call once the loop can read
    /// tracks. Playback does not wait for it.
    func startLibrary() {
        guard library == nil else { return }
        library = MPDLibraryState(roots: musicFolders)
        _ = update("")
    }

    private func update(_ r: MPDRequest, _ reply: MPDLinesReply) {
        let uri = MPDLibrary.normalized(r.args.first ?? "")
        if uri.split(separator: "/").contains("..") { return reply(.failure(MPDError(.arg, "Malformed URI"))) }
        guard let job = update(uri) else { return reply(.failure(MPDError(.updateAlready, "Update queue is full"))) }
        reply(.success(["updating_db: \(job)"]))
    }

    /// Starts an update of `uri` ("" for everything): the worker lists its folders
    /// (`MPDLibraryWalk`), then the tag reader reads them folder by folder; its job number.
    /// The index changes once, when every folder is read.
    /// An update of a URI already waiting is that update (its number again); nil when the queue is full.
    func update(_ uri: String) -> Int? {
        guard let loop else { return nil }
        let lib = index()
        // Only the newest of a URI's updates can still be waiting unstarted: that one covers this one.
        if let same = lib.updating.last(where: { $0.uri == uri }), same.job != lib.updating.first?.job { return same.job }
        guard lib.updating.count < MPDLibraryState.maxUpdates else { return nil }
        lib.lastJob += 1
        let job = lib.lastJob
        lib.updating.append((job, uri))
        notify([.update])
        let bases = uri.isEmpty ? lib.index.roots : lib.index.roots.map { $0 + "/" + uri }
        let finish: ([TrackInfo]) -> Void = { [weak self, weak lib] tracks in
            guard let self, let lib else { return }
            let dropped = lib.index.replace(under: uri, with: tracks)
            if dropped > 0 { self.loop?.log.warning("mpd: the library keeps \(MPDLibrary.maxSongs) songs; \(dropped) left out") }
            lib.updating.removeAll { $0.job == job }
            lib.trimDue = true
            notify([.update, .database])
        }
        let id = lib.nextRead
        lib.nextRead += 1
        lib.listWaiters[id] = { [weak self, weak lib] groups in
            guard let groups else {
                lib?.updating.removeAll { $0.job == job }
                self?.notify([.update])
                return
            }
            self?.readGroups(groups, then: finish)
        }
        worker(lib, loop).run("listing " + (uri.isEmpty ? "the music folders" : uri), failed: { reason in
            .updateListed(id: id, groups: nil, problem: reason)
        }) { .updateListed(id: id, groups: MPDLibraryWalk.groups(bases), problem: nil) }
        return job
    }

    /// A worker's result for this face (`chunkRead`, `updateListed`); others are not its own.
    func settle(_ result: Mailbox.Result) {
        switch result {
        case .chunkRead(let id, let chunk): chunkRead(id: id, chunk)
        case .updateListed(let id, let groups, let problem): updateListed(id: id, groups, problem: problem)
        default: break
        }
    }

    /// The folders of an update were listed (a mailbox result the loop hands over).
    /// A listing given up on (`problem`) ends its update with the index as it was.
    func updateListed(id: Int, _ groups: [[String]]?, problem: String?) {
        guard let waiter = library?.listWaiters.removeValue(forKey: id) else { return }
        if let problem { loop?.log.warning("mpd: update: \(problem)") }
        waiter(groups)
    }

    /// A cover chunk came back from the worker (a mailbox result the loop hands over).
    func chunkRead(id: Int, _ result: Result<FileChunk, MPDError>) {
        library?.readWaiters.removeValue(forKey: id)?(result)
    }

    // `find`, `search` (case folded), and their `…add` forms, which add what they found.
    private func find(_ r: MPDRequest, _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        if r.args.count >= 2, ["sort", "window", "position"].contains(r.args[r.args.count - 2].lowercased()) {
            return reply(.failure(MPDError(.arg, "jukebox does not support \(r.args[r.args.count - 2]) after a filter yet")))
        }
        switch MPDFilter.parse(r.args, fold: r.name.hasPrefix("search")) {
        case .failure(let e): reply(.failure(e))
        case .success(let filter):
            let lib = index()
            let found = lib.index.find(filter)
            guard r.name.hasSuffix("add") else { return reply(.success(found.flatMap(MPDLibrary.block))) }
            guard !found.isEmpty else { return reply(.success([])) }
            // As `add` does: the core's add event, answered once the queue is saved.
            let before = loop.saveNumber
            loop.dispatch(.add(found.map(lib.index.trackInfo)))
            loop.afterSaves(since: before) { _ in reply(.success([])) }
        }
    }

    // One tag reader request per group; `then` gets every track once the last is read.
    private func readGroups(_ groups: [[String]], then: @escaping ([TrackInfo]) -> Void) {
        final class Gathered { var tracks: [TrackInfo] = []; var left = 0 }
        let gathered = Gathered()
        gathered.left = groups.count
        guard !groups.isEmpty, let loop else { return then([]) }
        for group in groups {
            let started = loop.readTracks(group) { tracks, _ in
                gathered.tracks += tracks
                gathered.left -= 1
                if gathered.left == 0 { then(gathered.tracks) }
            }
            // A player without a loader (some tests) has an empty library.
            if !started { return then([]) }
        }
    }

    private func worker(_ lib: MPDLibraryState, _ loop: MPDLoop) -> WorkerThread {
        if let reader = lib.reader { return reader }
        let reader = WorkerThread(name: "jukebox-mpd", mailbox: loop.mailbox, limit: loop.jobLimit)
        lib.reader = reader
        return reader
    }

    private func readCover(_ uri: String, offset: Int, limit: Int, lib: MPDLibraryState,
                           then: @escaping (Result<FileChunk, MPDError>) -> Void) {
        guard let loop else { return then(.failure(MPDError(.system, "the player is stopping"))) }
        let id = lib.nextRead
        lib.nextRead += 1
        lib.readWaiters[id] = then
        let roots = lib.index.roots
        worker(lib, loop).run("reading the cover of \(uri)", failed: { reason in .chunkRead(id: id, result: .failure(MPDError(.system, reason))) }) {
            .chunkRead(id: id, result: MPDCovers.read(uri: uri, roots: roots, offset: offset, limit: limit))
        }
    }
}
