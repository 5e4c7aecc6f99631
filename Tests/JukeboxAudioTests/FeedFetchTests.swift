// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// Feeds fetched from the local `RadioServer` (python3's http.server on 127.0.0.1, started by the
/// test, gone with it): a feed served as a file, then the same URL failing every way a server
/// fails (404, an HTML page, garbage, too large, headers without end, a trickle, the server gone),
/// each with its reason. Skipped without python3.
final class FeedFetchTests: ServedFolderCase {
    override var servedFolderName: String { "feeds" }
    override var mp3Frames: Int { 4410 }

    private var settings: FeedFetchSettings {
        var s = FeedFetchSettings()
        s.connectTimeoutSeconds = 5
        s.stallSeconds = 5
        s.totalSeconds = 8
        return s
    }

    private func serve(_ name: String, _ text: String) throws {
        try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
    }

    static let feed = """
        <?xml version="1.0"?><rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Local</title>
        <item><title>Two</title><guid>2</guid><pubDate>Tue, 05 Mar 2024 06:00:00 GMT</pubDate><enclosure url="two.mp3" type="audio/mpeg"/></item>
        <item><title>One</title><guid>1</guid><pubDate>Mon, 04 Mar 2024 06:00:00 GMT</pubDate><enclosure url="/file.mp3" type="audio/mpeg"/></item>
        </channel></rss>
        """

    func testAFeedServedLocallyIsFetchedAndRead() throws {
        try serve("feed.xml", Self.feed)
        let result = FeedFetch.fetch(server.url("/dir/feed.xml"), settings: settings)
        guard case .success(let document) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(document.title, "Local")
        XCTAssertEqual(document.episodes.map(\.url), [server.url("/dir/two.mp3"), server.url("/file.mp3")])
        // The enclosure itself comes through the same GET, bounded.
        guard case .success(let audio) = FeedFetch.get(server.url("/file.mp3"), settings: settings, maxBytes: 1 << 20) else {
            return XCTFail("no audio")
        }
        XCTAssertGreaterThan(audio.count, 1000)
    }

    /// Every way a server fails says why; none hangs past the fetch's bounds.
    func testFailuresHaveTheirReasons() throws {
        try serve("garbage.xml", "\u{1}\u{2}not xml at all")
        try serve("big.xml", "<rss><channel>" + String(repeating: "<item><title>x</title></item>", count: 2000) + "</channel></rss>")
        var limits = FeedLimits()
        limits.maxBytes = 16 * 1024
        let cases: [(String, FeedLimits, FeedFetchError)] = [
            ("/missing", FeedLimits(), .failed("HTTP 404")),
            ("/dir/none.xml", FeedLimits(), .failed("HTTP 404")),
            ("/page.html", FeedLimits(), .refused(.notAFeed(root: "html"))),
            ("/dir/garbage.xml", FeedLimits(), .refused(.malformed(line: 1, column: 0, reason: "not well-formed (invalid token)"))),
            ("/dir/big.xml", limits, .tooLarge(limit: 16 * 1024)),
            ("/endless", FeedLimits(), .failed("the server's header is longer than 64 KiB")),
        ]
        for (path, limits, expected) in cases {
            let result = FeedFetch.fetch(server.url(path), settings: settings, limits: limits)
            guard case .failure(let error) = result else { XCTFail("\(path): \(result)"); continue }
            XCTAssertEqual(error, expected, path)
            XCTAssertFalse(error.description.isEmpty)
        }
        XCTAssertEqual(FeedFetchError.tooLarge(limit: 16 * 1024).description, "the feed is larger than 16 KiB")
        XCTAssertEqual(FeedFetchError.tooLarge(limit: 8 << 20).description, "the feed is larger than 8 MiB")
        // A body a byte a second is cut off at the fetch's whole bound, not the stall's.
        let start = monotonicNow()
        let trickle = FeedFetch.fetch(server.url("/trickle?every=1"), settings: settings)
        XCTAssertEqual(trickle.failureReason, "no whole answer within 8 s")
        XCTAssertLessThan(monotonicNow() - start, 60, "bounded by the settings (8 s), with room for a busy machine")
        // The server gone: libcurl's words.
        let url = server.url("/dir/feed.xml")
        server = nil
        let gone = FeedFetch.fetch(url, settings: settings)
        XCTAssertTrue(gone.failureReason?.contains("onnect") == true, "\(gone)")
    }

    /// The thread: outcomes reported in order, a repeated request fetched once, `finish` joins.
    func testTheFetcherThreadReportsEachFeed() throws {
        try serve("feed.xml", Self.feed)
        let outcomes = Lines()
        let fetcher = FeedFetcher(settings: settings) { outcome in
            switch outcome.result {
            case .success(let document): outcomes.append("\(outcome.name): \(document.episodes.count) episodes")
            case .failure(let error): outcomes.append("\(outcome.name): \(error)")
            }
        }
        fetcher.fetch(name: "local", url: server.url("/dir/feed.xml"))
        fetcher.fetch(name: "gone", url: server.url("/missing"))
        fetcher.fetch(name: "gone", url: server.url("/missing"))
        XCTAssertTrue(waitFor(60) { outcomes.all.count >= 2 })
        fetcher.finish()
        XCTAssertEqual(outcomes.all, ["local: 2 episodes", "gone: HTTP 404"])
    }
}

/// Lines reported from the fetcher's thread.
private final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

private extension Result where Failure == FeedFetchError {
    var failureReason: String? {
        if case .failure(let error) = self { return error.description }
        return nil
    }
}

/// Episodes downloaded from the local `RadioServer`: whole files renamed into place, nothing left
/// behind by a failure or a download over its bound.
final class EpisodeDownloadTests: XCTestCase {
    func testDownloadsAreWholeOrNothing() throws {
        try requireRadioServer()
        let scratch = try Scratch()
        let mp3 = try scratch.audio(.mp3, frames: 44100)
        let server: RadioServer
        do { server = try RadioServer(mp3: mp3, folder: scratch.url.path) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let folder = scratch.url.appendingPathComponent("episodes/feed").path
        var settings = FeedFetchSettings()
        settings.stallSeconds = 5
        settings.totalSeconds = 30
        let size = try FileManager.default.attributesOfItem(atPath: mp3)[.size] as? Int ?? 0
        let path = folder + "/ep.mp3"
        // What a killed player left behind goes with the next download.
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: folder + "/.old.mp3.999.0.tmp", contents: Data([1, 2, 3]))
        XCTAssertEqual(EpisodeDownload.run(server.url("/file.mp3"), to: path, maxBytes: 1 << 30, settings: settings), .success(Int64(size)))
        XCTAssertEqual(FileManager.default.contents(atPath: path), FileManager.default.contents(atPath: mp3))
        // Over the budget left, a 404: nothing new, nothing half-written, the whole file kept.
        XCTAssertEqual(EpisodeDownload.run(server.url("/file.mp3"), to: folder + "/big.mp3", maxBytes: 1000, settings: settings),
                       .failure(.failed("larger than the budget left (1000 bytes)")))
        XCTAssertEqual(EpisodeDownload.run(server.url("/missing"), to: folder + "/gone.mp3", maxBytes: 1 << 30, settings: settings),
                       .failure(.failed("HTTP 404")))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), ["ep.mp3"])
    }
}
