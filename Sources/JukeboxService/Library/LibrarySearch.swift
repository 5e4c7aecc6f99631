// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// `search --json TEXT`: the folders and audio files of the music folders whose name, title,
/// artist or album holds every word of TEXT (case-insensitive), as one JSON object:
/// `{"text":…,"folders":[{"name":…,"path":…}],"files":[{"name":…,"path":…,"title":…,"artist":…,
/// "album":…,"seconds":…}],"scanned":N}` plus `"truncated":true` when more matched than
/// `maxResults`, and `"incomplete":true` when the walk stopped at its budget (`budget` seconds or
/// `maxFiles` files) before the end of the tree.
///
/// There is no index (yet): every query is a walk of the tree with the tags read through the
/// player's tag reader (`load`), on the tag reader's thread, never on the loop. It is bounded so a
/// large library costs a query a known time (measured in docs/WEB.md: 10,000 files), and keeps
/// the tags it read (`SearchTagCache`) so the next queries match from memory. The same rule
/// as `ls --json`: hidden names are left out, a link is followed only when where it leads is inside
/// the music folders, and a folder reached twice (a link back up) is walked once.
public enum LibrarySearch {
    public static let maxResults = 100
    /// Audio files whose tags one query reads at most.
    public static let maxFiles = 20_000
    /// Seconds one query may take on the tag reader's thread (a card's `load` waits behind it).
    public static let budget = 3.0
    /// Longest text searched for, in bytes; words beyond the eighth are ignored.
    public static let maxText = 200

    /// The words to look for: the text lowercased, split at spaces, at most 8.
    public static func words(_ text: String) -> [String] {
        Array(text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).prefix(8).map(String.init))
    }

    /// Whether every word is in one of the fields (case-insensitive).
    public static func matches(_ words: [String], _ fields: [String?]) -> Bool {
        guard !words.isEmpty else { return false }
        let lowered = fields.compactMap { $0?.lowercased() }
        return words.allSatisfy { word in lowered.contains { $0.contains(word) } }
    }

    public static func json(text: String, roots: [String], load: ([String]) -> (tracks: [TrackInfo], messages: [String]),
                            budget: Double = budget, maxFiles: Int = maxFiles, clock: () -> Double = monotonicNow,
                            cache: SearchTagCache = .shared) -> Result<String, LibraryListingError> {
        let words = words(text)
        guard !words.isEmpty else { return .failure(.init("usage: search --json TEXT")) }
        guard text.utf8.count <= maxText else { return .failure(.init("the text is longer than \(maxText) bytes")) }
        let realRoots = roots.compactMap(LibraryListing.resolved)
        guard !realRoots.isEmpty else { return .failure(.init("no music folders are configured (config \"music\")")) }
        let deadline = clock() + budget
        var folders: [String] = []
        var hits: [TrackInfo] = []
        var truncated = false, incomplete = false
        var scanned = 0
        var pending: [String] = []
        var stamps: [String: SearchTagCache.Stamp] = [:]
        var cached = 0
        var seen = Set<String>()
        var queue = realRoots
        func full() -> Bool { folders.count + hits.count >= maxResults }
        // Reads the tags of the pending files and keeps those that match.
        func flush() {
            guard !pending.isEmpty else { return }
            scanned += pending.count
            let tracks = load(pending).tracks
            cache.put(tracks, stamps: stamps)
            for track in tracks where matches(words, [Paths.fileName(track.path), track.title, track.artist, track.album]) {
                if full() { truncated = true; break }
                hits.append(track)
            }
            pending.removeAll()
            stamps.removeAll()
        }
        walk: while !queue.isEmpty {
            let dir = queue.removeFirst()
            guard let id = fileIdentity(dir), seen.insert(id).inserted else { continue }
            guard let names = try? directoryEntries(dir) else { continue }
            // Byte order, not `Library.naturalLess`: cheaper over a whole library.
            for name in names.sorted() where !name.hasPrefix(".") {
                JobProgress.note()
                if full() { truncated = true; break walk }
                if clock() > deadline || scanned + pending.count + cached >= maxFiles { incomplete = true; break walk }
                let entry = dir == "/" ? "/" + name : dir + "/" + name
                var st = stat()
                guard lstat(cPath(entry), &st) == 0 else { continue }
                if (st.st_mode & S_IFMT) == S_IFLNK {
                    guard let real = LibraryListing.resolved(entry), LibraryListing.inside(real, realRoots),
                          stat(cPath(entry), &st) == 0 else { continue }
                }
                switch st.st_mode & S_IFMT {
                case S_IFDIR:
                    if matches(words, [name]) { folders.append(entry) }
                    queue.append(entry)
                case S_IFREG where Library.isAudio(entry):
                    // The tags an earlier search read, while the file is unchanged; else read now.
                    let stamp = SearchTagCache.Stamp(size: Int(st.st_size), seconds: Int(st.st_mtim.tv_sec), nanoseconds: Int(st.st_mtim.tv_nsec))
                    if let (track, haystack) = cache.get(entry, stamp: stamp) {
                        cached += 1
                        if words.allSatisfy({ haystack.contains($0) }) { hits.append(track) }
                    } else {
                        pending.append(entry)
                        stamps[entry] = stamp
                        if pending.count >= 64 { flush() }
                    }
                default: break
                }
            }
        }
        if !full() { flush() } else if !pending.isEmpty { truncated = true }
        let q = JSONText.quoted
        func str(_ s: String?) -> String { s.map { q(LibraryListing.view($0)) } ?? "null" }
        let folderParts = folders.prefix(maxResults).map { "{\"name\":" + q(LibraryListing.view(Paths.fileName($0))) + ",\"path\":" + q($0) + "}" }
        let fileParts = hits.map { t in
            "{\"name\":" + q(LibraryListing.view(Paths.fileName(t.path))) + ",\"path\":" + q(t.path) + ",\"title\":" + str(t.title)
                + ",\"artist\":" + str(t.artist) + ",\"album\":" + str(t.album) + ",\"seconds\":"
                + (t.duration.map { $0.isFinite ? String($0) : "null" } ?? "null") + "}"
        }
        return .success("{\"text\":" + q(LibraryListing.view(text)) + ",\"folders\":[" + folderParts.joined(separator: ",")
            + "],\"files\":[" + fileParts.joined(separator: ",") + "],\"scanned\":\(scanned + cached)"
            + (truncated ? ",\"truncated\":true" : "") + (incomplete ? ",\"incomplete\":true" : "") + "}")
    }
}

/// The tags searches read, by path, kept while the file's size and modification time stay the
/// same: the first search of a large library reads what its budget allows, the next ones go on
/// from there and then match from memory (about 500 bytes a file; at most `capacity` files, then
/// it starts again). Only the tag reader's thread uses it in the player; the lock is for tests.
public final class SearchTagCache: @unchecked Sendable {
    public static let shared = SearchTagCache()
    public static let capacity = 20_000
    private let lock = Monitor()
    private var entries: [String: (stamp: Stamp, track: TrackInfo, haystack: String)] = [:]

    /// What tells a file changed: its size and modification time.
    struct Stamp: Equatable {
        var size, seconds, nanoseconds: Int
    }

    public init() {}

    /// The track and its name, title, artist and album lowercased in one text (NUL between).
    func get(_ path: String, stamp: Stamp) -> (TrackInfo, String)? {
        lock.withLock { entries[path].flatMap { $0.stamp == stamp ? ($0.track, $0.haystack) : nil } }
    }

    func put(_ tracks: [TrackInfo], stamps: [String: Stamp]) {
        lock.withLock {
            if entries.count + tracks.count > Self.capacity { entries.removeAll() }
            for track in tracks {
                guard let stamp = stamps[track.path] else { continue }
                let haystack = [Paths.fileName(track.path), track.title, track.artist ?? "", track.album ?? ""].joined(separator: "\u{0}").lowercased()
                entries[track.path] = (stamp, track, haystack)
            }
        }
    }
}
