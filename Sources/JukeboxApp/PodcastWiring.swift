// SPDX-License-Identifier: MIT
import JukeboxAudio
import JukeboxCore
import JukeboxService
import JukeboxSystem
import Glibc

/// The podcast port over the feed fetcher: `Command.fetchPodcast` goes to the `jukebox-feeds`
/// thread (started at the first fetch), and each outcome comes back to the loop as an event, the
/// parser's episodes copied into the core's words. Facts only: what they mean is the core's.
public final class PodcastWiring: PodcastPort {
    private let mailbox: Mailbox
    private let settings: FeedFetchSettings
    private var fetcher: FeedFetcher?
    /// Where episodes are downloaded to (`STATEFILE.episodes`); nil: none are (no state file).
    public let downloads: String?

    /// `caFile`: the PEM bundle HTTPS also trusts (`radio.caFile`); `downloads`: the folder
    /// episodes are downloaded to.
    public init(mailbox: Mailbox, caFile: String? = nil, downloads: String? = nil) {
        self.mailbox = mailbox
        var settings = FeedFetchSettings()
        settings.caFile = caFile
        self.settings = settings
        self.downloads = downloads
    }

    private var started: FeedFetcher {
        if let fetcher { return fetcher }
        let mailbox = self.mailbox
        let made = FeedFetcher(settings: settings, report: { mailbox.post(Self.event($0)) },
                               reportDownload: { mailbox.post(Self.event($0)) },
                               reportProgress: { mailbox.post(.episodeDownloadProgress(name: $0, id: $1, bytes: $2, total: $3)) })
        fetcher = made
        return made
    }

    public func fetch(name: String, url: String) {
        started.fetch(name: name, url: url)
    }

    public func download(name: String, id: String, url: String, file: String, maxBytes: Int64) {
        guard let downloads, Self.isInside(file) else {
            mailbox.post(.episodeDownloadFailed(name: name, id: id, reason: "no folder to download to (no state file)"))
            return
        }
        started.download(name: name, id: id, url: url, to: downloads + "/" + file, maxBytes: maxBytes)
    }

    public func delete(path: String) {
        // Only a file of our own folder, named as the core names them.
        guard let downloads, path.hasPrefix(downloads + "/"), Self.isInside(String(path.dropFirst(downloads.count + 1))) else { return }
        unlink(path)
    }

    /// Whether `file` is a relative path of two plain names (`FEED/EPISODE.EXT`), nothing that
    /// climbs out of the folder.
    static func isInside(_ file: String) -> Bool {
        let parts = file.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." && !$0.hasPrefix(".") }
    }

    /// The core's event for one download's outcome.
    public static func event(_ outcome: EpisodeDownloadOutcome) -> Event {
        switch outcome.result {
        case .success(let bytes): return .episodeDownloaded(name: outcome.name, id: outcome.id, path: outcome.path, bytes: bytes)
        case .failure(let error): return .episodeDownloadFailed(name: outcome.name, id: outcome.id, reason: error.description)
        }
    }

    public func finish() {
        fetcher?.finish()
        fetcher = nil
    }

    /// The core's event for one fetch's outcome.
    public static func event(_ outcome: FeedFetchOutcome) -> Event {
        switch outcome.result {
        case .success(let document):
            let episodes = document.episodes.map {
                PodcastEpisode(id: $0.id, title: $0.title, url: $0.url, published: $0.published, duration: $0.duration)
            }
            return .podcastFetched(name: outcome.name, title: document.title, episodes: episodes)
        case .failure(let error):
            return .podcastFailed(name: outcome.name, reason: error.description)
        }
    }
}
