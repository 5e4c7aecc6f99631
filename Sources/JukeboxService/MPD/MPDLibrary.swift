// SPDX-License-Identifier: MIT
import JukeboxCore

/// The MPD face's library index: every song of the music folders with its tags, and the replies
/// of `lsinfo`, `listall`, `listallinfo`, `find`/`search`, `list` and `count` made from it. Pure:
/// the walk and the tag reads that fill it run on the tag reader (`MPDLibraryCommands.swift`);
/// this only sorts, filters and formats, so every reply is tested without a disk.
public struct MPDLibrary: Sendable {
    /// One song: its URI (relative to its music folder, as MPD's clients see it), which folder,
    /// and the tags jukebox reads. Kept small: a library of thousands stays in RAM while playing.
    public struct Song: Equatable, Sendable {
        /// The path under its music folder.
        public var uri: String
        /// Which of `roots` holds it.
        public var root: Int
        /// The title (the file name's stem when untagged, as in the queue).
        public var title: String
        /// Tags, if present.
        public var artist: String?, album: String?
        /// Numbers, if present.
        public var track: Int?, disc: Int?
        /// Seconds, when known.
        public var duration: Double?
    }

    /// The music folders, in the config's order (a URI lies under the first that holds it).
    public let roots: [String]
    /// Most songs kept: beyond, a walk's surplus is dropped (and said so) rather than filling RAM.
    public static let maxSongs = 100_000
    /// The songs, sorted by URI.
    public private(set) var songs: [Song] = []

    /// An empty index of `roots`.
    public init(roots: [String]) {
        self.roots = roots
    }

    /// Replaces every song at or under `uri` ("" for all) by `tracks` (absolute paths, as the
    /// loader reads them; those outside the music folders are left out). Returns how many were
    /// dropped for `maxSongs`.
    @discardableResult
    public mutating func replace(under uri: String, with tracks: [TrackInfo]) -> Int {
        let prefix = uri.isEmpty ? "" : uri + "/"
        songs.removeAll { uri.isEmpty || $0.uri == uri || $0.uri.hasPrefix(prefix) }
        var added: [Song] = []
        // An album's songs share one copy of its artist and album names (strings are shared
        // when equal copies come from one value), a few hundred KB less for a large library.
        var names: [String: String] = [:]
        func shared(_ s: String?) -> String? {
            guard let s else { return nil }
            if let known = names[s] { return known }
            names[s] = s
            return s
        }
        for s in songs {
            _ = shared(s.artist)
            _ = shared(s.album)
        }
        for t in tracks {
            guard let (root, rel) = locate(t.path) else { continue }
            added.append(Song(uri: rel, root: root, title: t.title, artist: shared(t.artist), album: shared(t.album),
                              track: t.trackNumber, disc: t.discNumber, duration: t.duration))
        }
        songs += added
        songs.sort { $0.uri < $1.uri }
        // Two folders holding the same relative name: the first folder's song is kept.
        var unique: [Song] = []
        unique.reserveCapacity(songs.count)
        for s in songs {
            if let last = unique.last, last.uri == s.uri { if s.root < last.root { unique[unique.count - 1] = s }; continue }
            unique.append(s)
        }
        let dropped = max(0, unique.count - Self.maxSongs)
        songs = Array(unique.prefix(Self.maxSongs))
        return dropped
    }

    /// `path` as (folder index, URI) when it lies in a music folder.
    public func locate(_ path: String) -> (Int, String)? {
        for (i, root) in roots.enumerated() {
            let base = root.hasSuffix("/") ? root : root + "/"
            if path.hasPrefix(base), path.count > base.count { return (i, String(path.dropFirst(base.count))) }
        }
        return nil
    }

    /// The absolute path of `song`.
    public func path(of song: Song) -> String {
        let root = roots[song.root]
        return (root.hasSuffix("/") ? root : root + "/") + song.uri
    }

    /// `song` as the loader's track info (what `findadd` puts in the queue: no tag is read again).
    public func trackInfo(_ song: Song) -> TrackInfo {
        TrackInfo(path: path(of: song), title: song.title, artist: song.artist, album: song.album,
                  trackNumber: song.track, discNumber: song.disc, duration: song.duration)
    }

    /// A tag's value (`tag` lower case); MPD's fallbacks: album artist → artist, the *sort tags →
    /// their tag. Nil for a tag jukebox does not read.
    public static func value(_ tag: String, of song: Song) -> String? {
        switch tag {
        case "artist", "artistsort", "albumartist", "albumartistsort": return song.artist
        case "album", "albumsort": return song.album
        case "title", "titlesort": return song.title
        case "track": return song.track.map(String.init)
        case "disc": return song.disc.map(String.init)
        case "file": return song.uri
        default: return nil
        }
    }

    /// What `any` compares: every tag read, and the URI.
    static func anyValues(_ song: Song) -> [String] {
        [song.uri, song.title] + [song.artist, song.album, song.track.map(String.init), song.disc.map(String.init)].compactMap { $0 }
    }

    /// One song as MPD's song block (no `Pos`/`Id`: it is not a queue entry).
    public static func block(_ song: Song) -> [String] {
        var lines = ["file: \(song.uri)"]
        if let v = song.artist { lines.append("Artist: \(v)") }
        if let v = song.album { lines.append("Album: \(v)") }
        lines.append("Title: \(song.title)")
        if let v = song.track { lines.append("Track: \(v)") }
        if let v = song.disc { lines.append("Disc: \(v)") }
        if let d = song.duration { lines += ["Time: \(Int(d.rounded()))", "duration: \(MPDReplies.fixed3(d))"] }
        return lines
    }

    /// `uri` without slashes at either end ("" for the top).
    public static func normalized(_ uri: String) -> String {
        var u = Substring(uri)
        while u.hasPrefix("/") { u = u.dropFirst() }
        while u.hasSuffix("/") { u = u.dropLast() }
        return String(u)
    }

    /// The songs at or under directory `dir` ("" for all), in URI order.
    func songs(under dir: String) -> ArraySlice<Song> {
        guard !dir.isEmpty else { return songs[...] }
        let prefix = dir + "/"
        let start = lowerBound(prefix)
        var end = start
        while end < songs.count, songs[end].uri.hasPrefix(prefix) { end += 1 }
        return songs[start..<end]
    }

    private func lowerBound(_ uri: String) -> Int {
        var lo = 0, hi = songs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if songs[mid].uri < uri { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The song at `uri`, if there is one.
    public func song(_ uri: String) -> Song? {
        let i = lowerBound(uri)
        return i < songs.count && songs[i].uri == uri ? songs[i] : nil
    }

    /// Whether `dir` is the top or holds a song.
    public func isDirectory(_ dir: String) -> Bool { dir.isEmpty || !songs(under: dir).isEmpty }

    /// `lsinfo`: a song's block, or a directory's subdirectories then songs.
    public func lsinfo(_ raw: String) -> Result<[String], MPDError> {
        let uri = Self.normalized(raw)
        if let s = song(uri) { return .success(Self.block(s)) }
        guard isDirectory(uri) else { return .failure(MPDError(.noExist, "No such directory")) }
        let prefix = uri.isEmpty ? "" : uri + "/"
        var dirs: [String] = [], seen: Set<String> = [], files: [String] = []
        for s in songs(under: uri) {
            let rest = s.uri.dropFirst(prefix.count)
            if let slash = rest.firstIndex(of: "/") {
                let d = prefix + rest[..<slash]
                if seen.insert(d).inserted { dirs.append(d) }
            } else {
                files += Self.block(s)
            }
        }
        return .success(dirs.sorted().map { "directory: \($0)" } + files)
    }

    /// `listall` (`info` false: `directory:`/`file:` lines) or `listallinfo` (song blocks), recursive.
    public func listall(_ raw: String, info: Bool) -> Result<[String], MPDError> {
        let uri = Self.normalized(raw)
        if let s = song(uri) { return .success(info ? Self.block(s) : ["file: \(s.uri)"]) }
        guard isDirectory(uri) else { return .failure(MPDError(.noExist, "No such directory")) }
        var lines: [String] = [], shown: Set<String> = []
        let skip = uri.isEmpty ? 0 : uri.split(separator: "/").count
        for s in songs(under: uri) {
            let parts = s.uri.split(separator: "/").dropLast()
            var dir = ""
            for (depth, p) in parts.enumerated() {
                dir += (dir.isEmpty ? "" : "/") + p
                if depth >= skip, shown.insert(dir).inserted { lines.append("directory: \(dir)") }
            }
            lines += info ? Self.block(s) : ["file: \(s.uri)"]
        }
        return .success(lines)
    }

    /// The songs `filter` matches, in URI order.
    public func find(_ filter: MPDFilter) -> [Song] { songs.filter { filter.matches($0) } }

    /// `list TAG [filter] [group G]…`: the distinct values of `tag` (MPD's name, any case) over
    /// the songs `filter` matches, sorted; grouped by the `groups` tags, the group's line first.
    /// Songs without the tag give no line.
    public func list(_ tag: String, filter: MPDFilter, groups: [String]) -> Result<[String], MPDError> {
        let all = [tag] + groups
        var names: [String] = []
        for t in all {
            let lower = t.lowercased()
            guard let name = lower == "file" ? "file" : MPDFilter.tagNames[lower] else {
                return .failure(MPDError(.arg, "Unknown tag type: \(t)"))
            }
            names.append(name)
        }
        // Each row: the group values (outermost first), then the value.
        var rows = Set<[String]>()
        for s in songs where filter.matches(s) {
            guard let v = Self.value(tag.lowercased(), of: s), !v.isEmpty else { continue }
            rows.insert(groups.reversed().map { Self.value($0.lowercased(), of: s) ?? "" } + [v])
        }
        var lines: [String] = []
        var last: [String] = []
        for row in rows.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            // A group's line again only where it (or an outer group) changed.
            let g = groups.count
            var first = 0
            while first < g, first < last.count, last[first] == row[first] { first += 1 }
            for i in first..<g { lines.append("\(names[g - i]): \(row[i])") }
            lines.append("\(names[0]): \(row.last!)")
            last = row
        }
        return .success(lines)
    }

    /// `count [filter] [group G]`: songs and whole seconds of the matching songs, per value of
    /// `group` when given.
    public func count(_ filter: MPDFilter, group: String?) -> Result<[String], MPDError> {
        let matching = find(filter)
        func totals(_ songs: [Song]) -> [String] {
            ["songs: \(songs.count)", "playtime: \(Int(songs.reduce(0) { $0 + ($1.duration ?? 0) }.rounded()))"]
        }
        guard let group else { return .success(totals(matching)) }
        guard let name = MPDFilter.tagNames[group.lowercased()] else { return .failure(MPDError(.arg, "Unknown tag type: \(group)")) }
        let byValue = Dictionary(grouping: matching) { Self.value(group.lowercased(), of: $0) ?? "" }
        return .success(byValue.keys.sorted().flatMap { ["\(name): \($0)"] + totals(byValue[$0]!) })
    }
}
