// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import XCTest

/// `queue --json`: every entry with its 1-based position, escaped text, bounded.
final class QueueJSONTests: XCTestCase {
    func testEntriesPositionsAndTheCurrentOne() {
        var state = State()
        XCTAssertEqual(QueueJSON.text(state), "{\"entries\":[],\"current\":null}")
        _ = reduce(&state, .add([
            TrackInfo(path: "/m/a.flac", title: "A \"quoted\"\nline", artist: "X", album: "Y", duration: 212.5),
            TrackInfo(path: "/m/b.ogg"),
        ]))
        _ = reduce(&state, .playEntry(at: 1))
        XCTAssertEqual(QueueJSON.text(state), "{\"entries\":["
            + "{\"position\":1,\"path\":\"/m/a.flac\",\"title\":\"A \\\"quoted\\\"\\u000aline\",\"artist\":\"X\",\"album\":\"Y\",\"seconds\":212.5},"
            + "{\"position\":2,\"path\":\"/m/b.ogg\",\"title\":\"b\",\"artist\":null,\"album\":null,\"seconds\":null}"
            + "],\"current\":2}")
    }

    func testAQueueLongerThanTheLimitSaysItIsCut() {
        var state = State()
        _ = reduce(&state, .add((0..<100).map { TrackInfo(path: "/m/\($0).flac") }))
        let text = QueueJSON.text(state, limit: 1000)
        XCTAssertLessThanOrEqual(text.utf8.count, 1000 + 60)
        XCTAssertTrue(text.hasSuffix(",\"truncated\":true}"), text)
        XCTAssertTrue(text.contains("{\"position\":1,"))
        XCTAssertFalse(text.contains("{\"position\":100,"))
    }
}
