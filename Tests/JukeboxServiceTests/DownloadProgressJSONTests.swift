// SPDX-License-Identifier: MIT
import JukeboxCore
@testable import JukeboxService
import XCTest

/// A download's progress in `status --json` (`download`, the status line's words) and in
/// `podcasts --json` (`downloading`, with the numbers), absent while none is reported.
final class DownloadProgressJSONTests: XCTestCase {
    func testProgressIsInBothAnswersOnlyWhileReported() {
        var state = State()
        state.podcasts = [PodcastFeed(name: "Serial", order: .oldest,
                                      episodes: [PodcastEpisode(id: "ep4", title: "Episode \"4\"", url: "https://h.example/4.mp3")])]
        state.podcastDownloading = PodcastEpisodeKey(name: "Serial", id: "ep4")
        XCTAssertFalse(PlayerStatusJSON(state).text.contains("download"))
        XCTAssertFalse(PodcastsJSON.text(state).contains("downloading"))
        state.podcastDownloadProgress = DownloadProgress(bytes: 410, total: 1000)
        let status = PlayerStatusJSON(state)
        XCTAssertEqual(status.download, "downloading \"Episode \"4\"\" 41%")
        XCTAssertTrue(status.text.hasSuffix(",\"download\":\"downloading \\\"Episode \\\"4\\\"\\\" 41%\"}"), status.text)
        XCTAssertEqual(PlayerStatusJSON(text: status.text)?.download, status.download)
        XCTAssertTrue(PodcastsJSON.text(state).contains(
            "\"downloading\":{\"episode\":\"Episode \\\"4\\\"\",\"bytes\":410,\"total\":1000,\"percent\":41}"), PodcastsJSON.text(state))
        state.podcastDownloadProgress = DownloadProgress(bytes: 410, total: nil)
        XCTAssertTrue(PodcastsJSON.text(state).contains("\"bytes\":410,\"total\":null,\"percent\":null}"))
        XCTAssertEqual(PlayerStatusJSON(state).download, "downloading \"Episode \"4\"\" 0 KiB")
    }
}
