// SPDX-License-Identifier: MIT

/// Which queues remember their place (config `bookmarks`).
public enum BookmarkMode: String, Equatable, Sendable, CaseIterable {
    /// Every folder or playlist started from a card or `load`.
    case always
    /// Only audiobooks: a source under one of `Settings.audiobookFolders`, or one whose folder
    /// holds a `.jukebox-resume` file (`QueueSource.marked`).
    case audiobooks
    /// None: every start is from the top.
    case never
}

/// What the queue was loaded from: a card's paths or the path of a `load`. Its `paths` are the
/// identity a bookmark is kept under (two cards naming the same folder share one bookmark).
public struct QueueSource: Equatable, Sendable, Codable {
    /// The folders, playlists or files, as the card or the `load` named them.
    public var paths: [String]
    /// Whether a `.jukebox-resume` file was found in one of its folders when they were read.
    public var marked: Bool

    /// Creates a source.
    public init(paths: [String], marked: Bool = false) {
        self.paths = paths
        self.marked = marked
    }
}

/// Where a source was left: the track (by its path, so a re-read folder finds it again) and
/// the seconds heard into it.
public struct Bookmark: Equatable, Sendable, Codable {
    /// The source's paths (`QueueSource.paths`).
    public var paths: [String]
    /// The path of the track to resume.
    public var track: String
    /// Seconds into that track.
    public var position: Double

    /// Creates a bookmark.
    public init(paths: [String], track: String, position: Double) {
        self.paths = paths
        self.track = track
        self.position = position
    }

    /// The longest path kept in a bookmark (bytes); a longer one is no bookmark (the file's
    /// reader drops it, the core does not make it).
    public static let maxPathBytes = 4096
    /// The most paths one source may name and still be bookmarked.
    public static let maxPaths = 64

    /// Whether this bookmark is within the bounds above and its position is a number of seconds.
    public var isValid: Bool {
        !paths.isEmpty && paths.count <= Bookmark.maxPaths && (paths + [track]).allSatisfy { !$0.isEmpty && $0.utf8.count <= Bookmark.maxPathBytes }
            && position.isFinite && position >= 0
    }
}

extension State {
    /// Whether `source` keeps a bookmark under the settings.
    func keepsBookmark(_ source: QueueSource) -> Bool {
        switch settings.bookmarks {
        case .never: return false
        case .always: return true
        case .audiobooks:
            return source.marked || source.paths.contains { path in
                settings.audiobookFolders.contains { Paths.isInside(path, folder: $0) }
            }
        }
    }

    /// Records where the queue's source is now (the current track and position), unless the
    /// player is stopped (a stop rewinds: the place before it was recorded already) or plays a
    /// live stream. `playsOn`: a place save while the source plays on, kept in memory only
    /// (`bookmarksAhead`); any other change is to be written (`bookmarksDirty`).
    mutating func noteBookmark(playsOn: Bool = false) {
        guard let source, phase != .stopped, let track = currentTrack else { return }
        if let reset = bookmarkReset {
            // Reset where it is now: no bookmark until it plays on from there.
            if reset.holds(track: track.info.path, position: position) { return }
            bookmarkReset = nil
        }
        guard let mark = bookmark(source, track: track.info.path, position: position) else { return }
        noteBookmark(mark, playsOn: playsOn)
    }

    /// The bookmark `source` keeps at `track` and `position`: nil when it keeps none under the
    /// settings or the track is a live stream (a station's card starts it live each time, and
    /// the list does not fill with stations at meaningless positions).
    func bookmark(_ source: QueueSource, track: String, position: Double) -> Bookmark? {
        guard keepsBookmark(source), !Library.isStreamURL(track) else { return nil }
        let mark = Bookmark(paths: source.paths, track: track, position: position)
        return mark.isValid ? mark : nil
    }

    /// Puts `mark` in its source's place as the newest. The list is kept oldest first and at
    /// most `Settings.bookmarkLimit` long (the oldest goes).
    mutating func noteBookmark(_ mark: Bookmark, playsOn: Bool) {
        if let at = bookmarks.firstIndex(where: { $0.paths == mark.paths }) {
            // Unchanged and already the newest: nothing to write. Unchanged but older: it moves
            // to the end, so the limit drops what was played longest ago.
            if bookmarks[at] == mark, at == bookmarks.count - 1 { return }
            bookmarks.remove(at: at)
        }
        bookmarks.append(mark)
        if bookmarks.count > max(settings.bookmarkLimit, 0) { bookmarks.removeFirst(bookmarks.count - max(settings.bookmarkLimit, 0)) }
        if playsOn { bookmarksAhead = true } else { bookmarksDirty = true }
    }

    /// At start, once both the state file (`restore`) and the bookmarks file are read: the
    /// state's saved place becomes its source's bookmark. While a source plays on, its bookmark
    /// is written only at the other saves, so after a power cut the state file (saved at most
    /// `placeSaveSpacing` ago) holds a newer place than the bookmarks file. It is never older:
    /// every save that is not a place save of a source playing on writes the bookmarks with it
    /// (the state file first, by the same writer thread), and a saved place is taken only from
    /// a source playing or paused (a stopped one was rewound; one played to its end has none).
    mutating func followRestoredPlace() {
        guard bookmarksReady, let mark = restoredPlace else { return }
        restoredPlace = nil
        noteBookmark(mark, playsOn: false)
    }

    /// The source played to its end: its next start is from the top.
    mutating func forgetBookmark() {
        guard let source, let at = bookmarks.firstIndex(where: { $0.paths == source.paths }) else { return }
        bookmarks.remove(at: at)
        bookmarksDirty = true
    }

    /// Where a newly loaded `source` resumes: the order index of its bookmarked track (found by
    /// path) and the seconds into it, clamped to the track's length; nil starts from the top.
    func resumePoint(for source: QueueSource) -> (cursor: Int, position: Double)? {
        guard keepsBookmark(source), let mark = bookmarks.last(where: { $0.paths == source.paths }),
              let at = order.firstIndex(where: { track(id: $0)?.info.path == mark.track }) else { return nil }
        var position = mark.position
        if let duration = track(id: order[at])?.info.duration { position = min(position, duration) }
        return (at, position)
    }
}

extension State {
    /// `bookmark reset PATH` (nil: all): the bookmarks of the sources whose first path is `path`
    /// go, so those sources start from the top. The queue's own source makes a new one only once
    /// it plays on from where it is (`bookmarkReset`, kept in the state file: the saves and a
    /// start while it stays there make none), as it would after any start from the top.
    mutating func resetBookmarks(_ path: String?, _ step: inout Step) {
        step.activity = true
        if let source, phase != .stopped, let track = currentTrack, path.map({ source.paths.first == $0 }) ?? true {
            bookmarkReset = BookmarkReset(track: track.info.path, position: position)
        }
        let before = bookmarks.count
        bookmarks.removeAll { mark in path.map { mark.paths.first == $0 } ?? true }
        guard bookmarks.count != before else { return }
        bookmarksDirty = true
    }
}

/// Where the queue's own source was when its bookmark was reset (`bookmark reset`): until it
/// plays on from there it makes no bookmark again, and the state file keeps it, so a start does
/// not make the saved place its bookmark either (`State.followRestoredPlace`).
public struct BookmarkReset: Equatable, Sendable, Codable {
    /// The current track's path then.
    public var track: String
    /// Seconds into it then.
    public var position: Double

    /// A reset at `position` seconds into `track`.
    public init(track: String, position: Double) {
        self.track = track
        self.position = position
    }

    /// Whether the source is still where it was reset: the same track, within 50 ms (a pause's
    /// saved place and the place heard differ by less).
    public func holds(track: String, position: Double) -> Bool {
        self.track == track && abs(self.position - position) < 0.05
    }
}
