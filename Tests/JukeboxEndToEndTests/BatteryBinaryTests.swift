// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// The battery's rules over the real binary: readings from the simulated battery
/// (`JUKEBOX_TEST_BATTERY_PIPE`: each line a percentage and `charging`/`low`), the levels from the
/// config (its chip is not there: logged, and the player plays on). Low: the status says so; empty:
/// paused, the place saved (a power cut after it comes back paused there), the power command run once.
final class BatteryBinaryTests: DaemonTestCase {
    func testLowWarnsAndEmptySavesThePlaceAndPowersOff() throws {
        try TestAudio.write(path: dir + "/1.wav", kind: .wav16, frames: 44_100 * 120)
        let pipe = dir + "/battery", off = dir + "/powered-off", state = dir + "/state.json"
        XCTAssertEqual(mkfifo(pipe, 0o600), 0)
        let config = dir + "/c.json"
        let object: [String: Any] = [
            "audio": "null", "state": state, "music": [dir + "/1.wav"], "socket": socket!,
            "battery": ["chip": "max17048", "bus": dir + "/no-i2c-here", "warnPercent": 20, "criticalPercent": 5],
            "powerCommand": ["/bin/sh", "-c", "echo >> '\(off)'"],
        ]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config], environment: ["JUKEBOX_TEST_BATTERY_PIPE": pipe])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertTrue(waitFor(10) { (try? ctl("status"))?.stdout.hasPrefix("▶") == true }, "the daemon never played")
        func log() -> String { (try? ctl("log", "50"))?.stdout ?? "" }
        XCTAssertTrue(waitFor(5) { log().contains("battery (max17048 \(self.dir!)/no-i2c-here):") }, "the missing chip is not logged: \(log())")
        let battery = try XCTUnwrap(FileHandle(forWritingAtPath: pipe))
        func read(_ line: String) { battery.write(Data((line + "\n").utf8)) }
        func status() -> String { (try? ctl("status", "--json"))?.stdout ?? "" }
        XCTAssertTrue(status().contains(#""battery":null"#), status())

        read("50 discharging")
        XCTAssertTrue(waitFor(5) { status().contains(#""battery":{"percent":50.0,"volts":null,"charging":false,"low":false}"#) }, status())
        read("18")
        XCTAssertTrue(waitFor(5) { status().contains(#""message":"battery low: 18 %""#) }, status())
        XCTAssertTrue(status().contains(#""phase":"playing""#), "a warning does not stop the music: \(status())")

        read("4")
        XCTAssertTrue(waitFor(5) { FileManager.default.fileExists(atPath: off) }, "the power command did not run: \(status())")
        XCTAssertTrue(status().contains(#""phase":"paused""#), status())
        XCTAssertTrue(status().contains(#""message":"battery empty: saving and powering off""#), status())
        // Lower still: the command ran once.
        read("3")
        XCTAssertTrue(waitFor(5) { status().contains(#""percent":3.0"#) }, status())
        XCTAssertEqual(try String(contentsOfFile: off, encoding: .utf8), "\n")
        let position = try XCTUnwrap(status().range(of: #""position":[0-9.]+"#, options: .regularExpression).map { status()[$0].dropFirst(11) }
            .flatMap { Double($0) }, status())
        XCTAssertGreaterThan(position, 0)

        // The power goes (no clean stop): the box comes back paused where it was.
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = daemon.wait(timeout: 5)
        let again = try Jukebox.start(["run", "--config", config])
        defer { again.process.terminate(); _ = again.wait(timeout: 5) }
        XCTAssertTrue(waitFor(10) { status().contains(#""phase":"paused""#) }, status())
        // Saved when the pause was ordered: the frames the device still played after it (tens of
        // ms) are heard again, never skipped.
        let resumed = try XCTUnwrap(status().range(of: #""position":[0-9.]+"#, options: .regularExpression).map { status()[$0].dropFirst(11) }
            .flatMap { Double($0) }, status())
        XCTAssertTrue(resumed <= position && resumed >= position - 0.5, "paused at \(position) s, resumed at \(resumed) s")
    }
}
