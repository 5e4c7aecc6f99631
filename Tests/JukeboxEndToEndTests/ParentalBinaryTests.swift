// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// The parental rules over the real binary, its wall clock driven by the test
/// (`JUKEBOX_TEST_WALL_CLOCK_PIPE`: each line days since 1970, the minute of the day and
/// `synced`), its monotonic clock the real one: a day's count restored from the state file runs out
/// while playing, nothing plays until the reset time of the next day, and quiet hours pause it.
final class ParentalBinaryTests: DaemonTestCase {
    func testTheDailyLimitRunsOutThenResetsAndQuietHoursPause() throws {
        let song = dir + "/1.wav", state = dir + "/state.json", pipe = dir + "/clock"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 120)
        XCTAssertEqual(mkfifo(pipe, 0o600), 0)
        // 57 of the day's 60 s heard on day 20000, saved playing.
        try #"{"version": 1, "tracks": [{"path": "\#(song)", "title": "one"}], "current": 0, "position": 10, "phase": "playing", "listening": {"seconds": 57, "day": 20000}}"#
            .write(toFile: state, atomically: true, encoding: .utf8)
        let config = dir + "/c.json"
        let object: [String: Any] = [
            "audio": "null", "state": state, "music": [song], "socket": socket!,
            "parental": ["dailyLimitMinutes": 1, "warnMinutes": 0, "resetAt": "06:00",
                         "quietHours": ["from": "19:30", "to": "07:00"]],
        ]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config], environment: ["JUKEBOX_TEST_WALL_CLOCK_PIPE": pipe])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let clock = try XCTUnwrap(FileHandle(forWritingAtPath: pipe))
        func at(_ day: Int, _ minute: Int) { clock.write(Data("\(day) \(minute) synced\n".utf8)) }
        func status() -> String { (try? ctl("status", "--json"))?.stdout ?? "" }
        // 10:00 on the saved day: the count stands, and runs out within seconds of playing.
        at(20000, 600)
        let reached = "daily listening limit reached: plays again after 06:00"
        XCTAssertTrue(waitFor(20) { status().contains(#""message":"\#(reached)""#) }, status())
        XCTAssertTrue(status().contains(#""phase":"paused""#), status())
        XCTAssertTrue(status().contains(#""limitLeft":0"#), status())
        _ = try? ctl("play")
        XCTAssertTrue(status().contains(#""phase":"paused""#), "played past the limit: \(status())")
        // 07:01 the next day (past the 06:00 reset and the quiet hours): a new listening day (its
        // minute left), and it plays when asked.
        at(20001, 421)
        XCTAssertTrue(waitFor(5) { status().contains(#""limitLeft":1,"#) }, status())
        XCTAssertEqual(try ctl("play").status, 0)
        XCTAssertTrue(waitFor(5) { status().contains(#""phase":"playing""#) }, status())
        // 20:00: quiet hours pause it, and nothing starts.
        at(20001, 1200)
        XCTAssertTrue(waitFor(5) { status().contains(#""message":"quiet hours until 07:00""#) }, status())
        XCTAssertTrue(status().contains(#""phase":"paused""#), status())
        _ = try? ctl("play")
        XCTAssertTrue(status().contains(#""phase":"paused""#), "played in quiet hours: \(status())")
        // 07:01 the day after: it plays again when asked.
        at(20002, 421)
        XCTAssertTrue(waitFor(5) { _ = try? ctl("play"); return status().contains(#""phase":"playing""#) }, status())
    }
}
