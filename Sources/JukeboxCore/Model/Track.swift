// SPDX-License-Identifier: MIT

/// What the player knows about one audio file: where it is and the tags it shows.
///
/// Filled by the shell (TagLib, libsndfile); the core only reads it. `title` is never empty:
/// the shell puts the file name there when the file has no title tag.
public struct TrackInfo: Equatable, Hashable, Sendable, Codable {
    /// Absolute path of the audio file.
    public var path: String
    /// Title to show: the tag, else the file name without its extension.
    public var title: String
    /// Artist tag, if any.
    public var artist: String?
    /// Album tag, if any.
    public var album: String?
    /// Track number tag, if any (used to sort a folder).
    public var trackNumber: Int?
    /// Disc number tag, if any (used to sort a folder).
    public var discNumber: Int?
    /// Length in seconds when known (from the decoder, not the tag).
    public var duration: Double?
    /// The file's chapters in order (an audiobook's), nil when it has none: next and previous then
    /// move by chapter inside it. Kept in the state file (omitted when nil, so files without
    /// chapters are written as before).
    public var chapters: [Chapter]?
    /// The file's ReplayGain tags, nil when it has none. Kept in the state file (omitted when
    /// nil, so files without them are written as before).
    public var loudness: Loudness?

    /// Creates track info; `title` defaults to the file name without extension.
    public init(path: String, title: String? = nil, artist: String? = nil, album: String? = nil,
                trackNumber: Int? = nil, discNumber: Int? = nil, duration: Double? = nil, chapters: [Chapter]? = nil,
                loudness: Loudness? = nil) {
        self.path = path
        self.title = (title?.isEmpty == false) ? title! : Paths.stem(path)
        self.artist = artist
        self.album = album
        self.trackNumber = trackNumber
        self.discNumber = discNumber
        self.duration = duration
        self.chapters = chapters?.isEmpty == false ? chapters : nil
        self.loudness = loudness
    }
}

/// A chapter of a long file: where it starts (seconds) and its title (text from the file).
public struct Chapter: Equatable, Hashable, Sendable, Codable {
    public var start: Double
    public var title: String
    public init(start: Double, title: String) {
        self.start = start
        self.title = title
    }
}

extension TrackInfo {
    /// The chapter playing at `position` (its index), nil without chapters or before the first.
    public func chapterIndex(at position: Double) -> Int? {
        guard let chapters else { return nil }
        return chapters.lastIndex { $0.start <= position + Self.chapterSlack }
    }

    /// Positions within this much of a chapter's start count as in it: a seek to a chapter lands
    /// there, and the position the player then reports may be a few milliseconds short.
    public static let chapterSlack = 0.05
}

/// One entry of the queue: track info with an identity that survives moves and removals.
public struct Track: Equatable, Sendable {
    /// Unique within one run of the player; assigned by the core, never persisted.
    public var id: UInt64
    /// What is known of the file.
    public var info: TrackInfo

    /// Creates a queue entry.
    public init(id: UInt64, info: TrackInfo) {
        self.id = id
        self.info = info
    }
}

/// How the queue continues at its end and on auto-advance.
public enum RepeatMode: String, Equatable, Sendable, Codable, CaseIterable {
    /// Play the queue once, then stop.
    case off
    /// Repeat the current track.
    case one
    /// Start the queue again after its last track.
    case all

    /// The mode a "repeat" button moves to: off → all → one → off.
    public var cycled: RepeatMode {
        switch self {
        case .off: return .all
        case .all: return .one
        case .one: return .off
        }
    }
}

extension State {
    /// The chapter playing, when the current track has chapters: its index, their count, itself.
    public var currentChapter: (index: Int, count: Int, chapter: Chapter)? {
        guard let info = currentTrack?.info, let chapters = info.chapters, let i = info.chapterIndex(at: position) else { return nil }
        return (i, chapters.count, chapters[i])
    }
}
