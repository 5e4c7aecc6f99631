// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The core's podcast decisions (`PodcastFeed`): which episode comes next by the feed's order,
/// played marks, each episode's own place, and what a fetch that works or fails does to what
/// was known. Whole values compared.
final class PodcastTests: XCTestCase {
    static func episode(_ n: Int, published: Int64?) -> PodcastEpisode {
        PodcastEpisode(id: "ep\(n)", title: "Episode \(n)", url: "https://cdn.example/\(n).mp3", published: published, duration: 600)
    }

    /// A feed as feeds list themselves: newest first (3, 2, 1).
    static let listed = [episode(3, published: 3_000), episode(2, published: 2_000), episode(1, published: 1_000)]

    func testNewestFirstPlaysTheNewestNotYetPlayed() {
        var feed = PodcastFeed(name: "news", order: .newest, episodes: Self.listed)
        XCTAssertEqual(feed.nextUp().episodes.map(\.id), ["ep3", "ep2", "ep1"])
        XCTAssertEqual(feed.nextUp().position, 0)
        feed.finished("ep3")
        XCTAssertEqual(feed.places, ["ep3": EpisodePlace(position: 0, played: true)])
        XCTAssertEqual(feed.nextUp().episodes.map(\.id), ["ep2", "ep1"])
        // A new episode comes out: it is next.
        feed.fetched(title: "News", episodes: [Self.episode(4, published: 4_000)] + Self.listed)
        XCTAssertEqual(feed.nextUp().episodes.map(\.id), ["ep4", "ep2", "ep1"])
    }

    func testOldestFirstPlaysInOrderAndResumesMidEpisode() {
        var feed = PodcastFeed(name: "serial", order: .oldest, episodes: Self.listed)
        XCTAssertEqual(feed.nextUp().episodes.map(\.id), ["ep1", "ep2", "ep3"])
        feed.note("ep1", position: 125.5)
        XCTAssertEqual(feed.nextUp().episodes.map(\.id), ["ep1", "ep2", "ep3"])
        XCTAssertEqual(feed.nextUp().position, 125.5)
        feed.finished("ep1")
        feed.note("ep2", position: 30)
        feed.note("ep3", position: 400)  // heard a little of the last one too: each keeps its own
        XCTAssertEqual(feed.places, ["ep1": EpisodePlace(position: 0, played: true), "ep2": EpisodePlace(position: 30),
                                     "ep3": EpisodePlace(position: 400)])
        XCTAssertEqual(feed.nextUp().episodes.map(\.id), ["ep2", "ep3"])
        XCTAssertEqual(feed.nextUp().position, 30)
        // A played episode heard again stays played; nonsense places are not kept.
        feed.note("ep1", position: 10)
        feed.note("ep2", position: .nan)
        feed.note("ep2", position: -1)
        feed.note("unknown", position: 5)
        XCTAssertEqual(feed.places, ["ep1": EpisodePlace(position: 10, played: true), "ep2": EpisodePlace(position: 30),
                                     "ep3": EpisodePlace(position: 400)])
    }

    func testEveryEpisodePlayedStartsOverFromTheTop() {
        var feed = PodcastFeed(name: "serial", order: .oldest, episodes: Self.listed)
        for id in ["ep1", "ep2", "ep3"] { feed.finished(id) }
        XCTAssertEqual(feed.nextUp().episodes.map(\.id), ["ep1", "ep2", "ep3"])
        XCTAssertEqual(feed.nextUp().position, 0)
    }

    /// Undated episodes follow the dated one the feed lists before them; ties keep the feed's order.
    func testUndatedEpisodesKeepTheirPlaceInTheFeed() {
        let episodes = [Self.episode(9, published: nil), Self.episode(5, published: 500), Self.episode(4, published: nil),
                        Self.episode(7, published: 700), Self.episode(6, published: 500), Self.episode(1, published: 100)]
        let newest = PodcastFeed(name: "mixed", order: .newest, episodes: episodes)
        XCTAssertEqual(newest.playOrder.map(\.id), ["ep9", "ep7", "ep5", "ep4", "ep6", "ep1"])
        let oldest = PodcastFeed(name: "mixed", order: .oldest, episodes: episodes)
        XCTAssertEqual(oldest.playOrder.map(\.id), ["ep1", "ep6", "ep4", "ep5", "ep7", "ep9"])
    }

    /// A good fetch merges (the feed's list first, then episodes it no longer lists), bounded; a
    /// failed one keeps everything and says why.
    func testFetchesMergeAndFailuresKeepWhatWasThere() {
        var feed = PodcastFeed(name: "show", order: .newest, title: "Show", episodes: Self.listed,
                               places: ["ep1": EpisodePlace(position: 0, played: true), "ep2": EpisodePlace(position: 42)])
        let before = feed
        feed.failed("HTTP 500")
        var expected = before
        expected.lastError = "HTTP 500"
        XCTAssertEqual(feed, expected)

        // The feed now lists only its two newest, one retitled; the old one is kept, with its mark.
        var retitled = Self.episode(3, published: 3_000)
        retitled.title = "Episode 3 (fixed)"
        feed.fetched(title: "Show!", episodes: [Self.episode(4, published: 4_000), retitled, retitled])
        XCTAssertEqual(feed, PodcastFeed(name: "show", order: .newest, title: "Show!",
                                         episodes: [Self.episode(4, published: 4_000), retitled, Self.episode(2, published: 2_000),
                                                    Self.episode(1, published: 1_000)],
                                         places: ["ep1": EpisodePlace(position: 0, played: true), "ep2": EpisodePlace(position: 42)]))

        // Bounded: the oldest no longer listed go first, with their places.
        let many = (10..<(10 + PodcastFeed.maxEpisodes)).map { Self.episode($0, published: Int64($0)) }
        feed.fetched(title: "Show", episodes: many)
        XCTAssertEqual(feed.episodes.count, PodcastFeed.maxEpisodes)
        XCTAssertEqual(feed.episodes.map(\.id), many.map(\.id))
        XCTAssertEqual(feed.places, [:])
    }

    func testEpisodeByURL() {
        let feed = PodcastFeed(name: "show", episodes: Self.listed)
        XCTAssertEqual(feed.episode(url: "https://cdn.example/2.mp3")?.id, "ep2")
        XCTAssertNil(feed.episode(url: "https://cdn.example/9.mp3"))
    }
}

/// The podcast events through `reduce`: whole states and the exact commands.
final class PodcastReduceTests: XCTestCase {
    static let episodes = PodcastTests.listed

    static var settings: Settings {
        var s = Settings()
        s.podcasts.feeds = [PodcastSource(name: "News", url: "https://news.example/rss", order: .newest),
                            PodcastSource(name: "Serial", url: "https://serial.example/feed", order: .oldest)]
        s.podcasts.refreshMinutes = 30
        return s
    }

    /// A stopped player with the two feeds, its podcasts file read (empty).
    private func ready() -> CoreHarness {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.bookmarksReady = true
        s.podcastsReady = true
        return CoreHarness(s)
    }

    func testTheControlLanguageSaysPodcastName() {
        XCTAssertEqual(ControlCommand.parse("podcast  Bedtime   Stories", seed: 0), .success(.intent(.playPodcast(name: "Bedtime Stories"))))
        XCTAssertEqual(ControlCommand.parse("podcast", seed: 0), .failure(ControlError("usage: podcast NAME")))
        XCTAssertTrue(ControlCommand.helpText.contains("podcast NAME"))
        XCTAssertEqual(ControlCommand.parse("podcasts --json", seed: 0), .success(.podcastsJSON))
        XCTAssertEqual(ControlCommand.parse("podcasts", seed: 0), .failure(ControlError("usage: podcasts --json")))
    }

    /// `event` queues News's episodes newest first and plays episode 3 as a stream, noting its
    /// place (its start); the tracks.
    @discardableResult
    private func playsNews(_ h: CoreHarness, _ event: Event, file: StaticString = #filePath, line: UInt = #line,
                           _ more: (inout State) -> Void = { _ in }) -> [TrackInfo] {
        let tracks = [3, 2, 1].map {
            TrackInfo(path: "https://cdn.example/\($0).mp3", title: "Episode \($0)", album: "The News", duration: 600)
        }
        h.send(event, file: file, line: line, {
            $0.message = nil
            $0.queue = [Track(id: 1, info: tracks[0]), Track(id: 2, info: tracks[1]), Track(id: 3, info: tracks[2])]
            $0.order = [1, 2, 3]
            $0.nextTrackID = 4
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.nextPlayID = 3
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", title: "Episode 3", elapsed: "0:00", duration: "10:00", index: 1, of: 3)
            $0.podcasts[0].places["ep3"] = EpisodePlace(position: 0)
            more(&$0)
        }, commands: [
            .startTrack(playID: 1, path: "https://cdn.example/3.mp3", at: 0, paused: false,
                        next: NextPlay(playID: 2, path: "https://cdn.example/2.mp3")),
            .persist(Snapshot(tracks: tracks, current: 0, phase: .playing)),
            .persistPodcasts([PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes,
                                          places: ["ep3": EpisodePlace(position: 0)]),
                              PodcastFeed(name: "Serial", order: .oldest)]),
            .render(status("playing", title: "Episode 3", elapsed: "0:00", duration: "10:00", index: 1, of: 3)),
        ])
        return tracks
    }

    /// A card mapped to a podcast plays it as `podcast NAME` does.
    func testACardPlaysAPodcast() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.podcastsReady = true
        s.cards.map = CardMap(["0001": .podcast("News")])
        let h = CoreHarness(s)
        fetchNews(h)
        playsNews(h, .cardRead(id: "0001", at: 1)) {
            $0.cards.lastReadID = "0001"
            $0.cards.lastReadAt = 1
        }
    }

    func testEveryFeedIsFetchedAtStartAndOnTheRefreshTimer() {
        let h = ready()
        XCTAssertEqual(h.state.podcasts, [PodcastFeed(name: "News", order: .newest), PodcastFeed(name: "Serial", order: .oldest)])
        h.send(.timerFired(.podcastRefresh, at: 1800), commands: [
            .fetchPodcast(name: "News", url: "https://news.example/rss"),
            .fetchPodcast(name: "Serial", url: "https://serial.example/feed"),
            .startTimer(.podcastRefresh, after: 1800),
        ])
    }

    /// News's feed (`PodcastTests.listed`) fetched on `ready()`: kept and saved.
    private func fetchNews(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.podcastFetched(name: "News", title: "The News", episodes: Self.episodes), file: file, line: line, {
            $0.podcasts[0] = PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes)
        }, commands: [
            .persistPodcasts([PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes),
                              PodcastFeed(name: "Serial", order: .oldest)]),
        ])
    }

    func testFetchesAreKeptAndAFailureKeepsWhatWasThere() {
        let h = ready()
        fetchNews(h)
        h.send(.podcastFailed(name: "News", reason: "HTTP 500"), {
            $0.podcasts[0].lastError = "HTTP 500"
        }, commands: [
            .report("podcast News: HTTP 500 (the episodes known are kept)"),
            .persistPodcasts([PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes, lastError: "HTTP 500"),
                              PodcastFeed(name: "Serial", order: .oldest)]),
        ])
        // A feed the config does not name is not kept.
        h.send(.podcastFetched(name: "Other", title: "?", episodes: Self.episodes), commands: [])
    }

    /// Nothing is saved before the podcasts file was read; what it held comes under the fetch
    /// that came first, and the two together are saved then (the file read off the loop can come
    /// after the first fetch, which an unreachable server fails at once).
    func testTheFileIsReadBeforeAnythingIsSaved() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        let h = CoreHarness(s)
        let newer = [PodcastTests.episode(4, published: 4_000)]
        h.send(.podcastFetched(name: "News", title: "The News", episodes: newer), {
            $0.podcasts[0] = PodcastFeed(name: "News", order: .newest, title: "The News", episodes: newer)
            $0.podcastsDirty = true
        }, commands: [])
        let saved = PodcastFeed(name: "News", order: .oldest, title: "Old title", episodes: Self.episodes,
                                places: ["ep3": EpisodePlace(position: 0, played: true)])
        let merged = PodcastFeed(name: "News", order: .newest, title: "The News", episodes: newer + Self.episodes,
                                 places: ["ep3": EpisodePlace(position: 0, played: true)])
        h.send(.podcastsLoaded([saved, PodcastFeed(name: "Gone")]), {
            $0.podcasts[0] = merged
            $0.podcastsReady = true
            $0.podcastsDirty = false
        }, commands: [.persistPodcasts([merged, PodcastFeed(name: "Serial", order: .oldest)])])
    }

    /// A fetch that came in while the file was read, for a podcast the file does not hold (a
    /// first start: no file; or a podcast just added to the config): saved once the file is
    /// read, not an hour later at the next change (the defect a loaded CI run found: the
    /// fetched episodes were never written until the player changed something else).
    func testAFetchBeforeAFileWithoutThatPodcastIsSavedWhenTheFileIsRead() {
        for file in [[], [PodcastFeed(name: "Serial", order: .oldest)]] {
            var s = State(settings: Self.settings)
            s.shown = status("stopped")
            let h = CoreHarness(s)
            let fetched = PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes)
            h.send(.podcastFetched(name: "News", title: "The News", episodes: Self.episodes), {
                $0.podcasts[0] = fetched
                $0.podcastsDirty = true
            }, commands: [])
            h.send(.podcastsLoaded(file), {
                $0.podcastsReady = true
                $0.podcastsDirty = false
            }, commands: [.persistPodcasts([fetched, PodcastFeed(name: "Serial", order: .oldest)])])
        }
    }

    /// A fetch that failed while the file was read: the failure goes over what the file held
    /// and is saved with it.
    func testAFailureBeforeTheFileIsReadIsSavedWithIt() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        let h = CoreHarness(s)
        h.send(.podcastFailed(name: "News", reason: "Failed to connect"), {
            $0.podcasts[0].lastError = "Failed to connect"
            $0.podcastsDirty = true
        }, commands: [.report("podcast News: Failed to connect (the episodes known are kept)")])
        let saved = PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes,
                                places: ["ep3": EpisodePlace(position: 12)])
        var kept = saved
        kept.lastError = "Failed to connect"
        h.send(.podcastsLoaded([saved]), {
            $0.podcasts[0] = kept
            $0.podcastsReady = true
            $0.podcastsDirty = false
        }, commands: [.persistPodcasts([kept, PodcastFeed(name: "Serial", order: .oldest)])])
    }

    /// `podcast NAME` queues the episodes not yet played, newest first, as streams from their
    /// start; the one played to its end is marked played and the next `podcast` skips it.
    func testPlayingAFeedQueuesItsNextEpisodesAndMarksThePlayedOne() {
        let h = ready()
        fetchNews(h)
        h.send(.playPodcast(name: "Nope"), {
            $0.message = "no podcast \"Nope\""
            $0.shown = status("stopped", message: "no podcast \"Nope\"")
        }, commands: [.render(status("stopped", message: "no podcast \"Nope\""))])
        h.send(.playPodcast(name: "Serial"), {
            $0.message = "Serial: no episodes yet"
            $0.shown = status("stopped", message: "Serial: no episodes yet")
        }, commands: [.render(status("stopped", message: "Serial: no episodes yet"))])
        let tracks = playsNews(h, .playPodcast(name: "News"))
        // Episode 3 ends (the successor handed to the engine came too late): marked played, saved;
        // episode 2's place (its start) noted.
        let played = [PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes,
                                  places: ["ep3": EpisodePlace(position: 0, played: true), "ep2": EpisodePlace(position: 0)]),
                      PodcastFeed(name: "Serial", order: .oldest)]
        h.send(.trackFinished(playID: 1, next: nil), {
            $0.podcasts = played
            $0.cursor = 1
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", title: "Episode 2", elapsed: "0:00", duration: "10:00", index: 2, of: 3)
        }, commands: [
            .startTrack(playID: 3, path: "https://cdn.example/2.mp3", at: 0, paused: false,
                        next: NextPlay(playID: 4, path: "https://cdn.example/1.mp3")),
            .persistPlace(Snapshot(tracks: tracks, current: 1, phase: .playing)),
            .persistPodcasts(played),
            .render(status("playing", title: "Episode 2", elapsed: "0:00", duration: "10:00", index: 2, of: 3)),
        ])
        // Episode 2 follows gaplessly (the engine started the successor): episode 2 is still
        // unplayed, episode 3 was; the next `podcast News` starts at episode 2.
        XCTAssertEqual(h.state.podcasts[0].nextUp().episodes.map(\.id), ["ep2", "ep1"])
        h.send(.trackStarted(playID: 3), { $0.streamStarted = true }, commands: [])
        var both = played
        both[0].places["ep2"] = EpisodePlace(position: 0, played: true)
        both[0].places["ep1"] = EpisodePlace(position: 0)
        h.send(.trackStarted(playID: 4), {
            $0.podcasts = both
            $0.cursor = 2
            $0.loaded = PlayRef(playID: 4, trackID: 3)
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 3, phase: .playing)
            $0.shown = status("playing", title: "Episode 1", elapsed: "0:00", duration: "10:00", index: 3, of: 3)
        }, commands: [
            .persistPlace(Snapshot(tracks: tracks, current: 2, phase: .playing)),
            .persistPodcasts(both),
            .render(status("playing", title: "Episode 1", elapsed: "0:00", duration: "10:00", index: 3, of: 3)),
        ])
    }
}

extension PodcastReduceTests {
    /// The state once News's episodes are queued newest first and episode 3 plays from `at`.
    static func playsEpisode3(_ s: inout State, at: Double, tracks: [TrackInfo], shown: StatusView) {
        s.queue = [Track(id: 1, info: tracks[0]), Track(id: 2, info: tracks[1]), Track(id: 3, info: tracks[2])]
        s.order = [1, 2, 3]
        s.nextTrackID = 4
        s.queueRevision = 1
        s.cursor = 0
        s.position = at
        s.phase = .playing
        s.loaded = PlayRef(playID: 1, trackID: 1)
        s.handedNext = PlayRef(playID: 2, trackID: 2)
        s.nextPlayID = 3
        s.savedMark = mark(revision: 1, current: 1, phase: .playing)
        s.savedPosition = at
        s.shown = shown
    }

    /// The commands that start episode 3 at `at` (episode 2 handed as its successor).
    static func episode3Commands(at: Double, tracks: [TrackInfo], shown: StatusView) -> [Command] {
        [.startTrack(playID: 1, path: "https://cdn.example/3.mp3", at: at, paused: false,
                     next: NextPlay(playID: 2, path: "https://cdn.example/2.mp3")),
         .persist(Snapshot(tracks: tracks, current: 0, position: at, phase: .playing)),
         .render(shown)]
    }

    /// An episode played from its URL (not downloaded) starts at its own place, keeps it when
    /// paused (the stream disconnects, play asks again from there), seeks, and notes its place
    /// as a downloaded one does: the adapter starts the stream near it by a range request.
    func testAStreamedEpisodeStartsAtItsPlaceSeeksAndKeepsItWhenPaused() {
        let (h, tracks, saved) = Self.streamsEpisode3At125()
        // The adapter landed a little before the place (a range request lands near it); heard on.
        h.send(.trackStarted(playID: 1), { $0.streamStarted = true }, commands: [])
        let landed = status("playing", title: "Episode 3", elapsed: "2:04", duration: "10:00", index: 1, of: 3)
        h.send(.heard(playID: 1, seconds: 124.5), {
            $0.position = 124.5
            $0.shown = landed
        }, commands: [.render(landed)])
        let later = status("playing", title: "Episode 3", elapsed: "3:20", duration: "10:00", index: 1, of: 3)
        h.send(.heard(playID: 1, seconds: 200), {
            $0.position = 200
            $0.shown = later
        }, commands: [.render(later)])
        // A pause disconnects and keeps the place; the episode's place is noted and saved.
        var paused = saved
        paused.places["ep3"] = EpisodePlace(position: 200)
        let pausedShown = status("paused", title: "Episode 3", elapsed: "3:20", duration: "10:00", index: 1, of: 3)
        h.send(.pause, {
            $0.phase = .paused
            $0.loaded = nil
            $0.handedNext = nil
            $0.podcasts[0] = paused
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 200
            $0.shown = pausedShown
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: tracks, current: 0, position: 200, phase: .paused)),
            .persistPodcasts([paused, PodcastFeed(name: "Serial", order: .oldest)]),
            .render(pausedShown),
        ])
        // Play asks for the stream again at the place.
        let resumed = status("playing", title: "Episode 3", elapsed: "3:20", duration: "10:00", index: 1, of: 3)
        h.send(.play, {
            $0.phase = .playing
            $0.streamStarted = false
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.nextPlayID = 5
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = resumed
        }, commands: [
            .startTrack(playID: 3, path: "https://cdn.example/3.mp3", at: 200, paused: false,
                        next: NextPlay(playID: 4, path: "https://cdn.example/2.mp3")),
            .persistPlace(Snapshot(tracks: tracks, current: 0, position: 200, phase: .playing)),
            .render(resumed),
        ])
        // A seek is the engine's (a new range request), not refused as in a live stream; the
        // place moved by more than 30 s is noted.
        let moved = status("playing", title: "Episode 3", elapsed: "5:00", duration: "10:00", index: 1, of: 3)
        var sought = paused
        sought.places["ep3"] = EpisodePlace(position: 300)
        h.send(.seekBy(100), {
            $0.position = 300
            $0.savedPosition = 300
            $0.podcasts[0] = sought
            $0.shown = moved
        }, commands: [
            .seekOutput(to: 300),
            .persistPlace(Snapshot(tracks: tracks, current: 0, position: 300, phase: .playing)),
            .persistPodcasts([sought, PodcastFeed(name: "Serial", order: .oldest)]),
            .render(moved),
        ])
    }
}

extension PodcastReduceTests {
    /// A `podcast NAME` that comes while the podcasts file is read off the loop waits for it,
    /// then plays at the place it holds; one read that fails ends the wait without it.
    func testAPodcastAskedForWhileTheFileIsReadWaitsForIt() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.bookmarksReady = true
        let h = CoreHarness(s)
        h.send(.podcastsReading, { $0.podcastsReading = true }, commands: [])
        h.send(.playPodcast(name: "News"), { $0.podcastWaiting = PodcastWait(name: "News", play: true) }, commands: [])
        let saved = PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes,
                                places: ["ep3": EpisodePlace(position: 61)])
        let tracks = [3, 2, 1].map {
            TrackInfo(path: "https://cdn.example/\($0).mp3", title: "Episode \($0)", album: "The News", duration: 600)
        }
        let playing = status("playing", title: "Episode 3", elapsed: "1:01", duration: "10:00", index: 1, of: 3)
        h.send(.podcastsLoaded([saved]), {
            $0.podcasts[0] = saved
            $0.podcastsReady = true
            $0.podcastsReading = false
            $0.podcastWaiting = nil
            Self.playsEpisode3(&$0, at: 61, tracks: tracks, shown: playing)
        }, commands: Self.episode3Commands(at: 61, tracks: tracks, shown: playing))

        let h2 = CoreHarness(s)
        h2.send(.podcastsReading, { $0.podcastsReading = true }, commands: [])
        h2.send(.playPodcast(name: "News"), { $0.podcastWaiting = PodcastWait(name: "News", play: true) }, commands: [])
        h2.send(.podcastsLoaded(nil), {
            $0.podcastsReading = false
            $0.podcastWaiting = nil
            $0.message = "News: no episodes yet"
            $0.shown = status("stopped", message: "News: no episodes yet")
        }, commands: [.render(status("stopped", message: "News: no episodes yet"))])
    }
}

extension PodcastReduceTests {
    /// A podcast taken out of the config is kept aside with its places and files, counted at each
    /// start without it; at the third its files are deleted (only its own downloads) and it is
    /// forgotten. Put back before, it comes back as it was.
    func testAPodcastTakenOutOfTheConfigGoesAtTheThirdStartWithoutIt() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.bookmarksReady = true
        let file = EpisodeFile(path: "/state/s.json.episodes/f/e.mp3", bytes: 1000)
        let old = PodcastFeed(name: "Old", title: "Old Show", episodes: Self.episodes, places: ["ep1": EpisodePlace(position: 9)],
                              downloads: ["ep1": file])
        // The first start without it: kept aside, counted, saved.
        let h = CoreHarness(s)
        var once = old
        once.absentStarts = 1
        h.send(.podcastsLoaded([old]), {
            $0.podcastsReady = true
            $0.podcastsRemoved = [once]
        }, commands: [
            .persistPodcasts([PodcastFeed(name: "News", order: .newest), PodcastFeed(name: "Serial", order: .oldest), once]),
        ])
        // Put back by a reload: as it was, places and files.
        var back = Self.settings
        back.podcasts.feeds.append(PodcastSource(name: "Old", url: "https://old.example/rss"))
        h.send(.reconfigured(back), {
            $0.settings = back
            $0.podcasts.append(old)
            $0.podcastsRemoved = []
        }, commands: [
            .fetchPodcast(name: "News", url: "https://news.example/rss"),
            .fetchPodcast(name: "Serial", url: "https://serial.example/feed"),
            .fetchPodcast(name: "Old", url: "https://old.example/rss"),
            .startTimer(.podcastRefresh, after: 1800),
            .persistPodcasts([PodcastFeed(name: "News", order: .newest), PodcastFeed(name: "Serial", order: .oldest), old]),
        ])
        // Taken out again by a reload: aside, no start counted yet.
        var aside = old
        aside.absentStarts = 0
        h.send(.reconfigured(Self.settings), {
            $0.settings = Self.settings
            $0.podcasts.removeLast()
            $0.podcastsRemoved = [aside]
        }, commands: [
            .fetchPodcast(name: "News", url: "https://news.example/rss"),
            .fetchPodcast(name: "Serial", url: "https://serial.example/feed"),
            .startTimer(.podcastRefresh, after: 1800),
            .persistPodcasts([PodcastFeed(name: "News", order: .newest), PodcastFeed(name: "Serial", order: .oldest), aside]),
        ])

        // The third start without it: its file deleted, said, forgotten.
        var twice = old
        twice.absentStarts = 2
        let third = CoreHarness(s)
        third.send(.podcastsLoaded([twice]), { $0.podcastsReady = true }, commands: [
            .deleteEpisodeFile(path: "/state/s.json.episodes/f/e.mp3"),
            .report("podcast Old: not in the config at 3 starts: its 1 downloaded episodes deleted and its places forgotten"),
            .persistPodcasts([PodcastFeed(name: "News", order: .newest), PodcastFeed(name: "Serial", order: .oldest)]),
        ])
    }
}

/// Downloads ahead within the budget, decided by the core (`followPodcastDownloads`).
final class PodcastDownloadTests: XCTestCase {
    static var settings: Settings {
        var s = Settings()
        s.podcasts.feeds = [PodcastSource(name: "Serial", url: "https://serial.example/feed", order: .oldest, downloadAhead: 2)]
        s.podcasts.budgetMiB = 1
        return s
    }

    static func file(_ n: Int) -> String { "/state/s.json.episodes/" + PodcastFeed.fileName(name: "Serial", episode: PodcastTests.episode(n, published: nil)) }

    func testTheNextEpisodesAreDownloadedOneAtATimeWithinTheBudget() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.podcastsReady = true
        let h = CoreHarness(s)
        let listed = PodcastTests.listed
        XCTAssertTrue(PodcastFeed.fileName(name: "../../etc", episode: PodcastEpisode(id: "/x", title: "", url: "https://h/a.EXE?x=.mp3"))
                        .allSatisfy { $0.isHexDigit || $0 == "/" || $0 == "." || $0.isLetter }, "only hashes and a known extension")
        XCTAssertTrue(PodcastFeed.fileName(name: "a", episode: PodcastEpisode(id: "b", title: "", url: "https://h/a.EXE?x=.mp3")).hasSuffix(".audio"))
        // The feed comes: the oldest not yet played is asked for, with the whole budget.
        var fetched = PodcastFeed(name: "Serial", order: .oldest, episodes: listed)
        h.send(.podcastFetched(name: "Serial", title: "", episodes: listed), {
            $0.podcasts[0] = fetched
            $0.podcastDownloading = PodcastEpisodeKey(name: "Serial", id: "ep1")
        }, commands: [
            .downloadEpisode(name: "Serial", id: "ep1", url: "https://cdn.example/1.mp3", file: String(Self.file(1).dropFirst(23)), maxBytes: 1 << 20),
            .persistPodcasts([fetched]),
        ])
        // Downloaded (600 KiB): the next one gets what is left.
        fetched.downloads["ep1"] = EpisodeFile(path: Self.file(1), bytes: 600 << 10)
        h.send(.episodeDownloaded(name: "Serial", id: "ep1", path: Self.file(1), bytes: 600 << 10), {
            $0.podcasts[0] = fetched
            $0.podcastDownloading = PodcastEpisodeKey(name: "Serial", id: "ep2")
        }, commands: [
            .downloadEpisode(name: "Serial", id: "ep2", url: "https://cdn.example/2.mp3", file: String(Self.file(2).dropFirst(23)),
                             maxBytes: (1 << 20) - (600 << 10)),
            .persistPodcasts([fetched]),
        ])
        // Over what was left: not asked for again until the next refresh.
        h.send(.episodeDownloadFailed(name: "Serial", id: "ep2", reason: "larger than the budget left (424 KiB)"), {
            $0.podcastDownloading = nil
            $0.podcastDownloadsFailed = [PodcastEpisodeKey(name: "Serial", id: "ep2")]
        }, commands: [.report("podcast Serial: an episode could not be downloaded: larger than the budget left (424 KiB)")])
        // The next refresh tries it again.
        h.send(.timerFired(.podcastRefresh, at: 3600), {
            $0.podcastDownloadsFailed = []
            $0.podcastDownloading = PodcastEpisodeKey(name: "Serial", id: "ep2")
        }, commands: [
            .fetchPodcast(name: "Serial", url: "https://serial.example/feed"),
            .startTimer(.podcastRefresh, after: 3600),
            .downloadEpisode(name: "Serial", id: "ep2", url: "https://cdn.example/2.mp3", file: String(Self.file(2).dropFirst(23)),
                             maxBytes: (1 << 20) - (600 << 10)),
        ])
    }

    /// The downloader's progress is kept for the download in hand only and shown on the status
    /// line (percent of the length, else MiB), until the download ends either way.
    func testADownloadsProgressIsShownUntilItEnds() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.podcastsReady = true
        s.podcasts[0] = PodcastFeed(name: "Serial", order: .oldest, episodes: PodcastTests.listed)
        s.podcastDownloading = PodcastEpisodeKey(name: "Serial", id: "ep1")
        let h = CoreHarness(s)
        // Another episode's late report is no news.
        h.send(.episodeDownloadProgress(name: "Serial", id: "ep2", bytes: 10, total: 100), { _ in }, commands: [])
        let shown41 = status("stopped", download: "downloading \"Episode 1\" 41%")
        h.send(.episodeDownloadProgress(name: "Serial", id: "ep1", bytes: 410_000, total: 1_000_000), {
            $0.podcastDownloadProgress = DownloadProgress(bytes: 410_000, total: 1_000_000)
            $0.shown = shown41
        }, commands: [.render(shown41)])
        XCTAssertEqual(shown41.line, "■ queue empty  vol 100  downloading \"Episode 1\" 41%")
        // A server that lies (more than its length) never shows 100 % before the file is whole.
        let shown99 = status("stopped", download: "downloading \"Episode 1\" 99%")
        h.send(.episodeDownloadProgress(name: "Serial", id: "ep1", bytes: 5_000_000, total: 1_000_000), {
            $0.podcastDownloadProgress = DownloadProgress(bytes: 5_000_000, total: 1_000_000)
            $0.shown = shown99
        }, commands: [.render(shown99)])
        // No length: the bytes so far.
        let shownMiB = status("stopped", download: "downloading \"Episode 1\" 12 MiB")
        h.send(.episodeDownloadProgress(name: "Serial", id: "ep1", bytes: 12 << 20, total: nil), {
            $0.podcastDownloadProgress = DownloadProgress(bytes: 12 << 20, total: nil)
            $0.shown = shownMiB
        }, commands: [.render(shownMiB)])
        // Failed: nothing shown any more (the next download is asked for: ep2).
        h.send(.episodeDownloadFailed(name: "Serial", id: "ep1", reason: "HTTP 404"), {
            $0.podcastDownloading = PodcastEpisodeKey(name: "Serial", id: "ep2")
            $0.podcastDownloadProgress = nil
            $0.podcastDownloadsFailed = [PodcastEpisodeKey(name: "Serial", id: "ep1")]
            $0.shown = status("stopped")
        }, commands: [
            .report("podcast Serial: an episode could not be downloaded: HTTP 404"),
            .downloadEpisode(name: "Serial", id: "ep2", url: "https://cdn.example/2.mp3", file: String(Self.file(2).dropFirst(23)),
                             maxBytes: 1 << 20),
            .render(status("stopped")),
        ])
    }

    /// The budget spent: a played episode's file goes (the oldest first), never one not yet
    /// played, never the one playing.
    func testPlayedFilesMakeRoomOldestFirst() {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.podcastsReady = true
        let listed = PodcastTests.listed
        s.podcasts[0] = PodcastFeed(name: "Serial", order: .oldest, episodes: listed,
                                    places: ["ep1": EpisodePlace(position: 0, played: true), "ep2": EpisodePlace(position: 0, played: true)],
                                    downloads: ["ep1": EpisodeFile(path: Self.file(1), bytes: 512 << 10),
                                                "ep2": EpisodeFile(path: Self.file(2), bytes: 512 << 10)])
        let h = CoreHarness(s)
        var after = s.podcasts[0]
        after.downloads = ["ep2": EpisodeFile(path: Self.file(2), bytes: 512 << 10)]
        h.send(.timerFired(.podcastRefresh, at: 3600), {
            $0.podcasts[0] = after
            $0.podcastDownloading = PodcastEpisodeKey(name: "Serial", id: "ep3")
        }, commands: [
            .fetchPodcast(name: "Serial", url: "https://serial.example/feed"),
            .startTimer(.podcastRefresh, after: 3600),
            .deleteEpisodeFile(path: Self.file(1)),
            .downloadEpisode(name: "Serial", id: "ep3", url: "https://cdn.example/3.mp3", file: String(Self.file(3).dropFirst(23)),
                             maxBytes: 512 << 10),
            .persistPodcasts([after]),
        ])
    }

    /// While a downloaded episode plays, its place is noted once it moved 30 s (the podcasts file
    /// is written whole); paused, exactly.
    func testThePlaceOfAPlayingEpisodeIsNotedEveryThirtySeconds() {
        var s = State(settings: Self.settings)
        s.podcastsReady = true
        s.podcasts[0] = PodcastFeed(name: "Serial", order: .oldest, episodes: PodcastTests.listed,
                                    downloads: ["ep1": EpisodeFile(path: Self.file(1), bytes: 1000)])
        s.queue = [Track(id: 1, info: TrackInfo(path: Self.file(1)))]
        s.order = [1]
        s.cursor = 0
        s.phase = .playing
        var noted: [Double?] = []
        for (position, phase) in [(10.0, PlayerPhase.playing), (39.0, .playing), (41.0, .playing), (45.0, .paused)] {
            s.position = position
            s.phase = phase
            s.notePodcastPlace()
            noted.append(s.podcasts[0].places["ep1"]?.position)
        }
        XCTAssertEqual(noted, [10, 10, 41, 45])
        XCTAssertTrue(s.podcastsDirty)
    }
}
