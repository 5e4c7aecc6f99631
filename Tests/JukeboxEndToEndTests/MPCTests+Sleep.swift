// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

// The sleep timer from an MPD client: stored playlists named after the control words, listed
// without a playlists folder too; loading one sets the timer and leaves the queue alone.
extension MPCTests {
    func testLoadingASleepPlaylistSetsTheTimerAndLeavesTheQueue() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        func sleep() -> [String: Any]? {
            guard let out = try? ctl("status", "--json").stdout,
                  let object = try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] else { return nil }
            return object["sleep"] as? [String: Any]
        }
        let loaded = try mpc("load", "sleep 30")
        XCTAssertEqual(loaded.status, 0, loaded.err)
        XCTAssertEqual(sleep()?["minutes"] as? Double, 30)
        XCTAssertEqual(try mpc("playlist").out, "a\nb\n", "the queue is left alone")
        XCTAssertEqual(try mpc("load", "sleep track").status, 0)
        XCTAssertEqual(sleep()?["mode"] as? String, "track")
        XCTAssertEqual(try mpc("load", "sleep off").status, 0)
        XCTAssertNil(sleep())
        XCTAssertTrue(try ctl("status").stdout.hasPrefix("▶"))
        // Any words the control language takes; others are a playlist's name (none here).
        XCTAssertEqual(try mpc("load", "sleep 45").status, 0)
        XCTAssertEqual(sleep()?["minutes"] as? Double, 45)
        XCTAssertEqual(try mpc("load", "sleep soon").status, 1)
        XCTAssertEqual(try mpc("playlist").out, "a\nb\n")
    }
}
