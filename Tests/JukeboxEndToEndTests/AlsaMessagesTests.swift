// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// libasound's own diagnostics go through the player's log, not raw to stderr at every probe.
final class AlsaMessagesTests: XCTestCase {
    func testAMissingCardIsNamedInTheLogOnceAndCountedNotPrintedAtEveryProbe() throws {
        let dir = NSTemporaryDirectory() + "jukebox-alsa-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 4410)
        let player = try Jukebox.start(["play", "--device", "hw:CARD=NoSuchCard", song])
        let waiting = waitFor(10) {
            ((try? String(contentsOfFile: player.errPath, encoding: .utf8)) ?? "").contains("waiting for audio device")
        }
        XCTAssertTrue(waiting, "the player never said it waits for the device")
        // Then a stretch of waiting to observe (not synchronisation): four or more probes, 0.25 s apart.
        Thread.sleep(forTimeInterval: 1.2)
        kill(player.process.processIdentifier, SIGTERM)
        let r = try XCTUnwrap(player.wait(timeout: 10))
        XCTAssertFalse(r.stderr.contains("ALSA lib "), "libasound printed by itself:\n\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").filter { $0.contains("alsa-lib") && $0.contains("NoSuchCard") }
        XCTAssertGreaterThanOrEqual(lines.count, 1, r.stderr)
        XCTAssertLessThanOrEqual(lines.count, 3, "written once, then counted:\n\(r.stderr)")
        XCTAssertTrue(r.stderr.contains("waiting for audio device"), r.stderr)
    }
}
