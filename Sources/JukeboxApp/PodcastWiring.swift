// SPDX-License-Identifier: MIT
import JukeboxAudio
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The podcast port over the feed fetcher: `Command.fetchPodcast` goes to the `jukebox-feeds`
/// thread (started at the first fetch), and each outcome comes back to the loop as an event, the
/// parser's episodes copied into the core's words. Facts only: what they mean is the core's.
public final class PodcastWiring: PodcastPort {
    private let mailbox: Mailbox
    private let settings: FeedFetchSettings
    private var fetcher: FeedFetcher?

    /// `caFile`: the PEM bundle HTTPS also trusts (`radio.caFile`).
    public init(mailbox: Mailbox, caFile: String? = nil) {
        self.mailbox = mailbox
        var settings = FeedFetchSettings()
        settings.caFile = caFile
        self.settings = settings
    }

    public func fetch(name: String, url: String) {
        if fetcher == nil {
            let mailbox = self.mailbox
            fetcher = FeedFetcher(settings: settings) { outcome in mailbox.post(Self.event(outcome)) }
        }
        fetcher?.fetch(name: name, url: url)
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
