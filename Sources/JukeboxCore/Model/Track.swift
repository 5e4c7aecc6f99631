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

    /// Creates track info; `title` defaults to the file name without extension.
    public init(path: String, title: String? = nil, artist: String? = nil, album: String? = nil,
                trackNumber: Int? = nil, discNumber: Int? = nil, duration: Double? = nil) {
        self.path = path
        self.title = (title?.isEmpty == false) ? title! : Paths.stem(path)
        self.artist = artist
        self.album = album
        self.trackNumber = trackNumber
        self.discNumber = discNumber
        self.duration = duration
    }
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
