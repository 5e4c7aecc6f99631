// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import XCTest

/// Podcast feeds (`FeedParser`) read by tables: real-world-shaped RSS and Atom, then hostile ones
/// (entity expansion, external entities, 10^5 items, huge and hostile titles, deep nesting, random
/// mutations): a clear reason or a bounded document, never a crash or a hang.
final class FeedParserTests: XCTestCase {
    static let url = "https://feeds.example/show/feed.xml"

    func parse(_ text: String, limits: FeedLimits = FeedLimits()) -> Result<FeedDocument, FeedFailure> {
        FeedParser.parse(Array(text.utf8), url: Self.url, limits: limits)
    }

    func document(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> FeedDocument {
        switch parse(text) {
        case .success(let document): return document
        case .failure(let failure): XCTFail("refused: \(failure)", file: file, line: line); throw failure
        }
    }

    func testRSSWithTheITunesNamespace() throws {
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/">
              <channel>
                <title>  Bedtime
                   Stories </title>
                <link>https://show.example/</link>
                <itunes:image href="https://show.example/cover.jpg"/>
                <item>
                  <title><![CDATA[Episode 2: The <Owl> & the Moon]]></title>
                  <guid isPermaLink="false">show-ep-2</guid>
                  <pubDate>Tue, 05 Mar 2024 06:00:00 +0100</pubDate>
                  <enclosure url="https://cdn.example/ep2.mp3?x=1&amp;y=2" type="audio/mpeg" length="12345678"/>
                  <itunes:duration>1:02:03</itunes:duration>
                  <itunes:season>1</itunes:season>
                  <itunes:episode>2</itunes:episode>
                  <content:encoded><![CDATA[<p>Notes</p>]]></content:encoded>
                </item>
                <item>
                  <title>Episode 1</title>
                  <guid>https://show.example/1</guid>
                  <pubDate>Mon, 04 Mar 2024 05:00:00 GMT</pubDate>
                  <enclosure url="media/ep1.mp3" type="audio/mpeg" length="0"/>
                  <itunes:duration>754</itunes:duration>
                </item>
                <item><title>A blog post, no audio</title><guid>post</guid></item>
                <item><title>Not http</title><enclosure url="file:///etc/passwd" type="audio/mpeg"/></item>
                <item><title>Same guid again</title><guid>show-ep-2</guid><enclosure url="https://cdn.example/x.mp3"/></item>
                <item><itunes:title>Only an itunes title</itunes:title><enclosure url="https://cdn.example/it.mp3"/>
                  <itunes:duration>12:30</itunes:duration></item>
              </channel>
            </rss>
            """
        let document = try document(feed)
        let expected = FeedDocument(kind: .rss, title: "Bedtime Stories", episodes: [
            FeedEpisode(id: "show-ep-2", title: "Episode 2: The <Owl> & the Moon", url: "https://cdn.example/ep2.mp3?x=1&y=2",
                        mimeType: "audio/mpeg", bytes: 12_345_678, published: 1_709_614_800, duration: 3723, season: 1, number: 2),
            FeedEpisode(id: "https://show.example/1", title: "Episode 1", url: "https://feeds.example/show/media/ep1.mp3",
                        mimeType: "audio/mpeg", bytes: nil, published: 1_709_528_400, duration: 754),
            FeedEpisode(id: "https://cdn.example/it.mp3", title: "Only an itunes title", url: "https://cdn.example/it.mp3", duration: 750),
        ], skipped: 3)
        XCTAssertEqual(document, expected)
    }

    func testAtomWithEnclosureLinks() throws {
        let feed = """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:itunes="http://www.itunes.com/DTDs/Podcast-1.0.dtd">
              <title type="html">Radio &lt;b&gt;Show&lt;/b&gt;</title>
              <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
              <updated>2024-03-05T10:00:00Z</updated>
              <entry>
                <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Part <em>two</em></div></title>
                <id>tag:show.example,2024:2</id>
                <updated>2024-03-05T10:00:00Z</updated>
                <published>2024-03-05T09:00:00+01:00</published>
                <link rel="alternate" href="https://show.example/2"/>
                <link rel="enclosure" type="audio/ogg" length="999" href="/media/2.ogg"/>
                <itunes:duration>90.5</itunes:duration>
              </entry>
              <entry>
                <title>Part one</title>
                <id>tag:show.example,2024:1</id>
                <updated>2024-03-04T10:00:00Z</updated>
                <link rel="enclosure" href="http://show.example/1.mp3"/>
              </entry>
            </feed>
            """
        let document = try document(feed)
        XCTAssertEqual(document, FeedDocument(kind: .atom, title: "Radio Show", episodes: [
            FeedEpisode(id: "tag:show.example,2024:2", title: "Part two", url: "https://feeds.example/media/2.ogg",
                        mimeType: "audio/ogg", bytes: 999, published: 1_709_625_600, duration: 90.5),
            FeedEpisode(id: "tag:show.example,2024:1", title: "Part one", url: "http://show.example/1.mp3", published: 1_709_546_400),
        ]))
    }

    /// Old feeds declare Windows-1252: read byte for byte (€ and curly quotes); an encoding expat
    /// does not know is refused with its words.
    func testWindows1252IsReadAndOtherEncodingsRefused() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"Windows-1252\"?><rss><channel><title>".utf8)
        bytes += [0x80, 0x20, 0x93, 0x51, 0x94, 0x20, 0xE9, 0x81]
        bytes += Array("</title></channel></rss>".utf8)
        guard case .success(let document) = FeedParser.parse(bytes, url: Self.url) else { return XCTFail("refused") }
        XCTAssertEqual(document.title, "€ \u{201C}Q\u{201D} é\u{FFFD}")
        let koi = Array("<?xml version=\"1.0\" encoding=\"KOI8-R\"?><rss/>".utf8)
        XCTAssertEqual(FeedParser.parse(koi, url: Self.url), .failure(.malformed(line: 1, column: 30, reason: "unknown encoding")))
    }

    /// RSS 0.91 feeds name Netscape's DTD: a DOCTYPE without entity declarations is read (the DTD
    /// is never fetched).
    func testDoctypeWithoutEntitiesIsRead() throws {
        let feed = """
            <?xml version="1.0"?>
            <!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
            <rss version="0.91"><channel><title>Old</title>
            <item><title>One</title><enclosure url="http://old.example/1.mp3"/></item></channel></rss>
            """
        XCTAssertEqual(try document(feed).episodes.map(\.url), ["http://old.example/1.mp3"])
    }

    func testRefusedWithAReason() {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [
              <!ENTITY lol "lol">
              <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
              <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
              <!ENTITY lol9 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
            ]>
            <rss><channel><title>&lol9;</title></channel></rss>
            """
        let external = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <rss><channel><title>&xxe;</title></channel></rss>
            """
        let parameter = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>
            <rss><channel/></rss>
            """
        let deep = "<rss>" + String(repeating: "<a>", count: 10_000) + String(repeating: "</a>", count: 10_000) + "</rss>"
        var small = FeedLimits()
        small.maxBytes = 100
        let table: [(String, String, FeedLimits, FeedFailure)] = [
            ("billion laughs", laughs, FeedLimits(), .entityDeclared(name: "lol")),
            ("external entity", external, FeedLimits(), .entityDeclared(name: "xxe")),
            ("parameter entity", parameter, FeedLimits(), .entityDeclared(name: "remote")),
            ("an HTML page", "<html><body>hi</body></html>", FeedLimits(), .notAFeed(root: "html")),
            ("HTML's doctype", "<!doctype html><html/>", FeedLimits(), .malformed(line: 1, column: 0, reason: "syntax error")),
            ("RSS 1.0", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"/>", FeedLimits(),
             .notAFeed(root: "RDF in http://www.w3.org/1999/02/22-rdf-syntax-ns#")),
            ("a hostile root name", "<evil\u{1B}x/>", FeedLimits(), .malformed(line: 1, column: 5, reason: "not well-formed (invalid token)")),
            ("deep", deep, FeedLimits(), .tooDeep(limit: 64)),
            ("too large", String(repeating: " ", count: 101), small, .tooLarge(limit: 100)),
            ("empty", "", FeedLimits(), .malformed(line: 1, column: 0, reason: "no element found")),
            ("an HTML entity", "<rss><channel><title>a&nbsp;b</title></channel></rss>", FeedLimits(),
             .malformed(line: 1, column: 22, reason: "undefined entity")),
            ("cut short", "<rss><channel><item><title>x", FeedLimits(), .malformed(line: 1, column: 28, reason: "no element found")),
        ]
        for (name, text, limits, expected) in table {
            switch parse(text, limits: limits) {
            case .success(let document): XCTFail("\(name): read as \(document)")
            case .failure(let failure): XCTAssertEqual(failure, expected, name)
            }
        }
        XCTAssertEqual(FeedFailure.entityDeclared(name: "lol").description, "the feed declares an XML entity (\"lol\"), which is refused")
    }

    /// 10^5 items: 5,000 kept (the first, a feed lists its newest first), the rest counted.
    func testHundredThousandItemsAreBounded() throws {
        var text = "<rss><channel><title>Many</title>"
        for i in 0..<100_000 { text += "<item><guid>\(i)</guid><enclosure url=\"http://x.example/\(i).mp3\"/></item>" }
        text += "</channel></rss>"
        let document = try document(text)
        XCTAssertEqual(document.episodes.count, 5_000)
        XCTAssertEqual(document.skipped, 95_000)
        XCTAssertEqual(document.episodes.last?.id, "4999")
    }

    /// A 1 MiB title of two-byte characters is cut to 1,000 bytes on a character; the control
    /// characters XML lets through (C1, such as CSI U+009B, and bidirectional overrides) become
    /// U+FFFD, tabs a space (C0 controls, raw or as references, XML itself refuses); markup in an
    /// RSS title is kept as the text it is.
    func testHostileTitles() throws {
        let huge = String(repeating: "é", count: 512 * 1024)
        let text = """
            <rss><channel><title>\(huge)</title>
            <item><title>Evil&#x9B;2J&#x9;tab&#x202E;reversed&#x85;</title><guid>a&#x9F;b</guid><enclosure url="http://h.example/a.mp3"/></item>
            <item><title>&lt;script&gt;alert(1)&lt;/script&gt;</title><enclosure url="http://h.example/b.mp3"/></item>
            <item><title>\(huge)</title><enclosure url="http://h.example/c.mp3"/></item>
            </channel></rss>
            """
        let document = try document(text)
        XCTAssertEqual(document.title, String(repeating: "é", count: 500))
        XCTAssertEqual(document.episodes.map(\.title), ["Evil\u{FFFD}2J tab\u{FFFD}reversed\u{FFFD}", "<script>alert(1)</script>",
                                                        String(repeating: "é", count: 500)])
        XCTAssertEqual(document.episodes.first?.id, "a\u{FFFD}b")
        for c0 in ["&#0;", "&#x1B;", "\u{1B}", "\u{7}"] {
            if case .success = parse("<rss><channel><title>\(c0)</title></channel></rss>") { XCTFail("\(c0.debugDescription) taken") }
        }
    }

    /// Enclosure URLs: only http(s), resolved, bounded; spaces written by hand become %20.
    func testEnclosureURLs() throws {
        let long = "http://h.example/" + String(repeating: "a", count: 3000)
        let items: [String] = [
            "<item><enclosure url=\"javascript:alert(1)\"/></item>",
            "<item><enclosure url=\"ftp://h.example/a.mp3\"/></item>",
            "<item><enclosure url=\"\(long)\"/></item>",
            "<item><enclosure url=\"http://h.example/a&#x9B;.mp3\"/></item>",
            "<item><enclosure/></item>",
            "<item><enclosure url=\" http://h.example/my episode.mp3 \" length=\"-5\"/></item>",
            "<item><enclosure url=\"//other.example/b.mp3\" length=\"99999999999999999999\"/>"
                + "<enclosure url=\"http://h.example/second.mp3\"/></item>",
        ]
        let document = try document("<rss><channel>" + items.joined() + "</channel></rss>")
        XCTAssertEqual(document.episodes.map(\.url), ["http://h.example/my%20episode.mp3", "https://other.example/b.mp3"])
        XCTAssertEqual(document.episodes.map(\.bytes), [nil, nil])
        XCTAssertEqual(document.skipped, 5)
    }

    func testDurations() {
        let table: [(String, Double?)] = [
            ("1:02:03", 3723), ("62:03", 3723), ("3723", 3723), (" 3723.5 ", 3723.5), ("00:00:30", 30),
            ("", nil), ("0", nil), ("1:2:3:4", nil), ("-5", nil), ("1e9", nil), ("abc", nil), ("1.5:00", nil),
            ("99999999999", nil), (":30", nil),
        ]
        for (text, expected) in table { XCTAssertEqual(FeedReader.duration(text), expected, text.debugDescription) }
    }

    /// `Tests/FuzzCorpus/feed` (the seeds and the crashers `board/fuzz.sh` found): each read the
    /// same way twice, the hostile seeds refused.
    func testTheFuzzCorpusReplays() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzCorpus/feed").path
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }.sorted()
        XCTAssertFalse(names.isEmpty, folder)
        for name in names {
            let bytes = [UInt8](FileManager.default.contents(atPath: folder + "/" + name) ?? Data())
            let result = FeedParser.parse(bytes, url: Self.url)
            XCTAssertEqual(FeedParser.parse(bytes, url: Self.url), result, name)
            if name.hasPrefix("billion") || name.hasPrefix("external") {
                guard case .failure(.entityDeclared) = result else { return XCTFail("\(name): \(result)") }
            }
        }
    }

    /// Random mutations of a real-shaped feed (seeded; the seed is printed to replay): a document
    /// or a reason, every episode's fields within bounds and inert.
    func testRandomMutationsStayBounded() {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_FEED_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("FeedParserTests seed: \(seed) (JUKEBOX_FEED_SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let base = Array("""
            <?xml version="1.0"?><rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>T</title>
            <item><title>A &amp; B</title><guid>1</guid><pubDate>Mon, 04 Mar 2024 05:00:00 GMT</pubDate>
            <enclosure url="http://h.example/1.mp3" length="10"/><itunes:duration>1:00</itunes:duration></item>
            </channel></rss>
            """.utf8)
        let pieces: [[UInt8]] = ["<item>", "</item>", "<![CDATA[", "]]>", "&#x1B;", "<!ENTITY a \"b\">", "<!DOCTYPE rss [",
                                 "<enclosure url=\"", "\u{202E}", "\0", "&", "<"].map { Array($0.utf8) }
        for _ in 0..<2_000 {
            var bytes = base
            for _ in 0..<Int(random.next() % 6 + 1) {
                let at = Int(random.next() % UInt64(bytes.count + 1))
                switch random.next() % 3 {
                case 0: bytes.insert(contentsOf: pieces[Int(random.next() % UInt64(pieces.count))], at: at)
                case 1: if at < bytes.count { bytes[at] = UInt8(truncatingIfNeeded: random.next()) }
                default: if at < bytes.count { bytes.remove(at: at) }
                }
            }
            guard case .success(let document) = FeedParser.parse(bytes, url: Self.url) else { continue }
            XCTAssertLessThanOrEqual(document.title.utf8.count, 1_000)
            for episode in document.episodes {
                XCTAssertTrue(episode.url.hasPrefix("http://") || episode.url.hasPrefix("https://"), episode.url)
                XCTAssertFalse((episode.title + episode.id + episode.url).unicodeScalars.contains(where: TagText.isControl), "seed \(seed)")
            }
        }
    }
}
