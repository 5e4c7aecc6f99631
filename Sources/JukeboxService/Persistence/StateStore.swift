// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
import Glibc
import JukeboxSystem

/// The JSON state file: written atomically and power-cut safe, read leniently, never lost.
///
/// Two files: the queue file (`FILE`, the whole `Snapshot`, rewritten only when the queue changes)
/// and the place sidecar (`FILE.place`: current track, position, phase, repeat, volume, in a
/// ~150-byte record; two slots overwritten in turn, `PlaceSlots`), which names the queue file it belongs to by a hash of that file's bytes. Each write of
/// the queue file carries a fresh random `writeID`, so its bytes (and hash) never repeat and a
/// sidecar left from an earlier queue file can never match a later one. A sidecar that does not
/// match (a power cut between the two writes, a state file from an older version, a hand-copied
/// file) is ignored, and the queue file's own place is used, which was current when it was written.
///
/// Write: a temp file beside the target, `fsync`, `rename` over the target, `fsync` of the
/// folder, so after a power cut the file is either the old or the new one, never a mix; the
/// sidecar's records are overwritten in place, one slot at a time (`PlaceSlots`).
/// Read: every entry is kept whether its file is there or not (a stick not mounted yet is no
/// reason to forget the queue). A file that cannot be parsed is moved aside (never deleted) and
/// reported, and the player starts empty; one with wrong values is copied aside and its valid
/// part used (and saved over it once the copy is made); one that cannot be read at all is left
/// alone and must not be written over.
public struct StateStore: Sendable {
    /// Path of the state file (the queue file).
    public let path: String
    /// Path of the place sidecar beside it.
    public var placePath: String { path + ".place" }
    /// The bookmarks file (`BookmarkFile`), beside the state file.
    public var bookmarksPath: String { path + ".bookmarks" }
    /// The podcasts file beside it (`PodcastFile`).
    public var podcastsPath: String { path + ".podcasts" }
    /// Test hook: called before each `fsync` of a write (a test blocks it on a gate, the benchmark
    /// slows it down); nil in the player.
    public var beforeSync: (@Sendable () -> Void)?

    /// A store for the file at `path` (its folder is created on first save).
    public init(path: String) {
        self.path = path
    }

    /// What loading found.
    public struct Loaded: Equatable, Sendable {
        /// The snapshot to restore, or nil when there was none or it was unusable.
        public var snapshot: Snapshot?
        /// Things to tell the user (a moved-aside or copied file, a file that cannot be read).
        public var messages: [String]
        /// Why the file cannot be read (EACCES, EIO...); nil when it could be, or there is none.
        /// The file is kept as it is: nothing may be saved over it until it can be read.
        public var unreadable: String?
    }

    /// Reads the state file. Never throws: every problem becomes a message and, at worst, an
    /// empty start.
    public func load() -> Loaded {
        let bytes: [UInt8]
        do {
            bytes = try readFile(path, limit: 256 << 20)
        } catch {
            if error.errno == ENOENT { return Loaded(snapshot: nil, messages: []) }
            return Loaded(snapshot: nil, messages: [
                "cannot read the state file \(path) (\(error)); keeping it as it is and not saving until it can be read",
            ], unreadable: "\(error)")
        }
        let file: SnapshotFile
        do {
            if let problem = JSONText.problem(bytes) { throw JSONTextError(problem: problem) }
            file = try JSONDecoder().decode(SnapshotFile.self, from: Data(bytes))
        } catch {
            let aside = moveAside()
            return Loaded(snapshot: nil, messages: [
                "state file \(path) is damaged (\(Self.describe(error))); " +
                (aside.map { "moved it to \($0); " } ?? "") + "starting with an empty queue",
            ])
        }
        var messages: [String] = []
        var snapshot = file.snapshot
        if file.snapshot.version > Snapshot.currentVersion {
            messages.append("state file is from a newer jukebox (version \(file.snapshot.version)); reading what this version knows")
        }
        // The newer place, when the sidecar belongs to this very queue file.
        switch loadPlace(queueHash: Self.hash(bytes), tracks: snapshot.tracks.count) {
        case .matching(let place): place.apply(to: &snapshot)
        case .damaged(let message): messages.append(message)
        case .none: break
        }
        if !file.problems.isEmpty {
            let copy = copyAside(bytes)
            // With the original kept aside, the repaired file replaces it: the next start reads
            // it clean instead of making another copy.
            if copy != nil { _ = try? save(snapshot) }
            messages.append("state file \(path) has values this version cannot use (\(file.problems.prefix(10).joined(separator: "; "))"
                            + (file.problems.count > 10 ? "; \(file.problems.count - 10) more" : "") + "); "
                            + (copy.map { "copied it to \($0); " } ?? "could not copy it aside; ") + "using the rest")
        }
        return Loaded(snapshot: snapshot, messages: messages)
    }

    private enum PlaceRead {
        case none
        case matching(PlaceFile)
        case damaged(String)
    }

    // The sidecar, if it belongs to the queue file with this hash. Absent, unreadable or from
    // another queue file: nothing (the queue file's own place stands). Not a valid sidecar, or
    // values that do not fit the queue it names: moved aside, never deleted, and said so.
    private func loadPlace(queueHash: UInt64, tracks: Int) -> PlaceRead {
        let bytes: [UInt8]
        do { bytes = try readFile(placePath, limit: 64 << 10) } catch {
            if error.errno == ENOENT { return .none }
            // It may hold a newer place than the queue file: kept aside (a rename needs no read)
            // rather than written over by the next place save.
            let aside = freeDamagedName(for: placePath).flatMap { rename(cPath(placePath), cPath($0)) == 0 ? $0 : nil }
            return .damaged("cannot read the place file \(placePath) (\(error)); " + (aside.map { "moved it to \($0); " } ?? "")
                            + "resuming at the place saved with the queue")
        }
        let place: PlaceFile?
        if PlaceSlots.isSlotted(bytes) {
            let records = PlaceSlots.records(bytes)
            // One slot torn by a cut mid-write is the other's reason to be: no damage. Of the
            // records naming this queue file, the newest (an older queue file's are stale).
            let mine = records.filter { $0.place.queue == PlaceFile.hex(queueHash) }
            if !records.isEmpty && mine.isEmpty { return .none }
            place = PlaceSlots.newest(mine)?.place
        } else {
            place = PlaceFile.decode(bytes)
            if let place, place.queue != PlaceFile.hex(queueHash) { return .none }
        }
        guard let place, place.fits(tracks: tracks) else {
            let aside = freeDamagedName(for: placePath).flatMap { rename(cPath(placePath), cPath($0)) == 0 ? $0 : nil }
            return .damaged("place file \(placePath) is damaged; " + (aside.map { "moved it to \($0); " } ?? "")
                            + "resuming at the place saved with the queue")
        }
        return .matching(place)
    }

    /// The hash a place sidecar names its queue file by: 64-bit FNV-1a of the file's bytes.
    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    /// The hash of the queue file on disk when its queue (tracks, order, shuffle) is `snapshot`'s,
    /// so a place can be saved against it without rewriting it; nil when there is none or it
    /// holds another queue. Reads and parses the whole file: once per start, on the writer thread.
    public func queueFileHash(matching snapshot: Snapshot) -> UInt64? {
        guard let bytes = try? readFile(path, limit: 256 << 20), JSONText.problem(bytes) == nil,
              let file = try? JSONDecoder().decode(SnapshotFile.self, from: Data(bytes)), file.problems.isEmpty else { return nil }
        let s = file.snapshot
        guard s.tracks == snapshot.tracks, s.order == snapshot.order, s.shuffle == snapshot.shuffle,
              s.shuffleSeed == snapshot.shuffleSeed else { return nil }
        return Self.hash(bytes)
    }

    /// Takes the state file's lock for the rest of the process's life: `flock` on `FILE.lock`
    /// beside it (opened with `O_NOFOLLOW`, so a planted symlink cannot redirect it), so that two
    /// players never both write one state file. The lock goes with the process, however it ends.
    /// Throws `.held` (with the holder's pid when known) when another process has it, and
    /// `.refused` when the name holds a symbolic link or anything but a plain file of one name.
    public func lock() throws(StateLockError) {
        let folder = Paths.directory(path)
        do { if !isDirectory(folder) { try makeDirectories(folder) } } catch { throw .failed(error) }
        let lockPath = path + ".lock"
        let fd = retryingEINTR { open(cPath(lockPath), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644) }
        guard fd >= 0 else {
            // A link at the lock's name was planted (the player never makes one): playing on
            // unprotected would let a second player write over this one's state.
            if errno == ELOOP { throw .refused(path: lockPath, reason: "it is a symbolic link") }
            throw .failed(SystemError(call: "open", subject: lockPath, errno: errno))
        }
        var info = stat()
        if fstat(fd, &info) != 0 || info.st_mode & S_IFMT != S_IFREG || info.st_nlink != 1 {
            close(fd)
            throw .refused(path: lockPath, reason: info.st_mode & S_IFMT != S_IFREG ? "it is not a regular file" : "it has other names (hard links)")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            let failure = SystemError(call: "flock", subject: lockPath, errno: errno)
            let holder = (try? readFile(lockPath, limit: 64)).flatMap { String(decoding: $0, as: UTF8.self).split(separator: "\n").first.map(String.init) }
            close(fd)
            throw busy ? .held(path: path, pid: holder) : .failed(failure)
        }
        // Who holds it, for the message the next one gives; the descriptor stays open on purpose.
        ftruncate(fd, 0)
        writeAll(fd, "\(getpid())\n")
    }

    /// Writes `snapshot` atomically as the queue file (queue and place), with a fresh `writeID`;
    /// returns the hash a place sidecar names it by. Throws with the failing call and path.
    @discardableResult
    public func save(_ snapshot: Snapshot) throws(SystemError) -> UInt64 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(QueueFile(snapshot: snapshot, writeID: UInt64.random(in: 1...UInt64.max))) } catch {
            throw SystemError(call: "encode", subject: path, errno: EINVAL)
        }
        let bytes = Array(data) + [0x0A]
        try writeAtomically(bytes, to: path, beforeSync: beforeSync)
        return Self.hash(bytes)
    }

    /// Writes `snapshot`'s place to the sidecar, naming the queue file (by `queueHash`) that holds
    /// its queue: in place, into the slot not holding the newest record, then `fdatasync`
    /// (`PlaceSlots`); a sidecar that is missing, of the first layout, or cannot be read or
    /// written in place is created whole, the atomic way. Either way a power cut leaves the previous place or this one. Throws with the
    /// failing call and path.
    public func savePlace(_ snapshot: Snapshot, queueHash: UInt64) throws(SystemError) {
        let place = PlaceFile(snapshot, queueHash: queueHash)
        // A sidecar that cannot be read or written in place (EIO on its blocks) is replaced whole,
        // in new blocks, as a missing one is: written over in place, it would fail every save after.
        if (try? PlaceSlots.overwrite(place, at: placePath, beforeSync: beforeSync)) == true { return }
        try writeAtomically(PlaceSlots.created(place), to: placePath, beforeSync: beforeSync)
    }

    // A file that fails to parse is kept for a person to look at, never deleted.
    private func moveAside() -> String? {
        guard let candidate = freeDamagedName(for: path) else { return nil }
        return rename(cPath(path), cPath(candidate)) == 0 ? candidate : nil
    }

    // A file with wrong values is copied: what is valid in it is used and saved over it later.
    private func copyAside(_ bytes: [UInt8]) -> String? {
        guard let candidate = freeDamagedName(for: path) else { return nil }
        do { try writeAtomically(bytes, to: candidate) } catch { return nil }
        return candidate
    }

    private func freeDamagedName(for file: String) -> String? {
        (1...1000).lazy.map { "\(file).damaged-\($0)" }.first { !fileExists($0) }
    }

    static func describe(_ error: any Error) -> String {
        if let e = error as? JSONTextError { return "not valid JSON: \(e.problem)" }
        if let e = error as? DecodingError {
            switch e {
            case .dataCorrupted(let c): return "not valid JSON" + (c.codingPath.isEmpty ? "" : " at \(c.codingPath.map(\.stringValue).joined(separator: "."))")
            case .keyNotFound(let k, _): return "missing \(k.stringValue)"
            case .typeMismatch(_, let c), .valueNotFound(_, let c):
                return "unexpected value at \(c.codingPath.map(\.stringValue).joined(separator: "."))"
            @unknown default: return "unreadable"
            }
        }
        return "unreadable"
    }
}

/// Why `StateStore.lock` failed.
public enum StateLockError: Error, CustomStringConvertible {
    /// Another process holds the lock: another player uses this state file.
    case held(path: String, pid: String?)
    /// The lock file could not be made or locked.
    case failed(SystemError)
    /// Something the player would not have made is at the lock's name (a symbolic link, a FIFO,
    /// a file with other names): someone put it there, so the lock is not taken through it.
    case refused(path: String, reason: String)

    public var description: String {
        switch self {
        case .held(let path, let pid):
            return "another jukebox is using the state file \(path)" + (pid.map { " (pid \($0))" } ?? "")
                + "; stop it first, or give this one its own state file"
        case .failed(let error):
            return "cannot lock the state file: \(error)"
        case .refused(let path, let reason):
            return "refusing the state file's lock \(path): \(reason), which jukebox never makes; "
                + "someone else may have put it there: remove it, or give the player a state file in a folder of its own"
        }
    }
}

/// Writes `bytes` to `path` so that a crash or power cut at any moment leaves either the old or
/// the new content: temp file in the same folder, fsync, rename, fsync of the folder.
/// `mode`: the new file's permissions (0600 for a secret). `beforeSync` is a test hook called
/// before each `fsync`.
public func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, beforeSync: (() -> Void)? = nil) throws(SystemError) {
    let folder = Paths.directory(path)
    if !isDirectory(folder) { try makeDirectories(folder) }
    // One fixed name: one writer per state file (its lock is held), and a leftover from a crash
    // is replaced. Created anew, never opened through whatever has that name: in a shared
    // folder a link planted there would otherwise have the file it names overwritten.
    let temp = "\(path).tmp"
    let fd = try createFresh(temp, mode: mode)
    do {
        var offset = 0
        while offset < bytes.count {
            let n = try sys("write", temp) {
                bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            }
            offset += n
        }
        beforeSync?()
        try sys("fsync", temp) { Int(fsync(fd)) }
        try sys("close", temp) { Int(close(fd)) }
    } catch {
        close(fd)
        unlink(cPath(temp))
        throw error
    }
    do {
        try sys("rename", "\(temp) → \(path)") { Int(rename(cPath(temp), cPath(path))) }
    } catch {
        unlink(cPath(temp))
        throw error
    }
    // Without this the rename itself may not survive a power cut.
    let dirfd = open(cPath(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dirfd >= 0 {
        beforeSync?()
        fsync(dirfd)
        close(dirfd)
    }
}

/// Creates the file `path` for writing, anew: with `O_CREAT|O_EXCL|O_NOFOLLOW`, so no file,
/// link or FIFO that someone else put at that name is ever written through. A name already taken
/// (a crash's leftover, a planted link) is unlinked, which removes the name and never touches
/// what a link points to, and the create tried again; a name that keeps being taken, or cannot be
/// removed (another user's file in a sticky folder), is an error naming it.
public func createFresh(_ path: String, mode: mode_t) throws(SystemError) -> Int32 {
    for _ in 0..<4 {
        let fd = retryingEINTR { open(cPath(path), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
        if fd >= 0 { return fd }
        let code = errno
        guard code == EEXIST else { throw SystemError(call: "open", subject: path, errno: code) }
        if unlink(cPath(path)) != 0, errno != ENOENT {
            let why = errno
            throw SystemError(call: "unlink", subject: path, errno: why,
                              reason: "something of that name is in the way and cannot be removed (\(errnoText(why)))")
        }
    }
    throw SystemError(call: "open", subject: path, errno: EEXIST,
                      reason: "the name is taken again each time it is removed: another process is placing files there")
}

/// `mkdir -p`.
public func makeDirectories(_ path: String) throws(SystemError) {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(cPath(current), 0o755) != 0 && errno != EEXIST {
            throw SystemError(call: "mkdir", subject: current, errno: errno)
        }
    }
}
