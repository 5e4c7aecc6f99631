// SPDX-License-Identifier: MIT
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxSystem

/// The bookmarks file (`STATEFILE.bookmarks`, beside the state file): every source's place,
/// oldest first, as `{"version":1,"bookmarks":[{"paths":[…],"track":"…","position":12.5}]}`.
///
/// Read once at start (on the loop, like the state file), written by the state writer's thread.
/// Nothing saved is destroyed because it cannot be read: a file that cannot be read (EIO, too
/// large) is kept and never written over this run; one that is not a bookmarks file is moved
/// aside (`.damaged-N`) before an empty list replaces it.
public enum BookmarkFile {
    /// The largest file read (bytes): 500 bookmarks of long paths fit many times over.
    public static let maxBytes = 4 << 20
    /// The format version written.
    public static let version = 1

    /// What a read found.
    public struct Loaded: Equatable, Sendable {
        /// The bookmarks (none for an absent file); nil when the file could not be read, so
        /// nothing may be written over it.
        public var bookmarks: [Bookmark]?
        /// What to tell the user: entries left out, a file moved aside, a file not readable.
        public var messages: [String]

        /// A read's result.
        public init(bookmarks: [Bookmark]?, messages: [String]) {
            self.bookmarks = bookmarks
            self.messages = messages
        }
    }

    private struct FileBody: Codable {
        var version: Int
        var bookmarks: [Lenient]
    }

    // An entry that does not decode is left out, not the whole file.
    private struct Lenient: Codable {
        var bookmark: Bookmark?
        init(from decoder: any Decoder) throws { bookmark = try? Bookmark(from: decoder) }
        init(_ bookmark: Bookmark) { self.bookmark = bookmark }
        func encode(to encoder: any Encoder) throws { try bookmark.encode(to: encoder) }
    }

    /// Reads the file at `path`, keeping at most the newest `limit` bookmarks.
    public static func read(_ path: String, limit: Int) -> Loaded {
        removeLeftovers(of: path)
        let bytes: [UInt8]
        do { bytes = try readFile(path, limit: maxBytes) } catch {
            if error.errno == ENOENT { return Loaded(bookmarks: [], messages: []) }
            return Loaded(bookmarks: nil, messages: [
                "cannot read the bookmarks file \(path) (\(error)); keeping it as it is and not saving bookmarks until the next start",
            ])
        }
        let body: FileBody
        do {
            if let problem = JSONText.problem(bytes) { throw JSONTextError(problem: problem) }
            body = try JSONDecoder().decode(FileBody.self, from: Data(bytes))
        } catch {
            guard let aside = moveAside(path) else {
                return Loaded(bookmarks: nil, messages: [
                    "bookmarks file \(path) is damaged (\(StateStore.describe(error))) and could not be moved aside; not saving bookmarks",
                ])
            }
            return Loaded(bookmarks: [], messages: [
                "bookmarks file \(path) is damaged (\(StateStore.describe(error))); moved it to \(aside); starting without bookmarks",
            ])
        }
        let all = body.bookmarks.compactMap(\.bookmark)
        let valid = all.filter(\.isValid)
        var messages: [String] = []
        let dropped = body.bookmarks.count - valid.count
        if dropped > 0 && body.version <= version {
            messages.append("bookmarks file \(path): left out \(dropped) entr\(dropped == 1 ? "y" : "ies") that are not bookmarks")
        }
        return Loaded(bookmarks: Array(valid.suffix(max(limit, 0))), messages: messages)
    }

    /// Moves a damaged file aside as `PATH.damaged-N` (the first N free); the new name, or nil
    /// when it could not be moved.
    static func moveAside(_ path: String) -> String? {
        guard let aside = (1...1000).lazy.map({ "\(path).damaged-\($0)" }).first(where: { !fileExists($0) }),
              rename(cPath(path), cPath(aside)) == 0 else { return nil }
        return aside
    }

    // A power cut inside a write leaves its temporary file (`.NAME.PID.N.tmp`). Read once at
    // start, under the state file's lock: no write of ours is in flight, so they can go.
    static func removeLeftovers(of path: String) {
        let folder = Paths.directory(path), prefix = "." + Paths.fileName(path) + "."
        guard let names = try? directoryEntries(folder) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            unlink(cPath(folder == "/" ? "/" + name : folder + "/" + name))
        }
    }

    /// The file's bytes for `bookmarks` (one entry a line, so a person can read it).
    public static func bytes(_ bookmarks: [Bookmark]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var text = "{\"version\":\(version),\"bookmarks\":["
        for (i, mark) in bookmarks.enumerated() {
            guard let line = try? encoder.encode(mark) else { continue }
            text += (i == 0 ? "\n" : ",\n") + String(decoding: line, as: UTF8.self)
        }
        text += bookmarks.isEmpty ? "]}\n" : "\n]}\n"
        return Array(text.utf8)
    }

    /// Writes `bookmarks` over `path` atomically: an `O_EXCL` temporary file, fsync, rename,
    /// fsync of the folder (a power cut leaves the old file or the new one, never a torn one).
    public static func write(_ bookmarks: [Bookmark], to path: String) throws(SystemError) {
        let folder = Paths.directory(path)
        if !isDirectory(folder) { try makeDirectories(folder) }
        try CardMapFile.writeExclusive(bytes(bookmarks), to: path)
    }
}
