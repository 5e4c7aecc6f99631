// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import XCTest

/// What one `reduce` of a tick and of a heard position costs with 100 podcasts of 5,000 episodes
/// each (`PodcastSettings.maxFeeds` × `PodcastFeed.maxEpisodes`): every status render asks whether
/// the current stream is an episode (`speed(for:)`, `currentIsLive`). Printed, never asserted on
/// time (a figure, docs/TESTING.md); what is asserted is that the answers are those of a player
/// that knows the episode.
final class EpisodeLookupCostTests: XCTestCase {
    static let feeds = 100
    static let perFeed = 5_000

    /// 100 full feeds, and a queue of a radio station (no episode: the whole lookup's worst case)
    /// then the last feed's last episode, playing the station at 1.25×.
    static func state(current: Int) -> State {
        var s = State()
        s.podcasts = (0..<feeds).map { f in
            let episodes = (0..<perFeed).map { e in
                PodcastEpisode(id: "guid-\(f)-\(e)", title: "Episode \(e)", url: "https://cdn.example/feed\(f)/episode-\(e).mp3",
                               published: Int64(1_700_000_000 - e), duration: 1800)
            }
            return PodcastFeed(name: "feed \(f)", episodes: episodes)
        }
        s.podcastsReady = true
        s.bookmarksReady = true
        let last = "https://cdn.example/feed\(feeds - 1)/episode-\(perFeed - 1).mp3"
        s.queue = [Track(id: 1, info: TrackInfo(path: "http://radio.example/live.mp3")), Track(id: 2, info: TrackInfo(path: last))]
        s.order = [1, 2]
        s.cursor = current
        s.queueSpeed = 1.25
        s.phase = .playing
        s.loaded = PlayRef(playID: 1, trackID: s.order[current])
        s.nextPlayID = 2
        return s
    }

    /// Milliseconds per `reduce`, the median of `rounds` rounds of a tick and a heard position.
    func measure(_ s: inout State, rounds: Int) -> (tick: Double, heard: Double) {
        let clock = ContinuousClock()
        var ticks: [Double] = []
        var heards: [Double] = []
        for round in 0..<rounds {
            let t = clock.measure { _ = reduce(&s, .tick(now: 100 + Double(round))) }
            let h = clock.measure { _ = reduce(&s, .heard(playID: 1, seconds: 10 + Double(round))) }
            ticks.append(Double(t.components.attoseconds) / 1e15 + Double(t.components.seconds) * 1000)
            heards.append(Double(h.components.attoseconds) / 1e15 + Double(h.components.seconds) * 1000)
        }
        return (ticks.sorted()[rounds / 2], heards.sorted()[rounds / 2])
    }

    func testReduceWithAHundredFullFeeds() {
        var radio = Self.state(current: 0)
        XCTAssertFalse(radio.isPodcastEpisode("http://radio.example/live.mp3"))
        XCTAssertTrue(radio.currentIsLive)
        XCTAssertNil(radio.playSpeed(at: 0), "a live stream plays at 1")
        let onRadio = measure(&radio, rounds: 9)

        var episode = Self.state(current: 1)
        XCTAssertTrue(episode.isPodcastEpisode(episode.queue[1].info.path))
        XCTAssertFalse(episode.currentIsLive)
        XCTAssertEqual(episode.playSpeed(at: 1), 1.25, "an episode from its URL gets the queue's speed")
        let onEpisode = measure(&episode, rounds: 9)

        let figure = "reduce with \(Self.feeds) feeds x \(Self.perFeed) episodes, median ms: "
            + "radio tick \(onRadio.tick), radio heard \(onRadio.heard), episode tick \(onEpisode.tick), episode heard \(onEpisode.heard)"
        print(figure)
    }

    /// A track's end with every podcast downloading two ahead and both already there (the worst
    /// case: every feed's play order is looked at, nothing is wanted). Printed; asserted: no
    /// download is started.
    func testATrackEndWithAHundredFullFeedsDownloadingAhead() {
        var s = Self.state(current: 1)
        s.settings.podcasts.feeds = (0..<Self.feeds).map { PodcastSource(name: "feed \($0)", url: "https://feeds.example/\($0)", downloadAhead: 2) }
        for f in s.podcasts.indices {
            for e in 0..<2 { s.podcasts[f].downloads["guid-\(f)-\(e)"] = EpisodeFile(path: "/var/lib/jukebox/episodes/\(f)-\(e).mp3", bytes: 1 << 20) }
        }
        let clock = ContinuousClock()
        var times: [Double] = []
        for _ in 0..<9 {
            var step = Step()
            let t = clock.measure { s.followPodcastDownloads(&step) }
            XCTAssertEqual(step.commands, [], "everything wanted is there")
            times.append(Double(t.components.attoseconds) / 1e15 + Double(t.components.seconds) * 1000)
        }
        print("a track end's download check with \(Self.feeds) feeds x \(Self.perFeed) episodes, two ahead each, median ms: \(times.sorted()[4])")
    }
}
