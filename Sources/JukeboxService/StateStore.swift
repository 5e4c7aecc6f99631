// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
#if canImport(Glibc)
import Glibc
#endif

/// The JSON state file: written atomically and power-cut safe, read leniently.
///
/// Write: a temp file beside the target, `fsync`, `rename` over the target, `fsync` of the
/// folder, so after a power cut the file is either the old or the new one, never a mix.
/// Read: a file that cannot be parsed is moved aside (never deleted) and reported, and the
/// player starts empty; tracks whose files are gone are dropped with a message.
public struct StateStore: Sendable {
    /// Path of the state file.
    public let path: String

    /// A store for the file at `path` (its folder is created on first save).
    public init(path: String) {
        self.path = path
    }

    /// What loading found.
    public struct Loaded: Equatable, Sendable {
        /// The snapshot to restore, or nil when there was none or it was unreadable.
        public var snapshot: Snapshot?
        /// Things to tell the user (dropped tracks, a moved-aside file).
        public var messages: [String]
    }

    /// Reads the state file. Never throws: every problem becomes a message and, at worst, an
    /// empty start. `exists` decides whether a track's file is still there.
    public func load(exists: (String) -> Bool = fileExists) -> Loaded {
        let bytes: [UInt8]
        do {
            bytes = try readFile(path, limit: 256 << 20)
        } catch {
            if error.errno == ENOENT { return Loaded(snapshot: nil, messages: []) }
            return Loaded(snapshot: nil, messages: ["cannot read state file: \(error)"])
        }
        let snapshot: Snapshot
        do {
            if let problem = JSONText.problem(bytes) { throw JSONTextError(problem: problem) }
            snapshot = try JSONDecoder().decode(Snapshot.self, from: Data(bytes))
        } catch {
            let aside = moveAside()
            return Loaded(snapshot: nil, messages: [
                "state file \(path) is damaged (\(Self.describe(error))); " +
                (aside.map { "moved it to \($0); " } ?? "") + "starting with an empty queue",
            ])
        }
        var messages: [String] = []
        if snapshot.version > Snapshot.currentVersion {
            messages.append("state file is from a newer jukebox (version \(snapshot.version)); reading what this version knows")
        }
        let missing = snapshot.tracks.filter { !exists($0.path) }
        for track in missing.prefix(10) { messages.append("dropped from the queue, file is gone: \(track.path)") }
        if missing.count > 10 { messages.append("... and \(missing.count - 10) more missing files") }
        let kept = missing.isEmpty ? snapshot : snapshot.keepingTracks { exists($0.path) }
        return Loaded(snapshot: kept, messages: messages)
    }

    /// Writes `snapshot` atomically; throws with the failing call and path.
    public func save(_ snapshot: Snapshot) throws(SystemError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(snapshot) } catch { throw SystemError(call: "encode", subject: path, errno: EINVAL) }
        try writeAtomically(Array(data) + [0x0A], to: path)
    }

    // A file that fails to parse is kept for a person to look at, never deleted.
    private func moveAside() -> String? {
        for n in 1...1000 {
            let candidate = "\(path).damaged-\(n)"
            if !fileExists(candidate) {
                return rename(path, candidate) == 0 ? candidate : nil
            }
        }
        return nil
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

/// Writes `bytes` to `path` so that a crash or power cut at any moment leaves either the old or
/// the new content: temp file in the same folder, fsync, rename, fsync of the folder.
public func writeAtomically(_ bytes: [UInt8], to path: String) throws(SystemError) {
    let folder = Paths.directory(path)
    if !isDirectory(folder) { try makeDirectories(folder) }
    // One fixed name: one writer per state file, and a leftover from a crash is simply overwritten.
    let temp = "\(path).tmp"
    let fd = Int32(try sys("open", temp) { Int(open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)) })
    do {
        var offset = 0
        while offset < bytes.count {
            let n = try sys("write", temp) {
                bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            }
            offset += n
        }
        try sys("fsync", temp) { Int(fsync(fd)) }
        try sys("close", temp) { Int(close(fd)) }
    } catch {
        close(fd)
        unlink(temp)
        throw error
    }
    do {
        try sys("rename", "\(temp) → \(path)") { Int(rename(temp, path)) }
    } catch {
        unlink(temp)
        throw error
    }
    // Without this the rename itself may not survive a power cut.
    let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if dirfd >= 0 {
        fsync(dirfd)
        close(dirfd)
    }
}

/// `mkdir -p`.
public func makeDirectories(_ path: String) throws(SystemError) {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, 0o755) != 0 && errno != EEXIST {
            throw SystemError(call: "mkdir", subject: current, errno: errno)
        }
    }
}
