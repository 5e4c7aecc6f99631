// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import XCTest

/// The library index is read on the tag reader while the loop answers: with the reader held at a
/// gate, `status` says `updating_db` and `lsinfo` answers (empty) at once; when it is let go, an
/// `idle database` hears of it and the index is there. A gate, not a timing.
final class MPDLibraryRuntimeTests: XCTestCase {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    /// Lines up to and including the next `OK` or `ACK` (nil on a timeout).
    func reply(_ c: ControlClient) -> [String]? {
        var lines: [String] = []
        while let line = c.readLine(timeout: 5) {
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK") { return lines }
        }
        return nil
    }

    func testTheIndexIsReadOffTheLoopAndIdleHearsWhenItIsThere() throws {
        let dir = TempDir()
        let gate = Gate()
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox)
        runtime.loadTracks = { paths in
            gate.pass()
            XCTAssertEqual(paths, ["/m"])
            return ([TrackInfo(path: "/m/A/1.flac", title: "One", artist: "X"), TrackInfo(path: "/m/2.flac", title: "Two")], [])
        }
        var settings = MPDSettings()
        settings.binds = [dir.file("mpd")]
        XCTAssertEqual(runtime.openMPD(settings, musicFolders: ["/m"]), [])
        runtime.startMPDLibrary()
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        defer {
            gate.open()
            box.runtime.mailbox.post(.quit)
            _ = done.wait(timeout: .now() + 5)
        }
        gate.waitForSomeoneAtIt()
        let c = try ControlClient(path: dir.file("mpd"))
        XCTAssertEqual(c.readLine(timeout: 5), "OK MPD 0.21.0")
        XCTAssertTrue(c.send("status"))
        XCTAssertEqual(reply(c)?.suffix(2), ["updating_db: 1", "OK"], "answered while the index is read")
        XCTAssertTrue(c.send("lsinfo"))
        XCTAssertEqual(reply(c), ["OK"])
        XCTAssertTrue(c.send("idle database"))
        XCTAssertNil(c.readLine(timeout: 0.2), "idle answered before the index was there")
        gate.open()
        XCTAssertEqual(reply(c), ["changed: database", "OK"])
        XCTAssertTrue(c.send("status"))
        XCTAssertEqual(reply(c)?.contains { $0.hasPrefix("updating_db") }, false)
        XCTAssertTrue(c.send("lsinfo"))
        XCTAssertEqual(reply(c), ["directory: A", "file: 2.flac", "Title: Two", "OK"])
        XCTAssertTrue(c.send("findadd artist X"))
        XCTAssertEqual(reply(c), ["OK"])
        // The queue is the loop's: asked through MPD, not read from this thread.
        XCTAssertTrue(c.send("playlistinfo"))
        XCTAssertEqual(reply(c)?.prefix(3), ["file: A/1.flac", "Title: One", "Artist: X"])
    }
}
