// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
@testable import JukeboxService
import XCTest

/// `status --json` is written and read through one type: what the runtime writes, the bridges
/// read back field for field, tags with control characters and quotes included.
final class PlayerStatusJSONTests: XCTestCase {
    func testWhatIsWrittenIsReadBackFieldForField() throws {
        var state = State()
        let tricky = TrackInfo(path: "/music/a \"b\"\n\u{1}.flac", title: "Tab\there \"quoted\" \u{7}bell",
                               artist: "Ærø \\ back", album: "Line\nbreak", duration: 61.5)
        _ = reduce(&state, .replaceQueue([tricky, TrackInfo(path: "http://radio.example/live")]))
        _ = reduce(&state, .setVolume(37))
        _ = reduce(&state, .setRepeat(.all))
        let written = PlayerStatusJSON(state)
        let text = written.text
        XCTAssertFalse(text.contains("\n"), "one line: \(text)")
        XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 }, "control characters escaped: \(text)")
        let read = try XCTUnwrap(PlayerStatusJSON(text: text), text)
        XCTAssertEqual(read, written)
        XCTAssertEqual(read.count, 2)
        XCTAssertEqual(read.volume, 37)
        XCTAssertEqual(read.repeat, "all")
        XCTAssertFalse(read.stream)
        XCTAssertEqual(read.speed, 1)
        state.queueSpeed = 1.25
        XCTAssertEqual(PlayerStatusJSON(text: PlayerStatusJSON(state).text)?.speed, 1.25)
    }

    func testNoTrackIsNullsAndANonFiniteNumberIsNull() throws {
        var status = PlayerStatusJSON(State())
        XCTAssertNil(status.path)
        XCTAssertNil(status.position)
        XCTAssertEqual(PlayerStatusJSON(text: status.text), status)
        status.position = .infinity
        status.duration = .nan
        XCTAssertTrue(status.text.contains("\"position\":null,\"duration\":null"), status.text)
        XCTAssertNil(PlayerStatusJSON(text: "{\"phase\":\"playing\"}"), "a required field missing is no status")
        XCTAssertNil(PlayerStatusJSON(text: "error: no"))
    }
}
