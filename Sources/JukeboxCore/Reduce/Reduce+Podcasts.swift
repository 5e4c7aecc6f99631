// SPDX-License-Identifier: MIT

extension State {
    /// The podcast events: the file read at start, fetches that worked or failed, `podcast NAME`,
    /// the refresh timer.
    mutating func podcast(_ event: Event, _ step: inout Step) {
        switch event {
        case .podcastsLoaded(let saved):
            for loaded in saved {
                guard let at = podcasts.firstIndex(where: { $0.name == loaded.name }) else { continue }
                // The saved episodes and places, under the config's order; a fetch that came in
                // before the file was read goes over them as any fetch would.
                var feed = loaded
                feed.order = podcasts[at].order
                if !podcasts[at].episodes.isEmpty || podcasts[at].lastError != nil {
                    if podcasts[at].lastError == nil {
                        feed.fetched(title: podcasts[at].title, episodes: podcasts[at].episodes)
                    } else {
                        feed.lastError = podcasts[at].lastError
                    }
                }
                podcasts[at] = feed
            }
            podcastsReady = true
            podcastsDirty = false
        case .podcastFetched(let name, let title, let episodes):
            guard let at = podcasts.firstIndex(where: { $0.name == name }) else { return }
            podcasts[at].fetched(title: title, episodes: episodes)
            podcastsDirty = true
        case .podcastFailed(let name, let reason):
            guard let at = podcasts.firstIndex(where: { $0.name == name }) else { return }
            podcasts[at].failed(reason)
            step.commands.append(.report("podcast \(DisplayText.inert(name)): \(DisplayText.inert(reason, maxBytes: 200)) (the episodes known are kept)"))
            podcastsDirty = true
        case .playPodcast(let name):
            playPodcast(name, &step)
        case .timerFired(.podcastRefresh, _):
            fetchPodcasts(&step)
        default:
            break
        }
    }

    /// Asks for every configured feed and sets the next refresh (at start, then on the timer).
    mutating func fetchPodcasts(_ step: inout Step) {
        let feeds = settings.podcasts.feeds
        guard !feeds.isEmpty else { return }
        for feed in feeds { step.commands.append(.fetchPodcast(name: feed.name, url: feed.url)) }
        step.commands.append(.startTimer(.podcastRefresh, after: settings.podcasts.refreshMinutes * 60))
    }

    /// Queues podcast `name`'s next episodes (`PodcastFeed.nextUp`) and plays the first. An
    /// episode played from its URL starts at its beginning whatever its place: an HTTP stream
    /// cannot seek (a downloaded one would resume).
    mutating func playPodcast(_ name: String, _ step: inout Step) {
        guard let feed = podcasts.first(where: { $0.name == name }) else {
            message = "no podcast \"\(DisplayText.inert(name, maxBytes: 64))\""
            return
        }
        let (episodes, place) = feed.nextUp()
        guard let first = episodes.first else {
            message = "\(DisplayText.inert(name)): no episodes yet" + (feed.lastError.map { " (\(DisplayText.inert($0, maxBytes: 120)))" } ?? "")
            return
        }
        let album = feed.title.isEmpty ? feed.name : feed.title
        let infos = episodes.map { TrackInfo(path: $0.url, title: $0.title, album: album, duration: $0.duration) }
        let start = Library.isStreamURL(first.url) ? nil : place
        replaceQueue(infos, from: nil, startAt: start, &step)
    }

    /// The track at `path` was played to its end: an episode of a podcast is marked played.
    mutating func podcastTrackEnded(path: String) {
        for at in podcasts.indices {
            guard let episode = podcasts[at].episode(url: path) else { continue }
            podcasts[at].finished(episode.id)
            podcastsDirty = true
        }
    }

    /// The place heard into the current track, if it is an episode played from a file (an HTTP
    /// stream cannot seek, so its place could not be gone back to).
    mutating func notePodcastPlace() {
        guard let track = currentTrack, !Library.isStreamURL(track.info.path) else { return }
        for at in podcasts.indices {
            guard let episode = podcasts[at].episode(url: track.info.path) else { continue }
            let before = podcasts[at].places[episode.id]
            podcasts[at].note(episode.id, position: position)
            if podcasts[at].places[episode.id] != before { podcastsDirty = true }
        }
    }

    /// The podcasts the config names now: new ones added empty, dropped ones gone, orders as said.
    mutating func followPodcastSettings() {
        let known = Dictionary(podcasts.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let next = settings.podcasts.feeds.map { source -> PodcastFeed in
            var feed = known[source.name] ?? PodcastFeed(name: source.name)
            feed.order = source.order
            return feed
        }
        if next != podcasts {
            podcasts = next
            podcastsDirty = true
        }
    }
}
