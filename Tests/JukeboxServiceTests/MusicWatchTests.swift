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
            let gate = Gate()
            let initial: [Event]
            if wait == "arrival" {
                initial = [.musicAwaited([folder])]
            } else {
                initial = [.replaceQueue([TrackInfo(path: folder + "/a.flac")]), .trackFailed(playID: 1, reason: "No such file or directory")]
            }
            let player = try Player(dir, initial: initial) { runtime in
                runtime.statMusic = { path in
                    gate.pass()
                    return MusicArrival.mark(path)
                }
            }
            let ctl = player.ctl
            XCTAssertTrue(waitFor(10) { gate.calls == 1 }, "\(wait): the first look began")
            XCTAssertEqual(ctl.request("status --json", timeout: 10)?.contains("\"phase\":\"playing\""), false, "\(wait): answered while the look is held")
            // Looks are due once a second: two seconds held, still the one.
            XCTAssertFalse(waitFor(2) { gate.calls > 1 }, "\(wait): one look at a time")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/a.flac", contents: Data()))
            gate.open()
            XCTAssertTrue(waitFor(10) { ctl.request("status --json", timeout: 10)?.contains("\"phase\":\"playing\"") == true },
                          "\(wait): plays once the look came back")
            player.quit()
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
        let gate = Gate(holdsOnlyFirst: true)
        let player = try Player(dir, initial: [.musicAwaited([folder])]) { runtime in
            runtime.jobLimit = 0.5
            runtime.loadTracks = { paths in
                gate.pass()  // the first read hangs until the test ends; the next ones read
                return Player.list(paths)
            }
        }
        let ctl = player.ctl
        XCTAssertTrue(waitFor(10) { gate.calls == 1 }, "the first read began")
        XCTAssertTrue(waitFor(10) { ctl.request("status --json", timeout: 10)?.contains("\"phase\":\"playing\"") == true },
                      "read again after the first read was given up: \(gate.calls) reads")
        gate.open()
        player.quit()
    }

    /// The state file that could not be read is read again on the tag reader's thread
    /// (`StateFileWatch`), not the loop's: a read held (a failing card) leaves the control socket
    /// answering, one read at a time; let go with the file readable, its place comes back.
    func testTheStateFileIsReadAgainOffTheLoop() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let gate = Gate()
        let player = try Player(dir, store: store, initial: Self.unreadable(dir)) { runtime in
            runtime.loadStateFile = { store in
                gate.pass()
                return store.load()
            }
        }
        let ctl = player.ctl
        XCTAssertTrue(waitFor(10) { gate.calls == 1 }, "the first read began")
        XCTAssertEqual(ctl.request("status --json", timeout: 10)?.contains("b.flac"), true, "answered while the read is held")
        // Reads are due once a second: two seconds held, still the one.
        XCTAssertFalse(waitFor(2) { gate.calls > 1 }, "one read at a time")
        try Self.saveAPlace(in: store, dir: dir)
        gate.open()
        XCTAssertTrue(Self.placeCameBack(ctl), "the place came back once the read did: \(ctl.request("status --json", timeout: 10) ?? "")")
        player.quit()
        XCTAssertEqual(player.runtime.state.stateUnreadable, nil)
    }

    /// A read of the state file given up (a card that stopped answering under it) is said, once
    /// for reads given up alike, and the file is still waited for: once a read gets through, the
    /// place comes back.
    func testAGivenUpReadOfTheStateFileIsSaidOnce() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let lines = Shared<[String]>([])
        let log = Log(level: .warning)
        log.observer = { _, line in lines.withLock { $0.append(line) } }
        let gate = Gate()
        let player = try Player(dir, store: store, log: log, initial: Self.unreadable(dir)) { runtime in
            runtime.jobLimit = 0.5
            runtime.loadStateFile = { store in
                gate.pass()
                return store.load()
            }
        }
        let ctl = player.ctl
        let givenUp = { lines.withLock { $0.filter { $0.contains("cannot read the state file") && $0.contains("given up") } } }
        // Every read held: each is given up after half a second; the third begins after two.
        XCTAssertTrue(waitFor(15) { gate.calls >= 3 }, "read again after a read given up: \(gate.calls) reads")
        XCTAssertEqual(givenUp().count, 1, "said once: \(lines.withLock { $0 })")
        try Self.saveAPlace(in: store, dir: dir)
        gate.open()
        XCTAssertTrue(Self.placeCameBack(ctl), "the place came back once a read got through: \(ctl.request("status --json", timeout: 10) ?? "")")
        player.quit()
    }

    /// The start of a player whose state file could not be read, playing another queue meanwhile.
    private static func unreadable(_ dir: TempDir) -> [Event] {
        [.stateFileUnreadable("Input/output error"), .replaceQueue([TrackInfo(path: dir.file("b.flac"))])]
    }

    /// Writes a state file whose place is `a.flac`, paused at 2 s.
    private static func saveAPlace(in store: StateStore, dir: TempDir) throws {
        let saved = #"{"version": 1, "tracks": [{"path": "\#(dir.file("a.flac"))", "title": "a"}], "current": 0, "position": 2, "phase": "paused"}"#
        try saved.write(toFile: store.path, atomically: true, encoding: .utf8)
    }

    /// Whether the place `saveAPlace` wrote is the player's within 15 s.
    private static func placeCameBack(_ ctl: ControlClient) -> Bool {
        waitFor(15) {
            let status = ctl.request("status --json", timeout: 10) ?? ""
            return status.contains("a.flac") && status.contains("\"phase\":\"paused\"")
        }
    }

    /// A runtime of recording doubles whose loop runs on a thread of its own from `initial`,
    /// reached through its control socket; its tracks are read by listing folders (a file named
    /// is taken as it is). `configure` sets the hooks a test holds before the loop starts.
    private struct Player {
        let runtime: Runtime
        let ctl: ControlClient
        private let done = DispatchSemaphore(value: 0)

        init(_ dir: TempDir, store: StateStore? = nil, log: Log = Log(level: .error), initial: [Event],
             configure: (Runtime) -> Void) throws {
            let audio = RecordingAudio(), mailbox = Mailbox()
            audio.mailbox = mailbox
            let control = try ControlSocket(path: dir.file("ctl"))
            runtime = Runtime(state: State(), audio: audio, store: store, status: RecordingStatus(), log: log,
                              mailbox: mailbox, control: control)
            runtime.loadTracks = Self.list
            configure(runtime)
            let box = SetupProblemsReadTests.Box(runtime), done = done
            Thread {
                _ = box.runtime.run(initial: initial)
                done.signal()
            }.start()
            ctl = try ControlClient(path: dir.file("ctl"))
        }

        /// Reads tracks by listing folders; a path that is no folder is taken as a track.
        static func list(_ paths: [String]) -> (tracks: [TrackInfo], messages: [String]) {
            let tracks = paths.flatMap { path in
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [TrackInfo(path: path)] }
                return names.sorted().map { TrackInfo(path: path + "/" + $0) }
            }
            return (tracks, [])
        }

        /// Ends the loop, and waits for it.
        func quit() {
            runtime.mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
    }
}
