// SPDX-License-Identifier: MIT

/// Where a feed's episodes are, by URL, by id and by downloaded file: the lookups every status
/// render and many events make (`PodcastFeed.episode(url:)` through `State.isPodcastEpisode`:
/// `speed(for:)`, `currentIsLive`; `note`, `finished`). A scan of 100 feeds of 5,000 episodes by
/// string cost 37–117 ms per `reduce` of a tick in a debug build on the x86-64 build machine
/// (`EpisodeLookupCostTests`), several times that on a Pi 3; the index about 0.05 ms.
///
/// Derived from `PodcastFeed.episodes` and `PodcastFeed.downloads` alone and rebuilt by their
/// `didSet` whenever either changes (a fetch, a file read, a download, a deletion, any edit), so it
/// cannot disagree with them. It is neither saved (not in `PodcastFeed.CodingKeys`) nor compared:
/// two feeds with the same episodes and downloads have the same index, so `==` ignores it.
struct EpisodeIndex: Sendable {
    /// The first episode in `episodes` with each URL: what a scan from the top finds.
    private(set) var byURL: [String: Int] = [:]
    /// The first episode in `episodes` with each id.
    private(set) var byID: [String: Int] = [:]
    /// Each downloaded file's path, and the id it was downloaded for. Two ids at one path (only an
    /// FNV-1a collision makes that: `PodcastFeed.fileName`) give the smaller id; the scan this
    /// replaces took whichever the dictionary gave first.
    private(set) var byFile: [String: String] = [:]
    /// The positions in `episodes`, newest first (`PodcastFeed.playOrder`'s rule): sorted once per
    /// change of the list, not at every track's end.
    private(set) var newestFirst: [Int] = []

    init() {}

    init(episodes: [PodcastEpisode], downloads: [String: EpisodeFile]) {
        episodesChanged(episodes)
        downloadsChanged(downloads)
    }

    /// `episodes` is now this list.
    mutating func episodesChanged(_ episodes: [PodcastEpisode]) {
        var urls: [String: Int] = [:]
        var ids: [String: Int] = [:]
        urls.reserveCapacity(episodes.count)
        ids.reserveCapacity(episodes.count)
        for (at, episode) in episodes.enumerated() {
            if urls[episode.url] == nil { urls[episode.url] = at }
            if ids[episode.id] == nil { ids[episode.id] = at }
        }
        byURL = urls
        byID = ids
        // An undated episode takes the date of the dated one listed before it (so it follows it,
        // as the feed lists it), or sorts before every dated one when none is; the feed's own
        // position breaks ties. A total order, whatever mix of dates a feed has.
        var carried = Int64.max
        var keyed: [(date: Int64, at: Int)] = []
        keyed.reserveCapacity(episodes.count)
        for (at, episode) in episodes.enumerated() {
            if let date = episode.published { carried = date }
            keyed.append((episode.published ?? carried, at))
        }
        keyed.sort { $0.date != $1.date ? $0.date > $1.date : $0.at < $1.at }
        newestFirst = keyed.map(\.at)
    }

    /// `downloads` is now this table.
    mutating func downloadsChanged(_ downloads: [String: EpisodeFile]) {
        var files: [String: String] = [:]
        files.reserveCapacity(downloads.count)
        for (id, file) in downloads {
            if let other = files[file.path], other < id { continue }
            files[file.path] = id
        }
        byFile = files
    }
}

extension EpisodeIndex: Equatable {
    /// Always equal: the index is a function of what `PodcastFeed`'s `==` already compares.
    static func == (_: EpisodeIndex, _: EpisodeIndex) -> Bool { true }
}
