// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore
import JukeboxSystem

/// The loop's side of the MPD library: the index (`MPDLibrary`), the updates that refill it on
/// the tag reader, and the cover reads on a worker. Only the loop touches it.
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

extension Runtime {
    /// The MPD commands of the library and covers (`Runtime+MPDLibrary.swift`).
    static let mpdLibraryCommands = ["albumart", "count", "find", "findadd", "list", "listall", "listallinfo", "lsinfo",
                                     "readpicture", "rescan", "search", "searchadd", "update"]

    /// Builds the MPD library index of the music folders off the loop (when the MPD face is on);
    /// call once `loadTracks` is set. Playback does not wait for it.
    public func startMPDLibrary() {
        guard mpd != nil, mpdLibrary == nil else { return }
        mpdLibrary = MPDLibraryState(roots: mpdMusicFolders)
        _ = mpdUpdate("")
    }

    /// Starts an update of `uri` ("" for everything): the worker lists its folders
    /// (`MPDLibraryWalk`), then the tag reader reads them folder by folder; its job number.
    /// The index changes once, when every folder is read.
    /// An update of a URI already waiting is that update (its number again); nil when the queue is full.
    func mpdUpdate(_ uri: String) -> Int? {
        let lib = mpdLibrary ?? MPDLibraryState(roots: mpdMusicFolders)
        mpdLibrary = lib
        // Only the newest of a URI's updates can still be waiting unstarted: that one covers this one.
        if let same = lib.updating.last(where: { $0.uri == uri }), same.job != lib.updating.first?.job { return same.job }
        guard lib.updating.count < MPDLibraryState.maxUpdates else { return nil }
        lib.lastJob += 1
        let job = lib.lastJob
        lib.updating.append((job, uri))
        notifyMPD([.update])
        let bases = uri.isEmpty ? lib.index.roots : lib.index.roots.map { $0 + "/" + uri }
        let finish: ([TrackInfo]) -> Void = { [weak self, weak lib] tracks in
            guard let self, let lib else { return }
            let dropped = lib.index.replace(under: uri, with: tracks)
            if dropped > 0 { log.warning("mpd: the library keeps \(MPDLibrary.maxSongs) songs; \(dropped) left out") }
            lib.updating.removeAll { $0.job == job }
            lib.trimDue = true
            notifyMPD([.update, .database])
        }
        let id = lib.nextRead
        lib.nextRead += 1
        lib.listWaiters[id] = { [weak self, weak lib] groups in
            guard let groups else {
                lib?.updating.removeAll { $0.job == job }
                self?.notifyMPD([.update])
                return
            }
            self?.readGroups(groups, then: finish)
        }
        worker(lib).run("listing " + (uri.isEmpty ? "the music folders" : uri), failed: { reason in
            .updateListed(id: id, groups: nil, problem: reason)
        }) { .updateListed(id: id, groups: MPDLibraryWalk.groups(bases), problem: nil) }
        return job
    }

    /// The folders of an update were listed.
    /// A listing given up on (`problem`) ends its update with the index as it was.
    func mpdUpdateListed(id: Int, _ groups: [[String]]?, problem: String?) {
        guard let waiter = mpdLibrary?.listWaiters.removeValue(forKey: id) else { return }
        if let problem { log.warning("mpd: update: \(problem)") }
        waiter(groups)
    }

    // One tag reader request per group; `then` gets every track once the last is read.
    private func readGroups(_ groups: [[String]], then: @escaping ([TrackInfo]) -> Void) {
        final class Gathered { var tracks: [TrackInfo] = []; var left = 0 }
        let gathered = Gathered()
        gathered.left = groups.count
        guard !groups.isEmpty else { return then([]) }
        for group in groups {
            let started = readTracks(group) { tracks, _ in
                gathered.tracks += tracks
                gathered.left -= 1
                if gathered.left == 0 { then(gathered.tracks) }
            }
            // A player without a loader (some tests) has an empty library.
            if !started { return then([]) }
        }
    }

    private func worker(_ lib: MPDLibraryState) -> WorkerThread {
        if let reader = lib.reader { return reader }
        let reader = WorkerThread(name: "jukebox-mpd", mailbox: mailbox, limit: jobLimit)
        lib.reader = reader
        return reader
    }

    private func notifyMPD(_ changed: Set<MPDSession.Subsystem>) {
        guard let mpd else { return }
        for session in mpd.sessions { session.notify(changed) }
    }

    /// A cover chunk came back from the worker.
    func mpdChunkRead(id: Int, _ result: Result<FileChunk, MPDError>) {
        mpdLibrary?.readWaiters.removeValue(forKey: id)?(result)
    }

    /// Carries out a library or cover command; false when `r` is not one of them. `status` is
    /// also answered here: the queue's lines (`mpdRun`) plus `updating_db` while an update runs.
    func mpdLibraryRun(_ r: MPDRequest, binaryLimit: Int, _ reply: @escaping (Result<MPDReply, MPDError>) -> Void) -> Bool {
        func lines(_ result: Result<[String], MPDError>) { reply(result.map { MPDReply(lines: $0) }) }
        func fail(_ code: MPDError.Code, _ message: String) { reply(.failure(MPDError(code, message))) }
        func args(_ counts: ClosedRange<Int>) -> Bool {
            if counts.contains(r.args.count) { return true }
            fail(.arg, "wrong number of arguments for \"\(r.name)\"")
            return false
        }
        if r.name == "status" {
            mpdRun(r) { [weak self] result in
                let job = self?.mpdLibrary?.updating.first?.job
                reply(result.map { MPDReply(lines: $0 + (job.map { ["updating_db: \($0)"] } ?? [])) })
            }
            return true
        }
        guard Self.mpdLibraryCommands.contains(r.name) else { return false }
        let lib = mpdLibrary ?? MPDLibraryState(roots: mpdMusicFolders)
        mpdLibrary = lib
        switch r.name {
        case "update", "rescan":
            guard args(0...1) else { return true }
            let uri = MPDLibrary.normalized(r.args.first ?? "")
            if uri.split(separator: "/").contains("..") { fail(.arg, "Malformed URI"); return true }
            guard let job = mpdUpdate(uri) else { fail(.updateAlready, "Update queue is full"); return true }
            lines(.success(["updating_db: \(job)"]))
        case "lsinfo":
            guard args(0...1) else { return true }
            let listed = lib.index.lsinfo(r.args.first ?? "")
            // At the root MPD lists the stored playlists too (`mpc lsplaylists` asks this way);
            // their folder is read off the loop, like every playlist read.
            guard MPDLibrary.normalized(r.args.first ?? "").isEmpty, case .success(let music) = listed,
                  let folder = mpdFace?.playlists else {
                lines(listed)
                return true
            }
            let store = MPDPlaylistStore(folder: folder, roots: mpdMusicFolders, allowURLs: mpd?.settings.allowURLs ?? false)
            let started = offLoop({ _ in store.list() }) { playlists in
                // A playlists folder that cannot be read leaves the music's listing as it is.
                lines(.success(music + ((try? playlists.get().lines) ?? [])))
            }
            if !started { lines(listed) }
        case "listall", "listallinfo":
            guard args(0...1) else { return true }
            lines(lib.index.listall(r.args.first ?? "", info: r.name == "listallinfo"))
        case "find", "search", "findadd", "searchadd":
            let fold = r.name.hasPrefix("search")
            if r.args.count >= 2, ["sort", "window", "position"].contains(r.args[r.args.count - 2].lowercased()) {
                fail(.arg, "jukebox does not support \(r.args[r.args.count - 2]) after a filter yet")
                return true
            }
            switch MPDFilter.parse(r.args, fold: fold) {
            case .failure(let e): reply(.failure(e))
            case .success(let filter):
                let found = lib.index.find(filter)
                guard r.name.hasSuffix("add") else { lines(.success(found.flatMap(MPDLibrary.block))); return true }
                guard !found.isEmpty else { lines(.success([])); return true }
                // As `add` does: the core's add event, answered once the queue is saved.
                let before = saveNumber
                dispatch(.add(found.map(lib.index.trackInfo)))
                afterSaves(since: before) { _ in reply(.success(MPDReply(lines: []))) }
            }
        case "list":
            guard r.args.count >= 1 else { fail(.arg, "too few arguments for \"list\""); return true }
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
            case .success(let filter): lines(lib.index.list(r.args[0], filter: filter, groups: groups))
            }
        case "count":
            var rest = r.args
            var group: String?
            if rest.count >= 2, rest[rest.count - 2].lowercased() == "group" {
                group = rest.removeLast()
                rest.removeLast()
            }
            switch MPDFilter.parse(rest, fold: false, allowEmpty: group != nil) {
            case .failure(let e): reply(.failure(e))
            case .success(let filter): lines(lib.index.count(filter, group: group))
            }
        case "albumart":
            guard args(2...2) else { return true }
            guard let offset = Int(r.args[1]), offset >= 0 else { fail(.arg, "Bad file offset"); return true }
            readCover(r.args[0], offset: offset, limit: binaryLimit, lib: lib) { result in
                reply(result.map { MPDReply(lines: ["size: \($0.size)"], binary: $0.bytes) })
            }
        case "readpicture":
            // The picture in the song's tags, read on the tag reader (TagLib is used from one
            // thread), a chunk per request as MPD sends it. Without one (or with TagLib 1.13,
            // Debian 12's, whose C API reads no pictures) an empty reply, as MPD gives.
            guard args(2...2) else { return true }
            guard let offset = Int(r.args[1]), offset >= 0 else { fail(.arg, "Bad file offset"); return true }
            let uri = MPDLibrary.normalized(r.args[0])
            guard let song = lib.index.song(uri) else {
                if lib.updating.isEmpty { fail(.noExist, "No such song") } else { lines(.success([])) }
                return true
            }
            guard let readPicture else { lines(.success([])); return true }
            let path = lib.index.path(of: song)
            let limit = binaryLimit
            let started = offLoop({ _ in MPDCovers.pictureChunk(readPicture(path), offset: offset, limit: limit) }) { result in
                reply(result.map { MPDReply(lines: $0.lines, binary: $0.bytes) })
            }
            if !started { lines(.success([])) }
        default:
            return false
        }
        return true
    }

    private func readCover(_ uri: String, offset: Int, limit: Int, lib: MPDLibraryState,
                           then: @escaping (Result<FileChunk, MPDError>) -> Void) {
        let id = lib.nextRead
        lib.nextRead += 1
        lib.readWaiters[id] = then
        let roots = lib.index.roots
        worker(lib).run("reading the cover of \(uri)", failed: { reason in .chunkRead(id: id, result: .failure(MPDError(.system, reason))) }) {
            .chunkRead(id: id, result: MPDCovers.read(uri: uri, roots: roots, offset: offset, limit: limit))
        }
    }
}

extension MPDFace {
    /// The library's and covers' commands (and `status`, for `updating_db`); the rest go to `mpdRun`.
    func run(_ request: MPDRequest, binaryLimit: Int, reply: @escaping (Result<MPDReply, MPDError>) -> Void) -> Bool {
        guard let runtime else { return false }
        return runtime.mpdLibraryRun(request, binaryLimit: binaryLimit, reply)
    }
}
