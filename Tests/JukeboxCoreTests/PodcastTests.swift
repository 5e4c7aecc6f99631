// SPDX-License-Identifier: MIT
@testable import JukeboxCore
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
