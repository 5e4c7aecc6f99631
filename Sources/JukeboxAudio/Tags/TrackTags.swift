// SPDX-License-Identifier: MIT

/// What a file says about itself. Every field is nil when the file does not say it.
public struct TrackTags: Sendable, Equatable {
    /// Track title; nil when untagged (the caller falls back to the file name).
    public var title: String?
    /// Performing artist.
    public var artist: String?
    /// Album name.
    public var album: String?
    /// Track number on its disc (never 0).
    public var trackNumber: Int?
    /// Disc number (nil on TagLib 1.x, whose C API cannot read it).
    public var discNumber: Int?
    /// Playing time from libsndfile (frames / sample rate), exact for most formats; for MP4 from
    /// the container (the encoder's delay and padding not counted).
    public var durationSeconds: Double?
    /// Chapters (start in seconds, title cleaned as every tag), empty when the file has none.
    public var chapters: [(start: Double, title: String)] = []
    /// ReplayGain values (`FileLoudness`), nil when the file has none that read.
    public var loudness: ReplayGainTags?

    public static func == (a: TrackTags, b: TrackTags) -> Bool {
        a.title == b.title && a.artist == b.artist && a.album == b.album && a.trackNumber == b.trackNumber
            && a.discNumber == b.discNumber && a.durationSeconds == b.durationSeconds && a.loudness == b.loudness
            && a.chapters.elementsEqual(b.chapters, by: { $0.start == $1.start && $0.title == $1.title })
    }

    /// Creates tags; all fields default to nil.
    public init(title: String? = nil, artist: String? = nil, album: String? = nil,
                trackNumber: Int? = nil, discNumber: Int? = nil, durationSeconds: Double? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.trackNumber = trackNumber
        self.discNumber = discNumber
        self.durationSeconds = durationSeconds
    }
}
