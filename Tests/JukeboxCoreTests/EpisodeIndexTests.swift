// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import Foundation
import XCTest

/// `PodcastFeed`'s index (`EpisodeIndex`) answers exactly as the scan it replaced, after every kind
/// of change: a feed made or read from the file, a fetch adding, dropping, reordering episodes and
/// repeating URLs and ids, a failure, a download kept or deleted, the episodes edited in place, a
/// feed taken out of the config and put back, the podcasts file restored. Random runs over small
/// pools of ids, URLs and paths (so duplicates are common); prints its seed,
/// `JUKEBOX_EPINDEX_SEED` repeats it.
final class EpisodeIndexTests: XCTestCase {
    static let ids = (0..<10).map { "id\($0)" }
    static let urls = (0..<8).map { "https://cdn.example/u\($0).mp3" }
    /// Download paths: files, and URLs of other episodes (the file rule comes first).
    static let paths = (0..<5).map { "/var/lib/jukebox/podcasts/f/p\($0).mp3" } + ["https://cdn.example/u1.mp3"]
    static let names = ["a", "b", "c"]

    /// The lookups as the scan did them, first match from the top. Two downloads at one path give
    /// the smaller id (the scan took the dictionary's first: unspecified).
    static func scanned(url path: String, in feed: PodcastFeed) -> PodcastEpisode? {
        if let id = feed.downloads.filter({ $0.value.path == path }).keys.min() { return feed.episodes.first { $0.id == id } }
        return feed.episodes.first { $0.url == path }
    }

    static func scanned(id: String, in feed: PodcastFeed) -> PodcastEpisode? { feed.episodes.first { $0.id == id } }

    /// Every lookup of `feed` agrees with the scan.
    func check(_ feed: PodcastFeed, _ context: @autoclosure () -> String) {
        let queries: [String] = Self.urls + Self.paths + ["https://cdn.example/none.mp3", ""]
        for path in queries {
            XCTAssertEqual(feed.episode(url: path), Self.scanned(url: path, in: feed), "url \(path): \(context())")
        }
        for id in Self.ids + ["none"] {
            XCTAssertEqual(feed.episode(id: id), Self.scanned(id: id, in: feed), "id \(id): \(context())")
        }
    }

    /// The state's question of every path agrees with a scan of every feed.
    func check(_ state: State, _ context: @autoclosure () -> String) {
        for feed in state.podcasts + state.podcastsRemoved { check(feed, context()) }
        for path in Self.urls + Self.paths {
            let expected = state.podcasts.contains { Self.scanned(url: path, in: $0) != nil }
            XCTAssertEqual(state.isPodcastEpisode(path), expected, "isPodcastEpisode \(path): \(context())")
        }
    }

    static func episodes(_ rng: inout SeededGenerator) -> [PodcastEpisode] {
        (0..<Int.random(in: 0...8, using: &rng)).map { n in
            PodcastEpisode(id: ids.randomElement(using: &rng)!, title: "t\(n)", url: urls.randomElement(using: &rng)!,
                           published: Bool.random(using: &rng) ? Int64.random(in: 0...9, using: &rng) : nil)
        }
    }

    static func downloads(_ rng: inout SeededGenerator) -> [String: EpisodeFile] {
        var files: [String: EpisodeFile] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &rng) {
            files[ids.randomElement(using: &rng)!] = EpisodeFile(path: paths.randomElement(using: &rng)!, bytes: 1)
        }
        return files
    }

    static func feed(_ name: String, _ rng: inout SeededGenerator) -> PodcastFeed {
        PodcastFeed(name: name, episodes: episodes(&rng), downloads: downloads(&rng))
    }

    static func seed() -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_EPINDEX_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("EpisodeIndexTests seed \(seed) (JUKEBOX_EPINDEX_SEED repeats it)")
        return seed
    }

    /// One feed changed every way it can be, checked after each change; copies keep their own index.
    func testAFeedsIndexAgreesWithTheScanAfterEveryChange() throws {
        let seed = Self.seed()
        var rng = SeededGenerator(seed: seed)
        for run in 0..<200 {
            var feed = Self.feed("a", &rng)
            check(feed, "seed \(seed) run \(run) made")
            for step in 0..<30 {
                let before = feed
                let kind = Int.random(in: 0...10, using: &rng)
                switch kind {
                case 0: feed = Self.feed("a", &rng)
                case 1: feed.fetched(title: "T", episodes: Self.episodes(&rng))
                case 2: feed.failed("HTTP 500")
                case 3: feed.downloads[Self.ids.randomElement(using: &rng)!] = EpisodeFile(path: Self.paths.randomElement(using: &rng)!, bytes: 2)
                case 4: feed.downloads[Self.ids.randomElement(using: &rng)!] = nil
                case 5: feed.episodes = Self.episodes(&rng)
                case 6:
                    if !feed.episodes.isEmpty {
                        let at = Int.random(in: feed.episodes.indices, using: &rng)
                        feed.episodes[at].url = Self.urls.randomElement(using: &rng)!
                        feed.episodes[at].id = Self.ids.randomElement(using: &rng)!
                    }
                case 7:
                    if !feed.episodes.isEmpty { feed.episodes.remove(at: Int.random(in: feed.episodes.indices, using: &rng)) }
                case 8: feed.episodes.shuffle(using: &rng)
                case 9:
                    // The podcasts file: written and read back, the same feed.
                    let read = try JSONDecoder().decode(PodcastFeed.self, from: try JSONEncoder().encode(feed))
                    XCTAssertEqual(read, feed, "seed \(seed) run \(run) step \(step)")
                    feed = read
                default:
                    feed.note(Self.ids.randomElement(using: &rng)!, position: 12)
                    feed.finished(Self.ids.randomElement(using: &rng)!)
                }
                check(feed, "seed \(seed) run \(run) step \(step) change \(kind)")
                check(before, "seed \(seed) run \(run) step \(step) change \(kind), the copy before")
            }
        }
    }

    /// The podcasts of a player through `reduce`: feeds configured, dropped and put back, fetched,
    /// failing, downloads arriving and deleted, the file restored; the state's lookups agree with
    /// a scan after each event.
    func testAPlayersIndexesAgreeWithTheScanThroughReduce() throws {
        let seed = Self.seed()
        var rng = SeededGenerator(seed: seed)
        for run in 0..<60 {
            var s = State()
            s.podcastsReady = true
            s.bookmarksReady = true
            for step in 0..<25 {
                let name = Self.names.randomElement(using: &rng)!
                let event: Event
                switch Int.random(in: 0...4, using: &rng) {
                case 0:
                    var settings = s.settings
                    settings.podcasts.feeds = Self.names.filter { _ in Bool.random(using: &rng) }.map {
                        PodcastSource(name: $0, url: "https://\($0).example/rss", downloadAhead: Int.random(in: 0...2, using: &rng))
                    }
                    event = .reconfigured(settings)
                case 1: event = .podcastFetched(name: name, title: name.uppercased(), episodes: Self.episodes(&rng))
                case 2: event = .podcastFailed(name: name, reason: "timed out")
                case 3:
                    event = .episodeDownloaded(name: name, id: Self.ids.randomElement(using: &rng)!,
                                               path: Self.paths.randomElement(using: &rng)!, bytes: 3)
                default:
                    // The file read at start: feeds as saved, through the file's encoding.
                    let saved = try Self.names.filter { _ in Bool.random(using: &rng) }.map {
                        try JSONDecoder().decode(PodcastFeed.self, from: try JSONEncoder().encode(Self.feed($0, &rng)))
                    }
                    event = .podcastsLoaded(saved)
                }
                _ = reduce(&s, event)
                check(s, "seed \(seed) run \(run) step \(step): \(event)")
            }
        }
    }

    /// What is saved and compared is what it was: no index in the file, equal feeds equal however
    /// their index was built.
    func testTheIndexIsNeitherSavedNorCompared() throws {
        let episodes = [PodcastEpisode(id: "a", title: "A", url: "https://x.example/a.mp3"),
                        PodcastEpisode(id: "b", title: "B", url: "https://x.example/a.mp3")]
        let made = PodcastFeed(name: "x", episodes: episodes, downloads: ["b": EpisodeFile(path: "/d/b.mp3", bytes: 1)])
        var edited = PodcastFeed(name: "x")
        edited.downloads["b"] = EpisodeFile(path: "/d/b.mp3", bytes: 1)
        edited.episodes = [episodes[1]]
        edited.episodes.insert(episodes[0], at: 0)
        XCTAssertEqual(made, edited)
        let json = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(made)) as? [String: Any]
        XCTAssertEqual(json.map { Set($0.keys) }, ["name", "order", "title", "episodes", "places", "downloads"])
        // First match kept: the URL both share is the first episode's; the file is b's.
        XCTAssertEqual(made.episode(url: "https://x.example/a.mp3")?.id, "a")
        XCTAssertEqual(made.episode(url: "/d/b.mp3")?.id, "b")
        // A file of an episode no longer known answers nothing, as the scan did.
        var stale = made
        stale.episodes.removeLast()
        XCTAssertNil(stale.episode(url: "/d/b.mp3"))
    }
}
