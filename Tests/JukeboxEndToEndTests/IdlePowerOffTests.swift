// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// Idle power-off and the sleep timer through the binary: the shell's timers, the countdown in
/// the status and the power command run as an argument vector (here `touch`, not a shutdown).
final class IdlePowerOffTests: DaemonTestCase {
    func testAPausedPlayerCountsDownThenRunsThePowerCommandAndInputStartsTheWaitAgain() throws {
        let track = dir + "/a.wav"
        try TestAudio.write(path: track, kind: .wav16, frames: 44_100 * 60)
        let marker = dir + "/powered-off"
        // 0.05 minutes: 3 s, all of it countdown (the countdown is the last minute).
        let daemon = try startDaemon([track], extra: ["idlePowerOff": 0.05, "powerCommand": ["touch", marker]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        func status() -> String { (try? ctl("status").stdout) ?? "" }
        XCTAssertEqual(try ctl("pause").status, 0)
        let paused = Date()
        XCTAssertTrue(waitFor(5) { status().contains("power off in ") }, "no countdown: \(status())")
        // Input during the countdown starts the wait again (the whole 3 s: see the lower bound,
        // taken before the command, so a slow reply cannot make it pass).
        let again = Date()
        XCTAssertEqual(try ctl("vol", "50").status, 0)
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: marker) }, "the power command never ran")
        // Never before its time, less the half second the countdown's last firing may come early
        // (a lower bound holds on a slow machine too).
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(again), 2.5)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(paused), 2.5)
        // It ran once and the player is still there, paused, at its place.
        XCTAssertTrue(status().hasPrefix("⏸"), status())
    }

    func testTheSleepTimerIsSetAndClearedOverTheSocket() throws {
        let track = dir + "/a.wav"
        try TestAudio.write(path: track, kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon([track])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertEqual(try ctl("sleep", "30").status, 0)
        XCTAssertTrue(try ctl("status").stdout.contains("sleep timer: the sound stops in 30 min"))
        XCTAssertEqual(try ctl("sleep", "off").status, 0)
        XCTAssertTrue(try ctl("status").stdout.contains("sleep timer off"))
        let bad = try ctl("sleep", "soon")
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off"), bad.stderr)
        XCTAssertTrue(try ctl("status").stdout.hasPrefix("▶"))
    }
}
