// SPDX-License-Identifier: MIT
import Foundation
import XCTest

extension WebFaceTests {
    /// The appliance image's boot-time problems (issue 32, item 3): the file the config's
    /// `setupProblems` names is read at start and at a reload; its lines reach `status --json`,
    /// `ctl diag` and the System page's `/api/system`, inert (escape sequences, bytes that are not
    /// UTF-8) and bounded (a 100 KB line, a file past 16 KiB); a missing file is no problem; one
    /// that cannot be read is said as the one line.
    func testSetupProblemsReachStatusDiagAndTheSystemPage() throws {
        let path = dir + "/problems"
        let psk = "wifi.txt: psk= must be a WPA passphrase of 8 to 63 printable characters: Wi-Fi off"
        var bytes: [UInt8] = Array((psk + "\n").utf8)
        bytes += Array("\u{1B}[2J\u{1B}]0;owned\u{07}cleared\n".utf8)
        bytes += [0xC3, 0x28, 0xFF] + Array(" not UTF-8\n".utf8)
        bytes += [UInt8](repeating: 0x41, count: 100_000) + [0x0A]
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let daemon = try start(extra: ["setupProblems": path])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let expected: [String] = [
            psk,
            "\u{FFFD}[2J\u{FFFD}]0;owned\u{FFFD}cleared",
            "\u{FFFD}(\u{FFFD} not UTF-8",
            String(repeating: "A", count: 397) + "…",
            "… more problems in the file than are shown",
        ]

        // The file is read off the loop: its lines come a moment after the start, and after a reload.
        let status = try statusUntil { $0.contains("setupProblems") }
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertLessThan(status.stdout.utf8.count, 8_000, "bounded")
        XCTAssertFalse(status.stdout.contains("\u{1B}") || status.stdout.contains("\\u001b"), status.stdout)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stdout)
        XCTAssertEqual(object["setupProblems"] as? [String], expected)

        let diag = try ctl("diag")
        XCTAssertEqual(diag.status, 0, diag.stderr)
        let said = diag.stdout.split(separator: "\n").filter { $0.contains("setup problem: ") }.map(String.init)
        XCTAssertEqual(said, expected.map { "setup problem: " + $0 }, diag.stdout)
        XCTAssertFalse(diag.stdout.contains("\u{1B}"))

        let (cookie, _) = try signIn()
        let reply = try http("GET", "/api/system", headers: ["Cookie": cookie])
        XCTAssertEqual(reply.status, 200, reply.body)
        let page = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any], reply.body)
        let system = try XCTUnwrap(page["system"] as? [String: Any])
        XCTAssertEqual(system["setupProblems"] as? [String], expected)

        // The builder fixed the card: no file at the next reading (a reload), no problems.
        try FileManager.default.removeItem(atPath: path)
        XCTAssertEqual(try ctl("reload").status, 0)
        XCTAssertFalse(try statusUntil { !$0.contains("setupProblems") }.stdout.contains("setupProblems"))
        XCTAssertFalse(try ctl("diag").stdout.contains("setup problem"))
        let none = try http("GET", "/api/system", headers: ["Cookie": cookie])
        XCTAssertTrue(none.body.contains("\"setupProblems\":[]"), none.body)

        // A file that cannot be read (a folder in its place) is itself the one problem, and logged.
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        XCTAssertEqual(try ctl("reload").status, 0)
        let again = try statusUntil { $0.contains("setupProblems") }
        let unreadable = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        let lines = try XCTUnwrap(unreadable["setupProblems"] as? [String], "\(unreadable)")
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines[0].hasPrefix("the setup problems file cannot be read: "), lines[0])
        XCTAssertTrue(lines[0].contains("Is a directory"), lines[0])
        XCTAssertTrue(try ctl("log", "10").stdout.contains("the setup problems file cannot be read"))
        XCTAssertEqual(daemon.process.isRunning, true, "the player plays on")
    }

    /// `status --json` once `done` holds of it, or after 10 s (the last one, for the assertions to
    /// say what it held).
    private func statusUntil(_ done: (String) -> Bool) throws -> Jukebox.Result {
        let start = Date()
        while true {
            let status = try ctl("status", "--json")
            if done(status.stdout) || Date().timeIntervalSince(start) > 10 { return status }
            usleep(20_000)
        }
    }
}
