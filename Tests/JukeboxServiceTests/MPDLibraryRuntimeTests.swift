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

    /// What the loader was asked, from the tag reader's thread.
    final class Asked: @unchecked Sendable {
        private let lock = NSLock()
        private var requests: [[String]] = []
        func add(_ paths: [String]) { lock.lock(); requests.append(paths); lock.unlock() }
        var all: [[String]] { lock.lock(); defer { lock.unlock() }; return requests }
    }

    func testAnUpdateIsCutIntoOneRequestPerFolderAndTheAudioFilesBesideThem() throws {
        let dir = TempDir()
        for name in ["m/B/x.flac", "m/A/y.mp3", "m/.hidden/z.flac", "m/1.flac", "m/list.m3u", "m/notes.txt", "m/0.wav"] { dir.write(name, "") }
        let m = dir.file("m")
        XCTAssertEqual(MPDLibraryWalk.groups([m]), [[m + "/A"], [m + "/B"], [m + "/0.wav", m + "/1.flac"]])
        XCTAssertEqual(MPDLibraryWalk.groups([m + "/1.flac", m + "/list.m3u", m + "/gone", m + "/B"]), [[m + "/1.flac"], [m + "/B/x.flac"]])
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
        let m = dir.file("m")
        dir.write("m/A/1.flac", "")
        dir.write("m/2.flac", "")
        let gate = Gate()
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox)
        // One request per top-level folder, then the files beside them.
        let asked = Asked()
        runtime.loadTracks = { paths in
            gate.pass()
            asked.add(paths)
            return (paths.map { $0.hasSuffix("/A") ? TrackInfo(path: $0 + "/1.flac", title: "One", artist: "X") : TrackInfo(path: $0, title: "Two") }, [])
        }
        var settings = MPDSettings()
        settings.binds = [dir.file("mpd")]
        XCTAssertEqual(runtime.openMPD(settings, musicFolders: [m]), [])
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
        XCTAssertEqual(asked.all, [[m + "/A"], [m + "/2.flac"]])
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
