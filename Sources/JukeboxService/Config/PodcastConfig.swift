// SPDX-License-Identifier: MIT
import JukeboxCore

/// One podcast the config names: what it is called (a card's `{"podcast": NAME}`,
/// `podcast://NAME`), where its feed is, the order its episodes play in and how many are
/// downloaded ahead.
public struct PodcastSource: Equatable, Sendable {
    public var name: String
    /// The feed's http(s) URL.
    public var url: String
    public var order: PodcastOrder
    /// Episodes not yet played kept on disk ahead of time (0: always streamed).
    public var downloadAhead: Int

    public init(name: String, url: String, order: PodcastOrder = .newest, downloadAhead: Int = 0) {
        self.name = name
        self.url = url
        self.order = order
        self.downloadAhead = downloadAhead
    }
}

/// The config's `podcasts`: the feeds, how often they are fetched again, and the disk the
/// downloads may take together.
public struct PodcastSettings: Equatable, Sendable {
    public var feeds: [PodcastSource] = []
    /// Minutes between two fetches of a feed (each feed is also fetched at start).
    public var refreshMinutes = 60.0
    /// MiB every feed's downloads may take together.
    public var budgetMiB = 1024

    public init() {}

    /// The most feeds one config may name.
    public static let maxFeeds = 100
    /// The longest name (UTF-8 bytes).
    public static let maxNameBytes = 64

    /// Whether `name` can name a podcast: 1 to 64 bytes, no control character, no `/` (it names a
    /// folder of downloads and ends a `podcast://NAME` URI), not `.` or `..`.
    public static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameBytes && name != "." && name != ".."
            && !name.unicodeScalars.contains { DisplayText.isControl($0) || $0 == "/" }
            && name.first != " " && name.last != " "
    }
}

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
