// SPDX-License-Identifier: MIT
import CWeb
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// `POST /api/upload?folder=FOLDER&name=NAME` with the file's bytes as the body
/// (`application/octet-stream`): docs/WEB.md, "Upload". The body never sits in memory: the shim
/// hands it over in chunks (`jb_web_body_hooks`) that go straight to a hidden temporary file in the
/// target folder; the decisions are `UploadRules` (pure); whether the bytes are audio the player
/// plays is the player's own decoder (`Options.playable`), never the name.
extension WebServer {
    /// The hooks libmicrohttpd's shim calls for a body it streams.
    static let uploadHooks = jb_web_body_hooks(
        begin: { context, request, now in
            guard let context, let request, let now else { return nil }
            return Unmanaged<WebServer>.fromOpaque(context).takeUnretainedValue().beginUpload(request.pointee, now)
        },
        chunk: { sink, data, length in
            guard let sink, let data else { return 0 }
            return Unmanaged<UploadSink>.fromOpaque(sink).takeUnretainedValue().take(UnsafeRawBufferPointer(start: data, count: length))
        },
        end: { sink, answered in
            guard let sink else { return }
            Unmanaged<UploadSink>.fromOpaque(sink).takeRetainedValue().end()
        })

    /// At the headers of a request: a sink for an upload (refused or not), nil for any other route.
    private func beginUpload(_ request: jb_web_request, _ now: UnsafeMutablePointer<Int32>) -> UnsafeMutableRawPointer? {
        func bytes(_ p: UnsafePointer<CChar>?) -> [UInt8]? { p.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } }
        func text(_ p: UnsafePointer<CChar>?) -> String? { bytes(p).map { String(decoding: $0, as: UTF8.self) } }
        guard WebRoute.route(method: text(request.method) ?? "", path: text(request.url) ?? "") == .upload else { return nil }
        touch()
        let sink = UploadSink(gate: uploadGate, journal: options.stateFolder + "/web-uploads", playable: options.playable)
        let length = UploadRules.length(text(request.content_length), limits: options.uploads)
        let refusal = prepare(sink, request, length: length, name: bytes(request.query_name), folder: text(request.query_folder))
        if let refusal {
            sink.refusal = refusal
            // A body of a known, bounded length is read and dropped, so the page reads the answer
            // (an answer sent while a browser still sends ends in a reset it shows as no answer);
            // one over the limit, or of unknown length, is not read at all.
            if case .failure = length { now.pointee = 1 }
        }
        return Unmanaged.passRetained(sink).toOpaque()
    }

    private func prepare(_ sink: UploadSink, _ request: jb_web_request, length: Result<Int64, UploadRules.Refusal>,
                         name: [UInt8]?, folder: String?) -> UploadRules.Refusal? {
        func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } }
        if let refusal = RequestGuard.check(method: "POST", localPeer: MPDPeer.isLocal(request.peer), host: text(request.host),
                                            origin: text(request.origin), contentType: text(request.content_type),
                                            bodyTooLarge: false, machineName: machineName, bodyType: "application/octet-stream") {
            return UploadRules.Refusal(refusal.status, refusal.error)
        }
        var incoming = Incoming(method: "POST", path: "/api/upload", cookie: text(request.cookie), body: [], bodyTooLarge: false, localPeer: true)
        incoming.csrf = text(request.csrf)
        switch lock.withLock({ sessions.check(cookie: incoming.sessionToken, csrfHeader: incoming.csrf, now: monotonicNow()) }) {
        case .allowed: break
        case .signInFirst: return UploadRules.Refusal(401, "sign in first")
        case .badCSRF: return UploadRules.Refusal(403, "bad CSRF token")
        }
        let bytes: Int64
        switch length {
        case .failure(let refusal): return refusal
        case .success(let n): bytes = n
        }
        let parts: [String]
        switch UploadRules.nameParts(name ?? []) {
        case .failure(let refusal): return refusal
        case .success(let p): parts = p
        }
        // The music folders, as the player knows them (its config: the web face reads no policy).
        let roots: [String]
        switch musicFolders() {
        case .failure(let refusal): return refusal
        case .success(let r): roots = r
        }
        let target: String
        if let folder, !folder.isEmpty {
            guard let real = LibraryListing.folderInside(folder, roots: roots) else {
                return UploadRules.Refusal(400, "not a folder in the music folders: \(folder)")
            }
            target = real
        } else {
            guard roots.count == 1, let real = LibraryListing.folderInside(roots[0], roots: roots) else {
                return UploadRules.Refusal(400, "choose a folder of the library to upload into")
            }
            target = real
        }
        if let refusal = sink.gate.admit(sink, length: bytes, limits: options.uploads) { return refusal }
        return sink.open(folder: target, parts: parts, length: bytes, roots: roots, limits: options.uploads)
    }

    /// The resolved music folders from the player's `ls --json` (one: its `path`; several: its
    /// `folders`). With one music folder that reply lists its top level and reads those files'
    /// tags, so it is kept for `UploadGate.rootsLifetime` seconds: a folder of 100 files dropped
    /// asks once, not 100 times. (Where a file may go is still resolved for every file.)
    private func musicFolders() -> Result<[String], UploadRules.Refusal> {
        if let roots = uploadGate.cachedRoots(now: monotonicNow()) { return .success(roots) }
        let reply = ask("ls --json", refused: 400)
        guard reply.status == 200 else {
            let words = (try? JSONDecoder().decode([String: String].self, from: Data(reply.body.utf8)))?["error"] ?? reply.body
            return .failure(UploadRules.Refusal(reply.status, words))
        }
        struct Listing: Decodable {
            struct Folder: Decodable { var path: String }
            var path: String?
            var folders: [Folder]
        }
        guard let listing = try? JSONDecoder().decode(Listing.self, from: Data(reply.body.utf8)) else {
            return .failure(UploadRules.Refusal(502, "unexpected answer from the player"))
        }
        let roots = listing.path.map { [$0] } ?? listing.folders.map(\.path)
        uploadGate.keep(roots: roots, now: monotonicNow())
        return .success(roots)
    }

    /// The body is whole: the answer of the upload.
    func finishUpload(_ raw: UnsafeMutableRawPointer) -> Reply {
        touch()
        let sink = Unmanaged<UploadSink>.fromOpaque(raw).takeUnretainedValue()
        switch sink.finish() {
        case .failure(let refusal): return .error(refusal.status, refusal.error)
        case .success(let path):
            // MPD's clients see the new file without an `update` of their own (the player's answer
            // changes nothing here: the file is in place, and the web's listing reads the folder).
            if let client = try? ControlClient(path: options.socketPath) {
                _ = client.request("update " + Paths.directory(path), timeout: 2)
            }
            return .json(201, "{\"path\":" + JSONText.quoted(path) + "}")
        }
    }

    /// Removes the temporary files of uploads a power cut or a crash left (listed in the journal
    /// folder before each was created); called at start.
    public func removeUploadsLeftBehind() {
        UploadSink.removeLeftBehind(journal: options.stateFolder + "/web-uploads")
    }
}

/// The uploads running: how many and their bytes (for `UploadRules.admit` and the free space).
final class UploadGate: @unchecked Sendable {
    private let lock = Monitor()
    private var runningBytes: [ObjectIdentifier: Int64] = [:]
    private var roots: (folders: [String], at: Double)?
    static let rootsLifetime = 30.0

    func cachedRoots(now: Double) -> [String]? {
        lock.withLock { roots.flatMap { now - $0.at < Self.rootsLifetime ? $0.folders : nil } }
    }

    func keep(roots folders: [String], now: Double) { lock.withLock { roots = (folders, now) } }

    func admit(_ sink: UploadSink, length: Int64, limits: UploadRules.Limits) -> UploadRules.Refusal? {
        lock.withLock {
            if let refusal = UploadRules.admit(length: length, running: runningBytes.count, runningBytes: runningBytes.values.reduce(0, +), limits: limits) {
                return refusal
            }
            runningBytes[ObjectIdentifier(sink)] = length
            return nil
        }
    }

    /// The bytes the other running uploads will still need.
    func reserved(besides sink: UploadSink) -> Int64 {
        lock.withLock { runningBytes.filter { $0.key != ObjectIdentifier(sink) }.values.reduce(0, +) }
    }

    /// How many run now.
    var running: Int { lock.withLock { runningBytes.count } }

    func release(_ sink: UploadSink) { _ = lock.withLock { runningBytes.removeValue(forKey: ObjectIdentifier(sink)) } }
}

/// One upload's files: the target folder, the hidden temporary file, its journal entry.
final class UploadSink: @unchecked Sendable {
    let gate: UploadGate
    let journal: String
    let playable: (@Sendable (String) -> String?)?
    /// Set: the body is dropped and this is the answer.
    var refusal: UploadRules.Refusal?
    private var expected: Int64 = 0
    private var received: Int64 = 0
    private var folderFD: Int32 = -1
    private var fileFD: Int32 = -1
    private var folder = ""
    private var parts: [String] = []
    private var temporary: String?
    private var journalEntry: String?
    private var finished = false

    init(gate: UploadGate, journal: String, playable: (@Sendable (String) -> String?)?) {
        self.gate = gate
        self.journal = journal
        self.playable = playable
    }

    /// Opens the target folder (no link followed: the descriptor's own path must still be in the
    /// music folders), checks the name is free and the disk has room, writes the journal entry,
    /// creates the temporary file (O_CREAT|O_EXCL|O_NOFOLLOW).
    func open(folder path: String, parts: [String], length: Int64, roots: [String], limits: UploadRules.Limits) -> UploadRules.Refusal? {
        expected = length
        self.parts = parts
        folderFD = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folderFD >= 0 else { return UploadRules.Refusal(400, "cannot open the folder: \(errnoText(errno))") }
        guard let real = Self.pathOf(fd: folderFD), LibraryListing.isInside(real, roots: roots) else {
            return UploadRules.Refusal(400, "not a folder in the music folders: \(path)")
        }
        folder = real
        // The name taken already (a file, or a folder part that is not a folder): 409 before a byte is read.
        var dir = dup(folderFD)
        defer { if dir >= 0 { close(dir) } }
        for (index, part) in parts.enumerated() {
            var st = stat()
            guard fstatat(dir, part, &st, AT_SYMLINK_NOFOLLOW) == 0 else { break }
            if index == parts.count - 1 || st.st_mode & S_IFMT != S_IFDIR {
                return UploadRules.Refusal(409, "\(parts[0...index].joined(separator: "/")) is already there")
            }
            let next = openat(dir, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            close(dir)
            dir = next
            guard dir >= 0 else { return UploadRules.Refusal(409, "cannot open the folder \(part): \(errnoText(errno))") }
        }
        var fs = statvfs()
        guard fstatvfs(folderFD, &fs) == 0 else { return UploadRules.Refusal(500, "cannot read the free space: \(errnoText(errno))") }
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        if let refusal = UploadRules.space(free: free, length: length, reservedBytes: gate.reserved(besides: self), limits: limits) {
            return refusal
        }
        var random = [UInt8](repeating: 0, count: 16)
        guard jb_web_random(&random, random.count) == 0 else { return UploadRules.Refusal(500, "no random bytes") }
        let hex = random.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let name = UploadRules.temporaryName(hex)
        // The journal entry first, durable before the file exists: a power cut leaves nothing unlisted.
        if let problem = writeJournal(hex: hex, path: real + "/" + name) { return UploadRules.Refusal(500, problem) }
        fileFD = openat(folderFD, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fileFD >= 0 else {
            let error = errno
            removeJournal()
            let hint = error == EACCES || error == EROFS || error == EPERM
                ? " (the web face, user jukebox, may not write this folder: docs/WEB.md, Upload)" : ""
            return UploadRules.Refusal(500, "cannot create the file: \(errnoText(error))" + hint)
        }
        fchmod(fileFD, 0o644)  // readable by the player whatever the umask
        temporary = name
        return nil
    }

    /// The next bytes: written, or dropped once refused. 0: go on.
    func take(_ data: UnsafeRawBufferPointer) -> Int32 {
        guard refusal == nil, fileFD >= 0 else { return 0 }
        received += Int64(data.count)
        var done = 0
        while done < data.count {
            let n = write(fileFD, data.baseAddress! + done, data.count - done)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let error = n < 0 ? errno : ENOSPC
                refusal = error == ENOSPC || error == EDQUOT
                    ? UploadRules.Refusal(507, "the disk is full: the upload was removed")
                    : UploadRules.Refusal(500, "cannot write the file: \(errnoText(error)); the upload was removed")
                removeTemporary()
                return 0
            }
            done += n
        }
        return 0
    }

    /// The body is whole: fsynced, checked by the player's decoder, moved to its name without
    /// replacing anything, the folder fsynced. The final path, or the refusal.
    func finish() -> Result<String, UploadRules.Refusal> {
        if let refusal { removeTemporary(); return .failure(refusal) }
        guard let temporary, fileFD >= 0 else { return .failure(UploadRules.Refusal(500, "the upload has no file")) }
        guard received == expected else {
            removeTemporary()
            return .failure(UploadRules.Refusal(400, "the body is not as long as its Content-Length"))
        }
        guard fsync(fileFD) == 0 else {
            let error = errno
            removeTemporary()
            return .failure(UploadRules.Refusal(error == ENOSPC ? 507 : 500, "cannot write the file: \(errnoText(error)); the upload was removed"))
        }
        close(fileFD)
        fileFD = -1
        // No decoder given: nothing is taken (only what the player plays may land in its folders).
        if let problem = playable.map({ $0(folder + "/" + temporary) }) ?? "no decoder to check it with" {
            removeTemporary()
            return .failure(UploadRules.Refusal(415, "not audio the player can play: \(problem)"))
        }
        // The folders of a folder upload, made now (a refused file leaves none).
        var dirs: [Int32] = [dup(folderFD)]
        defer { for d in dirs where d >= 0 { close(d) } }
        for part in parts.dropLast() {
            let parent = dirs[dirs.count - 1]
            let made = mkdirat(parent, part, 0o755) == 0
            if made {
                _ = fsync(parent)
            } else if errno != EEXIST {
                let error = errno
                removeTemporary()
                return .failure(UploadRules.Refusal(500, "cannot make the folder \(part): \(errnoText(error))"))
            }
            let next = openat(parent, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                let error = errno
                removeTemporary()
                return .failure(UploadRules.Refusal(409, "\(part) is not a folder: \(errnoText(error))"))
            }
            if made { fchmod(next, 0o755) }  // readable by the player whatever the umask
            dirs.append(next)
        }
        let leaf = dirs[dirs.count - 1]
        let name = parts[parts.count - 1]
        guard jb_web_rename_noreplace(folderFD, temporary, leaf, name) == 0 else {
            let error = errno
            removeTemporary()
            if error == EEXIST { return .failure(UploadRules.Refusal(409, "\(parts.joined(separator: "/")) is already there")) }
            return .failure(UploadRules.Refusal(500, "cannot move the file into place: \(errnoText(error))"))
        }
        self.temporary = nil
        finished = true
        _ = fsync(leaf)
        _ = fsync(folderFD)
        removeJournal()
        return .success(folder + "/" + parts.joined(separator: "/"))
    }

    /// The request is over (answered, or the client went away): whatever is not in place is removed.
    func end() {
        if !finished { removeTemporary() }
        if fileFD >= 0 { close(fileFD); fileFD = -1 }
        if folderFD >= 0 { close(folderFD); folderFD = -1 }
        gate.release(self)
    }

    private func removeTemporary() {
        if fileFD >= 0 { close(fileFD); fileFD = -1 }
        if let temporary, folderFD >= 0 {
            unlinkat(folderFD, temporary, 0)
            _ = fsync(folderFD)
        }
        temporary = nil
        removeJournal()
    }

    private func writeJournal(hex: String, path: String) -> String? {
        if mkdir(journal, 0o700) != 0 && errno != EEXIST { return "cannot make \(journal): \(errnoText(errno))" }
        let entry = journal + "/" + hex
        let fd = Glibc.open(entry, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "cannot write \(entry): \(errnoText(errno))" }
        let bytes = Array(path.utf8)
        let ok = write(fd, bytes, bytes.count) == bytes.count && fsync(fd) == 0
        close(fd)
        guard ok else { unlink(entry); return "cannot write \(entry)" }
        let dir = Glibc.open(journal, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { _ = fsync(dir); close(dir) }
        journalEntry = entry
        return nil
    }

    private func removeJournal() {
        if let journalEntry { unlink(journalEntry) }
        journalEntry = nil
    }

    /// The path the kernel has for an open descriptor (`/proc/self/fd/N`).
    static func pathOf(fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = readlink("/proc/self/fd/\(fd)", &buffer, 4096)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Every journal entry's temporary file removed (only a name `UploadRules.isTemporaryName`
    /// allows), then the entry.
    static func removeLeftBehind(journal: String) {
        guard let names = try? directoryEntries(journal) else { return }
        for name in names where !name.hasPrefix(".") {
            let entry = journal + "/" + name
            let fd = Glibc.open(entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4097)
            let n = read(fd, &buffer, 4096)
            close(fd)
            if n > 0 {
                let path = String(decoding: buffer[0..<n], as: UTF8.self)
                if path.hasPrefix("/"), UploadRules.isTemporaryName(Paths.fileName(path)) { unlink(path) }
            }
            unlink(entry)
        }
    }
}
