// SPDX-License-Identifier: MIT
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The music folders as the player lists them (`ls --json` without a path), kept 30 s: the web
/// face reads covers only inside them, by the listing's own rule, and learns them from the one
/// authority (the player's config), not from a copy of its own.
final class MusicRoots: @unchecked Sendable {
    private let lock = Monitor()
    private var roots: [String] = []
    private var at = -Double.infinity

    private struct Listing: Decodable {
        struct Folder: Decodable { var path: String }
        var path: String?
        var folders: [Folder]
    }

    /// Sets the folders as if the player had listed them now (tests).
    func preset(_ folders: [String]) {
        lock.withLock {
            roots = folders.compactMap(realPath)
            at = monotonicNow()
        }
    }

    func get(_ ask: (String) -> WebServer.Reply) -> [String] {
        if let cached = lock.withLock({ monotonicNow() - at < 30 && !roots.isEmpty ? roots : nil }) { return cached }
        let reply = ask("ls --json")
        guard reply.status == 200, let listing = try? JSONDecoder().decode(Listing.self, from: Data(reply.body.utf8)) else { return [] }
        // One music folder: the listing is that folder; several: its folders are them.
        let found = (listing.path.map { [$0] } ?? listing.folders.map(\.path)).compactMap(realPath)
        lock.withLock {
            roots = found
            at = monotonicNow()
        }
        return found
    }
}

/// `path` with every link and `..` resolved, or nil when it does not exist.
func realPath(_ path: String) -> String? {
    guard let p = realpath(cPath(path), nil) else { return nil }
    defer { free(p) }
    return pathString(cString: p)
}

func isInside(_ path: String, _ roots: [String]) -> Bool {
    roots.contains { root in path == root || path.hasPrefix(root == "/" ? "/" : root + "/") }
}

extension WebServer {
    /// `GET /api/cover?path=FILE_OR_FOLDER`: the cover of a track or folder as its bytes. Read by
    /// this process on the connection's thread (never the player's loop): a cover file of the
    /// folder (`CoverImage.choose`), else the picture embedded in the track (TagLib), else, for a
    /// folder, in its first audio file. Only inside the music folders (links resolved, as the
    /// listing); at most `CoverImage.maxBytes`; JPEG or PNG by its bytes, else none. 404 when
    /// there is none (the page shows its placeholder); an ETag, and 304 when the page has it.
    func cover(_ path: String?, ifNoneMatch: String?) -> Reply {
        guard let path, path.hasPrefix("/"), path.utf8.count <= 4096,
              !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return .error(400, "not a usable path") }
        let roots = musicRoots.get { ask($0) }
        // The same answer whether it exists or not: nothing is told about what lies outside.
        guard let real = realPath(path), isInside(real, roots) else { return .error(404, "no cover") }
        let folderOfIt = isDirectory(real)
        let folder = folderOfIt ? real : Paths.directory(real)
        let names = (try? directoryEntries(folder)) ?? []
        var bytes: [UInt8]?
        if let name = CoverImage.choose(names), let file = realPath(folder + "/" + name), isInside(file, roots) {
            bytes = Self.image(file)
        }
        if bytes == nil, let picture = options.embeddedPicture {
            let track = folderOfIt ? names.filter { !$0.hasPrefix(".") && Library.isAudio($0) }.sorted(by: Library.naturalLess).first
                .flatMap { realPath(folder + "/" + $0) }.flatMap { isInside($0, roots) ? $0 : nil } : real
            if let track, fileKind(track) == .regular, Library.isAudio(track),
               let found = picture(track, CoverImage.maxBytes), found.count <= CoverImage.maxBytes, CoverImage.sniff(found) != nil {
                bytes = found
            }
        }
        guard let bytes, let type = CoverImage.sniff(bytes) else { return .error(404, "no cover") }
        let etag = CoverImage.etag(bytes)
        let headers = [("ETag", etag), ("Cache-Control", "private, max-age=60")]
        if CoverImage.matches(ifNoneMatch: ifNoneMatch, etag) {
            var reply = Reply(status: 304, body: "", bytes: [], contentType: type)
            reply.headers = headers
            return reply
        }
        var reply = Reply(status: 200, body: "", bytes: bytes, contentType: type)
        reply.headers = headers
        return reply
    }

    /// The image file's bytes (a regular file, no link followed: `path` is resolved already),
    /// nil when it is larger than `CoverImage.maxBytes` or not JPEG or PNG.
    static func image(_ path: String) -> [UInt8]? {
        guard let fd = try? openRegularFile(path, noFollow: true) else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, Int(st.st_size) <= CoverImage.maxBytes else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        guard done == bytes.count, CoverImage.sniff(bytes) != nil else { return nil }
        return bytes
    }

    /// `GET /api/search?q=TEXT`: the player's `search --json TEXT`.
    func search(_ text: String?) -> Reply {
        guard let text, !text.allSatisfy({ $0 == " " || $0 == "\t" }) else { return .error(400, "search for what? (q=TEXT)") }
        guard text.utf8.count <= LibrarySearch.maxText,
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return .error(400, "a search is one line of at most \(LibrarySearch.maxText) bytes")
        }
        return ask("search --json " + text, refused: 400)
    }

    /// The stations file: `stations.m3u` in the web face's state folder, beside `web-pin`.
    var stationsPath: String { options.stateFolder + "/stations.m3u" }

    /// `GET /api/stations`: `{"stations":[{"name":…,"url":…}],"file":…}` (none when no file).
    func stations() -> Reply {
        let q = JSONText.quoted
        let list = readStations().map { "{\"name\":" + q($0.name) + ",\"url\":" + q($0.url) + "}" }
        return .json(200, "{\"stations\":[" + list.joined(separator: ",") + "],\"file\":" + q(stationsPath) + "}")
    }

    func readStations() -> [Station] {
        // O_NOFOLLOW: a link planted in the state folder is not followed.
        guard let fd = try? openRegularFile(stationsPath, noFollow: true) else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= 1 << 20 {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return StationList.parse(String(decoding: bytes, as: UTF8.self))
    }

    struct StationsBody: Codable { var stations: [Station] }

    /// `POST /api/stations/save {"stations":[…]}` (a session): the whole list, validated
    /// (`StationList.problem`), written atomically; 400 with the first problem.
    func saveStations(_ request: Incoming) -> Reply {
        switch lock.withLock({ sessions.check(cookie: request.sessionToken, csrfHeader: request.csrf, now: monotonicNow()) }) {
        case .allowed: break
        case .signInFirst: return .error(401, "sign in first")
        case .badCSRF: return .error(403, "bad CSRF token")
        }
        guard let body = decode(StationsBody.self, request.body) else { return .error(400, "the body must be {\"stations\":[{\"name\":…,\"url\":…}]}") }
        if let problem = StationList.problem(body.stations) { return .error(400, problem) }
        do throws(SystemError) {
            try writeAtomically(Array(StationList.m3u(body.stations).utf8), to: stationsPath, mode: 0o644)
        } catch {
            return .error(500, "cannot write the stations: \(error)")
        }
        return stations()
    }
}
