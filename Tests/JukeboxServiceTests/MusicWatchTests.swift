// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
@testable import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// The loop's looks at the music the core waits for (`MusicWatch`) and its reads of a state file
/// that could not be read (`StateFileWatch`) run on the tag reader's thread: a stat or a read may
/// wait on a dead share or a failing card, the loop must not.
final class MusicWatchTests: XCTestCase {
    /// The looks are the tag reader's, never the loop's (`MusicWatch`): a stat held (a share whose
    /// server is down) leaves the control socket answering, and no second look piles up behind it;
    /// let go, the folders are read and the music plays. The same for the folder a play waits for
    /// (a stick pulled): held, the loop answers; let go with the folder there, it plays on.
    func testTheLooksAtAwaitedMusicRunOffTheLoop() throws {
        for wait in ["arrival", "missing folder"] {
            let dir = TempDir()
            let folder = dir.file("music")
            let audio = RecordingAudio(), mailbox = Mailbox()
            audio.mailbox = mailbox
            let control = try ControlSocket(path: dir.file("ctl"))
            let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                                  mailbox: mailbox, control: control)
            runtime.loadTracks = { paths in
                (paths.flatMap { p in ((try? FileManager.default.contentsOfDirectory(atPath: p)) ?? []).sorted().map { TrackInfo(path: p + "/" + $0) } }, [])
            }
            let gate = HeldStat()
            runtime.statMusic = { path in gate.stat(path) }
            let initial: [Event]
            if wait == "arrival" {
                initial = [.musicAwaited([folder])]
            } else {
                initial = [.replaceQueue([TrackInfo(path: folder + "/a.flac")]), .trackFailed(playID: 1, reason: "No such file or directory")]
            }
            let box = SetupProblemsReadTests.Box(runtime), done = DispatchSemaphore(value: 0)
            Thread { _ = box.runtime.run(initial: initial); done.signal() }.start()
            let ctl = try ControlClient(path: dir.file("ctl"))
            XCTAssertTrue(waitFor(10) { gate.calls == 1 }, "\(wait): the first look began")
            XCTAssertEqual(ctl.request("status --json", timeout: 10)?.contains("\"phase\":\"playing\""), false, "\(wait): answered while the look is held")
            // Looks are due once a second: two seconds held, still the one.
            XCTAssertFalse(waitFor(2) { gate.calls > 1 }, "\(wait): one look at a time")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/a.flac", contents: Data()))
            gate.release()
            XCTAssertTrue(waitFor(10) { ctl.request("status --json", timeout: 10)?.contains("\"phase\":\"playing\"") == true },
                          "\(wait): plays once the look came back")
            box.runtime.mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
    }

    /// A read of the awaited folders given up (a share that stopped answering under it) read
    /// nothing: the next look reads again, though the folders look as they did, and the music
    /// there plays.
    func testAReadOfArrivedMusicGivenUpIsMadeAgain() throws {
        let dir = TempDir()
        let folder = dir.file("music")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/a.flac", contents: Data()))
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("ctl"))
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.jobLimit = 0.5
        let gate = FirstHeld()
        runtime.loadTracks = { paths in
            gate.enter()  // the first read hangs until the test ends; the next ones read
            return (paths.flatMap { p in ((try? FileManager.default.contentsOfDirectory(atPath: p)) ?? []).sorted().map { TrackInfo(path: p + "/" + $0) } }, [])
        }
        let box = SetupProblemsReadTests.Box(runtime), done = DispatchSemaphore(value: 0)
        let initial: [Event] = [.musicAwaited([folder])]
        Thread { _ = box.runtime.run(initial: initial); done.signal() }.start()
        let ctl = try ControlClient(path: dir.file("ctl"))
        XCTAssertTrue(waitFor(10) { gate.calls == 1 }, "the first read began")
        XCTAssertTrue(waitFor(10) { ctl.request("status --json", timeout: 10)?.contains("\"phase\":\"playing\"") == true },
                      "read again after the first read was given up: \(gate.calls) reads")
        gate.release()
        box.runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    }

    /// The state file that could not be read is read again on the tag reader's thread
    /// (`StateFileWatch`), not the loop's: a read held (a failing card) leaves the control socket
    /// answering, one read at a time; let go with the file readable, its place comes back.
    func testTheStateFileIsReadAgainOffTheLoop() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("ctl"))
        let runtime = Runtime(state: State(), audio: audio, store: store, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.loadTracks = { paths in (paths.map { TrackInfo(path: $0) }, []) }
        let gate = HeldLoad()
        runtime.loadStateFile = { store in gate.load(store) }
        let box = SetupProblemsReadTests.Box(runtime), done = DispatchSemaphore(value: 0)
        let initial: [Event] = [.stateFileUnreadable("Input/output error"), .replaceQueue([TrackInfo(path: dir.file("b.flac"))])]
        Thread {
            _ = box.runtime.run(initial: initial)
            done.signal()
        }.start()
        let ctl = try ControlClient(path: dir.file("ctl"))
        XCTAssertTrue(waitFor(10) { gate.calls == 1 }, "the first read began")
        XCTAssertEqual(ctl.request("status --json", timeout: 10)?.contains("b.flac"), true, "answered while the read is held")
        // Reads are due once a second: two seconds held, still the one.
        XCTAssertFalse(waitFor(2) { gate.calls > 1 }, "one read at a time")
        let saved = #"{"version": 1, "tracks": [{"path": "\#(dir.file("a.flac"))", "title": "a"}], "current": 0, "position": 2, "phase": "paused"}"#
        try saved.write(toFile: store.path, atomically: true, encoding: .utf8)
        gate.release()
        XCTAssertTrue(waitFor(10) {
            let status = ctl.request("status --json", timeout: 10) ?? ""
            return status.contains("a.flac") && status.contains("\"phase\":\"paused\"")
        }, "the place came back once the read did: \(ctl.request("status --json", timeout: 10) ?? "")")
        XCTAssertEqual(box.runtime.state.stateUnreadable, nil)
        box.runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    }

    /// The first caller held until the test lets it go, the others not; counting the calls.
    private final class FirstHeld: @unchecked Sendable {
        private let lock = NSCondition()
        private var held = true
        private var count = 0
        var calls: Int { lock.lock(); defer { lock.unlock() }; return count }

        func enter() {
            lock.lock()
            count += 1
            let first = count == 1
            while first && held { lock.wait() }
            lock.unlock()
        }

        func release() { lock.lock(); held = false; lock.broadcast(); lock.unlock() }
    }

    /// `StateStore.load`, held until the test lets it go, counting its calls.
    private final class HeldLoad: @unchecked Sendable {
        private let lock = NSCondition()
        private var held = true
        private var count = 0
        var calls: Int { lock.lock(); defer { lock.unlock() }; return count }

        func load(_ store: StateStore) -> StateStore.Loaded {
            lock.lock()
            count += 1
            while held { lock.wait() }
            lock.unlock()
            return store.load()
        }

        func release() { lock.lock(); held = false; lock.broadcast(); lock.unlock() }
    }

    /// stat(2), held until the test lets it go, counting its calls.
    private final class HeldStat: @unchecked Sendable {
        private let lock = NSCondition()
        private var held = true
        private var count = 0
        var calls: Int { lock.lock(); defer { lock.unlock() }; return count }

        func stat(_ path: String) -> MusicArrival.Mark? {
            lock.lock()
            count += 1
            while held { lock.wait() }
            lock.unlock()
            return MusicArrival.mark(path)
        }

        func release() { lock.lock(); held = false; lock.broadcast(); lock.unlock() }
    }
}
