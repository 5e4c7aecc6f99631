// SPDX-License-Identifier: MIT
@testable import JukeboxMQTT
import XCTest

/// When the position is published, by a table: each row is one status read and whether the
/// position goes out then.
final class PositionPublisherTests: XCTestCase {
    private struct Row {
        let now: Double
        let position: Double?
        var file = "a.flac"
        var phase = "playing"
        let publish: Bool
        let why: String
    }

    func testThePositionGoesOutEveryIntervalWhileItRunsAndAtOnceAfterAJump() {
        let rows: [Row] = [
            Row(now: 0, position: 0, publish: true, why: "the first position"),
            Row(now: 1, position: 1, publish: false, why: "runs as expected"),
            Row(now: 9.9, position: 9.9, publish: false, why: "not yet the interval"),
            Row(now: 10, position: 10, publish: true, why: "the interval passed"),
            Row(now: 11, position: 11.4, publish: false, why: "1.4 s off: within the jump threshold"),
            Row(now: 12, position: 30, publish: true, why: "a seek forward"),
            Row(now: 13, position: 31, file: "b.flac", publish: true, why: "another track"),
            Row(now: 14, position: 32, file: "b.flac", phase: "paused", publish: true, why: "another phase"),
            Row(now: 30, position: 32, file: "b.flac", phase: "paused", publish: false, why: "paused: it does not run, nothing is due"),
            Row(now: 31, position: 10, file: "b.flac", phase: "paused", publish: true, why: "a seek while paused"),
            Row(now: 32, position: nil, file: "", phase: "stopped", publish: true, why: "no position: published empty"),
            Row(now: 33, position: 0, file: "b.flac", phase: "playing", publish: true, why: "a position again"),
        ]
        var p = PositionPublisher(interval: 10)
        for row in rows {
            let running = row.phase == "playing"
            XCTAssertEqual(p.observe(row.position, file: row.file, phase: row.phase, running: running, now: row.now), row.publish,
                           "at \(row.now): \(row.why)")
        }
        XCTAssertEqual(p.published, 0)
    }

    func testAPositionHeldBackLeavesThePublishedOneAndForgetPublishesAgain() {
        var p = PositionPublisher(interval: 10)
        XCTAssertTrue(p.observe(5, file: "a", phase: "playing", running: true, now: 0))
        XCTAssertFalse(p.observe(6, file: "a", phase: "playing", running: true, now: 1))
        XCTAssertEqual(p.published, 5, "the state object carries what was published, not each second's value")
        p.forget()
        XCTAssertNil(p.published)
        XCTAssertTrue(p.observe(7, file: "a", phase: "playing", running: true, now: 2), "after a reconnect everything goes out")
    }
}
