// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// File names and tags come from anywhere: what the binary prints about them stays inert.
final class UntrustedTextTests: DaemonTestCase {
    static let evilTitle = "Evil\nok ▶ Fake Song\u{1B}]0;owned\u{7}\u{1B}[2J\u{9B}1m"

    func testAFileNameWithANewlineAndEscapesNeitherForgesAReplyLineNorReachesTheTerminal() throws {
        let song = dir + "/" + Self.evilTitle + ".wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 30)
        let daemon = try startDaemon([song])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        let status = try ctl("status")
        XCTAssertEqual(status.status, 0, status.stderr)
        Self.assertInert(status.stdout, lines: 1)
        XCTAssertTrue(status.stdout.hasPrefix("▶ Evil�ok ▶ Fake Song�]0;owned��[2J�1m  "), status.stdout)

        let queue = try ctl("queue")
        Self.assertInert(queue.stdout, lines: 2)
        XCTAssertTrue(queue.stdout.contains("1. Evil�ok ▶ Fake Song"), queue.stdout)

        // JSON escapes instead: one line, and it decodes to the title exactly.
        let json = try ctl("status", "--json")
        Self.assertInert(json.stdout, lines: 1)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["title"] as? String, Self.evilTitle)
        XCTAssertEqual(object["path"] as? String, song)

        // The log (the daemon's stderr, and `log` through the socket) has one line per message.
        let log = try ctl("log", "50")
        Self.assertInert(log.stdout, lines: log.stdout.unicodeScalars.filter { $0 == "\n" }.count)
        XCTAssertTrue(log.stdout.contains("playing: Evil�ok ▶ Fake Song"), log.stdout)
        daemon.process.terminate()
        let stderr = daemon.wait(timeout: 5)?.stderr ?? ""
        XCTAssertFalse(stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" }, stderr.debugDescription)
        XCTAssertFalse(stderr.contains("\nok ▶ Fake Song"), stderr)
    }

    func testAnInterruptionReasonCannotForgeALineEither() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 30)
        let daemon = try startDaemon([song])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        // The socket splits lines at LF; a CR, ESC or C1 inside a reason stays in it.
        let begin = try ctl("interrupt", "begin", "bell\r\u{1B}[2J\u{85}ok")
        XCTAssertEqual(begin.stdout, "released\n")
        let status = try ctl("status")
        Self.assertInert(status.stdout, lines: 1)
        XCTAssertTrue(status.stdout.contains("(interrupted: bell��[2J�ok)"), status.stdout)
    }
}
