// SPDX-License-Identifier: MIT

/// How a feed's episodes are played (config `podcasts[].order`).
public enum PodcastOrder: String, Equatable, Sendable, Codable, CaseIterable {
    /// The newest first (news, a daily show): the newest episode not yet played comes next.
    case newest
    /// In the order they came out (a serial, an audiobook told in episodes): the oldest not yet
    /// played comes next.
    case oldest
}

/// One podcast the config names: what it is called (a card's `{"podcast": NAME}`,
/// `podcast://NAME`), where its feed is, the order its episodes play in and how many are
/// downloaded ahead.
public struct PodcastSource: Equatable, Sendable {
    public var name: String
    /// The feed's http(s) URL.
    public var url: String
    public var order: PodcastOrder
    /// Episodes not yet played kept on disk ahead of time (0: always streamed).
    public var downloadAhead: Int

    public init(name: String, url: String, order: PodcastOrder = .newest, downloadAhead: Int = 0) {
        self.name = name
        self.url = url
        self.order = order
        self.downloadAhead = downloadAhead
    }
}

/// The config's `podcasts`: the feeds, how often they are fetched again, and the disk the
/// downloads may take together.
public struct PodcastSettings: Equatable, Sendable {
    public var feeds: [PodcastSource] = []
    /// Minutes between two fetches of a feed (each feed is also fetched at start).
    public var refreshMinutes = 60.0
    /// MiB every feed's downloads may take together.
    public var budgetMiB = 1024

    public init() {}

    /// The most feeds one config may name.
    public static let maxFeeds = 100
    /// The longest name (UTF-8 bytes).
    public static let maxNameBytes = 64

    /// Whether `name` can name a podcast: 1 to 64 bytes, no control character, no `/` (it names a
    /// folder of downloads and ends a `podcast://NAME` URI), not `.` or `..`.
    public static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameBytes && name != "." && name != ".."
            && !name.unicodeScalars.contains { DisplayText.isControl($0) || $0 == "/" }
            && name.first != " " && name.last != " "
    }
}

/// One episode as the core knows it: the facts the feed parser found, copied by the shell.
public struct PodcastEpisode: Equatable, Sendable, Codable {
    /// What identifies it across fetches (the feed's guid or id, else its URL).
    public var id: String
    /// Its title (inert and bounded by the parser).
    public var title: String
    /// Where its audio is (an http(s) URL).
    public var url: String
    /// When it came out, seconds since the epoch; nil when the feed did not say.
    public var published: Int64?
    /// Its length in seconds, as the feed states it.
    public var duration: Double?

    /// Creates one.
    public init(id: String, title: String, url: String, published: Int64? = nil, duration: Double? = nil) {
        self.id = id
        self.title = title
        self.url = url
        self.published = published
        self.duration = duration
    }
}

/// Where an episode was left: the seconds heard into it, and whether it was played to its end.
public struct EpisodePlace: Equatable, Sendable, Codable {
    public var position: Double
    public var played: Bool

    /// Creates one.
    public init(position: Double = 0, played: Bool = false) {
        self.position = position
        self.played = played
    }
}

/// An episode downloaded: where its file is (absolute, as the shell made it) and its size.
public struct EpisodeFile: Equatable, Sendable, Codable {
    public var path: String
    public var bytes: Int64

    /// Creates one.
    public init(path: String, bytes: Int64) {
        self.path = path
        self.bytes = bytes
    }
}

/// A podcast: its episodes as known (the last good fetch and those seen before it) and each
/// episode's own place. A fetch that fails changes nothing but `lastError`: what was known stays.
public struct PodcastFeed: Equatable, Sendable, Codable {
    /// The most episodes kept of one feed (the parser keeps as many of one document).
    public static let maxEpisodes = 5_000

    /// The name the config gives it (a card's `{"podcast": NAME}`, `podcast://NAME`).
    public var name: String
    public var order: PodcastOrder
    /// The feed's own title, from its last good fetch ("" before one).
    public var title: String
    /// Known episodes: the last fetch's in the feed's order, then older ones it no longer lists.
    /// Every change rebuilds `index`'s lookups by URL and id.
    public var episodes: [PodcastEpisode] { didSet { index.episodesChanged(episodes) } }
    /// Each episode's place, by its id; none: never started.
    public var places: [String: EpisodePlace]
    /// Why the last fetch failed (nil when it worked).
    public var lastError: String?
    /// The episodes downloaded, by id. Every change rebuilds `index`'s lookup by file.
    public var downloads: [String: EpisodeFile] { didSet { index.downloadsChanged(downloads) } }
    /// A podcast taken out of the config: the starts it has been absent at (0: since a reload).
    /// nil: configured. Its files go at the `State.podcastAbsentStarts`th.
    public var absentStarts: Int?
    /// Where each episode is by URL, id and file: derived from `episodes` and `downloads` (their
    /// `didSet` and the initialisers keep it so), neither saved nor compared.
    private var index = EpisodeIndex()

    /// Creates one.
    public init(name: String, order: PodcastOrder = .newest, title: String = "", episodes: [PodcastEpisode] = [],
                places: [String: EpisodePlace] = [:], lastError: String? = nil, downloads: [String: EpisodeFile] = [:],
                absentStarts: Int? = nil) {
        self.absentStarts = absentStarts
        self.name = name
        self.order = order
        self.title = title
        self.episodes = episodes
        self.places = places
        self.lastError = lastError
        self.downloads = downloads
        index = EpisodeIndex(episodes: episodes, downloads: downloads)
    }

    private enum CodingKeys: String, CodingKey { case name, order, title, episodes, places, lastError, downloads, absentStarts }

    /// Read from the podcasts file; `downloads` may be absent (none).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        order = try c.decode(PodcastOrder.self, forKey: .order)
        title = try c.decode(String.self, forKey: .title)
        episodes = try c.decode([PodcastEpisode].self, forKey: .episodes)
        places = try c.decode([String: EpisodePlace].self, forKey: .places)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        downloads = try c.decodeIfPresent([String: EpisodeFile].self, forKey: .downloads) ?? [:]
        absentStarts = try c.decodeIfPresent(Int.self, forKey: .absentStarts)
        index = EpisodeIndex(episodes: episodes, downloads: downloads)
    }
}

extension PodcastFeed {
    /// A good fetch: its episodes first, in the feed's order (an episode seen before takes the
    /// fetch's facts), then the episodes known before that it no longer lists (a feed that lists
    /// only its last ten keeps the older ones heard of). At most `maxEpisodes`: those no longer
    /// listed go first; places of episodes dropped go with them.
    public mutating func fetched(title: String, episodes fetched: [PodcastEpisode]) {
        var seen: Set<String> = []
        var merged: [PodcastEpisode] = []
        for episode in fetched where seen.insert(episode.id).inserted { merged.append(episode) }
        for episode in episodes where seen.insert(episode.id).inserted { merged.append(episode) }
        if merged.count > Self.maxEpisodes { merged.removeLast(merged.count - Self.maxEpisodes) }
        episodes = merged
        let kept = Set(merged.map(\.id))
        places = places.filter { kept.contains($0.key) }
        self.title = title
        lastError = nil
    }

    /// A failed fetch: the reason is kept, the episodes and places are not touched.
    public mutating func failed(_ reason: String) {
        lastError = reason
    }

    /// The episodes in the order they play: by publication date, newest or oldest first by
    /// `order`. An episode without a date keeps its place in the feed's own list relative to its
    /// neighbours (the feed's list is taken as newest first, as feeds write it).
    public var playOrder: [PodcastEpisode] {
        var all: [PodcastEpisode] = []
        all.reserveCapacity(episodes.count)
        walkPlayOrder { all.append($0); return true }
        return all
    }

    /// Hands `body` the episodes in play order until it returns false: no sort (the index keeps
    /// the order) and no copy of the list, for a walk that stops after a few (a track's end).
    func walkPlayOrder(_ body: (PodcastEpisode) -> Bool) {
        if order == .newest {
            for at in index.newestFirst where !body(episodes[at]) { return }
        } else {
            for at in index.newestFirst.reversed() where !body(episodes[at]) { return }
        }
    }

    /// What playing the feed queues and where it starts: the episodes not yet played, in play
    /// order, from the first, at that episode's own place. When every episode has been played,
    /// all of them, from the top (a card that plays nothing would look broken).
    public func nextUp() -> (episodes: [PodcastEpisode], position: Double) {
        let all = playOrder
        let unplayed = all.filter { places[$0.id]?.played != true }
        let queue = unplayed.isEmpty ? all : unplayed
        guard let first = queue.first, let place = places[first.id], !place.played else { return (queue, 0) }
        return (queue, place.position)
    }

    /// The episode whose audio is at `path`: the file it was downloaded to, else its URL (the
    /// first episode with it). A file downloaded for an episode no longer known gives nil.
    /// Two dictionary lookups (`index`), not a scan: asked at every status render.
    public func episode(url path: String) -> PodcastEpisode? {
        if let id = index.byFile[path] { return episode(id: id) }
        return index.byURL[path].map { episodes[$0] }
    }

    /// The first episode with id `id`, if known.
    public func episode(id: String) -> PodcastEpisode? {
        index.byID[id].map { episodes[$0] }
    }

    /// The queue entry of `episode`: its file or URL, its title, the feed's title as the album.
    public func track(_ episode: PodcastEpisode) -> TrackInfo {
        TrackInfo(path: source(of: episode), title: episode.title, album: title.isEmpty ? name : title, duration: episode.duration)
    }

    /// Where episode `episode` plays from: its file when downloaded, else its URL.
    public func source(of episode: PodcastEpisode) -> String {
        downloads[episode.id]?.path ?? episode.url
    }

    /// The place heard into episode `id` (a save, a pause, a skip away). A played episode heard
    /// again stays played (its mark goes only with a reset), so it does not come back as new.
    public mutating func note(_ id: String, position: Double) {
        guard position.isFinite, position >= 0, episode(id: id) != nil else { return }
        var place = places[id] ?? EpisodePlace()
        place.position = position
        places[id] = place
    }

    /// Episode `id` was played to its end: marked played, its place back at the start.
    public mutating func finished(_ id: String) {
        guard episode(id: id) != nil else { return }
        places[id] = EpisodePlace(position: 0, played: true)
    }
}

/// An episode of a podcast: the podcast's name and the episode's id.
/// How far the episode being downloaded is: the bytes on disk and the whole length (nil when the
/// server did not say).
public struct DownloadProgress: Equatable, Sendable {
    public var bytes: Int64
    public var total: Int64?

    public init(bytes: Int64, total: Int64?) {
        self.bytes = bytes
        self.total = total
    }

    /// Whole percents, 0 to 99 until the file is whole (a server's length may be wrong); nil
    /// without a total.
    public var percent: Int? {
        guard let total, total > 0 else { return nil }
        return Int(min(99, max(0, bytes.multipliedReportingOverflow(by: 100).partialValue / total)))
    }
}

public struct PodcastEpisodeKey: Hashable, Sendable {
    public var name: String
    public var id: String

    public init(name: String, id: String) {
        self.name = name
        self.id = id
    }
}

extension PodcastFeed {
    /// Where episode `id` of podcast `name` is downloaded to, relative to the downloads folder:
    /// `FEED/EPISODE.EXT`, both hashes of the names (FNV-1a, 64 bits, hex) so nothing a feed says
    /// reaches a file name, and the extension of the URL's path when it is a known audio one.
    public static func fileName(name: String, episode: PodcastEpisode) -> String {
        let path = episode.url.split(separator: "?").first.map(String.init) ?? episode.url
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let ext = last.split(separator: ".").count > 1 ? (last.split(separator: ".").last.map { $0.lowercased() } ?? "") : ""
        let known: Set<String> = ["mp3", "m4a", "m4b", "aac", "ogg", "oga", "opus", "flac", "mp4", "wav"]
        return hex(fnv1a(name)) + "/" + hex(fnv1a(episode.id)) + "." + (known.contains(ext) ? ext : "audio")
    }

    /// A short name for `episode` that any protocol can carry whatever its id holds (slashes,
    /// spaces, anything): the FNV-1a hash of the id in hex, as its file's name (`podcast://NAME/KEY`
    /// in MPD).
    public static func key(of episode: PodcastEpisode) -> String { hex(fnv1a(episode.id)) }

    /// The episode whose `key(of:)` is `key`, if known.
    public func episode(key: String) -> PodcastEpisode? { episodes.first { Self.key(of: $0) == key } }

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// A podcast asked for while the podcasts file was being read: played (or, from MPD, queued)
/// once it has been, with the places it holds.
public struct PodcastWait: Equatable, Sendable {
    public var name: String
    /// `podcast NAME` (play) rather than MPD's `add podcast://NAME` (queue).
    public var play: Bool

    public init(name: String, play: Bool) {
        self.name = name
        self.play = play
    }
}
