// SPDX-License-Identifier: MIT
import JukeboxCore

/// `podcasts` as the file writes it.
struct RawPodcasts: Decodable {
    struct Feed: Decodable {
        // Optional here so that a missing one gets the expectation, not a decoder's message.
        var name: String?
        var url: String?
        var order: String?
        var download: Int?
    }

    var feeds: [Feed]?
    var refreshMinutes: Double?
    var budgetMiB: Int?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    static let expectation = "must be {\"feeds\": [{\"name\": a name without \"/\" (1 to 64 bytes, each once), \"url\": an http(s) feed URL, "
        + "\"order\": \"newest\" or \"oldest\", \"download\": episodes ahead, 0 to 50}, at most 100], "
        + "\"refreshMinutes\": 5 to 1440, \"budgetMiB\": 0 to 1048576}"

    private enum Keys: String, CodingKey { case feeds, refreshMinutes, budgetMiB }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        feeds = try c.decodeIfPresent([Feed].self, forKey: .feeds)
        refreshMinutes = try c.decodeIfPresent(Double.self, forKey: .refreshMinutes)
        budgetMiB = try c.decodeIfPresent(Int.self, forKey: .budgetMiB)
    }

    /// The settings it says, or nil when a value is out of its range (`expectation` says how).
    func settings() -> PodcastSettings? {
        var s = PodcastSettings()
        if let v = refreshMinutes {
            guard v >= 5, v <= 1440 else { return nil }
            s.refreshMinutes = v
        }
        if let v = budgetMiB {
            guard v >= 0, v <= 1 << 20 else { return nil }
            s.budgetMiB = v
        }
        let feeds = feeds ?? []
        guard feeds.count <= PodcastSettings.maxFeeds, Set(feeds.map(\.name)).count == feeds.count else { return nil }
        for feed in feeds {
            guard let name = feed.name, let url = feed.url, PodcastSettings.isName(name), Library.isStreamURL(url) else { return nil }
            let order = feed.order.map { PodcastOrder(rawValue: $0) } ?? .newest
            guard let order, (0...50).contains(feed.download ?? 0) else { return nil }
            s.feeds.append(PodcastSource(name: name, url: url, order: order, downloadAhead: feed.download ?? 0))
        }
        return s
    }
}
