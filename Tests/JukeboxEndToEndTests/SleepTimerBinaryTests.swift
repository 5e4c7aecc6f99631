// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// The sleep timer through the binary: `ctl sleep`, `status --json`'s `sleep`, the end of a track
/// ending the timer (faded, paused on the next track, the volume back), and what a power cut
/// (SIGKILL) leaves: the music never comes back playing, during the timer or after it.
final class SleepTimerBinaryTests: DaemonTestCase {
    private func status() -> [String: Any] {
        guard let out = try? ctl("status", "--json").stdout,
              let object = try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    private func sleepField() -> [String: Any]? { status()["sleep"] as? [String: Any] }

    func testTheTimerShowsItsTimeEndsWithTheTrackAndAPowerCutNeverBringsTheMusicBack() throws {
        let a = dir + "/a.wav", b = dir + "/b.wav", state = dir + "/state.json"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 4)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 60)
        let extra: [String: Any] = ["state": state, "sleep": ["fadeSeconds": 1]]
        var daemon = try startDaemon([a, b], extra: extra)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        // Minutes: the time left is counted from the loop's clock.
        XCTAssertEqual(try ctl("sleep", "30").status, 0)
        XCTAssertTrue(waitFor(5) { (self.sleepField()?["left"] as? Int).map { (1790...1800).contains($0) } == true }, "\(status())")
        XCTAssertEqual(sleepField()?["mode"] as? String, "minutes")
        let line = try ctl("status").stdout
        XCTAssertTrue(line.contains("sleep 30 min"), line)

        // A power cut while it runs: the box comes back paused, without the timer.
        XCTAssertEqual(try ctl("save").status, 0)
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = daemon.wait(timeout: 5)
        daemon = try Jukebox.start(["run", "--config", dir + "/c.json"])
        XCTAssertTrue(waitFor(10) { self.status()["phase"] as? String == "paused" }, "\(status())")
        XCTAssertTrue(status()["sleep"] is NSNull, "\(status())")

        // The end of the track: faded, then paused on the next track with the volume back.
        XCTAssertEqual(try ctl("play").status, 0)
        XCTAssertEqual(try ctl("sleep", "track").status, 0)
        XCTAssertEqual(sleepField()?["mode"] as? String, "track")
        XCTAssertTrue(waitFor(15) { let s = self.status(); return s["phase"] as? String == "paused" && s["index"] as? Int == 2 }, "\(status())")
        XCTAssertTrue(status()["sleep"] is NSNull, "\(status())")
        XCTAssertEqual(status()["volume"] as? Int, 100)
        XCTAssertEqual(status()["position"] as? Double, 0)
        let paused = try ctl("status").stdout
        XCTAssertTrue(paused.contains("sleep timer: paused"), paused)

        // And a power cut after it: still paused there.
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = daemon.wait(timeout: 5)
        daemon = try Jukebox.start(["run", "--config", dir + "/c.json"])
        XCTAssertTrue(waitFor(10) { let s = self.status(); return s["phase"] as? String == "paused" && s["index"] as? Int == 2 }, "\(status())")
    }
}
