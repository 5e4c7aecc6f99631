// SPDX-License-Identifier: MIT
import JukeboxAudio

/// Podcast feeds as a server may send them (`FeedParser`): a document within its bounds or a
/// reason that says what is wrong, never a crash, and the same answer twice.
enum FeedHarness {
    static let url = "https://feeds.example/show/feed.xml"

    static func run(_ data: [UInt8]) -> Bool {
        let limits = FeedLimits()
        let result = FeedParser.parse(data, url: url, limits: limits)
        require(FeedParser.parse(data, url: url, limits: limits) == result, "a second parse of the same bytes differs")
        switch result {
        case .failure(let failure):
            let reason = failure.description
            require(!reason.isEmpty && reason.utf8.count <= 400, "reason \(reason.debugDescription)")
            require(!reason.unicodeScalars.contains(where: TagText.isControl), "a control character in the reason")
            return false
        case .success(let document):
            require(document.episodes.count <= limits.maxItems, "\(document.episodes.count) episodes kept")
            require(document.title.utf8.count <= limits.maxTitleBytes, "a feed title of \(document.title.utf8.count) bytes")
            var ids: Set<String> = []
            for episode in document.episodes {
                require(ids.insert(episode.id).inserted, "id \(episode.id.debugDescription) twice")
                require(!episode.id.isEmpty && episode.id.utf8.count <= limits.maxIDBytes, "id \(episode.id.debugDescription)")
                require(episode.title.utf8.count <= limits.maxTitleBytes, "a title of \(episode.title.utf8.count) bytes")
                let head = episode.url.prefix(8).lowercased()
                require(head.hasPrefix("http://") || head.hasPrefix("https://"), "enclosure \(episode.url.debugDescription)")
                require(episode.url.utf8.count <= limits.maxURLBytes, "a URL of \(episode.url.utf8.count) bytes")
                let text = episode.id + episode.title + episode.url + episode.mimeType
                require(!text.unicodeScalars.contains(where: TagText.isControl), "a control character in \(text.debugDescription)")
                if let duration = episode.duration { require(duration.isFinite && duration > 0, "duration \(duration)") }
                if let bytes = episode.bytes { require(bytes > 0, "length \(bytes)") }
            }
            return true
        }
    }

    /// What the randomized mode splices in and libFuzzer's dictionary holds.
    static let tokens: [String] = [
        "<rss>", "</rss>", "<channel>", "</channel>", "<item>", "</item>", "<title>", "</title>", "<guid>", "</guid>",
        "<pubDate>", "</pubDate>", "<enclosure url=\"", "\" type=\"audio/mpeg\" length=\"", "\"/>",
        "<itunes:duration>", "</itunes:duration>", "<itunes:episode>", "<itunes:season>", "<itunes:title>",
        "<feed xmlns=\"http://www.w3.org/2005/Atom\">", "</feed>", "<entry>", "</entry>", "<id>", "</id>",
        "<link rel=\"enclosure\" href=\"", "<updated>", "<published>", "type=\"html\"", "type=\"xhtml\"",
        "<![CDATA[", "]]>", "<!DOCTYPE rss [", "<!ENTITY a \"", "<!ENTITY % p SYSTEM \"", "]>", "&a;", "&amp;", "&lt;",
        "&#x85;", "&#x202E;", "&#x1B;", "&#0;", "<?xml version=\"1.0\" encoding=\"UTF-16\"?>", "<?xml version=\"1.0\" encoding=\"windows-1252\"?>", "\u{80}", "\u{9D}", "<?xml version=\"1.0\"?>",
        "http://h/", "https://h/a.mp3", "//h/x", "../", "javascript:", "file:///etc/passwd",
        "Wed, 02 Oct 2002 13:00:00 GMT", "2003-12-13T18:30:02.25+01:00", "1:02:03", "99999999999999999999", "-1",
        "\u{1B}", "\u{85}", "\u{FEFF}", " ", "\n", "<", ">", "\"", "=", "&",
    ]
}
