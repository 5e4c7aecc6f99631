// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// A power cut while internet radio plays: the binary (silent output, a state folder, a 1 s save
/// interval) plays an ICY stream from `RadioServer`, is SIGKILLed once its place (the stream
/// entry, playing) is on disk, and is started again: it must resume the same URL, live, playing,
/// with the station's title coming back; a queue of [file, URL, file] cut while the URL plays
/// resumes at the URL entry. Skipped without python3. Every wait is bounded.
final class RadioPowerCutTests: RadioDaemonTestCase {
    private var statePath: String { dir + "/state/state.json" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
    }

    private func start(_ music: [String]) throws -> Jukebox.Running {
        let extra: [String: Any] = ["state": statePath, "saveInterval": 1, "radio": ["bufferSeconds": 1]]
        return try startDaemon(music, extra: extra)
    }

    /// Whether the place sidecar holds a record of entry `current` (0-based) playing.
    private func placeSaved(current: Int) -> Bool {
        guard let bytes = FileManager.default.contents(atPath: statePath + ".place") else { return false }
        return String(decoding: bytes, as: UTF8.self).contains("{\"current\":\(current),\"phase\":\"playing\"")
    }

    /// The stream's `Song N` number shown now, or nil.
    private func songNumber() -> Int? {
        guard let title = json()["title"] as? String, title.hasPrefix("Song ") else { return nil }
        return Int(title.dropFirst(5))
    }

    /// SIGKILLs the daemon (a power cut: no quit, no last save) and waits for it to be gone.
    private func cut(_ daemon: Jukebox.Running) {
        kill(daemon.process.processIdentifier, SIGKILL)
        daemon.process.waitUntilExit()
    }

    func testAStreamCutByAPowerCutResumesLiveWithItsTitle() throws {
        let url = server.url("/icy?metaint=8192")
        let first = try start([url])
        defer { _ = first.wait(timeout: 0) }
        XCTAssertTrue(waitFor(10) { self.songNumber() != nil }, "\(json())")
        XCTAssertTrue(waitFor(10) { self.placeSaved(current: 0) }, "no place saved while the stream played")
        // A little more listening, so the saved position is well past a fresh connection's.
        XCTAssertTrue(waitFor(10) { ((self.json()["position"] as? Double) ?? 0) >= 3 }, "\(json())")
        let positionBefore = (json()["position"] as? Double) ?? 0
        cut(first)

        let restarted = Date()
        let second = try start([url])
        defer { _ = second.wait(timeout: 0); second.process.terminate() }
        let resumedIn = Date().timeIntervalSince(restarted)
        XCTAssertTrue(waitFor(10) { self.songNumber() != nil }, "\(json())")
        let titleIn = Date().timeIntervalSince(restarted)
        let after = json()
        let shown = String(format: "%.2f s", resumedIn), back = String(format: "%.2f s", titleIn)
        let cutAt = String(format: "%.1f s", positionBefore), now = String(format: "%.1f s", (after["position"] as? Double) ?? -1)
        print("radio power cut: shown playing \(shown), title back \(back) after the restart (1 s buffer); "
              + "position \(cutAt) at the cut, \(now) once the title was back")
        XCTAssertEqual(after["path"] as? String, url)
        XCTAssertEqual(after["stream"] as? Bool, true)
        XCTAssertEqual(after["phase"] as? String, "playing")
        XCTAssertEqual(after["artist"] as? String, "Test FM")
        XCTAssertEqual(after["index"] as? Int, 1)
        XCTAssertEqual(after["count"] as? Int, 1)
        // Live: the saved place is not sought (a stream cannot be): the position counts from the
        // new connection, so it is below where the cut came.
        let positionAfter = (after["position"] as? Double) ?? .infinity
        XCTAssertLessThan(positionAfter, positionBefore, "the saved place was resumed in a live stream: \(after)")
    }

    func testAQueueOfFileURLFileCutWhileTheURLPlaysResumesAtTheURL() throws {
        let opening = dir + "/opening.wav"
        let closing = dir + "/closing.wav"
        try TestAudio.write(path: opening, kind: .wav16, frames: 22_050, sampleRate: 44100, channels: 2)
        try TestAudio.write(path: closing, kind: .wav16, frames: 441_000, sampleRate: 44100, channels: 2)
        let url = server.url("/icy?metaint=8192")
        let first = try start([opening, url, closing])
        defer { _ = first.wait(timeout: 0) }
        // The half-second file ends and the stream plays as the second entry.
        XCTAssertTrue(waitFor(10) { (self.json()["index"] as? Int) == 2 && self.songNumber() != nil }, "\(json())")
        XCTAssertTrue(waitFor(10) { self.placeSaved(current: 1) }, "no place saved while the stream played")
        cut(first)

        let second = try start([opening, url, closing])
        defer { _ = second.wait(timeout: 0); second.process.terminate() }
        XCTAssertTrue(waitFor(10) { self.songNumber() != nil }, "\(json())")
        let after = json()
        XCTAssertEqual(after["index"] as? Int, 2, "\(after)")
        XCTAssertEqual(after["count"] as? Int, 3, "\(after)")
        XCTAssertEqual(after["path"] as? String, url)
        XCTAssertEqual(after["stream"] as? Bool, true)
        XCTAssertEqual(after["phase"] as? String, "playing")
        XCTAssertEqual(after["artist"] as? String, "Test FM")
    }
}
