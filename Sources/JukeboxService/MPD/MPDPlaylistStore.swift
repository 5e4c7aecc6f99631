// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// MPD's stored playlists: one `NAME.m3u` per playlist in one folder, one entry per line, written
/// as MPD writes them (relative to the first music folder that holds the file, else absolute).
/// Everything here touches the disk, so it runs on the tag reader's thread (`MPDLoop.offLoop`),
/// never on the loop. Names come from clients: `check` refuses what could leave the folder or
/// hide in it; files are opened with `O_NOFOLLOW`, so a symlink planted in the folder is never
/// followed; writes go to an `O_EXCL` temporary file, are fsynced and renamed (or linked, when the
/// name must not exist yet) into place.
public struct MPDPlaylistStore: Sendable {
    /// The folder holding the playlists (made at the first write).
    public let folder: String
    /// The music folders relative entries are rooted in.
    public let roots: [String]
    /// Largest playlist file read (a bound on memory, not a limit anyone should meet).
    public static let maxBytes = 16 << 20

    /// A store over `folder`, with relative entries rooted in `roots`.
    /// Whether an entry may be an `http(s)://` URL (`MPDSettings.allowURLs`); off: it is left out.
    public let allowURLs: Bool

    public init(folder: String, roots: [String], allowURLs: Bool = false) {
        self.folder = folder
        self.roots = roots
        self.allowURLs = allowURLs
    }

    /// Why `name` cannot name a playlist, or nil when it can: empty, a `/` (another folder), a
    /// leading dot (`..`, hidden files, the store's own temporary files), control characters (a
    /// name is echoed in replies and logs), or longer than a file name may be.
    public static func check(_ name: String) -> MPDError? {
        let bad = name.isEmpty || name.contains("/") || name.hasPrefix(".")
            || name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }
            || name.utf8.count > Int(NAME_MAX) - 16
        return bad ? MPDError(.arg, "Bad playlist name") : nil
    }

    /// `listplaylists`: `playlist:` and `Last-Modified:` for each regular `*.m3u` file (a missing
    /// folder holds none), by name.
    public func list() -> FileWorkResult {
        let names: [String]
        do { names = try directoryEntries(folder) } catch {
            if error.errno == ENOENT { return .success(FileWorkOutput()) }
            return .failure(MPDError(.system, "cannot read the playlists folder: \(error)"))
        }
        var lines: [String] = []
        for file in names.sorted() where file.hasSuffix(".m3u") && !file.hasPrefix(".") {
            var st = stat()
            // lstat: a symlink is not one of ours and is not listed.
            guard lstat(cPath(folder + "/" + file), &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            lines += ["playlist: \(file.dropLast(4))", "Last-Modified: \(Self.iso8601(st.st_mtim.tv_sec))"]
        }
        return .success(FileWorkOutput(lines: lines))
    }

    /// The entries of playlist `name` as written (comments and empty lines left out).
    public func entries(_ name: String) -> Result<[String], MPDError> {
        if let e = Self.check(name) { return .failure(e) }
        let path = file(name)
        // A FIFO planted under the name must not hang the thread (`openRegularFile`); nor a link.
        let fd: Int32
        do throws(SystemError) { fd = try openRegularFile(path, noFollow: true) } catch {
            if [ENOENT, ELOOP, EISDIR].contains(error.errno) || error.reason != nil { return .failure(MPDError(.noExist, "No such playlist")) }
            return .failure(MPDError(.system, "cannot read playlist \(name): \(errnoText(error.errno))"))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = retryingEINTR { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if n < 0 { return .failure(MPDError(.system, "cannot read playlist \(name): \(errnoText(errno))")) }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > Self.maxBytes { return .failure(MPDError(.playlistLoad, "playlist \(name) is too large")) }
        }
        return .success(Self.parse(FileSystemPath.string(bytes)))
    }

    /// An M3U text's entries: one per line, `#` lines and blank lines left out, CRs dropped.
    public static func parse(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingTrailingSpaces() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Where an entry is on disk: absolute as written (`file://` stripped), a relative one in the
    /// first music folder where it exists (else the first folder: it is reported missing when
    /// read). nil for what jukebox cannot play (streams) or what would leave the folders (`..`).
    public func path(of entry: String) -> String? {
        switch MPDReplies.path(for: entry, roots: roots, allowURLs: allowURLs, exists: fileExists) {
        case .success(let p): return p
        case .failure(let e):
            guard e.code == .noExist, !entry.contains("://"), let first = roots.first else { return nil }
            return Paths.resolve(entry, against: first)
        }
    }

    /// Writes `entries` as playlist `name`: `create` refuses an existing name (MPD's `exist`),
    /// otherwise it is replaced. Atomic: readers see the old file or the new one, whole.
    public func write(_ name: String, entries: [String], create: Bool) -> Result<Void, MPDError> {
        if let e = Self.check(name) { return .failure(e) }
        if !isDirectory(folder) {
            do { try makeDirectories(folder) } catch { return .failure(MPDError(.system, "cannot make the playlists folder: \(error)")) }
        }
        let text = entries.map { $0 + "\n" }.joined()
        let target = file(name)
        var temp = ""
        var fd: Int32 = -1
        for attempt in 0..<16 {
            // A leading dot: never a playlist name (`check`), never listed.
            temp = folder + "/.\(name).\(getpid()).\(attempt).tmp"
            fd = open(cPath(temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { return .failure(MPDError(.system, "cannot write playlist \(name): \(errnoText(errno))")) }
        do {
            let bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                offset += try sys("write", temp) { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) } }
            }
            try sys("fsync", temp) { Int(fsync(fd)) }
            try sys("close", temp) { Int(close(fd)) }
            fd = -1
            if create {
                let code = Self.renameNoReplace(temp, target)
                if code != 0 {
                    unlink(cPath(temp))
                    if code == EEXIST { return .failure(MPDError(.exist, "Playlist already exists")) }
                    return .failure(MPDError(.system, "cannot write playlist \(name): \(errnoText(code))"))
                }
            } else {
                try sys("rename", temp) { Int(Glibc.rename(cPath(temp), cPath(target))) }
            }
        } catch {
            if fd >= 0 { close(fd) }
            unlink(cPath(temp))
            return .failure(MPDError(.system, "cannot write playlist \(name): \(error)"))
        }
        syncFolder()
        return .success(())
    }

    /// `rm NAME`.
    public func remove(_ name: String) -> Result<Void, MPDError> {
        if let e = Self.check(name) { return .failure(e) }
        guard unlink(cPath(file(name))) == 0 else {
            return .failure(errno == ENOENT ? MPDError(.noExist, "No such playlist") : MPDError(.system, "cannot remove playlist \(name): \(errnoText(errno))"))
        }
        syncFolder()
        return .success(())
    }

    /// `rename FROM TO`: TO must not exist (MPD's `exist`).
    public func rename(_ from: String, to: String) -> Result<Void, MPDError> {
        if let e = Self.check(from) ?? Self.check(to) { return .failure(e) }
        var st = stat()
        guard lstat(cPath(file(from)), &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return .failure(MPDError(.noExist, "No such playlist")) }
        let code = Self.renameNoReplace(file(from), file(to))
        guard code == 0 else {
            return .failure(code == EEXIST ? MPDError(.exist, "Playlist already exists") : MPDError(.system, "cannot rename playlist \(from): \(errnoText(code))"))
        }
        syncFolder()
        return .success(())
    }

    private func file(_ name: String) -> String { folder + "/" + name + ".m3u" }

    // Moves `from` to `to` unless `to` exists: 0, or the errno (EEXIST when it exists). link +
    // unlink makes the check and the move one step; a file system without hard links (FAT)
    // gets lstat + rename, whose gap no other writer of ours can use: all of them run in order
    // on one thread.
    static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        if link(from, to) == 0 {
            unlink(cPath(from))
            return 0
        }
        let code = errno
        guard code == EPERM || code == EOPNOTSUPP || code == EMLINK else { return code }
        var st = stat()
        if lstat(cPath(to), &st) == 0 { return EEXIST }
        return Glibc.rename(cPath(from), cPath(to)) == 0 ? 0 : errno
    }

    // Without this a rename, link or unlink may not survive a power cut.
    private func syncFolder() {
        let fd = open(cPath(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Seconds since the epoch as MPD's `Last-Modified` (ISO 8601, UTC).
    static func iso8601(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}

extension Substring {
    fileprivate func trimmingTrailingSpaces() -> String {
        var s = self
        while let last = s.last, last == " " || last == "\t" || last == "\r" { s = s.dropLast() }
        return String(s)
    }
}
