// SPDX-License-Identifier: MIT
import JukeboxCore

// Podcasts as MPD sees them (docs/MPD.md): `podcast://` is a folder of the configured podcasts,
// `podcast://NAME` one of them, its episodes as songs `podcast://NAME/KEY` (KEY: the episode's
// `PodcastFeed.key(of:)`, since an id may hold anything). Read from the core's state on the loop:
// bounded by the podcasts' 5,000 episodes each, nothing read from disk or network.
extension MPDFace {
    /// `lsinfo podcast://` (each podcast as a directory) or `lsinfo podcast://NAME` (its episodes
    /// in play order, as songs with jukebox's `Played` and `Place` in seconds where known).
    static func podcastListing(_ uri: String, _ state: State) -> Result<[String], MPDError> {
        var name = String(uri.dropFirst(podcastScheme.count))
        if name.hasSuffix("/") { name.removeLast() }
        if name.isEmpty {
            return .success(state.podcasts.map { "directory: " + podcastScheme + $0.name })
        }
        guard let feed = state.podcasts.first(where: { $0.name == name }) else {
            return .failure(MPDError(.noExist, "No such directory"))
        }
        return .success(feed.playOrder.flatMap { episode -> [String] in
            var lines = MPDReplies.songInfo(feed.track(episode), roots: [])
            lines[0] = "file: " + podcastScheme + feed.name + "/" + PodcastFeed.key(of: episode)
            let place = feed.places[episode.id]
            if place?.played == true { lines.append("Played: 1") }
            if let position = place?.position, position > 0 { lines.append("Place: \(Int(position))") }
            return lines
        })
    }

    /// The queue entry of episode `podcast://NAME/KEY`: from its file when downloaded, else its URL.
    static func podcastEpisode(_ uri: String, _ state: State) -> Result<TrackInfo, MPDError> {
        let rest = uri.dropFirst(podcastScheme.count)
        guard let slash = rest.firstIndex(of: "/") else { return .failure(MPDError(.noExist, "No such song")) }
        let name = String(rest[..<slash]), key = String(rest[rest.index(after: slash)...])
        guard let feed = state.podcasts.first(where: { $0.name == name }), let episode = feed.episode(key: key) else {
            return .failure(MPDError(.noExist, "No such song"))
        }
        return .success(feed.track(episode))
    }
}
