// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// `jukebox ctl` as a person at a terminal uses it.
final class CtlTests: DaemonTestCase {
    func testEventsPrintsReadableLinesAndStopsOnALineFromStdin() throws {
        let a = dir + "/a.wav", b = dir + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 30)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 30)
        let daemon = try startDaemon([a, b])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let stdin = Pipe()
        let events = try Jukebox.start(["ctl", "--socket", socket, "events"], stdin: stdin.fileHandleForReading)
        XCTAssertTrue(waitFor(5) { events.stdoutSoFar.contains("streaming events") }, events.stdoutSoFar)
        XCTAssertEqual(try ctl("next").status, 0)
        XCTAssertTrue(waitFor(5) { events.stdoutSoFar.contains("track started") }, events.stdoutSoFar)
        XCTAssertEqual(try ctl("pause").status, 0)
        XCTAssertTrue(waitFor(5) { events.stdoutSoFar.contains("pause → paused") }, events.stdoutSoFar)

        stdin.fileHandleForWriting.write(Data("\n".utf8))
        let result = try XCTUnwrap(events.wait(timeout: 5), "ctl events did not stop on a line from stdin")
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "streaming events; send any line to stop")
        XCTAssertEqual(lines.last, "events ended")
        let stamp = "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}"
        for line in lines.dropFirst().dropLast() {
            XCTAssertNotNil(line.range(of: "^event \(stamp) [a-z][a-z0-9 ():,+-]* → [a-z]+$", options: .regularExpression),
                            "not a readable event line: \(line)")
        }
        XCTAssertTrue(lines.contains { $0.hasSuffix(" next → playing") }, result.stdout)
        XCTAssertTrue(lines.contains { $0.range(of: " track started \\(play [0-9]+\\) → playing$", options: .regularExpression) != nil },
                      result.stdout)
    }

    func testCtlGetsInWhenSilentConnectionsHoldEverySlot() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon([song])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let silent = (0..<40).compactMap { _ in Self.silentConnection(socket) }
        defer { silent.forEach { close($0) } }
        // They take all 32 slots (the rest are refused) and never say a word.
        let started = Date()
        let r = try Jukebox.run(["ctl", "--socket", socket, "status"], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("▶ song"), r.stdout)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "ctl waited longer than the idle limit and a loop turn")
    }
}
