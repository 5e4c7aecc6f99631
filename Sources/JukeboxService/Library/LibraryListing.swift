// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// `ls --json [--from N] [PATH]`: the folders and audio files directly inside one folder of the music
/// folders, as one JSON object for the web face's library:
/// `{"path":"/music/A","parent":"/music","folders":[{"name":"CD1","path":"/music/A/CD1"}],
/// "files":[{"name":"01.flac","path":…,"title":…,"artist":…,"album":…,"seconds":212.5}]}`
/// (`parent` null at a music folder; without PATH and with several music folders, `path` is null
/// and `folders` are the music folders). Reads folders and tags: runs off the loop (the tag
/// reader's thread, `OffLoopJobs.perform`), never on it.
///
/// Only inside the music folders: PATH is resolved (`realpath`, links and `..` included) and must
/// be a music folder or under one, else an error; an entry whose resolved path leaves them (a
/// link planted to `/`) is not listed. Hidden names are left out. Folders sort by name
/// (`Library.naturalLess`), files in the order the player plays a folder (`Library.folderOrder`).
/// Paged (`JSONPage`): the entries from N (1-based, folders first, then files) that fit in `budget`
/// bytes, the whole object counted, and `"next":N` when more follow. A file's entry longer than a
/// page on its own comes first on its page, its name and tags cut and `"shortened"` saying why. At most
/// `maxEntries` entries of a folder are listed at all (each page reads the tags of every file, to
/// order them), then `"truncated":true`.
public enum LibraryListing {
    public static let maxEntries = 1000

    /// The reply line's text after `ok ` (the JSON object), or the error's words.
    public static func json(path: String?, from: Int = 1, budget: Int = JSONPage.budget, roots: [String], load: ([String]) -> (tracks: [TrackInfo], messages: [String])) -> Result<String, LibraryListingError> {
        let realRoots = roots.compactMap(resolved)
        guard !realRoots.isEmpty else { return .failure(.init("no music folders are configured (config \"music\")")) }
        let q = JSONText.quoted
        guard let path else {
            if realRoots.count == 1 { return listing(realRoots[0], from: from, budget: budget, roots: realRoots, load: load) }
            let folder = { (i: Int) in "{\"name\":" + q(view(realRoots[i])) + ",\"path\":" + q(realRoots[i]) + "}" }
            let head = "{\"path\":null,\"parent\":null,\"folders\":[", tail = "],\"files\":[]"
            let page = JSONPage.cut(count: realRoots.count, from: from - 1, room: budget - head.utf8.count - tail.utf8.count - 24,
                                    entry: folder, shortened: folder)
            return .success(head + page.entries.joined(separator: ",") + tail + (page.next.map { ",\"next\":\($0 + 1)" } ?? "") + "}")
        }
        guard path.hasPrefix("/") else { return .failure(.init("not an absolute path: \(view(path))")) }
        guard let real = resolved(path), inside(real, realRoots) else {
            // The same words whether it exists or not: nothing is told about what lies outside.
            return .failure(.init("not a folder in the music folders: \(view(path))"))
        }
        guard isDirectory(real) else { return .failure(.init("not a folder: \(view(path))")) }
        return listing(real, from: from, budget: budget, roots: realRoots, load: load)
    }

    private static func listing(_ dir: String, from: Int, budget: Int, roots: [String], load: ([String]) -> (tracks: [TrackInfo], messages: [String])) -> Result<String, LibraryListingError> {
        let names: [String]
        do { names = try directoryEntries(dir) } catch { return .failure(.init("cannot read the folder: \(view(dir))")) }
        var folders: [String] = []
        var files: [String] = []
        var truncated = false
        for name in names.sorted(by: Library.naturalLess) where !name.hasPrefix(".") {
            JobProgress.note()
            guard folders.count + files.count < maxEntries else { truncated = true; break }
            let entry = dir == "/" ? "/" + name : dir + "/" + name
            // A link is listed only when where it leads is inside the music folders.
            guard let real = resolved(entry), inside(real, roots) else { continue }
            switch fileKind(entry) {
            case .directory: folders.append(entry)
            case .regular where Library.isAudio(entry): files.append(entry)
            default: break  // a playlist, a FIFO, a device: not listed
            }
        }
        let q = JSONText.quoted
        func str(_ s: String?) -> String { s.map { q(view($0)) } ?? "null" }
        let parent = roots.contains(dir) ? "null" : q(Paths.directory(dir))
        let head = "{\"path\":" + q(dir) + ",\"parent\":" + parent + ",\"folders\":["
        let middle = "],\"files\":["
        let tail = "]" + (truncated ? ",\"truncated\":true" : "")
        let end = ",\"next\":\(folders.count + files.count)}"
        let room = budget - head.utf8.count - middle.utf8.count - tail.utf8.count - end.utf8.count
        // A shortened file's name and tags at most this many scalars each (6 bytes each in JSON at most).
        let clip = max(16, (room - 200) / 24)
        func folderEntry(_ i: Int) -> String {
            "{\"name\":" + q(view(Paths.fileName(folders[i]))) + ",\"path\":" + q(folders[i]) + "}"
        }
        let start = max(0, from - 1)
        var folderParts: [String] = []
        var next: Int?
        if start < folders.count {
            let cut = JSONPage.cut(count: folders.count, from: start, room: room, entry: folderEntry, shortened: folderEntry)
            folderParts = cut.entries
            next = cut.next
        }
        var fileParts: [String] = []
        // The files' tags are read only when the page reaches them.
        if next == nil && !files.isEmpty {
            let tracks = Library.folderOrder(load(files).tracks)
            func fileEntry(_ i: Int, shortened: Bool) -> String {
                let t = tracks[i]
                func field(_ s: String?) -> String { str(shortened ? JSONPage.clipped(s, clip) : s) }
                let seconds = t.duration.map { $0.isFinite ? String($0) : "null" } ?? "null"
                return "{\"name\":" + field(Paths.fileName(t.path)) + ",\"path\":" + q(t.path) + ",\"title\":" + field(t.title)
                    + ",\"artist\":" + field(t.artist) + ",\"album\":" + field(t.album) + ",\"seconds\":" + seconds
                    + (shortened ? ",\"shortened\":" + q(JSONPage.shortenedReason) : "") + "}"
            }
            let used = folderParts.isEmpty ? 0 : folderParts.reduce(0) { $0 + $1.utf8.count + 1 }
            let cut = JSONPage.cut(count: tracks.count, from: max(0, start - folders.count), room: room - used, after: !folderParts.isEmpty,
                                   entry: { fileEntry($0, shortened: false) }, shortened: { fileEntry($0, shortened: true) })
            fileParts = cut.entries
            next = cut.next.map { folders.count + $0 }
        }
        return .success(head + folderParts.joined(separator: ",") + middle + fileParts.joined(separator: ",") + tail
            + (next.map { ",\"next\":\($0 + 1)" } ?? "") + "}")
    }

    /// A name to show: the bytes that are not UTF-8 as U+FFFD (a reply line shows them so anyway).
    static func view(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: DisplayText.isEscapedByte) else { return s }
        return String(String.UnicodeScalarView(s.unicodeScalars.map { DisplayText.isEscapedByte($0) ? DisplayText.replacement : $0 }))
    }

    /// The folder `path` names, resolved as `json` resolves it (`realpath`: links and `..`), when
    /// it is a music folder or a folder under one; nil otherwise. The web face's uploads land only
    /// where this says, so they and the listing agree on what "in the music folders" means.
    public static func folderInside(_ path: String, roots: [String]) -> String? {
        let realRoots = roots.compactMap(resolved)
        guard path.hasPrefix("/"), let real = resolved(path), inside(real, realRoots), isDirectory(real) else { return nil }
        return real
    }

    /// Whether the resolved path `path` is a music folder or under one (`roots` resolved first).
    public static func isInside(_ path: String, roots: [String]) -> Bool {
        inside(path, roots.compactMap(resolved))
    }

    static func inside(_ path: String, _ roots: [String]) -> Bool {
        roots.contains { root in path == root || path.hasPrefix(root == "/" ? "/" : root + "/") }
    }

    /// `path` with every link and `..` resolved, or nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let p = realpath(cPath(path), nil) else { return nil }
        defer { free(p) }
        return pathString(cString: p)
    }
}

public struct LibraryListingError: Error, Equatable {
    public var message: String
    init(_ message: String) { self.message = message }
}
