// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// The binary with `"output": {"type": "snapcast"}` and a reader of the FIFO standing in for
/// snapserver (no snapserver needed): with nobody reading, it waits for the "device" as for an
/// unplugged card and plays once a reader comes; a track the stream's format cannot carry is
/// skipped with both formats named, and the next one plays.
final class SnapcastPipeTests: DaemonTestCase {
    var daemon: Jukebox.Running?
    var fifo: String { dir + "/fifo" }

    override func tearDown() {
        if let daemon { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        super.tearDown()
    }

    func start(_ music: [String]) throws {
        let config = dir + "/jukebox.json"
        let object: [String: Any] = ["output": ["type": "snapcast", "pipe": fifo], "state": "", "music": music, "socket": socket as String]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        daemon = try Jukebox.start(["run", "--config", config])
    }

    var stderr: String { daemon.flatMap { try? String(contentsOfFile: $0.errPath, encoding: .utf8) } ?? "" }

    /// Reads the FIFO as snapserver does (non-blocking, a look again 100 ms after an end of file)
    /// on a thread of its own until `stop`; what it read.
    final class Reader: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes = 0
        private var stopping = false
        private var done = false
        var count: Int { lock.withLock { bytes } }

        init(_ path: String) {
            Thread {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while !self.lock.withLock({ self.stopping }) {
                    let fd = open(path, O_RDONLY | O_NONBLOCK)
                    if fd < 0 { usleep(100_000); continue }  // snapserver's look again
                    while !self.lock.withLock({ self.stopping }) {
                        let n = read(fd, &buffer, 3528)
                        if n == 0 { break }
                        if n > 0 { self.lock.withLock { self.bytes += n } }
                        usleep(20_000)  // snapserver reads a 20 ms chunk at a time
                    }
                    close(fd)
                    usleep(100_000)
                }
                self.lock.withLock { self.done = true }
            }.start()
        }

        func stop() {
            lock.withLock { stopping = true }
            _ = waitFor(2) { self.lock.withLock { self.done } }
        }
    }

    func testWithNobodyReadingItWaitsAsForAnUnpluggedCardAndPlaysOnceSnapserverReads() throws {
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let a = dir + "/a.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 20)
        try start([a])
        XCTAssertTrue(waitFor(5) { self.stderr.contains("waiting for audio device") && self.stderr.contains("nobody reads the pipe") },
                      "no wait for the pipe's reader: \(stderr)")
        let waiting = try ctl("status").stdout
        XCTAssertTrue(waiting.contains("nobody reads"), waiting)
        let reader = Reader(fifo)
        defer { reader.stop() }
        XCTAssertTrue(waitFor(5) { (try? self.ctl("status"))?.stdout.hasPrefix("▶") == true }, "did not play once read: \(stderr)")
        XCTAssertTrue(waitFor(5) { reader.count > 44_100 * 4 / 2 }, "the reader got \(reader.count) bytes")
        // snapserver going away is a lost device: waiting again, and playing again when it is back.
        reader.stop()
        XCTAssertTrue(waitFor(5) { (try? self.ctl("status"))?.stdout.contains("nobody reads") == true }, stderr)
        let again = Reader(fifo)
        defer { again.stop() }
        XCTAssertTrue(waitFor(5) { (try? self.ctl("status"))?.stdout.hasPrefix("▶") == true }, "did not play again: \(stderr)")
    }

    func testATrackTheStreamCannotCarryIsSkippedNamingBothFormats() throws {
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = Reader(fifo)
        defer { reader.stop() }
        let wrong = dir + "/wrong.wav", right = dir + "/right.wav"
        try TestAudio.write(path: wrong, kind: .wav16, frames: 48_000 * 5, sampleRate: 48_000)
        try TestAudio.write(path: right, kind: .wav16, frames: 44_100 * 20, tags: .init(title: "Right"))
        try start([wrong, right])
        XCTAssertTrue(waitFor(5) { (try? self.ctl("status", "--json"))?.stdout.contains("\"title\":\"Right\"") == true
                                       && (try? self.ctl("status"))?.stdout.hasPrefix("▶") == true },
                      "the next track did not play: \(stderr)")
        XCTAssertTrue(stderr.contains("48000 Hz with 2 channels, the Snapcast stream 44100:16:2"), "the skip does not name both formats: \(stderr)")
        XCTAssertTrue(stderr.contains("wrong.wav"), stderr)
    }
}
