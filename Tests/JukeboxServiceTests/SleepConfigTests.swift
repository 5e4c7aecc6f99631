// SPDX-License-Identifier: MIT
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The sleep timer's shell parts: the config's `sleep` section and `status --json`'s `sleep`.
final class SleepConfigTests: XCTestCase {
    private func parse(_ text: String) throws(Config.Problem) -> (config: Config, warnings: [String]) {
        try Config.parse(Array(text.utf8), source: "c.json")
    }

    func testTheSectionIsReadAndChecked() throws {
        XCTAssertEqual(try parse("{}").config.settings.sleep, SleepSettings(fadeSeconds: 30, then: .pause))
        let (c, w) = try parse(#"{"sleep": {"fadeSeconds": 0, "then": "poweroff", "fade": 3}}"#)
        XCTAssertEqual(c.settings.sleep, SleepSettings(fadeSeconds: 0, then: .poweroff))
        XCTAssertEqual(w, [#"c.json: unknown key "sleep.fade" ignored"#])
        let expectation = #"c.json: sleep: must be {"fadeSeconds": seconds from 0 to 600, "then": "pause" or "poweroff"}"#
        for bad in [#"{"sleep": {"fadeSeconds": 601}}"#, #"{"sleep": {"fadeSeconds": -1}}"#, #"{"sleep": {"then": "stop"}}"#,
                    #"{"sleep": {"fadeSeconds": "long"}}"#, #"{"sleep": 30}"#] {
            XCTAssertThrowsError(try parse(bad), bad) { XCTAssertEqual("\($0)", expectation, bad) }
        }
    }

    func testStatusJSONCountsTheTimeLeftFromTheClockItIsGiven() throws {
        var state = State()
        state.queue = [Track(id: 1, info: TrackInfo(path: "/m/a.flac", duration: 100))]
        state.order = [1]
        state.cursor = 0
        state.position = 30
        XCTAssertTrue(PlayerStatusJSON(state, now: 5).text.hasSuffix(#","sleep":null,"headphones":null,"speed":1.0}"#))
        state.sleep = SleepTimer(request: .after(1800), endsAt: 1900, seenAt: 100)
        XCTAssertTrue(PlayerStatusJSON(state, now: 1000.2).text.hasSuffix(#","sleep":{"mode":"minutes","left":900,"minutes":30},"headphones":null,"speed":1.0}"#))
        // Before its first firing, the whole time; an end mode counts from the heard position.
        state.sleep = SleepTimer(request: .after(600))
        XCTAssertEqual(PlayerStatusJSON(text: PlayerStatusJSON(state, now: 1).text)?.sleep, PlayerStatusJSON.SleepStatus(mode: "minutes", left: 600, minutes: 10))
        state.sleep = SleepTimer(request: .end(.track))
        XCTAssertTrue(PlayerStatusJSON(state, now: 1).text.hasSuffix(#","sleep":{"mode":"track","left":70},"headphones":null,"speed":1.0}"#))
        state.queue[0].info.duration = nil
        XCTAssertTrue(PlayerStatusJSON(state, now: 1).text.hasSuffix(#","sleep":{"mode":"track","left":null},"headphones":null,"speed":1.0}"#))
    }
}
