// SPDX-License-Identifier: MIT

extension State {
    /// The podcast events: the file read at start, fetches that worked or failed, `podcast NAME`,
    /// the refresh timer.
    mutating func podcast(_ event: Event, _ step: inout Step) {
        switch event {
        case .podcastsReading:
            podcastsReading = true
        case .podcastsLoaded(nil):
            // Unreadable: nothing is saved over it; what waited for it is done without it.
            podcastsReading = false
            doWaitingPodcast(&step)
        case .podcastsLoaded(let saved?):
            var gone = false
            // A fetch that came in while the file was read is merged below and saved: otherwise
            // its episodes or its failure would wait for the next change (a refresh an hour on).
            var fetchedBefore = false
            for loaded in saved {
                guard let at = podcasts.firstIndex(where: { $0.name == loaded.name }) else {
                    // Not in the config at this start.
                    if absentAtStart(loaded, &step) { gone = true }
                    continue
                }
                // The saved episodes and places, under the config's order; a fetch that came in
                // before the file was read goes over them as any fetch would.
                var feed = loaded
                feed.absentStarts = nil
                feed.order = podcasts[at].order
                if !podcasts[at].episodes.isEmpty || podcasts[at].lastError != nil {
                    fetchedBefore = true
                    if podcasts[at].lastError == nil {
                        feed.fetched(title: podcasts[at].title, episodes: podcasts[at].episodes)
                    } else {
                        feed.lastError = podcasts[at].lastError
                    }
                }
                podcasts[at] = feed
            }
            podcastsReady = true
            // What was just read need not be written back, unless a fetch came in before it (for a
            // podcast the file holds, merged above, or for one it does not: a first start, a
            // podcast just added, which `podcastsDirty` still says) or a podcast absent from the
            // config was counted or its files deleted.
            podcastsDirty = podcastsDirty || gone || fetchedBefore
            podcastsReading = false
            doWaitingPodcast(&step)
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
        case .queuePodcast(let name):
            queuePodcast(name, &step)
        case .timerFired(.podcastRefresh, _):
            // Downloads that failed are tried again with the feeds.
            podcastDownloadsFailed = []
            fetchPodcasts(&step)
        case .episodeDownloadProgress(let name, let id, let bytes, let total):
            // Only the download in hand: a late report of an older one is no news.
            guard podcastDownloading == PodcastEpisodeKey(name: name, id: id) else { return }
            podcastDownloadProgress = DownloadProgress(bytes: max(0, bytes), total: total.flatMap { $0 > 0 ? $0 : nil })
        case .episodeDownloaded(let name, let id, let path, let bytes):
            if podcastDownloading == PodcastEpisodeKey(name: name, id: id) {
                podcastDownloading = nil
                podcastDownloadProgress = nil
            }
            guard let at = podcasts.firstIndex(where: { $0.name == name }), podcasts[at].episode(id: id) != nil else {
                // Neither the podcast nor the episode is known any more: the file goes.
                step.commands.append(.deleteEpisodeFile(path: path))
                return
            }
            if let old = podcasts[at].downloads[id], old.path != path { step.commands.append(.deleteEpisodeFile(path: old.path)) }
            podcasts[at].downloads[id] = EpisodeFile(path: path, bytes: bytes)
            podcastsDirty = true
        case .episodeDownloadFailed(let name, let id, let reason):
            let key = PodcastEpisodeKey(name: name, id: id)
            if podcastDownloading == key {
                podcastDownloading = nil
                podcastDownloadProgress = nil
            }
            podcastDownloadsFailed.insert(key)
            step.commands.append(.report("podcast \(DisplayText.inert(name)): an episode could not be downloaded: \(DisplayText.inert(reason, maxBytes: 200))"))
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

    /// Queues podcast `name`'s next episodes (`PodcastFeed.nextUp`) and plays the first at its
    /// own place, downloaded or not: an episode played from its URL is a file on a server, which
    /// the stream adapter starts near the place by a range request (and says where it landed).
    mutating func playPodcast(_ name: String, _ step: inout Step) {
        if podcastsReading {
            // The places are in the file being read: played once it has been.
            podcastWaiting = PodcastWait(name: name, play: true)
            return
        }
        guard let (feed, episodes, place) = nextEpisodes(name) else { return }
        replaceQueue(episodes.map { feed.track($0) }, from: nil, startAt: place, &step)
    }

    /// MPD's `add podcast://NAME`: podcast `name`'s next episodes appended, not played (once the
    /// podcasts file has been read).
    mutating func queuePodcast(_ name: String, _ step: inout Step) {
        if podcastsReading {
            podcastWaiting = PodcastWait(name: name, play: false)
            return
        }
        guard let (feed, episodes, _) = nextEpisodes(name) else { return }
        queueChange(.add(episodes.map { feed.track($0) }), &step)
    }

    /// What was asked while the podcasts file was read, now that it has been.
    mutating func doWaitingPodcast(_ step: inout Step) {
        guard let wait = podcastWaiting else { return }
        podcastWaiting = nil
        if wait.play { playPodcast(wait.name, &step) } else { queuePodcast(wait.name, &step) }
    }

    /// Podcast `name`, its next episodes (never none) and the first one's place; nil, with the
    /// reason on the status line, for an unknown podcast or one without episodes yet.
    mutating func nextEpisodes(_ name: String) -> (PodcastFeed, [PodcastEpisode], Double)? {
        guard let feed = podcasts.first(where: { $0.name == name }) else {
            message = "no podcast \"\(DisplayText.inert(name, maxBytes: 64))\""
            return nil
        }
        let (episodes, place) = feed.nextUp()
        guard !episodes.isEmpty else {
            message = "\(DisplayText.inert(name)): no episodes yet" + (feed.lastError.map { " (\(DisplayText.inert($0, maxBytes: 120)))" } ?? "")
            return nil
        }
        return (feed, episodes, place)
    }

    /// Whether `path` is an episode of a podcast (its file or its URL).
    func isPodcastEpisode(_ path: String) -> Bool {
        podcasts.contains { $0.episode(url: path) != nil }
    }

    /// The track at `path` was played to its end: an episode of a podcast is marked played.
    mutating func podcastTrackEnded(path: String) {
        for at in podcasts.indices {
            guard let episode = podcasts[at].episode(url: path) else { continue }
            podcasts[at].finished(episode.id)
            podcastsDirty = true
        }
    }

    /// While an episode plays, its place is noted when it moved this far (the podcasts file is
    /// rewritten whole, so not at every save; a pause, a stop or another track note it exactly,
    /// and the state file holds the exact place of the queue's track anyway).
    static let podcastPlaceStep = 30.0

    /// The place heard into the current track, if it is an episode (from its file or its URL:
    /// either starts at its place again).
    mutating func notePodcastPlace() {
        guard let track = currentTrack else { return }
        for at in podcasts.indices {
            guard let episode = podcasts[at].episode(url: track.info.path) else { continue }
            let before = podcasts[at].places[episode.id]
            if phase == .playing, let old = before?.position, abs(position - old) < Self.podcastPlaceStep { continue }
            podcasts[at].note(episode.id, position: position)
            if podcasts[at].places[episode.id] != before { podcastsDirty = true }
        }
    }

    /// The starts a podcast taken out of the config is kept at with its places and files: its
    /// files are deleted at the third start without it (none of them is anything but a file the
    /// player downloaded into its own folder), never because a fetch failed.
    static let podcastAbsentStarts = 3

    /// The podcasts the config names now: new ones added empty (or as they were, if taken out
    /// and put back), dropped ones kept aside (`podcastsRemoved`), orders as said.
    mutating func followPodcastSettings() {
        let known = Dictionary((podcasts + podcastsRemoved).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let next = settings.podcasts.feeds.map { source -> PodcastFeed in
            var feed = known[source.name] ?? PodcastFeed(name: source.name)
            feed.order = source.order
            feed.absentStarts = nil
            return feed
        }
        let named = Set(next.map(\.name))
        let removed = (podcasts + podcastsRemoved).filter { !named.contains($0.name) }.map { feed -> PodcastFeed in
            var kept = feed
            kept.absentStarts = feed.absentStarts ?? 0
            return kept
        }
        if next != podcasts || removed != podcastsRemoved {
            podcasts = next
            podcastsRemoved = removed
            podcastsDirty = true
        }
    }

    /// Podcast `feed` from the file is not in the config at this start: one more start counted;
    /// at `podcastAbsentStarts` its files are deleted and it is forgotten, else it is kept aside.
    /// One with neither places nor files holds nothing of the listener's: forgotten at once.
    /// Whether the file must be written again.
    mutating func absentAtStart(_ feed: PodcastFeed, _ step: inout Step) -> Bool {
        guard !podcastsRemoved.contains(where: { $0.name == feed.name }), !feed.places.isEmpty || !feed.downloads.isEmpty else {
            return false
        }
        var counted = feed
        let starts = (feed.absentStarts ?? 0) + 1
        counted.absentStarts = starts
        guard starts >= Self.podcastAbsentStarts else {
            podcastsRemoved.append(counted)
            return true
        }
        for file in feed.downloads.values.sorted(by: { $0.path < $1.path }) {
            step.commands.append(.deleteEpisodeFile(path: file.path))
        }
        step.commands.append(.report("podcast \(DisplayText.inert(feed.name)): not in the config at \(Self.podcastAbsentStarts) starts: "
                                     + "its \(feed.downloads.count) downloaded episodes deleted and its places forgotten"))
        return true
    }

    /// The downloads the podcasts call for now: files of episodes no longer known deleted; then,
    /// for each podcast with `downloadAhead`, its next episodes not yet played (in play order) are
    /// downloaded, one at a time across all podcasts, within `budgetMiB` for all of them. When the
    /// budget is spent, played episodes' files go first, oldest first (by date, then the feed's
    /// list); a file of an episode not yet played is never deleted for room, and none is deleted
    /// while it plays. A download that failed waits for the next refresh.
    mutating func followPodcastDownloads(_ step: inout Step) {
        let playing = currentTrack?.info.path
        // Files of episodes no longer known.
        for at in podcasts.indices {
            for (id, file) in podcasts[at].downloads where podcasts[at].episode(id: id) == nil && file.path != playing {
                podcasts[at].downloads[id] = nil
                step.commands.append(.deleteEpisodeFile(path: file.path))
                podcastsDirty = true
            }
        }
        guard podcastsReady, podcastDownloading == nil else { return }
        let budget = Int64(settings.podcasts.budgetMiB) << 20
        // The next episode wanted, the first podcast in the config's order first.
        var wanted: (feed: Int, episode: PodcastEpisode)?
        search: for source in settings.podcasts.feeds where source.downloadAhead > 0 {
            guard let at = podcasts.firstIndex(where: { $0.name == source.name }) else { continue }
            let feed = podcasts[at]
            // The first `downloadAhead` episodes not played yet, in play order: the first of them
            // not there (nor failed) is wanted.
            var ahead = 0
            feed.walkPlayOrder { episode in
                guard feed.places[episode.id]?.played != true else { return true }
                ahead += 1
                if feed.downloads[episode.id] == nil && !podcastDownloadsFailed.contains(PodcastEpisodeKey(name: feed.name, id: episode.id)) {
                    wanted = (at, episode)
                    return false
                }
                return ahead < source.downloadAhead
            }
            if wanted != nil { break search }
        }
        guard let wanted else { return }
        var used = podcasts.reduce(Int64(0)) { $0 + $1.downloads.values.reduce(Int64(0)) { $0 + $1.bytes } }
        // Any room at all: the length a feed states is often wrong, and the download itself
        // stops at the budget left (`maxBytes`).
        let hint: Int64 = 1
        if used + hint > budget {
            // Played episodes' files, oldest first, until there is room.
            var played: [(date: Int64, index: Int, feed: Int, id: String, file: EpisodeFile)] = []
            for at in podcasts.indices {
                for (index, episode) in podcasts[at].episodes.enumerated()
                where podcasts[at].places[episode.id]?.played == true {
                    guard let file = podcasts[at].downloads[episode.id], file.path != playing else { continue }
                    played.append((episode.published ?? Int64.min, -index, at, episode.id, file))
                }
            }
            played.sort { $0.date != $1.date ? $0.date < $1.date : $0.index < $1.index }
            for old in played where used + hint > budget {
                podcasts[old.feed].downloads[old.id] = nil
                step.commands.append(.deleteEpisodeFile(path: old.file.path))
                used -= old.file.bytes
                podcastsDirty = true
            }
        }
        guard used + hint <= budget else { return }
        let name = podcasts[wanted.feed].name
        podcastDownloading = PodcastEpisodeKey(name: name, id: wanted.episode.id)
        podcastDownloadProgress = nil
        step.commands.append(.downloadEpisode(name: name, id: wanted.episode.id, url: wanted.episode.url,
                                              file: PodcastFeed.fileName(name: name, episode: wanted.episode), maxBytes: budget - used))
    }
}

extension State {
    /// What the status line says of the episode being downloaded once the downloader has said how
    /// far it is: `downloading "Episode 4" 41%`, or `downloading "Episode 4" 12 MiB` when the
    /// server gave no length; nil otherwise (a download that has not reported is not shown).
    public var podcastDownloadShown: String? {
        guard let key = podcastDownloading, let progress = podcastDownloadProgress else { return nil }
        let title = podcasts.first { $0.name == key.name }?.episode(id: key.id)?.title ?? key.id
        let amount: String
        if let percent = progress.percent {
            amount = "\(percent)%"
        } else {
            amount = progress.bytes >= 1 << 20 ? "\(progress.bytes >> 20) MiB" : "\(progress.bytes >> 10) KiB"
        }
        return "downloading \"" + DisplayText.inert(title, maxBytes: 60) + "\" " + amount
    }
}
