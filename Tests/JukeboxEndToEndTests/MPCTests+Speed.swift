// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

// The playback speed from an MPD client: stored playlists named after the control words (as for
// the sleep timer), loading one sets the queue's speed and leaves the queue alone; `status` says
// the speed as an extra `speed:` line when it is not 1; a `speed` command stays unknown, as in MPD.
extension MPCTests {
    func testLoadingASpeedPlaylistSetsTheSpeedAndStatusSaysIt() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        func speed() -> Double? {
            guard let out = try? ctl("status", "--json").stdout,
                  let object = try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] else { return nil }
            return object["speed"] as? Double
        }
        let loaded = try mpc("load", "speed 1.25")
        XCTAssertEqual(loaded.status, 0, loaded.err)
        XCTAssertEqual(speed(), 1.25)
        XCTAssertEqual(try mpc("playlist").out, "a\nb\n", "the queue is left alone")
        XCTAssertTrue(try ctl("status").stdout.hasPrefix("▶"), "still playing")
        // The raw status: one extra line, which clients that do not know it skip.
        let fd = try connect()
        defer { close(fd) }
        XCTAssertEqual(readLine(fd), "OK MPD 0.21.0")
        func status() -> [String] {
            send(fd, "status\n")
            var lines: [String] = []
            while let line = readLine(fd), line != "OK", !line.hasPrefix("ACK"), lines.count < 100 { lines.append(line) }
            return lines
        }
        XCTAssertTrue(status().contains("speed: 1.25"))
        send(fd, "listplaylists\n")
        var listed: [String] = []
        while let line = readLine(fd), line != "OK", listed.count < 100 { listed.append(line) }
        XCTAssertTrue(listed.contains("playlist: speed 1.25"), "\(listed)")
        XCTAssertTrue(listed.contains("playlist: speed default"), "\(listed)")
        // Any speed the control language takes; others are a playlist's name (none here).
        XCTAssertEqual(try mpc("load", "speed 1.1").status, 0)
        XCTAssertEqual(speed(), 1.1)
        XCTAssertEqual(try mpc("load", "speed 3").status, 1)
        XCTAssertEqual(try mpc("load", "speed default").status, 0)
        XCTAssertEqual(speed(), 1)
        XCTAssertFalse(status().contains { $0.hasPrefix("speed:") }, "no line at 1: status is MPD's own")
        // MPD has no speed command: refused as MPD refuses an unknown one.
        send(fd, "speed 1.5\n")
        XCTAssertEqual(readLine(fd), "ACK [5@0] {} unknown command \"speed\"")
        XCTAssertEqual(speed(), 1)
    }
}
