// SPDX-License-Identifier: MIT

/// One episode as a feed lists it: an RSS `item` or an Atom `entry` with a playable enclosure.
/// Every field is bounded and inert (`FeedText`); `url` is always an absolute http(s) URL.
public struct FeedEpisode: Equatable, Sendable {
    /// What identifies the episode across fetches: the RSS `guid` or Atom `id`, else the enclosure's
    /// URL. Unique within a document (a later item with the same id is dropped).
    public var id: String
    /// The title (RSS `title`, Atom `title`, else `itunes:title`); "" when the feed gives none.
    public var title: String
    /// The enclosure's URL (RSS `enclosure url=`, Atom `link rel="enclosure" href=`), resolved
    /// against the feed's URL.
    public var url: String
    /// The enclosure's MIME type as given (`audio/mpeg`), "" when none.
    public var mimeType: String
    /// The enclosure's length in bytes as the feed states it (often wrong or 0: only a hint).
    public var bytes: Int64?
    /// When it was published, seconds since the epoch (RSS `pubDate`, Atom `published`, else `updated`).
    public var published: Int64?
    /// Its length in seconds (`itunes:duration`).
    public var duration: Double?
    /// `itunes:season` and `itunes:episode`.
    public var season: Int?
    public var number: Int?

    public init(id: String, title: String, url: String, mimeType: String = "", bytes: Int64? = nil, published: Int64? = nil,
                duration: Double? = nil, season: Int? = nil, number: Int? = nil) {
        self.id = id
        self.title = title
        self.url = url
        self.mimeType = mimeType
        self.bytes = bytes
        self.published = published
        self.duration = duration
        self.season = season
        self.number = number
    }
}

/// A feed as read from its bytes: its title and its episodes in the document's own order.
public struct FeedDocument: Equatable, Sendable {
    /// The dialect the root element named.
    public enum Kind: String, Equatable, Sendable {
        case rss
        case atom
    }

    public var kind: Kind
    /// The channel's or feed's title ("" when none).
    public var title: String
    /// Episodes with a playable enclosure, in document order, at most `FeedLimits.maxItems`.
    public var episodes: [FeedEpisode]
    /// Items passed over: no enclosure, an enclosure that is not http(s), a repeated id, or beyond
    /// `FeedLimits.maxItems`. Said in the log, so a feed that lists nothing playable says why.
    public var skipped: Int

    public init(kind: Kind, title: String, episodes: [FeedEpisode], skipped: Int = 0) {
        self.kind = kind
        self.title = title
        self.episodes = episodes
        self.skipped = skipped
    }
}

/// Bounds on what one feed may cost, whatever a server sends.
public struct FeedLimits: Equatable, Sendable {
    /// The most bytes read (a larger document is refused whole: a cut XML document does not parse).
    public var maxBytes = 8 << 20
    /// The most episodes kept; the rest are counted in `FeedDocument.skipped`.
    public var maxItems = 5_000
    /// UTF-8 bytes kept of a title (cut at a character's end).
    public var maxTitleBytes = 1_000
    /// UTF-8 bytes kept of an id (longer ones are cut: still unique in practice).
    public var maxIDBytes = 512
    /// The longest enclosure URL taken (a longer one is skipped: a cut URL names something else).
    public var maxURLBytes = 2_048
    /// Elements nested deeper than this stop the parse (a feed is four levels deep).
    public var maxDepth = 64

    public init() {}
}

/// Why bytes are not a feed. `description` is the reason shown (the log, `podcast` replies).
public enum FeedFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// More than `FeedLimits.maxBytes`.
    case tooLarge(limit: Int)
    /// The root element is neither RSS's `rss` nor Atom's `feed` (its name, inert and cut).
    case notAFeed(root: String)
    /// A DOCTYPE declares an entity: refused before it is used (entity expansion, external files).
    case entityDeclared(name: String)
    /// Elements nested deeper than `FeedLimits.maxDepth`.
    case tooDeep(limit: Int)
    /// Not well-formed XML (expat's words and where).
    case malformed(line: Int, column: Int, reason: String)

    public var description: String {
        switch self {
        case .tooLarge(let limit): return "the feed is larger than " + Self.size(Int64(limit))
        case .notAFeed(let root): return "not an RSS or Atom feed (its root element is \"\(root)\")"
        case .entityDeclared(let name): return "the feed declares an XML entity (\"\(name)\"), which is refused"
        case .tooDeep(let limit): return "the feed nests elements deeper than \(limit)"
        case .malformed(let line, let column, let reason): return "not well-formed XML at line \(line), column \(column): \(reason)"
        }
    }

    /// `bytes` in the largest whole unit it fills: "8 MiB", "16 KiB", "100 bytes".
    static func size(_ bytes: Int64) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }
}
