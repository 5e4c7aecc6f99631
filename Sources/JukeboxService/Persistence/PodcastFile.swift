// SPDX-License-Identifier: MIT
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxSystem

/// The podcasts file (`STATEFILE.podcasts`, beside the state file): each podcast's episodes as
/// known and each episode's place, `{"version":1,"podcasts":[{"name":…,"order":…,"title":…,
/// "episodes":[…],"places":{…},"lastError":…}]}`, one podcast a line.
///
/// Read once at start (on the loop, like the state and bookmarks files), written by the state
/// writer's thread (`Command.persistPodcasts`) atomically (`O_EXCL` temporary file, fsync,
/// rename). Nothing saved is destroyed because it cannot be read: a file that cannot be read is
/// kept and never written over this run; one that is not a podcasts file is moved aside
/// (`.damaged-N`). A feed that fails to fetch keeps what this file holds.
public enum PodcastFile {
    /// The largest file read (bytes): 100 feeds of 5,000 episodes at ~300 bytes each.
    public static let maxBytes = 160 << 20
    /// The format version written.
    public static let version = 1

    /// What a read found: the podcasts (none for an absent file; nil when it could not be read,
    /// so nothing may be written over it) and what to tell the user.
    public struct Loaded: Equatable, Sendable {
        public var podcasts: [PodcastFeed]?
        public var messages: [String]

        /// A read's result.
        public init(podcasts: [PodcastFeed]?, messages: [String]) {
            self.podcasts = podcasts
            self.messages = messages
        }
    }

    private struct FileBody: Codable {
        var version: Int
        var podcasts: [Lenient]
    }

    // A podcast that does not decode is left out, not the whole file.
    private struct Lenient: Codable {
        var feed: PodcastFeed?
        init(from decoder: any Decoder) throws { feed = try? PodcastFeed(from: decoder) }
        func encode(to encoder: any Encoder) throws { try feed.encode(to: encoder) }
    }

    /// Reads the file at `path`.
    public static func read(_ path: String) -> Loaded {
        BookmarkFile.removeLeftovers(of: path)
        let bytes: [UInt8]
        do { bytes = try readFile(path, limit: maxBytes) } catch {
            if error.errno == ENOENT { return Loaded(podcasts: [], messages: []) }
            return Loaded(podcasts: nil, messages: [
                "cannot read the podcasts file \(path) (\(error)); keeping it as it is and not saving podcasts until the next start",
            ])
        }
        let body: FileBody
        do {
            if let problem = JSONText.problem(bytes) { throw JSONTextError(problem: problem) }
            body = try JSONDecoder().decode(FileBody.self, from: Data(bytes))
        } catch {
            guard let aside = BookmarkFile.moveAside(path) else {
                return Loaded(podcasts: nil, messages: [
                    "podcasts file \(path) is damaged (\(StateStore.describe(error))) and could not be moved aside; not saving podcasts",
                ])
            }
            return Loaded(podcasts: [], messages: [
                "podcasts file \(path) is damaged (\(StateStore.describe(error))); moved it to \(aside); starting without saved episodes",
            ])
        }
        let feeds = body.podcasts.compactMap(\.feed)
        let dropped = body.podcasts.count - feeds.count
        let what = dropped == 1 ? "1 entry that is not a podcast" : "\(dropped) entries that are not podcasts"
        let messages = dropped > 0 ? ["podcasts file \(path): left out \(what)"] : []
        return Loaded(podcasts: feeds, messages: messages)
    }

    /// The file's bytes for `podcasts`.
    public static func bytes(_ podcasts: [PodcastFeed]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var text = "{\"version\":\(version),\"podcasts\":["
        for (i, feed) in podcasts.enumerated() {
            guard let line = try? encoder.encode(feed) else { continue }
            text += (i == 0 ? "\n" : ",\n") + String(decoding: line, as: UTF8.self)
        }
        text += podcasts.isEmpty ? "]}\n" : "\n]}\n"
        return Array(text.utf8)
    }

    /// Writes `podcasts` over `path` atomically.
    public static func write(_ podcasts: [PodcastFeed], to path: String) throws(SystemError) {
        let folder = Paths.directory(path)
        if !isDirectory(folder) { try makeDirectories(folder) }
        try CardMapFile.writeExclusive(bytes(podcasts), to: path)
    }
}
