// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

/// The podcasts file (`PodcastFile`): written and read back whole; absent is empty; damaged is
/// moved aside and nothing is lost; an entry that is not a podcast is left out, not the file.
final class PodcastFileTests: XCTestCase {
    static let feeds = [
        PodcastFeed(name: "News", order: .newest, title: "The News",
                    episodes: [PodcastEpisode(id: "a\u{FFFD}", title: "Ep \"1\" / é", url: "https://h.example/1.mp3", published: 1_000, duration: 61.5)],
                    places: ["a\u{FFFD}": EpisodePlace(position: 12.5, played: false)], lastError: "HTTP 500"),
        PodcastFeed(name: "Serial", order: .oldest),
        // Taken out of the config, counted at two starts.
        PodcastFeed(name: "Old", order: .oldest, places: ["x": EpisodePlace(position: 3)], absentStarts: 2),
    ]

    func testWrittenAndReadBack() throws {
        let dir = TempDir()
        let path = dir.file("state.json.podcasts")
        XCTAssertEqual(PodcastFile.read(path), PodcastFile.Loaded(podcasts: [], messages: []))
        try PodcastFile.write(Self.feeds, to: path)
        XCTAssertEqual(PodcastFile.read(path), PodcastFile.Loaded(podcasts: Self.feeds, messages: []))
        // Nothing is left beside it (the temporary file was renamed).
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["state.json.podcasts"])
    }

    /// A card names a podcast as `{"podcast": NAME}` or as the control language's `podcast NAME`.
    func testACardNamesAPodcast() {
        let map = #"{"0001": {"podcast": "Bedtime Stories"}, "0002": "podcast  News", "0003": "/music/a"}"#
        XCTAssertEqual(CardMapFile.parse(Array(map.utf8), source: "cards.json"),
                       .success(CardMap(["0001": .podcast("Bedtime Stories"), "0002": .podcast("News"), "0003": .play(["/music/a"])])))
        XCTAssertEqual(CardMapFile.parse(Array(#"{"0001": {"podcast": ""}}"#.utf8), source: "cards.json"),
                       .failure(CardMapError("cards.json: card 0001: usage: podcast NAME")))
        XCTAssertEqual(CardMapFile.parse(Array(#"{"0001": {"play": {"podcast": "News"}}}"#.utf8), source: "cards.json"),
                       .failure(CardMapError("cards.json: card 0001: options inside options")))
    }

    func testDamagedFilesAreMovedAsideAndBadEntriesLeftOut() throws {
        let dir = TempDir()
        let path = dir.write("p", "{\"version\":1,\"podcasts\":[")
        let damaged = PodcastFile.read(path)
        XCTAssertEqual(damaged.podcasts, [])
        XCTAssertEqual(damaged.messages.count, 1)
        XCTAssertTrue(damaged.messages[0].contains("moved it to \(path).damaged-1"), "\(damaged.messages)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".damaged-1"))
        let mixed = dir.write("q", #"{"version":1,"podcasts":[{"name":"A","order":"newest","title":"","episodes":[],"places":{}},{"name":7}]}"#)
        XCTAssertEqual(PodcastFile.read(mixed), PodcastFile.Loaded(podcasts: [PodcastFeed(name: "A")],
                                                                messages: ["podcasts file \(mixed): left out 1 entry that is not a podcast"]))
    }
}
